"""The code of a freshly parsed module's top-level statements, cut from its source.

LibCST gives a module's source back exactly (but for the clauses :mod:`migrator.lossless`
watches), so the code of each top-level statement of the tree it parsed is a run of whole
lines of the source.  The position pass counts the lines of the statements before a node, and
the output joins the code of every statement (:mod:`migrator.positions`): both generated the
code of each statement of the first round's tree again, a third of what a parse costs.

CPython's tree of the same source says on which line each top-level statement's first token
stands (its first decorator's, for a decorated one); LibCST gives the blank and comment lines
just before it to the statement (``leading_lines``).  So statement ``k`` starts that many lines
earlier, and ends where statement ``k + 1`` starts.  Every boundary is checked against the
text: the leading lines must read exactly as LibCST holds them, the line after them must hold
code (starting with ``@`` when decorated), the two trees' statements must pair up (one LibCST
line of small statements for each run of ``ast`` statements on it, one compound statement for
one), and the module's header and footer must fill what is left.  Anything else leaves the
per-file cache as it was, and the code is generated, as before.
"""

from __future__ import annotations

import ast
from typing import List, Optional, Sequence, Tuple

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.migrator.lossless import SUSPECT
from jaxmigrate.migrator.piecewise import line_starts
from jaxmigrate.migrator.traversal import subtree_cache

First = Tuple[int, bool]  # (the line of a statement's first token, compound)

_COMPOUND = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.If,
    ast.For,
    ast.AsyncFor,
    ast.While,
    ast.Try,
    ast.With,
    ast.AsyncWith,
    *(getattr(ast, name) for name in ("Match", "TryStar") if hasattr(ast, name)),
)


def first_lines(tree: ast.Module) -> List[First]:
    """Where each top-level statement of ``tree`` starts, and whether it is compound."""
    found: List[First] = []
    for statement in tree.body:
        decorators = getattr(statement, "decorator_list", None)
        line = decorators[0].lineno if decorators else statement.lineno
        found.append((line, isinstance(statement, _COMPOUND)))
    return found


def seed_statement_code(module: cst.Module, text: str, firsts: Sequence[First]) -> bool:
    """Put the code of each statement of ``module`` (LibCST's parse of ``text``) in the per-file
    cache of statement code, cut from ``text`` (``firsts``: :func:`first_lines` of CPython's
    tree of it); False, with nothing put, where a boundary does not check out."""
    codes = subtree_cache("code")
    if codes is None or not module.body or "\r" in text or not module.has_trailing_newline:
        return False
    if module.default_newline != "\n" or SUSPECT.search(text):
        return False
    if all(id(statement) in codes for statement in module.body):
        return True  # (a tree a survey cut already: migrator.handoff)
    starts = line_starts(text)  # line n at starts[n - 1]
    lines = len(starts) - 1  # (the text ends with a line break)
    bounds = _bounds(module, text, starts, firsts)
    if bounds is None:
        return False
    footer = lines + 1 - len(module.footer)
    if bounds[0] != len(module.header) + 1 or footer <= bounds[-1]:
        return False
    if not _reads_as(module.header, text, starts, 1):
        return False
    if not _reads_as(module.footer, text, starts, footer):
        return False
    bounds.append(footer)
    for index, statement in enumerate(module.body):
        if id(statement) not in codes:
            code = text[starts[bounds[index] - 1] : starts[bounds[index + 1] - 1]]
            codes[id(statement)] = (statement, code)
    return True


def _bounds(
    module: cst.Module, text: str, starts: List[int], firsts: Sequence[First]
) -> Optional[List[int]]:
    """The first line of each statement's code (its leading lines included), or None."""
    bounds: List[int] = []
    at = 0  # the next statement of CPython's tree
    previous = 0  # the line of the last statement's first token
    for statement in module.body:
        if at >= len(firsts):
            return None
        line, compound = firsts[at]
        if isinstance(statement, cst.SimpleStatementLine):
            small = len(statement.body)
            if any(firsts[k][1] for k in range(at, min(at + small, len(firsts)))):
                return None
            at += small
        elif compound:
            at += 1
        else:
            return None
        leading = statement.leading_lines
        start = line - len(leading)
        if start <= previous or line >= len(starts):
            return None
        if not _reads_as(leading, text, starts, start):
            return None
        first = text[starts[line - 1] : starts[line]].lstrip(" \t\f")
        if not first or first[0] in "#\n" or first.startswith("\\"):
            return None
        decorated = bool(getattr(statement, "decorators", ()))
        if decorated != first.startswith("@"):
            return None
        bounds.append(start)
        previous = line
    return bounds if at == len(firsts) else None


def _reads_as(
    empty_lines: Sequence[cst.EmptyLine], text: str, starts: List[int], line: int
) -> bool:
    """Do the lines of ``text`` from ``line`` on read as ``empty_lines`` (at the top level)?"""
    if line - 1 + len(empty_lines) >= len(starts):
        return False
    for offset, empty in enumerate(empty_lines):
        if empty.newline.value not in (None, "\n"):
            return False
        written = empty.whitespace.value + (empty.comment.value if empty.comment else "") + "\n"
        number = line + offset
        if text[starts[number - 1] : starts[number]] != written:
            return False
    return True
