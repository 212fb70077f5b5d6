"""Writing a notebook back in its own JSON layout.

Only the ``source`` values of the cells that changed are written anew; every other byte of
the file (outputs with their ``\\u00b5``-style escapes, metadata, key order, indentation,
a compact one-line layout) is kept as it was read, so a diff of the notebook shows the
changed cells only.  Inside a changed cell, a line the migration left alone keeps its
original JSON spelling; a new line is spelled like the file: ASCII-only (``\\uXXXX``
escapes) when the file is pure ASCII, raw characters otherwise, with the file's separators.
"""

from __future__ import annotations

import json
import re
from typing import Any, Dict, List, Optional, Tuple

_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()
Span = Tuple[int, int]


class _Layout(Exception):
    """The text is not laid out as expected: the caller re-serialises the whole notebook."""


def _skip(text: str, index: int) -> int:
    return _WS.match(text, index).end()  # type: ignore[union-attr]


def _expect(text: str, index: int, char: str) -> int:
    if text[index : index + 1] != char:
        raise _Layout(f"expected {char!r} at {index}")
    return index + 1


def _members(text: str, index: int):  # noqa: ANN202 (yields (key, value start, value end))
    """The members of the JSON object starting at ``index``: (key, start, end) of each value."""
    index = _expect(text, _skip(text, index), "{")
    index = _skip(text, index)
    if text[index : index + 1] == "}":
        return
    while True:
        key, index = _DECODER.raw_decode(text, index)
        index = _skip(text, _expect(text, _skip(text, index), ":"))
        _value, end = _DECODER.raw_decode(text, index)
        yield key, index, end
        index = _skip(text, end)
        if text[index : index + 1] == "}":
            return
        index = _skip(text, _expect(text, index, ","))


def _elements(text: str, start: int) -> List[Span]:
    """The spans of the elements of the JSON array starting at ``start``."""
    index = _skip(text, _expect(text, start, "["))
    spans: List[Span] = []
    if text[index : index + 1] == "]":
        return spans
    while True:
        _value, end = _DECODER.raw_decode(text, index)
        spans.append((index, end))
        index = _skip(text, end)
        if text[index : index + 1] == "]":
            return spans
        index = _skip(text, _expect(text, index, ","))


def source_spans(text: str) -> List[Optional[Span]]:
    """Per cell, where its ``source`` value is in ``text`` (None: the cell has none)."""
    for key, start, _end in _members(text, 0):
        if key == "cells":
            cells: List[Optional[Span]] = []
            for cell_start, _cell_end in _elements(text, start):
                found = None
                for name, value_start, value_end in _members(text, cell_start):
                    if name == "source":
                        found = (value_start, value_end)
                cells.append(found)
            return cells
    raise _Layout("no cells")


def _line_start(text: str, index: int) -> int:
    return text.rfind("\n", 0, index) + 1


def _spell_list(text: str, span: Span, lines: List[str], ascii_only: bool, unit: str) -> str:
    start, end = span
    elements = _elements(text, start) if text[start] == "[" else []
    known: Dict[str, str] = {}
    for element_start, element_end in elements:
        value = json.loads(text[element_start:element_end])
        known.setdefault(value, text[element_start:element_end])
    spelled = [known.get(line) or json.dumps(line, ensure_ascii=ascii_only) for line in lines]
    if not spelled:
        return "[]"
    if elements:
        opening = text[start + 1 : elements[0][0]]
        closing = text[elements[-1][1] : end - 1]
        between = (
            text[text.index(",", elements[0][1]) + 1 : elements[1][0]]
            if len(elements) > 1
            else opening
        )
    elif "\n" in text.strip():  # an empty list in an indented file: indent one level deeper
        key_indent = text[_line_start(text, start) : start]
        key_indent = key_indent[: len(key_indent) - len(key_indent.lstrip(" "))]
        opening = between = "\n" + key_indent + unit
        closing = "\n" + key_indent
    else:
        opening = closing = ""
        between = " " if re.search(r'[]}"],\s"', text) else ""
    return "[" + opening + ("," + between).join(spelled) + closing + "]"


def rewrite(text: str, sources: Dict[int, Any]) -> Optional[str]:
    """``text`` with the ``source`` of each cell index in ``sources`` replaced (a list of lines
    or a string, as the cell had it); None when the layout cannot be followed."""
    try:
        spans = source_spans(text)
    except (_Layout, ValueError):
        return None
    ascii_only = text.isascii()
    indent = re.match(r"\{\r?\n( +)\"", text)
    unit = " " * len(indent.group(1)) if indent else ""
    pieces: List[Tuple[Span, str]] = []
    for index, value in sources.items():
        span = spans[index] if index < len(spans) else None
        if span is None:
            return None
        if isinstance(value, list):
            spelled = _spell_list(text, span, value, ascii_only, unit)
        else:
            spelled = json.dumps(value, ensure_ascii=ascii_only)
        pieces.append((span, spelled))
    for (start, end), spelled in sorted(pieces, reverse=True):
        text = text[:start] + spelled + text[end:]
    return text
