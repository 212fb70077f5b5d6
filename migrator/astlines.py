"""Where statements stand: the lines of a text that spell some words, and whether a statement
stands on one of them (:class:`migrator.astview.AstView` leaves out the statements that spell
none of the words its readers ask for)."""

from __future__ import annotations

import ast
import bisect
from typing import FrozenSet, List, Optional

from jaxmigrate.migrator.textscan import ident_char

STATEMENTS = frozenset(
    kind for kind in vars(ast).values() if isinstance(kind, type) and issubclass(kind, ast.stmt)
)


def lines_spelling(text: str, words: FrozenSet[str]) -> Optional[List[int]]:
    """The numbers of the lines of ``text`` that spell one of ``words`` or ``import`` as a whole
    word, in order (in strings and comments too); None where lines do not end in ``\\n`` alone."""
    if "\r" in text:
        return None  # (``ast`` counts ``\r`` as a line end too: not worth the cases)
    starts: List[int] = []
    for word in ("import", *words):
        size, i = len(word), text.find(word)
        while i >= 0:
            end = i + size
            if (not i or not ident_char(text[i - 1])) and (
                end >= len(text) or not ident_char(text[end])
            ):
                starts.append(i)
            i = text.find(word, end)
    starts.sort()
    found: List[int] = []
    line, last = 1, 0
    for start in starts:
        line += text.count("\n", last, start)
        last = start
        if not found or found[-1] != line:
            found.append(line)
    return found


def spans(statement: ast.AST, lines: List[int]) -> bool:
    """Does ``statement`` (its decorators included) stand on one of ``lines``?"""
    first = statement.lineno  # type: ignore[attr-defined]
    for decorator in getattr(statement, "decorator_list", ()):
        first = min(first, decorator.lineno)
    index = bisect.bisect_left(lines, first)
    return index < len(lines) and lines[index] <= statement.end_lineno  # type: ignore[attr-defined]
