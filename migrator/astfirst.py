"""Findings without LibCST: the engine's path for a file whose every candidate rule can answer
from CPython's ``ast`` (:meth:`migrator.rule.Rule.ast_findings`) and has no fix to make there.

Most modern files that pass the gates only carry findings (a private ``jax._src`` import, say),
and a LibCST parse costs about five times the ``ast`` parse gate 2 already made (issue #29).
Here each candidate rule reads the file through one :class:`migrator.astview.AstView`; if
any of them cannot answer (None), the engine parses with LibCST as before.  What the rounds
do to findings before they are reported (a backstop's repeats dropped, duplicates merged,
the file's order) is done the same way here.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, FrozenSet, List, Optional, Sequence, Tuple

from jaxmigrate.migrator.astfacts import iter_statements
from jaxmigrate.migrator.astview import TRY_STATEMENTS, AstView
from jaxmigrate.migrator.diagnostics import Diagnostic
from jaxmigrate.migrator.lossless import SUSPECT

if TYPE_CHECKING:  # pragma: no cover
    from jaxmigrate.migrator.astfacts import Facts
    from jaxmigrate.migrator.astfixes import AstEdit
    from jaxmigrate.migrator.rule import Rule
    from jaxmigrate.migrator.settings import Settings


def findings_on_ast(
    text: str,
    facts: "Facts",
    rules: Sequence["Rule"],
    settings: "Settings",
    as_read: Optional[Tuple[str, ast.Module]] = None,
    edits: Optional[List[Tuple[AstView, List[Tuple["Rule", AstEdit]]]]] = None,
) -> Optional[List[Diagnostic]]:
    """Every finding of ``rules`` (the candidates, in run order) in ``text``, as the LibCST
    path reports them; None when one of the rules cannot tell without LibCST.

    ``as_read``: the file as read (text and tree), when ``text`` is what fixes made of it.
    ``edits``: where a rule has fixes it can write from ``ast`` (:meth:`Rule.ast_edits`) and
    every other rule answers, the view and the rules' edits are put there (and the answer is
    None: :mod:`migrator.astfixes` writes them)."""
    if facts.tree is None or (SUSPECT.search(text) and _loses_except(text, facts.tree)):
        return None  # LibCST's positions there are mapped from its own code (migrator.lossless)
    if any(_never_answers(rule) for rule in rules):
        return None  # before the view's walk of the whole tree (seconds on a big file)
    view = AstView(text, facts, settings, tuple(rule.code for rule in rules), _words(facts, rules))
    if as_read is not None:
        view.as_read = as_read
    try:
        return _answered(view, rules, edits)
    finally:
        view.finishing.clear()  # (the answers waiting there hold the view: no cycle is left)


def _answered(
    view: AstView,
    rules: Sequence["Rule"],
    edits: Optional[List[Tuple[AstView, List[Tuple["Rule", AstEdit]]]]],
) -> Optional[List[Diagnostic]]:
    """:func:`findings_on_ast` once the view is made."""
    found: List[Diagnostic] = []
    made: List[Tuple["Rule", AstEdit]] = []
    for rule in rules:
        answer = rule.ast_findings(view)
        if answer is None:
            written = None if edits is None else rule.ast_edits(view)
            if not written:
                return None
            made.extend((rule, edit) for edit in written)
            continue
        found.extend(answer)
    if made:
        if view.finishing:
            return None  # (an answer still to make on the text as fixed: LibCST decides)
        assert edits is not None
        edits.append((view, made))
        return None
    for finish in view.finishing:  # (an answer that reads the other rules' findings)
        more = finish(found)
        if more is None:
            return None
        found.extend(more)
    for code, lines in view.unless_spoken.items():
        spoken = {d.line for d in found if d.code != code}
        spoken.update(*(lines for c, lines in view.covered_by.items() if c != code))
        if not spoken.isdisjoint(lines):
            return None
    backstops = {rule.code for rule in rules if rule.backstop}
    if backstops and any(d.code in backstops for d in found):  # rounds._without_backstop_repeats
        spoken = {d.line for d in found if d.code not in backstops}
        spoken.update(view.suppressed_lines())
        spoken.update(view.covered_lines)
        found = [d for d in found if d.code not in backstops or d.line not in spoken]
    return sorted(set(found), key=lambda d: (d.line, d.column, d.code, d.message))


def _words(facts: "Facts", rules: Sequence["Rule"]) -> Optional[FrozenSet[str]]:
    """The words every statement the view walks must spell one of (:meth:`Rule.view_words`
    of each of ``rules``); None when one of them reads every statement."""
    found: FrozenSet[str] = frozenset()
    for rule in rules:
        words = rule.view_words(facts)
        if words is None:
            return None
        found |= words
    return found


def _never_answers(rule: "Rule") -> bool:
    """The rule keeps :meth:`migrator.rule.Rule.ast_findings` as the base class has it (None)."""
    from jaxmigrate.migrator.rule import Rule

    return type(rule).ast_findings is Rule.ast_findings


def _loses_except(text: str, tree: ast.Module) -> bool:
    """Does an ``except`` clause without ``as`` have white space (or a continuation) before
    its colon, which LibCST's parser drops (:mod:`migrator.lossless`)?"""
    lines = None
    handlers = (
        handler
        for statement in iter_statements(tree)  # (an except clause is only a statement's)
        if type(statement) in TRY_STATEMENTS
        for handler in statement.handlers  # type: ignore[attr-defined]
    )
    for node in handlers:
        if node.name is not None:
            continue
        if lines is None:
            lines = text.splitlines(keepends=True) if "\r" not in text else None
            if lines is None:
                return True  # (odd line ends: let LibCST decide)
        if node.type is None:
            line, offset, strip = node.lineno, node.col_offset + len("except"), ""
        else:
            line, offset, strip = node.type.end_lineno or 0, node.type.end_col_offset or 0, ")"
        if not 0 < line <= len(lines):
            return True
        rest = lines[line - 1].encode("utf-8", "surrogatepass")[offset:]
        if not rest.decode("utf-8", "replace").lstrip(strip).startswith(":"):
            return True
    return False
