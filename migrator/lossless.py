"""Keeping the text no fix touched exactly as written, where LibCST does not give it back.

LibCST is meant to give a file back byte for byte, and nearly always does.  Its parser
(1.9) loses one thing: the white space before the colon of an ``except`` clause that has no
``as`` name, ``except ValueError :`` or ``except ValueError \\`` + newline + ``:``.  The
code LibCST writes for the file then joins that header, so a file rewritten for a fix
elsewhere would change there too, and with a lost line every position after it would point
one line too high.

So for a file whose text can hold such a clause (:data:`SUSPECT`, a cheap search), the
engine compares LibCST's code for the file as parsed with the file itself.  Where they
differ, :class:`Lost` puts the file's own lines back around the fixes, and maps the
positions, which are those of LibCST's code, onto the file's lines.  Nothing else costs
more: every other file is as LibCST gives it.
"""

from __future__ import annotations

import ast
import bisect
import difflib
import re
from typing import List, Optional, Tuple

# An ``except`` clause whose colon follows white space or a backslash continuation (its type
# may run over lines inside brackets; a colon inside the type ends the search early, which only
# a lambda, slice or dict there could cause).
SUSPECT = re.compile(r"except[^:]*[ \t\n]:")  # without a leading \b: 20 times faster

Block = Tuple[int, int, int, int]  # lines [i1, i2) of LibCST's code stand as [j1, j2)


class Lost:
    """Where LibCST's code of a file as parsed (``regenerated``) differs from the file."""

    def __init__(self, source: str, regenerated: str) -> None:
        self.source, self.regenerated = source, regenerated
        self.blocks = _changed(_lines(regenerated), _lines(source)) if regenerated != source else []
        self._starts = [i1 for i1, _i2, _j1, _j2 in self.blocks]

    def line(self, number: int) -> int:
        """A 1-based line of LibCST's code (so a position a rule reports) as the file's line:
        shifted by what each lost block before it removed or added; a line inside a block is
        the block's first line."""
        index = number - 1
        k = bisect.bisect_right(self._starts, index) - 1
        if k < 0:
            return number
        _i1, i2, j1, j2 = self.blocks[k]
        return j1 + 1 if index < i2 else index - i2 + j2 + 1

    def restore(self, output: str) -> Optional[str]:
        """``output``, the migrated code, with the file's own lines back where LibCST lost
        them; None when a fix touches such a line (``output`` then stands as it is)."""
        base, own, new = _lines(self.regenerated), _lines(self.source), _lines(output)
        fixed = _changed(base, new)
        if any(_touch(fix, lost) for fix in fixed for lost in self.blocks):
            return None
        # each block replaces lines [i1, i2) of LibCST's code: a lost block by the file's own
        # lines, a fixed block by the output's (they never share a line)
        edits = [(i1, i2, own[j1:j2]) for i1, i2, j1, j2 in self.blocks]
        edits += [(i1, i2, new[j1:j2]) for i1, i2, j1, j2 in fixed]
        merged: List[str] = []
        at = 0
        for i1, i2, lines in sorted(edits, key=lambda edit: edit[:2]):
            merged += base[at:i1] + lines
            at = i2
        text = "".join(merged + base[at:])
        try:
            same = ast.dump(ast.parse(text)) == ast.dump(ast.parse(output))
        except (SyntaxError, ValueError):
            same = False
        return text if same else None


def _lines(text: str) -> List[str]:
    return text.splitlines(keepends=True)


def _changed(old: List[str], new: List[str]) -> List[Block]:
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    return [op[1:] for op in matcher.get_opcodes() if op[0] != "equal"]


def _touch(fix: Block, lost: Block) -> bool:
    """Whether a fix's lines and a lost block's lines meet (an insertion counts where it falls
    strictly inside the other block)."""
    a, b, c, d = fix[0], fix[1], lost[0], lost[1]
    if a < b and c < d:
        return a < d and c < b
    if a == b:
        return c < a < d or a == c == d
    return a < c < b
