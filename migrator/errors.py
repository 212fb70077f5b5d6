"""The exceptions for a file that cannot be migrated, kept apart from the engine so that the
rounds (which refuse a rule bug that never settles) and the callers that split a file into
several migrations (notebooks, pages, docstrings) raise and catch them without importing the
engine."""

from __future__ import annotations


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


def one_line(error: BaseException) -> str:
    return " ".join(f"{type(error).__name__}: {error}".split())[:200]
