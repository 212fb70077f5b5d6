"""SIGINT and SIGTERM: stop soon, but never in the middle of writing a file.

While a run is on, both signals raise :class:`Interrupted` in the main process (worker
processes leave at once, see :func:`install_worker`), except from the moment a file is
being replaced until whoever reports results has taken that file's result (:func:`hold`
... :func:`release`): a signal that arrives then waits for the next :func:`checkpoint`.  So
every file is either the old one or the new one, and each file that was replaced is known
(and reported) as such.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from typing import Any, Callable, Dict, Iterator, List, Optional

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(BaseException):
    """The run was stopped by ``signum`` (a BaseException: no ``except Exception`` keeps it).
    ``results`` holds what was finished when it stopped, where the runner knows it."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum
        self.results: List[object] = []

    @property
    def exit_code(self) -> int:
        return 128 + self.signum  # what a shell reports for a process the signal ended

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name


class _State:
    critical = 0
    held = False  # a written file's result is on its way to the reporter
    pending: Optional[int] = None
    act: Optional[Callable[[int], None]] = None  # what a signal does outside critical sections


def _handler(signum: int, _frame: object) -> None:
    if _State.critical or _State.held:
        _State.pending = signum
        return
    if _State.act is not None:
        _State.act(signum)


def _raise(signum: int) -> None:
    raise Interrupted(signum)


@contextlib.contextmanager
def critical() -> Iterator[None]:
    """Signals that arrive inside wait (for the next :func:`checkpoint`)."""
    _State.critical += 1
    try:
        yield
    finally:
        _State.critical -= 1


def hold() -> None:
    """Called (inside :func:`critical`) once a file was replaced: signals keep waiting until
    :func:`release`, when the result saying so has reached the reporter."""
    _State.held = True


def release() -> None:
    _State.held = False


def checkpoint() -> None:
    """Acts on a signal that had to wait."""
    signum = _State.pending
    if signum is not None and not (_State.critical or _State.held):
        _State.pending = None
        if _State.act is not None:
            _State.act(signum)


def pending() -> Optional[int]:
    return _State.pending


@contextlib.contextmanager
def raising() -> Iterator[None]:
    """In the main thread of the main process: SIGINT and SIGTERM raise :class:`Interrupted`
    while the block runs (elsewhere the block runs as it is)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous: Dict[signal.Signals, Any] = {}
    for signum in SIGNALS:
        previous[signum] = signal.signal(signum, _handler)
    _State.act, _State.pending, _State.held = _raise, None, False
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        _State.act, _State.pending, _State.held = None, None, False


def holding() -> None:
    """From now on signals only wait (the main process while it stops its workers)."""
    _State.act = None


def install_worker() -> None:
    """In a worker process: SIGINT is the main process's business (a terminal sends it to
    the whole process group); SIGTERM ends the worker at once, or after the file it is
    writing, once that file's result has been sent (see :func:`checkpoint`)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _handler)
    _State.act, _State.pending, _State.critical, _State.held = _leave, None, 0, False


def _leave(signum: int) -> None:
    os._exit(128 + signum)
