"""Lines of a migrated text mapped back to the lines of the text as read.

Findings are computed on the migrated code.  When the file is not rewritten (``--check``,
``--diff``) a finding must point into the file as it is, so its lines are carried back
through the same line diff ``--diff`` prints: a line the migration kept maps to itself, a
line inside a changed block to the matching line of the block it replaced (its last line, if
the new block is longer), and an inserted line to the line it went in front of.
"""

from __future__ import annotations

import bisect
import dataclasses
from typing import Callable, List, Sequence, Tuple, TypeVar

from jaxmigrate.migrator.diagnostics import Diagnostic
from jaxmigrate.migrator.linediff import LineMatcher

D = TypeVar("D", bound=Diagnostic)


def line_map(before: str, after: str) -> Callable[[int], int]:
    """A function from a 1-based line of ``after`` to the 1-based line of ``before`` it
    came from (or stands where)."""
    old, new = before.splitlines(), after.splitlines()
    matcher = LineMatcher(old, new)  # the alignment --diff shows
    blocks: List[Tuple[int, int, int, int]] = [
        (j1, j2, i1, i2) for _tag, i1, i2, j1, j2 in matcher.get_opcodes() if j2 > j1
    ]
    starts = [block[0] for block in blocks]
    last = max(len(old), 1)

    def to_before(line: int) -> int:
        index = bisect.bisect_right(starts, line - 1) - 1
        if index < 0:
            return min(max(line, 1), last)
        j1, _j2, i1, i2 = blocks[index]
        offset = line - 1 - j1
        if i2 > i1:
            return min(i1 + min(offset, i2 - i1 - 1) + 1, last)
        return min(i1 + 1, last)  # inserted: the line it went in front of

    return to_before


def as_read(diagnostics: Sequence[D], before: str, after: str) -> List[D]:
    """``diagnostics`` located in ``after``, moved to the lines of ``before``."""
    if before == after or not diagnostics:
        return list(diagnostics)
    to_before = line_map(before, after)
    moved = []
    for diagnostic in diagnostics:
        line = to_before(diagnostic.line) if diagnostic.line > 0 else diagnostic.line
        end = (
            max(to_before(diagnostic.end_line), line)
            if diagnostic.end_line > 0
            else diagnostic.end_line
        )
        moved.append(dataclasses.replace(diagnostic, line=line, end_line=end))
    return moved
