"""LibCST, imported when a run first uses it: ``from jaxmigrate.migrator import lazycst as cst``.

A run whose files stop at the gates or are answered from CPython's ``ast`` (findings only)
never parses with LibCST, yet importing it costs about 0.1 s (its node classes are
dataclasses, built at import), most of what one such file costs the pre-commit hook.  The
modules that use LibCST at run time (the rules, the rewriting half of the engine) read it
through this module: the first attribute read imports LibCST and keeps the value here, so
every later read is a plain module attribute.  They must not read one at import time
(``tests/test_startup.py`` checks that a findings-only run leaves LibCST unloaded).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from libcst import *  # noqa: F403  (the names mypy sees: LibCST's own)


def __getattr__(name: str) -> object:
    import libcst

    value = getattr(libcst, name)  # (AttributeError, as LibCST gives it, for a name it lacks)
    globals()[name] = value
    return value
