"""`python -m bench NAME [options]`: run one benchmark.

Each benchmark is a module with ``main(argv: list[str]) -> int``; add yours to
`BENCHMARKS`.  ``python -m bench`` alone lists them.
"""

from __future__ import annotations

import importlib
import sys

#: name -> module (imported only when run).
BENCHMARKS: dict[str, str] = {
    "search": "bench.search_bench",
    "generate": "bench.generate",
}


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help") or argv[0] not in BENCHMARKS:
        print("usage: python -m bench NAME [options]   (NAME --help for options)")
        print("benchmarks: " + ", ".join(sorted(BENCHMARKS)))
        return 0 if not argv or argv[0] in ("-h", "--help") else 2
    module = importlib.import_module(BENCHMARKS[argv[0]])
    return int(module.main(argv[1:]))


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
