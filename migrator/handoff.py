"""Handing what one engine run parsed to the next run on the same text.

A run with the default target migrates each file twice: the survey that finds the floor
(:mod:`migrator.target`), then the run itself.  For a module over
:data:`migrator.piecewise.BIG_CHARS`, CPython's parse and the walks over its tree (the
facts, the nesting depth, the piecewise scans) are most of either pass: about 6 s of each for
a 6 MB generated file.  Within :func:`handing_on`, the engine keeps the facts of the last such
module it read, and a run on the same text starts from them instead of parsing again.

Only a run over one file asks for it (:mod:`migrator.cli`): over many files, a tree of about
80 bytes a source byte would sit under every other file's LibCST parse.  The engine also lets
go of it before it parses such a module whole with LibCST (the fallback of the piecewise
path), whose peak is many times the tree's.

The same holds, for any module the whole-module path parses with LibCST, of LibCST's tree:
about 32 bytes a source byte, where its parse costs most of a fix's time.  A run in one process
(``-j 1``, or one file) keeps up to :data:`MODULE_CHARS` of source in such trees, each taken
back by the next run that parses the same text; a tree is immutable, so the run that takes it
computes exactly what it would have from its own parse.  Worker processes never keep one: the
survey and the run of a file may land in different workers.

Nothing here imports the engine: the command line opens the context before it knows whether
any file needs the engine at all.
"""

from __future__ import annotations

import contextlib
from typing import Any, Dict, Iterator, List, Optional, Tuple

# The source, in characters, whose LibCST trees a run keeps at most (about 130 MB of trees).
MODULE_CHARS = 4_000_000

_enabled = False
_modules_enabled = False
_depth = 0  # open contexts: the outermost decides
_slot: Optional[Tuple[str, Any]] = None  # (the module's text, its Facts)
_modules: Dict[str, List[Any]] = {}  # text -> [LibCST's tree of it, the runs to take it]
_module_chars = 0  # the source kept in _modules


@contextlib.contextmanager
def handing_on(enabled: bool = True, modules: bool = False) -> Iterator[None]:
    """Within: the engine keeps a big module's facts (``enabled``) and, with ``modules``,
    LibCST's trees (up to :data:`MODULE_CHARS`), each for the next run on the same text."""
    global _enabled, _modules_enabled, _depth, _slot, _module_chars
    if _depth == 0:
        _enabled, _modules_enabled = enabled, modules
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        if _depth == 0:
            _enabled, _modules_enabled, _slot = False, False, None
            _modules.clear()
            _module_chars = 0


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


def stop_keeping_modules() -> None:
    """No more trees are kept (the survey is over: the run takes what it kept)."""
    global _modules_enabled
    _modules_enabled = False


def keeping_modules() -> bool:
    """Does :func:`keep_module` keep trees now (a survey in one process)?"""
    return _modules_enabled


def keep_module(text: str, module: Any) -> None:
    """Keep LibCST's tree of ``text`` for the next run that parses it, while the source kept
    stays within :data:`MODULE_CHARS`.  A text kept already (a copy of a file elsewhere in the
    tree, or the same file named twice) gets one more use of its tree, and ``module``'s caches
    in place of the ones kept."""
    global _module_chars
    if not _modules_enabled:
        return
    entry = _modules.get(text)
    if entry is not None:
        entry[0] = module
        entry[1] += 1
    elif _module_chars + len(text) <= MODULE_CHARS:
        _modules[text] = [module, 1]
        _module_chars += len(text)


def take_module(text: str) -> Optional[Any]:
    """LibCST's tree of ``text`` if one was kept.  Once the survey is over, each take uses it
    up once (each run of a file takes it once: the survey's parse serves the run), and the
    last lets it go; during the survey, the run on a copy of the text keeps it again."""
    global _module_chars
    if not _modules:
        return None
    entry = _modules.get(text)
    if entry is None:
        return None
    if not _modules_enabled:
        entry[1] -= 1
        if entry[1] == 0:
            del _modules[text]
            _module_chars -= len(text)
    return entry[0]
