"""Worker processes for the parallel cold parse (`core.cache`).

A worker is ``python -m memlens.core.scan.parse_worker``: a fresh interpreter
that imports only the scanning code.  Unlike a multiprocessing pool it never
re-imports the caller's ``__main__`` (a script without an
``if __name__ == "__main__"`` guard would otherwise run again in every
worker), and it needs no fork of a process that runs threads.

Protocol (pipes between our own processes): each message is an 8-byte
big-endian length and a pickle.  ``("job", format_id, root, rels)`` names
the files of one vault; each ``("parse", start, end)`` after it is answered
with the pickled ``[(rel, FileScan, FileStamp | None)]`` of
``rels[start:end]`` (`cache._parse_chunk`).  ``("count_terms", texts)``
is answered with `search.fit.count_terms` of those (title, tags, body) texts
(half of a large index fit).  End of input ends the worker.
"""

from __future__ import annotations

import pickle
import sys
from typing import IO, Any

_LENGTH = 8


def read_message(stream: IO[bytes]) -> bytes | None:
    """One length-prefixed message, or None at end of input."""
    head = stream.read(_LENGTH)
    if len(head) < _LENGTH:
        return None
    size = int.from_bytes(head, "big")
    body = stream.read(size)
    if len(body) < size:
        return None
    return body


def write_message(stream: IO[bytes], body: bytes) -> None:
    stream.write(len(body).to_bytes(_LENGTH, "big"))
    stream.write(body)
    stream.flush()


def serve(stdin: IO[bytes], stdout: IO[bytes]) -> None:
    """Answer requests until the input ends."""
    # Deferred: the cache imports this module's framing (the cache <-> worker
    # knot is the store branch's to untie; pyproject's import contracts list it).
    from .cache import _parse_chunk

    job: tuple[str, str, list[str]] | None = None
    while (message := read_message(stdin)) is not None:
        request: tuple[Any, ...] = pickle.loads(message)
        if request[0] == "job":
            job = (request[1], request[2], request[3])
        elif request[0] == "parse" and job is not None:
            format_id, root, rels = job
            write_message(stdout, _parse_chunk(format_id, root, rels[request[1] : request[2]]))
        elif request[0] == "count_terms":
            # Deferred: only index fits ask for it (search imports scan: the
            # store branch moves this edge; pyproject's import contracts list it).
            from ..search.fit import count_terms

            write_message(stdout, pickle.dumps(count_terms(request[1]), pickle.HIGHEST_PROTOCOL))
        else:
            return


if __name__ == "__main__":  # pragma: no cover - runs in the worker process
    serve(sys.stdin.buffer, sys.stdout.buffer)
