"""CPython's tree of a big module, parsed a few hundred kilobytes at a time.

``ast.parse`` holds its whole token stream and C-level tree in an arena while it builds the
Python objects: on a 6 MB module its peak is about 1 GB, of which the tree it returns keeps
about 60%.  :func:`parse` cuts a big text at lines that start a top-level statement, parses
each piece on its own and joins their bodies, so the arena is only ever one piece's.

A piece is preceded by as many empty lines as the text has lines before it: CPython numbers
its lines (and a line's columns are its own), so every node carries the position the whole
parse gives it.  A cut is only kept when the piece before it parses alone: that piece's
strings, brackets and line continuations are then all closed at the cut, the tokenizer is in
the same state there as in the whole text, and the next piece starts a statement (a piece
that starts with ``else``/``except``/... does not parse).  A piece that does not parse is
extended past the next cut, twice as far each time; anything else (a text that does not parse
to its end, a future import that changes the grammar) is left to one ``ast.parse`` of the
whole text, which also raises what it raises.  ``tests/test_astparse.py`` compares the joined
tree with the whole parse, positions included, on every fixture with pieces of a few lines.
"""

from __future__ import annotations

import ast
import re
from typing import List

# A text longer than this is parsed in pieces of about this many characters.
PIECE_CHARS = 250_000
# A line that may start a top-level statement: after a line break (CPython's: \n, \r\n, \r),
# a character that no continuation line, comment, blank line or closing bracket starts with.
_CUT = re.compile(r"(?:\r\n?|\n)(?=[A-Za-z_@\[({'\"*~+\-0-9.])")
# A future import that changes what CPython's parser accepts further down the text.
_GRAMMAR_FUTURE = "barry_as_FLUFL"


def parse(text: str, piece_chars: int = PIECE_CHARS) -> ast.Module:
    """``ast.parse(text)``: the same tree, positions included, or the same exception."""
    if len(text) <= piece_chars or _GRAMMAR_FUTURE in text:
        return ast.parse(text)
    body: List[ast.stmt] = []
    start, line = 0, 1  # where the next piece starts, and its line number
    while start < len(text):
        reach = piece_chars
        while True:
            end = _cut_after(text, start + reach)
            try:
                piece = ast.parse("\n" * (line - 1) + text[start:end])
            except (SyntaxError, ValueError):
                if end == len(text):
                    return ast.parse(text)  # (what the whole text raises, or its tree)
                reach *= 2
                continue
            break
        body.extend(piece.body)
        del piece
        line += _line_breaks(text, start, end)
        start = end
    return ast.Module(body=body, type_ignores=[])


def _cut_after(text: str, position: int) -> int:
    """The first cut at or after ``position`` (just after its line break), else the end."""
    if position >= len(text):
        return len(text)
    found = _CUT.search(text, position)
    return len(text) if found is None else found.end()


def _line_breaks(text: str, start: int, end: int) -> int:
    """How many line breaks CPython counts in ``text[start:end]`` (\\r\\n is one)."""
    return (
        text.count("\n", start, end) + text.count("\r", start, end) - text.count("\r\n", start, end)
    )
