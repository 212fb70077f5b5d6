"""The engine's big-stack thread (``migrator.guard.with_big_stack``): one thread per process,
kept from call to call, deep recursion inside it, errors handed back, and a call made on it
run there directly."""

from __future__ import annotations

import sys
import threading

import pytest

from jaxmigrate.migrator import guard


def _where(limit: int) -> tuple:
    return threading.current_thread(), sys.getrecursionlimit(), limit


def test_calls_run_on_one_kept_thread_with_the_raised_limit():
    (first, limit, nesting), given = guard.with_big_stack(_where)
    (second, _limit, _nesting), _given = guard.with_big_stack(_where)
    assert first is second is not threading.current_thread()
    assert limit >= guard.RECURSION_LIMIT and nesting == given == guard.MAX_NESTING
    assert sys.getrecursionlimit() < guard.RECURSION_LIMIT  # restored between calls


def _deep(depth: int, limit: int) -> int:
    return 0 if depth == 0 else 1 + _deep(depth - 1, limit)


def test_deep_recursion_fits_its_stack_and_errors_come_back():
    assert guard.with_big_stack(_deep, 20_000)[0] == 20_000

    def fail(limit: int) -> None:
        raise ValueError("inside")

    with pytest.raises(ValueError, match="inside"):
        guard.with_big_stack(fail)
    assert guard.with_big_stack(_where)[0][2] == guard.MAX_NESTING  # still serving


def test_a_call_made_on_the_engine_thread_runs_there():
    def outer(limit: int) -> tuple:
        return threading.current_thread(), guard.with_big_stack(_where)[0][0]

    (outside, inside), _nesting = guard.with_big_stack(outer)
    assert outside is inside
