"""The worker process's entry point: ``python -m memlens.core.worker_main``.

A fresh interpreter started by `core.workers`.  Unlike a multiprocessing pool
it never re-imports the caller's ``__main__`` (a script without an
``if __name__ == "__main__"`` guard would otherwise run again in every
worker), and it needs no fork of a process that runs threads.  It sits at the
top of core's layers because it runs jobs of both scanning and search.

Requests (framed by `core.workers`): ``("job", format_id, root, rels)`` names
the files of one vault; each ``("parse", start, end)`` after it is answered
with the pickled ``[(rel, FileScan, FileStamp | None)]`` of
``rels[start:end]`` (`scan.parallel.parse_chunk`).  ``("count_terms", texts)``
is answered with `search.fit.count_terms` of those (title, tags, body) texts
(half of a large index fit); ``("collect_terms", weights, rows, texts)`` with
`search.bm25_build.collect_terms` of those rows' field texts (half of a large
relevance index).  End of input ends the worker.
"""

from __future__ import annotations

import pickle
import sys
from typing import IO, Any

from .scan.parallel import parse_chunk
from .workers import read_message, write_message


def serve(stdin: IO[bytes], stdout: IO[bytes]) -> None:
    """Answer requests until the input ends."""
    job: tuple[str, str, list[str]] | None = None
    while (message := read_message(stdin)) is not None:
        request: tuple[Any, ...] = pickle.loads(message)
        if request[0] == "job":
            job = (request[1], request[2], request[3])
        elif request[0] == "parse" and job is not None:
            format_id, root, rels = job
            write_message(stdout, parse_chunk(format_id, root, rels[request[1] : request[2]]))
        elif request[0] == "count_terms":
            # Deferred on purpose: a parse worker starts without numpy and the
            # search code; only an index fit asks for this.
            from .search.fit import count_terms

            write_message(stdout, pickle.dumps(count_terms(request[1]), pickle.HIGHEST_PROTOCOL))
        elif request[0] == "collect_terms":
            from .search.bm25_build import collect_terms  # deferred as above

            answer = collect_terms(request[1], request[2], request[3])
            write_message(stdout, pickle.dumps(answer, pickle.HIGHEST_PROTOCOL))
        else:
            return


if __name__ == "__main__":  # pragma: no cover - runs in the worker process
    serve(sys.stdin.buffer, sys.stdout.buffer)
