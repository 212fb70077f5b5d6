"""Handing a big module's ``ast`` facts from one engine run on its text to the next.

A run with the default target migrates each file twice: the survey that finds the floor
(:mod:`migrator.target`), then the run itself.  For a module over
:data:`migrator.piecewise.PIECEWISE_CHARS`, CPython's parse and the walks over its tree (the
facts, the nesting depth, the piecewise scans) are most of either pass: about 6 s of each for
a 6 MB generated file.  Within :func:`handing_on`, the engine keeps the facts of the last such
module it read, and a run on the same text starts from them instead of parsing again.

Only a run over one file asks for it (:mod:`migrator.cli`): over many files, a tree of about
80 bytes a source byte would sit under every other file's LibCST parse.  The engine also lets
go of it before it parses such a module whole with LibCST (the fallback of the piecewise
path), whose peak is many times the tree's.

Nothing here imports the engine: the command line opens the context before it knows whether
any file needs the engine at all.
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator, Optional, Tuple

_enabled = False
_depth = 0  # open contexts: the outermost decides
_slot: Optional[Tuple[str, Any]] = None  # (the module's text, its Facts)


@contextlib.contextmanager
def handing_on(enabled: bool = True) -> Iterator[None]:
    """Within: the engine keeps a big module's facts for the next run on the same text."""
    global _enabled, _depth, _slot
    if _depth == 0:
        _enabled = enabled
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        if _depth == 0:
            _enabled, _slot = False, None


def enabled() -> bool:
    return _enabled


def keep(text: str, facts: Any) -> None:
    """Keep ``facts`` (of ``text``) for the next run, in place of any kept before."""
    global _slot
    if _enabled:
        _slot = (text, facts)


def take(text: str) -> Optional[Any]:
    """The facts kept for ``text``, if they were (the slot keeps them for a later run too)."""
    if _slot is None:
        return None
    kept_text, facts = _slot
    return facts if kept_text is text or kept_text == text else None


def drop() -> None:
    """Let go of what is kept (before a parse whose peak must not have it underneath)."""
    global _slot
    _slot = None
