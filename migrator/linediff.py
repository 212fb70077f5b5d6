"""The line diff of a migration: what ``--diff`` prints and findings are carried back through.

``difflib.SequenceMatcher`` treats a line as junk, never matched on its own, when it makes up
more than 1% of a text of 200 lines or more (its "autojunk" heuristic): in a long module the
blank lines and a repeated ``return x`` are such lines.  Next to a changed line they are then
shown as removed and added again, a hunk a maintainer reads as a change that is not there.
Matching the whole file without the heuristic costs a quadratic search over those lines
(half a second on a 10,000-line module), so the heuristic still finds the changed regions,
and each region is matched again without it: the lines it holds in common come out as
context.  A region too big to match again cheaply is left as the heuristic found it.

:func:`unified_diff` is one file's diff as ``--diff`` prints it, which ``git apply`` and
``patch -p1`` take where jaxmigrate ran: its headers name the file from the current directory
(:func:`diff_path`), and its lines end at ``\n`` only.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path
from typing import Iterator, List, Literal, Optional, Sequence, Tuple

Opcode = Tuple[Literal["replace", "delete", "insert", "equal"], int, int, int, int]
# A changed region is matched again when (its old lines) x (its new lines) is at most this.
REFINE_LIMIT = 250_000


class LineMatcher(difflib.SequenceMatcher[str]):
    """A ``SequenceMatcher`` of two lists of lines whose changed regions are matched again
    without the autojunk heuristic (see the module's docstring); ``get_grouped_opcodes``
    groups these opcodes as it groups its own."""

    def __init__(self, old: Sequence[str], new: Sequence[str]) -> None:
        super().__init__(None, old, new)
        self._old, self._new = old, new
        self._refined: List[Opcode] = []

    def get_opcodes(self) -> List[Opcode]:
        if not self._refined:
            self._refined = _merged(self._refine(super().get_opcodes()))
        return list(self._refined)

    def _refine(self, opcodes: List[Opcode]) -> Iterator[Opcode]:
        old, new = self._old, self._new
        for tag, i1, i2, j1, j2 in opcodes:
            if tag != "replace" or (i2 - i1) * (j2 - j1) > REFINE_LIMIT:
                yield tag, i1, i2, j1, j2
                continue
            inner = difflib.SequenceMatcher(None, old[i1:i2], new[j1:j2], autojunk=False)
            for sub, a1, a2, b1, b2 in inner.get_opcodes():
                yield sub, i1 + a1, i1 + a2, j1 + b1, j1 + b2


def _merged(opcodes: Iterator[Opcode]) -> List[Opcode]:
    """Adjacent opcodes of the same kind joined, so that context is counted over a run of
    equal lines as a whole."""
    found: List[Opcode] = []
    for tag, i1, i2, j1, j2 in opcodes:
        if found and found[-1][0] == tag:
            _, p1, _, q1, _ = found[-1]
            found[-1] = (tag, p1, i2, q1, j2)
        else:
            found.append((tag, i1, i2, j1, j2))
    return found


def unified(
    old: Sequence[str], new: Sequence[str], fromfile: str, tofile: str, context: int = 3
) -> Iterator[str]:
    """The lines of a unified diff of ``old`` and ``new`` (lines that keep their endings), in
    the format of ``difflib.unified_diff`` with its defaults, over :class:`LineMatcher`."""
    started = False
    for group in LineMatcher(old, new).get_grouped_opcodes(context):
        if not started:
            started = True
            yield f"--- {fromfile}\n"
            yield f"+++ {tofile}\n"
        first, last = group[0], group[-1]
        yield f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@\n"
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                yield from (" " + line for line in old[i1:i2])
                continue
            if tag in ("replace", "delete"):
                yield from ("-" + line for line in old[i1:i2])
            if tag in ("replace", "insert"):
                yield from ("+" + line for line in new[j1:j2])


def _range(start: int, stop: int) -> str:
    """A hunk's range as unified diffs write it: 1-based start, and the length unless it is
    1 (an empty range names the line before it)."""
    length = stop - start
    if length == 1:
        return str(start + 1)
    return f"{start if length == 0 else start + 1},{length}"


def unified_diff(path: str, before: str, after: str, label: str = "") -> str:
    """A unified diff of one file that ``git apply`` and ``patch -p1`` take: lines end at
    ``\n`` only (a ``\r\n`` ending, a form feed inside a line are kept as they are), a last
    line without one is marked ``\\ No newline at end of file``, and the headers name the
    file as :func:`diff_path` says, after ``a/`` and ``b/``.  ``label`` follows the name
    (``:cell 3`` for the cell view of a notebook, which is for reading, not applying)."""
    name = diff_path(path) + label
    lines = []
    for line in unified(_lines(before), _lines(after), f"a/{name}", f"b/{name}"):
        if not line.endswith("\n"):
            line += "\n\\ No newline at end of file\n"
        lines.append(line)
    return "".join(lines)


def _lines(text: str) -> List[str]:
    """The lines of ``text`` as git and patch count them: ended by ``\n`` (kept)."""
    lines = text.split("\n")
    return [line + "\n" for line in lines[:-1]] + ([lines[-1]] if lines[-1] else [])


def diff_path(path: str) -> str:
    """The name a diff header gives ``path`` (without ``a/`` or ``b/``): its path from the
    current directory, so that ``git apply`` or ``patch -p1`` run where jaxmigrate ran applies
    it, whether the path was given relative or absolute; a file outside the current directory
    keeps its absolute path without the leading ``/`` (``git diff --no-index``'s form: it
    applies from ``/``).  ``-`` (stdin) stays ``-``."""
    if path == "-":
        return path
    try:
        absolute = os.path.abspath(path)
        inside = _inside(os.path.relpath(absolute))
        if inside is None:  # a symlinked current directory spelt differently: compare real ones
            real = os.path.join(os.path.realpath(os.path.dirname(absolute)), Path(path).name)
            inside = _inside(os.path.relpath(real, os.path.realpath(os.curdir)))
    except (OSError, ValueError):  # no current directory; another drive on Windows
        return path.replace(os.sep, "/").lstrip("/")
    if inside is not None:
        return inside.replace(os.sep, "/")
    return os.path.splitdrive(absolute)[1].replace(os.sep, "/").lstrip("/")


def _inside(relative: str) -> Optional[str]:
    """``relative`` when it stays in the current directory, else None."""
    if relative == os.pardir or relative.startswith(os.pardir + os.sep):
        return None
    return relative
