"""A large cold parse shared with worker processes (`core.workers`).

`parse_files` yields the FileScans of many files of one vault in order,
parsing pieces here and in workers when that pays (`used_workers`); a worker
answers with `parse_chunk`, pickled with the constructor reducers.
"""

from __future__ import annotations

import io
import os
import pickle
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .. import workers
from ..formats import FormatAdapter, adapter_for
from ..formats.files import rel_posix
from ..model import FileScan
from ..store import (
    FileStamp,
)
from ..store.codec import FULL_DISPATCH
from .progress import CacheStats, quiet_gc
from .reading import scan_new

#: Worker processes (`core.worker_main`) share a cold parse of at least this
#: many files when a second CPU is idle (`parallel=None`, the default;
#: `parallel=False` or MEMLENS_PARALLEL=0 keeps it in one process).  The
#: workers send back FileScans pickled with the constructor reducers below,
#: about a tenth of the parse to unpickle.  Measured at 60k Markdown files on
#: the 2-core machine while other work kept it busy (load ~2): 7.4-8.3 s in
#: one process, 9.1-10.2 s with two workers, hence the load check; with the
#: machine quieter (load ~1) the 100k bench listed in ~5.2 s with workers.
#: Below ~8k files a worker's start (an interpreter and the imports, ~0.3 s)
#: costs about what it saves (2k-file vaults: 0.87 s with workers, 0.77 s
#: without).
PARALLEL_MIN_FILES = 8_000
PARALLEL_CHUNK = 2_000
#: Environment variable: "0" keeps the default cold parse in one process.


def parse_chunk(format_id: str, root: str, rels: list[str]) -> bytes:
    """Worker: parse some files of one vault (runs in another process).

    Returns the pickled [(rel, FileScan, FileStamp | None)], pickled with the
    cache's constructor reducers (about half the unpickling time of the
    default, and the unpickling happens in the one main process).
    """
    adapter = adapter_for(format_id)
    base = Path(root)
    return _dumps([(rel, *scan_new(adapter, base, rel)) for rel in rels])


def parse_files(
    adapter: FormatAdapter,
    root: Path,
    paths: list[Path],
    *,
    parallel: bool | None = None,
    chunk_size: int = PARALLEL_CHUNK,
    stats: CacheStats | None = None,
) -> Iterator[list[tuple[str, FileScan, FileStamp | None]]]:
    """Parse files, yielding results in chunks (about `chunk_size` files), in order.

    A large parse is split over worker processes (`parallel`: None decides
    by size and CPUs, see PARALLEL_MIN_FILES; True or False forces it).  If
    the workers cannot start or break, the remaining files are parsed here.
    """
    yield from parse_rels(
        adapter,
        root,
        [rel_posix(root, p) for p in paths],
        parallel=parallel,
        chunk_size=chunk_size,
        stats=stats,
    )


def parse_rels(
    adapter: FormatAdapter,
    root: Path,
    rels: list[str],
    *,
    parallel: bool | None = None,
    chunk_size: int = PARALLEL_CHUNK,
    stats: CacheStats | None = None,
    first_chunk: int | None = None,
) -> Iterator[list[tuple[str, FileScan, FileStamp | None]]]:
    """`parse_files` by vault-relative paths.

    `first_chunk`: the first chunk holds at most this many files, so that a
    front end's first rows come after a few files parsed, not a whole chunk
    (a whole first chunk took ~0.4 s of a cold 100k start).
    """
    if not used_workers(len(rels), parallel):
        yield from _parse_here(adapter, root, rels, chunk_size, first_chunk)
        return
    procs = workers._pool.acquire(min(workers._cpus(), 4))
    if not procs:
        yield from parse_rels(
            adapter, root, rels, parallel=False, chunk_size=chunk_size, first_chunk=first_chunk
        )
        return
    yield from _parse_with_workers(adapter, root, rels, procs, chunk_size, first_chunk, stats)


