"""Where each string value of a TOML document sits, and under which keys: just enough of TOML
for :mod:`migrator.requirement_edit` to edit a requirement string in ``pyproject.toml`` at its
position, keeping every other byte of the file (no TOML library writes a file back as it
was)."""

from __future__ import annotations

import re
from typing import List, NamedTuple, Optional, Tuple


class TomlError(Exception):
    pass


class TomlString(NamedTuple):
    start: int  # the content, between the quotes
    end: int
    value: str
    path: Tuple[str, ...]  # table and keys; array elements add nothing
    in_array: bool  # directly an element of an array
    editable: bool  # a one-line string without escapes


class TomlScanner:
    """Where each string value of a TOML document is, and under which keys.  Just enough of
    TOML to find them; anything it does not follow raises :class:`TomlError`."""

    _BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
    _SCALAR = re.compile(r"[0-9A-Za-z_+\-.:]+(?:[ T]\d\d:\d\d[0-9A-Za-z_+\-.:]*)?")

    def __init__(self, text: str) -> None:
        self.text = text
        self.index = 0
        self.strings: List[TomlString] = []

    def scan(self) -> List[TomlString]:
        table: Tuple[str, ...] = ()
        while True:
            self._skip(newlines=True)
            if self.index >= len(self.text):
                return self.strings
            if self._peek("["):
                double = self._peek("[[")
                self.index += 2 if double else 1
                table = self._key()
                self._expect("]]" if double else "]")
            else:
                keys = self._key()
                self._expect("=")
                self._value(table + keys, in_array=False)
            self._skip(newlines=False)
            if self.index < len(self.text) and self.text[self.index] not in "\r\n":
                raise TomlError(f"unexpected text at {self.index}")

    def _peek(self, literal: str) -> bool:
        return self.text.startswith(literal, self.index)

    def _expect(self, literal: str) -> None:
        self._skip(newlines=False)
        if not self._peek(literal):
            raise TomlError(f"expected {literal!r} at {self.index}")
        self.index += len(literal)

    def _skip(self, newlines: bool) -> None:
        """Past spaces and tabs; with ``newlines``, past line endings and comments too (a
        comment always runs to the end of its line, which the caller then looks at)."""
        text = self.text
        while self.index < len(text):
            char = text[self.index]
            if char in " \t" or (newlines and char in "\r\n"):
                self.index += 1
            elif char == "#":
                while self.index < len(text) and text[self.index] not in "\r\n":
                    self.index += 1
            else:
                return

    def _key(self) -> Tuple[str, ...]:
        parts: List[str] = []
        while True:
            self._skip(newlines=False)
            if self._peek('"') or self._peek("'"):
                parts.append(self._string(record=None))
            else:
                match = self._BARE_KEY.match(self.text, self.index)
                if match is None:
                    raise TomlError(f"expected a key at {self.index}")
                parts.append(match.group())
                self.index = match.end()
            self._skip(newlines=False)
            if not self._peek("."):
                return tuple(parts)
            self.index += 1

    def _string(self, record: Optional[Tuple[Tuple[str, ...], bool]]) -> str:
        """Past the string at the index; its value (escapes left as written).  Records it
        with ``record`` = (path, in_array) when given."""
        text, start = self.text, self.index
        quote = text[start]
        if text.startswith(quote * 3, start):  # multi-line: never edited
            index = start + 3
            while True:
                if index >= len(text):
                    raise TomlError("unterminated string")
                if quote == '"' and text[index] == "\\":
                    index += 2
                elif text.startswith(quote * 3, index):
                    index += 3
                    for _ in range(2):  # up to two more quotes end the content
                        if index < len(text) and text[index] == quote:
                            index += 1
                    break
                else:
                    index += 1
            self.index = index
            return text[start + 3 : index - 3]
        index = start + 1
        while index < len(text) and text[index] != quote:
            if text[index] in "\r\n":
                raise TomlError("unterminated string")
            index += 2 if quote == '"' and text[index] == "\\" else 1
        if index >= len(text):
            raise TomlError("unterminated string")
        value = text[start + 1 : index]
        self.index = index + 1
        if record is not None:
            editable = not (quote == '"' and "\\" in value)
            self.strings.append(TomlString(start + 1, index, value, *record, editable))
        return value

    def _value(self, path: Tuple[str, ...], in_array: bool) -> None:
        self._skip(newlines=False)
        if self.index >= len(self.text):
            raise TomlError("expected a value")
        char = self.text[self.index]
        if char in "\"'":
            self._string(record=(path, in_array))
        elif char == "[":
            self.index += 1
            while True:
                self._skip(newlines=True)
                if self._peek("]"):
                    break
                self._value(path, in_array=True)
                self._skip(newlines=True)
                if self._peek(","):
                    self.index += 1
                elif not self._peek("]"):
                    raise TomlError(f"expected ',' or ']' at {self.index}")
            self.index += 1
        elif char == "{":
            self.index += 1
            self._skip(newlines=False)
            while not self._peek("}"):
                keys = self._key()
                self._expect("=")
                self._value(path + keys, in_array=False)
                self._skip(newlines=False)
                if self._peek(","):
                    self.index += 1
                    self._skip(newlines=False)
                elif not self._peek("}"):
                    raise TomlError(f"expected ',' or '}}' at {self.index}")
            self.index += 1
        else:
            match = self._SCALAR.match(self.text, self.index)
            if match is None:
                raise TomlError(f"expected a value at {self.index}")
            self.index = match.end()
