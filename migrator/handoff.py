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
computes exactly what it would have from its own parse.  CPython's facts of a module the
survey read with ``ast`` are kept alike, up to :data:`FACTS_CHARS` (about 35 bytes a source
byte once their scopes are let go): on JAX's own sources, the survey parses a twelfth of the
files, 3.4 M characters, a third of the source, and each parse was made again by the run
beyond the budget (2 M characters until it was raised to hold them).  Worker processes
never keep either: the survey and the run of a file may land in different workers.

Nothing here imports the engine: the command line opens the context before it knows whether
any file needs the engine at all.
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

# The source, in characters, whose LibCST trees a run keeps at most (about 130 MB of trees).
MODULE_CHARS = 4_000_000
# The source, in characters, whose CPython facts a run keeps at most (about 140 MB of them).
FACTS_CHARS = 4_000_000

_enabled = False
_modules_enabled = False
# (a module's text, what the survey asks of it before the engine rewrites it): see checking()
_check: Optional[Tuple[str, Callable[..., None]]] = None
_depth = 0  # open contexts: the outermost decides
_slot: Optional[Tuple[str, Any]] = None  # (the module's text, its Facts)


class _Kept(Dict[str, List[Any]]):
    """text -> [what a survey's run made of it, the runs still to take it], holding at most
    ``budget()`` characters of source (:attr:`chars`)."""

    def __init__(self, budget: Callable[[], int]) -> None:
        super().__init__()
        self.budget = budget
        self.chars = 0

    def keep(self, text: str, made: Any) -> None:
        """Keep ``made`` for the next run on ``text``, while the source kept stays within the
        budget.  A text kept already (a copy of a file elsewhere in the tree, or the same file
        named twice) gets one more use of it, and ``made`` in place of what was kept."""
        if not _modules_enabled:
            return
        entry = self.get(text)
        if entry is not None:
            entry[0] = made
            entry[1] += 1
        elif self.chars + len(text) <= self.budget():
            self[text] = [made, 1]
            self.chars += len(text)

    def take(self, text: str) -> Optional[Any]:
        """What was kept for ``text``, if it was.  Once the survey is over, each take uses it
        up once (each run of a file takes it once: the survey's parse serves the run), and the
        last lets it go; during the survey, the run on a copy of the text keeps it again."""
        if not self:
            return None
        entry = self.get(text)
        if entry is None:
            return None
        if not _modules_enabled:
            entry[1] -= 1
            if entry[1] == 0:
                del self[text]
                self.chars -= len(text)
        return entry[0]

    def let_go(self) -> None:
        self.clear()
        self.chars = 0


_modules = _Kept(lambda: MODULE_CHARS)  # LibCST's trees
_facts = _Kept(lambda: FACTS_CHARS)  # CPython's facts


@contextlib.contextmanager
def handing_on(enabled: bool = True, modules: bool = False) -> Iterator[None]:
    """Within: the engine keeps a big module's facts (``enabled``) and, with ``modules``,
    LibCST's trees and CPython's facts of the survey's files (each within its budget), each
    for the next run on the same text."""
    global _enabled, _modules_enabled, _depth, _slot
    if _depth == 0:
        _enabled, _modules_enabled = enabled, modules
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        if _depth == 0:
            _enabled, _modules_enabled, _slot = False, False, None
            _modules.let_go()
            _facts.let_go()


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
    """Do :func:`keep_module` and :func:`keep_facts` keep now (a survey in one process)?"""
    return _modules_enabled


def keep_module(text: str, module: Any) -> None:
    """Keep LibCST's tree of ``text`` for the next run that parses it (:meth:`_Kept.keep`)."""
    _modules.keep(text, module)


def take_module(text: str) -> Optional[Any]:
    """LibCST's tree of ``text`` if one was kept (:meth:`_Kept.take`)."""
    return _modules.take(text)


def keep_facts(text: str, facts: Any) -> None:
    """Keep CPython's facts of ``text`` for the next run that reads it (:meth:`_Kept.keep`)."""
    _facts.keep(text, facts)


def holds_facts(text: str) -> bool:
    """Are CPython's facts of ``text`` kept (:func:`keep_facts`)?"""
    return text in _facts


def take_facts(text: str) -> Optional[Any]:
    """CPython's facts of ``text`` if they were kept (:meth:`_Kept.take`)."""
    return _facts.take(text)


@contextlib.contextmanager
def checking(text: str, check: Callable[..., None]) -> Iterator[None]:
    """Within: the engine, about to rewrite the module ``text`` (not a program of its
    docstrings), first calls ``check`` with the text, its CPython tree, the rules gate 1
    passed and the settings (the survey's :func:`migrator.surveyorder.check_reach`)."""
    global _check
    _check = (text, check)
    try:
        yield
    finally:
        _check = None


def check_for(text: str) -> Optional[Callable[..., None]]:
    """The check :func:`checking` gives for ``text``, if any."""
    kept = _check
    return kept[1] if kept is not None and kept[0] is text else None
