"""``--add-todos``: a ``# TODO(jaxmigrate): CODE what to do`` comment above each finding.

The markers are jaxmigrate's own: before migrating, every line that is exactly such a marker
is taken out; after migrating, one marker is written above the statement of each finding that
is still there.  So a later run neither duplicates a marker nor keeps one whose site is gone
(fixed by hand, or by a newer jaxmigrate).  A marker goes above the first line of the
innermost statement holding the finding (above its decorators for a decorated definition),
with that statement's indentation, so it never lands inside a bracket or a string.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from typing import Dict, List, Sequence, Set, Tuple

from jaxmigrate.migrator.diagnostics import Diagnostic

PREFIX = "# TODO(jaxmigrate): "
MARKER_RE = re.compile(r"^[ \t]*# TODO\(jaxmigrate\): JAX\d{3} .*(\r?\n|$)")
MAX_MESSAGE = 200
_MIN_WORDS = 30  # a marker keeps this much of its message however deep its indentation


def _comment_lines(text: str) -> Set[int]:
    """Lines that hold only a comment (a marker-like line inside a string is not one)."""
    lines: Set[int] = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT and not token.line[: token.start[1]].strip():
                lines.add(token.start[0])
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return set()
    return lines


def strip_markers(text: str) -> Tuple[str, Dict[int, int]]:
    """The text without jaxmigrate's own TODO lines, and new line -> line in ``text``."""
    kept: List[str] = []
    mapping: Dict[int, int] = {}
    if "# TODO(jaxmigrate): " not in text:
        return text, {}
    comments = _comment_lines(text)
    for number, line in enumerate(text.splitlines(keepends=True), start=1):
        if number not in comments or not MARKER_RE.match(line):
            kept.append(line)
            mapping[len(kept)] = number
    return "".join(kept), mapping


def marker_text(diagnostic: Diagnostic, width: int = len(PREFIX) + 8 + MAX_MESSAGE) -> str:
    """The marker for ``diagnostic`` in at most ``width`` characters (the project's line
    length less the indentation): the message is cut at a word, with "...", where it would
    run past it (the whole finding is in the run's report and ``jaxmigrate explain``)."""
    head = f"{PREFIX}{diagnostic.code} "
    message = " ".join(diagnostic.message.split())
    room = max(width - len(head), _MIN_WORDS)
    if len(message) > room:
        cut = message[: room - 3]
        if " " in cut and message[room - 3] != " ":
            cut = cut[: cut.rindex(" ")]
        message = cut.rstrip(" ,;:(") + "..."
    return head + message


def _statement_starts(tree: ast.AST) -> List[Tuple[int, int, int]]:
    """(first line, last line, column) of every statement."""
    spans = []
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt):
            first = node.lineno
            for decorator in getattr(node, "decorator_list", ()):
                first = min(first, decorator.lineno)
            end = getattr(node, "end_lineno", None) or node.lineno
            spans.append((first, end, node.col_offset))
    return spans


def _anchor(spans: Sequence[Tuple[int, int, int]], line: int) -> Tuple[int, int]:
    """The first line and column of the innermost statement containing ``line``."""
    best = None
    for first, end, column in spans:
        if first <= line <= end:
            if best is None or (first, -end) >= (best[0], -best[1]):
                best = (first, end, column)
    if best is None:
        return line, 0
    return best[0], best[2]


def add_markers(
    text: str, findings: Sequence[Diagnostic], line_length: int = 0
) -> Tuple[str, Dict[int, int]]:
    """The text with markers, and old line -> new line for every line of ``text``; each
    marker within ``line_length`` (0: no limit but :data:`MAX_MESSAGE`)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return text, {}
    spans = _statement_starts(tree)
    lines = text.splitlines(keepends=True)
    newline = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
    wanted: Dict[int, List[str]] = {}
    for diagnostic in sorted(findings, key=lambda d: (d.line, d.column, d.code)):
        first, column = _anchor(spans, diagnostic.line)
        if first < 1 or first > len(lines):
            continue
        indent = lines[first - 1][: len(lines[first - 1]) - len(lines[first - 1].lstrip(" \t"))]
        width = line_length - len(indent.expandtabs()) if line_length else 0
        marker = indent + (marker_text(diagnostic, width) if width else marker_text(diagnostic))
        if marker not in wanted.setdefault(first, []):
            wanted[first].append(marker)
    out: List[str] = []
    mapping: Dict[int, int] = {}
    for number, line in enumerate(lines, start=1):
        for marker in wanted.get(number, ()):
            out.append(marker + newline)
        mapping[number] = len(out) + 1
        out.append(line)
    return "".join(out), mapping


def shift(diagnostic: Diagnostic, mapping: Dict[int, int]) -> Diagnostic:
    import dataclasses

    if not mapping:
        return diagnostic
    line = mapping.get(diagnostic.line, diagnostic.line)
    end = mapping.get(diagnostic.end_line, diagnostic.end_line) if diagnostic.end_line else 0
    return dataclasses.replace(diagnostic, line=line, end_line=end)
