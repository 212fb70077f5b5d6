"""Leaving out the methods of a kept class that hold no site (the piecewise path).

A top-level class is kept whole when one of its methods holds a site; its other methods
often make most of its text.  :func:`member_runs` finds, in such a class, the runs of methods
that can be left out as a top-level statement is (:mod:`migrator.piecewise`): a method
(a ``def`` with its decorators, alone on its lines) that holds no site, whose name the class
body does not read at class level (a decorator such as ``@x.setter``, a default, an
assignment), and that reads no module-level name whose bindings the reduced module must see
whole.  A class whose decorators, bases or keywords hold a site is never opened: a rule
acting there may read the whole class.  Each run gives way to one marker ``def`` at the
class body's indentation, and comes back byte for byte.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import re
from typing import FrozenSet, List, Optional, Set, Tuple

from jaxmigrate.migrator.piecescan import Scan, Unsure, bound_anywhere
from jaxmigrate.migrator.piecesites import Resolver

_GAP = re.compile(r"[ \t\f]*(#[^\r\n]*)?\r?\n?\Z")
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


@dataclasses.dataclass
class MemberRun:
    """Methods left out of a class: 0-based lines ``first``..``end`` (exclusive), the body's
    ``indent``, what they read from and bind in the module, and every name they bind."""

    first: int
    end: int
    indent: str
    reads: Set[str]
    binds: Set[str]
    anywhere: Set[str]


def member_runs(
    node: ast.ClassDef,
    text: str,
    starts: List[int],
    resolver: Resolver,
    relevant: FrozenSet[str],
) -> Tuple[List[MemberRun], Optional[ast.ClassDef]]:
    """The runs of ``node``'s methods to leave out, and the class as the reduced module holds
    it (for its scan); ([], None) when none can be.  ``relevant``: the module-level names
    whose every read the reduced module must see."""
    if resolver.holds_site([*node.decorator_list, *node.bases, *node.keywords]):
        return [], None
    body = node.body
    if not body or node.end_lineno is None:
        return [], None
    column = body[0].col_offset
    indent = text[starts[body[0].lineno - 1] : starts[body[0].lineno - 1] + column]
    if not indent or indent.strip(" \t"):
        return [], None  # the body shares the ``class`` line, or odd leading characters
    units = line_units(body, column)
    if units is None or not _gaps_are_clean(text, starts, units):
        return [], None
    class_reads = _class_level_reads(body)
    droppable: List[Optional[Scan]] = []
    for _first, end, statements in units:
        droppable.append(_droppable(statements, text, starts, end, resolver, relevant, class_reads))
    runs: List[MemberRun] = []
    index = 0
    while index < len(units):
        if droppable[index] is None:
            index += 1
            continue
        run = MemberRun(units[index][0], units[index][1], indent, set(), set(), set())
        while index < len(units):
            scan, statement = droppable[index], units[index][2][0]
            if scan is None or not isinstance(statement, _FUNCTIONS):
                break
            run.reads |= scan.reads
            run.binds |= scan.binds - {statement.name}
            run.anywhere |= bound_anywhere([statement])
            run.end = units[index][1]
            index += 1
        upto = units[index][0] if index < len(units) else node.end_lineno
        for line in range(run.end, upto):  # comment lines LibCST gives the last method's block
            if _deeper_comment(text, starts, line, indent):
                run.end = line + 1
        runs.append(run)
    if not runs:
        return [], None
    left = [u[2][0] for u, scan in zip(units, droppable) if scan is not None]
    reduced = copy.copy(node)
    reduced.body = [s for s in body if not any(s is d for d in left)] or [ast.Pass()]
    return runs, reduced


Member = Tuple[int, int, List[ast.stmt]]  # 0-based first line, line after the last, statements


def line_units(body: List[ast.stmt], column: int) -> Optional[List[Member]]:
    """``body``'s statements grouped into whole lines (``a; b`` share one), or None where one
    does not start at ``column``."""
    units: List[List] = []
    for statement in body:
        first = min(
            [statement.lineno, *(d.lineno for d in getattr(statement, "decorator_list", ()))]
        )
        end = statement.end_lineno
        if end is None:
            return None
        if units and first - 1 < units[-1][1]:
            units[-1][1] = max(units[-1][1], end)
            units[-1][2].append(statement)
        else:
            if statement.col_offset != column:
                return None
            units.append([first - 1, end, [statement]])
    return [(first, end, statements) for first, end, statements in units]


def _droppable(
    statements: List[ast.stmt],
    text: str,
    starts: List[int],
    end: int,
    resolver: Resolver,
    relevant: FrozenSet[str],
    class_reads: Set[str],
) -> Optional[Scan]:
    """The scan of a method that can be left out, else None."""
    if len(statements) != 1 or not isinstance(statements[0], _FUNCTIONS):
        return None
    method = statements[0]
    if method.name in class_reads or resolver.holds_site(statements):
        return None
    last = text[starts[end - 1] : starts[end] if end < len(starts) else len(text)]
    if last.rstrip("\r\n").endswith("\\"):
        return None
    try:
        scan = Scan.of(method)
    except (Unsure, RecursionError):
        return None
    if scan.imports:  # (an import is a site of its own, as in a top-level statement)
        return None
    if not relevant.isdisjoint(scan.reads):
        return None
    return scan


def _class_level_reads(body: List[ast.stmt]) -> Set[str]:
    """The names the class body reads in its own scope: everything but the functions' bodies
    (decorators, defaults and annotations included)."""
    found: Set[str] = set()
    stack: List[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Name):
            found.add(node.id)
            continue
        if isinstance(node, _FUNCTIONS):
            stack.extend(node.decorator_list)
            stack.append(node.args)
            if node.returns is not None:
                stack.append(node.returns)
            continue
        if isinstance(node, ast.Lambda):
            stack.append(node.args)
            continue
        stack.extend(ast.iter_child_nodes(node))
    return found


def _deeper_comment(text: str, starts: List[int], line: int, indent: str) -> bool:
    """A comment line indented deeper than the class body (LibCST's, of the block before)."""
    begin = starts[line]
    end = starts[line + 1] if line + 1 < len(starts) else len(text)
    content = text[begin:end]
    stripped = content.lstrip(" \t\f")
    lead = content[: len(content) - len(stripped)]
    return stripped.startswith("#") and len(lead) > len(indent) and lead.startswith(indent)


def _gaps_are_clean(text: str, starts: List[int], units: List[Member]) -> bool:
    """Only blank and comment lines between the class body's statements."""
    for (_first, end, _s), (following, _end, _t) in zip(units, units[1:]):
        for line in range(end, following):
            stop = starts[line + 1] if line + 1 < len(starts) else len(text)
            if not _GAP.match(text, starts[line], stop):
                return False
    return True
