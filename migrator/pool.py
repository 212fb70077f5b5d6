"""The worker processes of a run over many files (``-j N``), and what happens when one dies.

:func:`migrator.runner.run` hands its files to a :class:`Pool` when it has more than one
worker: the files go out in chunks over pipes, and the results come back in the order of the
files.  The pool knows which file each worker is on, so a worker killed by a crash in native
code or by the kernel's OOM killer costs one file, not the run; SIGINT/SIGTERM
(:mod:`migrator.interrupt`) stop the workers without losing the files already written.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import time
from multiprocessing.connection import Connection, wait
from typing import TYPE_CHECKING, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

from jaxmigrate.migrator import interrupt

if TYPE_CHECKING:  # pragma: no cover
    from jaxmigrate.migrator.runner import FileResult

_CRASH_ATTEMPTS = 2  # a file whose worker died is tried once more, alone, before it is blamed
_STOP_GRACE = 10.0  # seconds a worker gets to finish writing a file after SIGTERM


class Pool:
    """Worker processes fed chunks of files over pipes, results yielded in file order.

    Unlike ``concurrent.futures``, the pool knows which file each worker is on: a worker
    that dies (a crash in native code, the kernel's OOM killer) is replaced, the file it was
    on is tried again alone, and if that kills a worker too it is reported as this file's
    error; every other file is migrated.  On SIGINT/SIGTERM the workers are told to stop
    (each finishes a file it is writing first) and the results that arrived are kept.

    ``tasks`` are ``(path, *arguments)``, the arguments the same for every task; a worker
    calls ``work(path, *arguments)`` for each of its files, and ``failed(path, message)``
    makes the result of a file that killed its worker twice."""

    def __init__(
        self,
        tasks: List[tuple],
        jobs: int,
        work: Callable[..., FileResult],
        failed: Callable[[str, str], FileResult],
    ) -> None:
        self.tasks = tasks
        self.jobs = jobs
        self.work = work
        self.failed = failed
        self.context = (
            multiprocessing.get_context("fork")
            if sys.platform == "linux"
            else multiprocessing.get_context()
        )
        self.chunk = max(1, min(64, len(tasks) // (jobs * 8)))
        self.queue: List[List[int]] = [
            list(range(start, min(start + self.chunk, len(tasks))))
            for start in range(0, len(tasks), self.chunk)
        ]
        self.done: Dict[int, FileResult] = {}
        self.attempts: Dict[int, int] = {}
        # (chosen) a file's result without a worker, asked as its turn comes; each result
        self.instead: Optional[Callable[[int], Optional[FileResult]]] = None
        self.record: Optional[Callable[[int, FileResult], None]] = None
        self.workers: Dict[Connection, Tuple[multiprocessing.process.BaseProcess, List[int]]] = {}

    def chosen(
        self,
        order: Sequence[int],
        instead: Callable[[int], Optional[FileResult]],
        record: Callable[[int, FileResult], None],
    ) -> "Pool":
        """Go one file at a time in ``order``, each chosen as a worker asks for work:
        ``instead(index)`` may give its result without a worker (a file the results so far
        make needless), and ``record(index, result)`` is told each result as it arrives."""
        self.queue = [[index] for index in order]
        self.instead, self.record = instead, record
        return self

    def results(self, progress: Optional[Callable[[int], None]]) -> Iterator[FileResult]:
        emitted = 0
        try:
            for _ in range(min(self.jobs, len(self.queue))):
                self._start()
            while emitted < len(self.tasks):
                self._step()
                while emitted in self.done:
                    yield self.done.pop(emitted)
                    emitted += 1
                    if progress:
                        progress(1)
            self._finish()
        except interrupt.Interrupted as stop:
            interrupt.holding()
            self._stop()
            stop.results = [self.done[i] for i in sorted(self.done)]
            raise
        finally:
            self._stop()

    def _start(self) -> None:
        parent, child = self.context.Pipe()
        shared = self.tasks[0][1:]  # the arguments after the path: the same for every task
        process = self.context.Process(
            target=_worker,
            args=(child, parent, os.getpid(), self.work, shared),
            daemon=True,
            name="jaxmigrate-worker",
        )
        # A fork inherits this process's signal handlers until the worker sets its own: a
        # signal in between must wait (blocked here, unblocked by the worker).
        blocked = _block(interrupt.SIGNALS)
        try:
            process.start()
        finally:
            _unblock(blocked)
        child.close()
        self.workers[parent] = (process, [])
        self._feed(parent)

    def _feed(self, conn: Connection) -> None:
        process, _current = self.workers[conn]
        while self.queue and self.instead is not None and len(self.queue[0]) == 1:
            result = self.instead(self.queue[0][0])
            if result is None:
                break
            self.done[self.queue.pop(0)[0]] = result
        if not self.queue:
            self.workers[conn] = (process, [])
            _send(conn, None)
            return
        chunk = self.queue.pop(0)
        self.workers[conn] = (process, chunk)
        _send(conn, [(index, self.tasks[index][0]) for index in chunk])

    def _step(self) -> None:
        sentinels = {process.sentinel: conn for conn, (process, _chunk) in self.workers.items()}
        ready = wait(list(self.workers) + list(sentinels))
        for item in ready:
            conn = sentinels.get(item, item)  # type: ignore[arg-type]  # a sentinel is an int
            if conn not in self.workers:
                continue  # already handled this turn
            if item is conn:
                if not self._receive(conn):
                    self._died(conn)
            else:
                self._died(conn)

    def _receive(self, conn: Connection) -> bool:
        """Takes one result from ``conn``; False if the worker is gone.  A signal that comes
        while the result is read waits until it is kept: a file the worker wrote is reported."""
        with interrupt.critical():
            try:
                index, result = conn.recv()
            except (EOFError, OSError):
                return False
            process, chunk = self.workers[conn]
            self.done[index] = result
            if self.record is not None:
                self.record(index, result)
        if index in chunk:
            chunk.remove(index)
        if not chunk:
            self._feed(conn)
        interrupt.checkpoint()
        return True

    def _died(self, conn: Connection) -> None:
        """A worker exited: what it sent is kept, the file it was on is retried or blamed."""
        while True:  # results it sent before it died
            try:
                if not conn.poll():
                    break
            except (EOFError, OSError):
                break
            if not self._receive(conn):
                break
        process, chunk = self.workers.pop(conn)
        conn.close()
        process.join()
        if chunk:
            culprit, rest = chunk[0], chunk[1:]
            self.attempts[culprit] = self.attempts.get(culprit, 0) + 1
            if self.attempts[culprit] >= _CRASH_ATTEMPTS:
                self.done[culprit] = self.failed(
                    str(self.tasks[culprit][0]),
                    f"the worker process died while migrating this file "
                    f"({_how(process.exitcode)}); it was left unchanged",
                )
            else:
                rest = [culprit] + rest
            self.queue[:0] = [[index] for index in rest]  # alone: a second death names its file
        if self.queue and len(self.workers) < self.jobs:
            self._start()

    def _finish(self) -> None:
        """Every file is done: the workers, told to leave, exit on their own."""
        for conn, (process, _chunk) in list(self.workers.items()):
            _send(conn, None)
            process.join(_STOP_GRACE)
            conn.close()
            del self.workers[conn]

    def _stop(self) -> None:
        """Tells every worker to stop (SIGTERM: it leaves at once, or after the file it is
        writing), keeps the results that still arrive, and kills what is left after a grace."""
        if not self.workers:
            return
        for process, _chunk in self.workers.values():
            if process.pid is not None and process.exitcode is None:
                try:
                    os.kill(process.pid, signal.SIGTERM)
                except OSError:
                    pass
        deadline = time.monotonic() + _STOP_GRACE
        while self.workers:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            sentinels = {process.sentinel: conn for conn, (process, _chunk) in self.workers.items()}
            for item in wait(list(self.workers) + list(sentinels), timeout=left):
                conn = sentinels.get(item, item)  # type: ignore[arg-type]  # a sentinel is an int
                if conn not in self.workers:
                    continue
                if item is conn and self._receive_quietly(conn):
                    continue
                # The worker left: results it sent after the one just read (a file it wrote
                # while the signal waited) are still in the pipe.
                while self._receive_quietly(conn):
                    pass
                process, _chunk = self.workers.pop(conn)
                conn.close()
                process.join()
        for conn, (process, _chunk) in list(self.workers.items()):
            process.kill()
            process.join()
            conn.close()
        self.workers.clear()

    def _receive_quietly(self, conn: Connection) -> bool:
        """Takes one result from ``conn`` if one is there (a stopping worker's last ones)."""
        try:
            if not conn.poll():
                return False
            index, result = conn.recv()
        except (EOFError, OSError):
            return False
        self.done[index] = result
        return True


def _send(conn: Connection, message: object) -> None:
    try:
        conn.send(message)
    except (BrokenPipeError, OSError):
        pass  # the worker is gone: its sentinel says so next


def _how(exitcode: Optional[int]) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            return f"killed by {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"killed by signal {-exitcode}"
    return f"exit code {exitcode}"


def _block(signals: Sequence[int]) -> Optional[object]:
    if not hasattr(signal, "pthread_sigmask"):  # pragma: no cover (not on POSIX)
        return None
    return signal.pthread_sigmask(signal.SIG_BLOCK, signals)


def _unblock(previous: Optional[object]) -> None:
    if previous is not None:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)  # type: ignore[arg-type]


def _worker(
    conn: Connection,
    parent_end: Connection,
    parent_pid: int,
    work: Callable[..., FileResult],
    shared: tuple,
) -> None:
    """A worker process: chunks of (index, path) in, one (index, result) out per file."""
    interrupt.install_worker()
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, interrupt.SIGNALS)  # blocked while forking
    parent_end.close()
    # (with fork, the main process's ends of the other workers' pipes are open here too: the
    # parent's death is noticed by its pid, not by an end of file)
    while True:
        while not conn.poll(1.0):
            if os.getppid() != parent_pid:  # the main process is gone
                os._exit(0)
        try:
            chunk = conn.recv()
        except (EOFError, OSError):
            return
        if chunk is None:
            return
        for index, path in chunk:
            result = work(path, *shared)
            conn.send((index, result))
            interrupt.release()  # the result is with the main process: a SIGTERM may act now
            interrupt.checkpoint()
