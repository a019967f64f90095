"""Worker processes, kept for a few seconds between jobs, and when to use them.

`core.scan.cache` shares a large cold parse with these processes and
`core.search.fit` has one count half of a large index fit (`run_in_worker`);
`spare_cpu` says whether a second process would get a CPU of its own.  A
worker is ``python -m memlens.core.worker_main``, named by a string: this
module imports neither scanning nor search, so both use it without depending
on each other (the worker's entry point, at the top of core's layers, imports
what it runs).

Framing (pipes between our own processes): each message is an 8-byte
big-endian length and a pickle.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import pickle
import sys
from collections.abc import Callable
from typing import IO, Any

#: Environment variable: "0" keeps every parse and fit in one process.
PARALLEL_ENV = "MEMLENS_PARALLEL"

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


class _WorkerFailed(Exception):
    """A worker ended or answered nothing."""


class _Worker:
    """One worker process (`core.worker_main`) and its pipes."""

    def __init__(self) -> None:
        import subprocess

        self.proc = subprocess.Popen(
            [sys.executable, "-m", f"{__package__}.worker_main"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            close_fds=True,
        )

    def send(self, body: bytes) -> None:
        assert self.proc.stdin is not None
        write_message(self.proc.stdin, body)

    def receive(self) -> bytes:
        assert self.proc.stdout is not None
        body = read_message(self.proc.stdout)
        if body is None:
            raise _WorkerFailed
        return body

    def close(self) -> None:
        with contextlib.suppress(OSError):
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        try:
            self.proc.wait(timeout=2)
        except Exception:
            self.proc.kill()
            with contextlib.suppress(Exception):
                self.proc.wait(timeout=2)
        with contextlib.suppress(OSError):
            if self.proc.stdout is not None:
                self.proc.stdout.close()


class _Pool:
    """Parse workers kept for a few seconds between vaults (one scan at a time).

    Starting a worker costs an interpreter and the scanning imports (a few
    hundred ms); opening several large vaults in a row reuses them.  Idle
    workers are stopped after IDLE_S seconds and at exit.
    """

    IDLE_S = 10.0

    def __init__(self) -> None:
        import threading

        self.lock = threading.Lock()
        self.idle: list[_Worker] = []
        self.busy = False
        self.timer: Any = None

    def acquire(self, n: int) -> list[_Worker]:
        """`n` workers for one parse; [] if another parse has them or none starts."""
        with self.lock:
            if self.busy:
                return []
            self.busy = True
            if self.timer is not None:
                self.timer.cancel()
                self.timer = None
            workers, self.idle = self.idle[:n], self.idle[n:]
        try:
            while len(workers) < n:
                workers.append(_Worker())
        except OSError:
            for w in workers:
                w.close()
            with self.lock:
                self.busy = False
            return []
        return workers

    def release(self, workers: list[_Worker]) -> None:
        import threading

        with self.lock:
            self.idle.extend(workers)
            self.busy = False
            self.timer = threading.Timer(self.IDLE_S, self.close)
            self.timer.daemon = True
            self.timer.start()

    def discard(self, workers: list[_Worker]) -> None:
        for w in workers:
            w.close()
        with self.lock:
            self.busy = False

    def close(self) -> None:
        """Stop the idle workers."""
        with self.lock:
            idle, self.idle = self.idle, []
        for w in idle:
            w.close()


_pool = _Pool()
atexit.register(_pool.close)


def run_in_worker(request: tuple[Any, ...]) -> Callable[[], Any] | None:
    """Send `request` to one parse worker; a function that waits for its answer.

    The answer is None if the worker fails.  None instead of a function when
    no worker is free (another parse has them) or none starts.  The worker
    goes back to the pool once answered.  See `worker_main.serve` for the
    requests it understands.
    """
    workers = _pool.acquire(1)
    if not workers:
        return None
    (worker,) = workers
    try:
        worker.send(pickle.dumps(request, protocol=pickle.HIGHEST_PROTOCOL))
    except OSError:
        _pool.discard(workers)
        return None

    def wait() -> Any:
        try:
            answer = pickle.loads(worker.receive())
        except Exception:
            _pool.discard(workers)
            return None
        _pool.release(workers)
        return answer

    return wait


def _cpus() -> int:
    """CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def spare_cpu() -> bool:
    """More than one CPU, and one of them idle.

    Idle by the one-minute load average (leaving at least half a CPU), or,
    since that average still counts work that ended up to a minute ago (a
    cold start that just used both cores), by the threads runnable right
    now: this one and fewer than one per other CPU.
    """
    cpus = _cpus()
    if cpus <= 1:
        return False
    if _load_average() < cpus - 0.5:
        return True
    running = _running_now()
    return running is not None and running <= cpus - 1


def _load_average() -> float:
    """The one-minute load average (0 where there is none)."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):  # pragma: no cover - not Unix
        return 0.0


def _running_now() -> int | None:
    """Threads runnable at this instant, this one included (Linux; None elsewhere)."""
    try:
        with open("/proc/loadavg", encoding="ascii") as fh:
            return int(fh.read().split()[3].split("/")[0])
    except (OSError, ValueError, IndexError):
        return None


__all__ = ["run_in_worker", "spare_cpu"]
