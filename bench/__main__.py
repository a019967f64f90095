"""`python -m bench [NAME] [options]`: run one benchmark.

Each benchmark is a module with ``main(argv: list[str]) -> int``; add yours to
`BENCHMARKS`.  Without a name (``python -m bench``, ``python -m bench --sizes
100000``) the real-process benchmark runs (bench/real.py): the app and the
installed CLI on realistic generated vaults, against baselines measured in the
same run and the targets of issue 17 (bench/README.md).
"""

from __future__ import annotations

import importlib
import sys

#: name -> module (imported only when run).
BENCHMARKS: dict[str, str] = {
    "search": "bench.search_bench",
    "generate": "bench.generate",
    "real": "bench.real",
    "speed": "bench.speed",
    "reload": "bench.reload_bench",
    "app": "bench.app_bench",
    "app-reload": "bench.app_reload_bench",
    "history": "bench.history_bench",
    "privacy": "bench.privacy_bench",
    "relevance": "bench.relevance",
    "review": "bench.review_bench",
    "keys": "bench.keys_bench",
}


#: What `python -m bench` runs without a benchmark name.
DEFAULT = "real"


def main(argv: list[str]) -> int:
    if not argv or (argv[0].startswith("-") and argv[0] not in ("-h", "--help")):
        argv = [DEFAULT, *argv]
    if argv[0] in ("-h", "--help") or argv[0] not in BENCHMARKS:
        print("usage: python -m bench [NAME] [options]   (NAME --help for options)")
        print(f"without NAME: {DEFAULT}")
        print("benchmarks: " + ", ".join(sorted(BENCHMARKS)))
        return 0 if argv[0] in ("-h", "--help") else 2
    module = importlib.import_module(BENCHMARKS[argv[0]])
    return int(module.main(argv[1:]))


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