def _parse_here(
    adapter: FormatAdapter,
    root: Path,
    rels: list[str],
    chunk_size: int,
    first_chunk: int | None,
) -> Iterator[list[tuple[str, FileScan, FileStamp | None]]]:
    """`parse_rels` in this process alone: a small parse, or workers turned off."""
    chunk: list[tuple[str, FileScan, FileStamp | None]] = []
    size = min(chunk_size, first_chunk or chunk_size)
    for rel in rels:
        fs, stamp = scan_new(adapter, root, rel)
        chunk.append((rel, fs, stamp))
        if len(chunk) >= size:
            yield chunk
            chunk = []
            size = chunk_size
    if chunk:
        yield chunk


def _parse_with_workers(
    adapter: FormatAdapter,
    root: Path,
    rels: list[str],
    procs: list[workers._Worker],
    chunk_size: int,
    first_chunk: int | None,
    stats: CacheStats | None,
) -> Iterator[list[tuple[str, FileScan, FileStamp | None]]]:
    """`parse_rels` shared with the acquired workers `procs` (discarded if they fail)."""
    size = min(PARALLEL_CHUNK, max(1, len(rels) // (len(procs) * 4)))
    # This process parses a first piece (one progress step) itself while the
    # workers start, so a front end's first rows come at once; then it
    # gathers what the workers send.
    first = max(1, min(chunk_size, size))
    pieces = [(i, min(i + size, len(rels))) for i in range(first, len(rels), size)]
    done = 0
    own = 0  # files of the first piece yielded
    try:
        # The job goes out after this piece: the workers are still importing
        # the scanning code, and sending it earlier would wait for them.
        for end in sorted({min(first, first_chunk or first), first}):
            yield [(rel, *scan_new(adapter, root, rel)) for rel in rels[own:end]]
            own = end
        job = pickle.dumps(("job", adapter.format_id, str(root), rels))
        for w in procs:
            w.send(job)
        # Piece i goes to worker i % n, two pieces in flight per worker.
        sent = 0
        while sent < min(len(pieces), 2 * len(procs)):
            procs[sent % len(procs)].send(pickle.dumps(("parse", *pieces[sent])))
            sent += 1
        for i in range(len(pieces)):
            worker = procs[i % len(procs)]
            blob = worker.receive()
            if sent < len(pieces):
                procs[sent % len(procs)].send(pickle.dumps(("parse", *pieces[sent])))
                sent += 1
            with quiet_gc():
                results: list[tuple[str, FileScan, FileStamp | None]] = pickle.loads(blob)
            del blob
            for _rel, fs, _stamp in results:
                # Share the one root Path object again (smaller cache file).
                for m in fs.memories:
                    m.vault_root = root
            done = i + 1
            if stats is not None:
                stats.parallel += len(results)
            yield results
        workers._pool.release(procs)
    except (OSError, EOFError, pickle.UnpicklingError, workers._WorkerFailed):
        # A worker could not start or died (no interpreter to run, killed):
        # parse the rest here.
        workers._pool.discard(procs)
        if own < first:
            yield [(rel, *scan_new(adapter, root, rel)) for rel in rels[own:first]]
        for start, end in pieces[done:]:
            yield [(rel, *scan_new(adapter, root, rel)) for rel in rels[start:end]]
    except BaseException:
        workers._pool.discard(procs)
        raise


# --------------------------------------------------------------------------- rows


def _dumps(payload: Any) -> bytes:
    """Pickled with the constructor reducers (bodies kept): a worker's answer."""
    buf = io.BytesIO()
    out = pickle.Pickler(buf, protocol=pickle.HIGHEST_PROTOCOL)
    out.dispatch_table = FULL_DISPATCH
    out.dump(payload)
    return buf.getvalue()


def used_workers(n: int, parallel: bool | None) -> bool:
    """Worker processes for this parse?  None (the default): when it pays.

    That is a parse of at least PARALLEL_MIN_FILES files with a CPU to
    spare: more than one, and a load average leaving at least half of one
    idle (this process counts; on a busy machine the workers only add their
    own overhead).  `MEMLENS_PARALLEL=0`
    in the environment turns the default off.
    """
    if parallel is None:
        parallel = os.environ.get(workers.PARALLEL_ENV, "1") != "0" and workers.spare_cpu()
    return parallel and n >= PARALLEL_MIN_FILES and workers._cpus() > 1
