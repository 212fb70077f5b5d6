"""The exceptions for a file that cannot be migrated, kept apart from the engine so that the
rounds (which refuse a rule bug that never settles) and the callers that split a file into
several migrations (notebooks, pages, docstrings) raise and catch them without importing the
engine; and the collection of the internal errors those calls report."""

from __future__ import annotations

import contextlib
import threading
from typing import TYPE_CHECKING, Iterator, List, Optional, Sequence

if TYPE_CHECKING:  # pragma: no cover
    from jaxmigrate.migrator.diagnostics import Diagnostic
    from jaxmigrate.migrator.version import Version


class MigrationError(Exception):
    """A file that cannot be migrated: it does not parse, is nested too deeply, or the
    engine failed on it.  ``cacheable`` is False for what depends on the machine (memory)."""

    def __init__(
        self, message: str, line: int = 0, column: int = 0, cacheable: bool = True
    ) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column
        self.cacheable = cacheable


class SourceSyntaxError(MigrationError):
    """The input is not valid Python."""


class LeftOut(Exception):
    """A rule's hook, run on a module the piecewise path reduced (:mod:`migrator.piecewise`),
    needs what a statement left out holds: the engine parses the whole module instead."""


def one_line(error: BaseException) -> str:
    return " ".join(f"{type(error).__name__}: {error}".split())[:200]


class PassedOver(Exception):
    """Raised by the engine in a survey in one process, before it rewrites a module whose
    reach read from its tree (:func:`migrator.surveyorder.check_reach`) is older than a floor
    already found: the module cannot set the target, and is passed over as if at its turn.
    With ``reach``: the reach is only older than the one the module's turn was taken at; it
    waits for its turn there."""

    def __init__(self, reach: Optional["Version"] = None) -> None:
        super().__init__()
        self.reach = reach


class NotebookError(Exception):
    """The file is not a notebook jaxmigrate can read."""


# -- internal errors, for callers that migrate a file in several calls -------------------------
_SINKS = threading.local()


@contextlib.contextmanager
def collecting_errors() -> Iterator[List["Diagnostic"]]:
    """Collects :attr:`Result.errors` of every :func:`migrate_source` call made inside, in this
    thread (a notebook, a page or a file's docstrings are migrated in several calls)."""
    sinks = getattr(_SINKS, "stack", None)
    if sinks is None:
        sinks = _SINKS.stack = []
    sink: List["Diagnostic"] = []
    sinks.append(sink)
    try:
        yield sink
    finally:
        sinks.pop()


def note_errors(errors: Sequence["Diagnostic"]) -> None:
    """Hand one call's internal errors to every :func:`collecting_errors` open in this thread."""
    if errors:
        for sink in getattr(_SINKS, "stack", ()):
            sink.extend(errors)
