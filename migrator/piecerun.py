"""Running the rounds on a reduced module (:mod:`migrator.piecewise`) and putting the file
back together, or saying None: then the engine parses the whole module, as it would have.

The run counts as the whole module's only when, besides the checks made while reducing:
no rule that reads the whole module (:attr:`migrator.rule.Rule.whole_module`) had a hook
called (every other rule's hooks read only its sites and the names they resolve, which the
reduction keeps whole, or ask for the whole module before they read more:
:meth:`migrator.context.Context.needs_whole_module`, ``needs_name``); the migrated statements
share no module-level name with those left out (a fix that writes a name one of them binds:
the whole module would have seen it taken); LibCST inferred the file's own indentation; every
marker came back as written; and nothing raised.  A rule that raises, a file LibCST
cannot parse, rounds that do not settle: the whole module decides how to report them.
"""

from __future__ import annotations

import ast
import dataclasses
from typing import TYPE_CHECKING, Callable, List, Optional, Set

from jaxmigrate.migrator.diagnostics import Diagnostic
from jaxmigrate.migrator.piecescan import Unsure
from jaxmigrate.migrator.piecewise import LineMap, NotEquivalent, Pieces, couples
from jaxmigrate.migrator.settings import Settings
from jaxmigrate.migrator.source import note_floor

if TYPE_CHECKING:  # pragma: no cover
    from jaxmigrate.migrator.engine import Result
    from jaxmigrate.migrator.plan import Plan

Rewrite = Callable[..., "Result"]


# How many files took the piecewise path, and how many tried it and fell back: what the
# tests read to know which path a file took.
STATS = {"taken": 0, "fell_back": 0}


def migrate_pieces(
    text: str, pieces: Pieces, plan: "Plan", settings: Settings, rewrite: Rewrite
) -> Optional["Result"]:
    """The result for ``text`` from its reduced module, or None (see the module's docstring).
    ``rewrite``: the engine's LibCST parse and rounds (:func:`migrator.engine._rewrite`)."""
    result = _attempt(text, pieces, plan, settings, rewrite)
    STATS["fell_back" if result is None else "taken"] += 1
    return result


def _attempt(
    text: str, pieces: Pieces, plan: "Plan", settings: Settings, rewrite: Rewrite
) -> Optional["Result"]:
    called: Set[str] = set()
    try:
        reduced = rewrite(
            pieces.text, plan, settings, True, text, called, pieces.indent, pieces=pieces
        )
    except Exception:  # noqa: BLE001  (a hook needing more (LeftOut) too: the whole decides)
        return None
    if _reads_whole_module(called, settings):
        return None
    try:
        # (the reduced module's tree: the engine's check that the output parses made it)
        tree = reduced.tree if reduced.tree is not None else ast.parse(reduced.output)
        if couples(tree, pieces):
            return None
    except (SyntaxError, ValueError, MemoryError, RecursionError, Unsure):
        return None
    if reduced.output == pieces.text:
        output = text
    else:
        spliced = pieces.splice(reduced.output)
        if spliced is None:
            return None
        output = spliced
    try:
        before = pieces.line_map(pieces.text)  # fixes are at the lines they changed
        after = pieces.line_map(reduced.output)  # findings and errors at the output's
        fixes = _moved(reduced.fixes, before)
        findings = _moved(reduced.findings, after)
        errors = _moved(reduced.errors, after)
    except NotEquivalent:
        return None
    if settings.survey and pieces.quiet and "jax" in output:
        # the survey asks next for the floor of ``output`` (migrator.source.floor_of): the
        # JAX names it spells are the reduced output's (the statements left out hold no "jax")
        note_floor(output, tree, settings.source)
    return dataclasses.replace(
        reduced,
        source=text,
        output=output,
        fixes=fixes,
        findings=findings,
        errors=errors,
        tree=None,  # (the reduced module's: not the file's)
    )


def _reads_whole_module(called: Set[str], settings: Settings) -> bool:
    if not called:
        return False
    rules = {rule.code: rule for rule in settings.active_rules()}
    return any(
        code not in rules or (rules[code].whole_module and not rules[code].asks_for_whole)
        for code in called
    )


def _moved(diagnostics: List[Diagnostic], line_map: LineMap) -> List[Diagnostic]:
    return [
        dataclasses.replace(
            d, line=line_map(d.line), end_line=line_map(d.end_line) if d.end_line else 0
        )
        for d in diagnostics
    ]
