"""The worker pool keeps every result a stopping worker sent (``migrator.pool``).

On SIGINT/SIGTERM the main process stops its workers and keeps what they still send: a
worker that was writing a file when the signal came finishes it and sends its result before
it leaves (``migrator.interrupt``).  A worker can have sent several results by the time the
main process reads its pipe, and be gone by then: every one of them must be read, or a file
that was rewritten goes unreported (``tests/test_signals.py`` met this under load).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
from multiprocessing.connection import Connection

import pytest

from jaxmigrate.migrator import interrupt
from jaxmigrate.migrator.pool import Pool

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="forks a worker by hand")


def _sends_then_leaves(conn: Connection, indexes: list) -> None:
    for index in indexes:
        conn.send((index, f"result {index}"))
    conn.close()


def _unused(*args: object) -> object:
    raise AssertionError("no file is migrated here")


@pytest.mark.parametrize("sent", [[], [3], [3, 4], [3, 4, 5, 6]])
def test_stopping_keeps_every_result_a_gone_worker_sent(sent):
    pool = Pool([(f"m{i}.py",) for i in range(8)], 1, _unused, _unused)
    parent, child = multiprocessing.get_context("fork").Pipe()
    worker = multiprocessing.get_context("fork").Process(
        target=_sends_then_leaves, args=(child, sent)
    )
    worker.start()
    child.close()
    worker.join()  # gone, its results still in the pipe: its sentinel and its pipe both ready
    pool.workers[parent] = (worker, [3, 4, 5, 6])
    pool._stop()
    assert pool.done == {index: f"result {index}" for index in sent}
    assert pool.workers == {}


class _SignalAfterRead:
    """A pipe end whose ``recv`` is hit by ``signum`` just after a result was read from it."""

    def __init__(self, conn: Connection, signum: int) -> None:
        self.conn, self.signum = conn, signum

    def recv(self) -> object:
        message = self.conn.recv()
        os.kill(os.getpid(), self.signum)
        return message

    def send(self, message: object) -> None:
        self.conn.send(message)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_while_a_result_is_read_waits_until_it_is_kept(signum):
    """The result a worker sent for a file it wrote is the main process's once read: a signal
    then stops the run, but only after the result is kept (or the file goes unreported)."""
    pool = Pool([(f"m{i}.py",) for i in range(8)], 1, _unused, _unused)
    parent, child = multiprocessing.get_context("fork").Pipe()
    worker = multiprocessing.get_context("fork").Process(
        target=_sends_then_leaves, args=(child, [3])
    )
    worker.start()
    child.close()
    worker.join()
    end = _SignalAfterRead(parent, signum)
    pool.workers[end] = (worker, [3, 4])  # type: ignore[index]
    with interrupt.raising(), pytest.raises(interrupt.Interrupted) as stop:
        pool._receive(end)  # type: ignore[arg-type]
    assert stop.value.signum == signum
    assert pool.done == {3: "result 3"}
    parent.close()
