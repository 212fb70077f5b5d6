"""Calls read from a module's text, for the gate 1b hooks of :mod:`rules._text_gates` (and
:mod:`rules._array_field_gate`): where a word is called, the text of its arguments, and each
top-level argument; and the ways a name can be bound that :mod:`rules._flow` follows (a ``for``
variable, a checked ``isinstance``, a parameter of a function the module calls).

Like the rest of gate 1b, these readings must never miss what CPython's ``ast`` sees: where
the text cannot tell (a call that never closes, an f-string whose braces may hold quotes, a
``lambda`` whose parameters hold commas), they say so and the gate keeps the rule.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Iterator, List, Optional, Tuple

from jaxmigrate.migrator.textscan import (
    UNKNOWN,
    after_dot,
    next_significant,
    previous_significant,
    word_before,
)


def word_char(char: str) -> bool:
    """Is ``char`` a word character, as ``re`` reads one in a str pattern?"""
    return char.isalnum() or char == "_"


def starts_word(text: str, index: int) -> bool:
    """A word boundary before ``text[index]`` (itself a word character)."""
    return index == 0 or not word_char(text[index - 1])


def escaped(text: str, index: int) -> bool:
    """An odd run of backslashes just before ``index``."""
    run = 0
    while index - run - 1 >= 0 and text[index - run - 1] == "\\":
        run += 1
    return run % 2 == 1


@dataclasses.dataclass
class Arguments:
    """The arguments of one call, read from ``start`` (just inside its ``(``)."""

    start: int  # just inside the ``(``
    end: int  # the index of the closing parenthesis; len(text) when it never closes
    spans: List[Tuple[int, int]]  # each top-level argument's (start, stop), empty ones too
    plain: bool  # it closes, and no string in it is an f-string (or a t-string)


def arguments(text: str, start: int) -> Arguments:
    """The arguments of the call whose ``(`` is just before ``start``: string literals and
    comments skipped while counting brackets and commas."""
    depth, index, size = 1, start, len(text)
    spans: List[Tuple[int, int]] = []
    begun, plain = start, True
    while index < size:
        char = text[index]
        if char in "\"'":
            if _formatted(text, index):
                plain = False
            triple = text[index : index + 3] == char * 3
            quote = char * 3 if triple else char
            close = text.find(quote, index + len(quote))
            while close > 0 and escaped(text, close):
                close = text.find(quote, close + 1)
            if close < 0:
                return Arguments(start, size, spans, False)
            index = close + len(quote)
            continue
        if char == "#":
            newline = text.find("\n", index)
            index = size if newline < 0 else newline
            continue
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth == 0:
                spans.append((begun, index))
                return Arguments(start, index, spans, plain)
        elif char == "," and depth == 1:
            spans.append((begun, index))
            begun = index + 1
        index += 1
    return Arguments(start, size, spans, False)


def _formatted(text: str, quote: int) -> bool:
    """Does the string literal opening at ``quote`` have an ``f`` or ``t`` prefix?"""
    at = quote
    while at > 0 and text[at - 1].isalpha() and quote - at < 3:
        at -= 1
    prefix = text[at:quote].lower()
    return "f" in prefix or "t" in prefix


def calls_of(text: str, name: str, bare: bool = False) -> Iterator[Arguments]:
    """The arguments of every place ``name`` (an identifier) is written as a whole word and
    followed by ``(``, closing parentheses, blanks, comments and continuations between (so
    ``(f)(x)`` counts, and a definition ``def name(`` does not).  ``bare``: not where a dot
    comes before the name (``x.name(``).  Words in strings and comments are read too: more
    calls are harmless."""
    size, length = len(text), len(name)
    at = text.find(name)
    while at >= 0:
        after = at + length
        if (
            starts_word(text, at)
            and (after >= size or not word_char(text[after]))
            and text[max(0, at - 4) : at] != "def "
            and not (bare and after_dot(text, at))
        ):
            index = next_significant(text, after)
            while index < size and text[index] == ")":
                index = next_significant(text, index + 1)
            if index < size and text[index] == "(":
                yield arguments(text, index + 1)
        at = text.find(name, after)


_IDENTIFIER = re.compile(r"[^\W\d]\w*")
_LAMBDA = re.compile(r"\blambda\b")


def passed(text: str, found: Arguments) -> Optional[Tuple[int, List[str], bool]]:
    """How a call passes its arguments, as ``ast`` reads them: (the number of positional ones,
    the keywords by name, whether a ``*`` or ``**`` argument is passed); None where the text
    cannot tell (it is not :attr:`Arguments.plain`, or it holds a ``lambda``)."""
    if not found.plain or _LAMBDA.search(text, found.spans[0][0], found.end):
        return None
    positional, keywords, starred = 0, [], False
    for begun, stop in found.spans:
        first = next_significant(text, begun)
        if first >= stop:
            continue  # the empty argument after a trailing comma, or ``f()``
        if text[first] == "*":
            starred = True
            continue
        name = _IDENTIFIER.match(text, first, stop)
        after = next_significant(text, name.end()) if name is not None else stop
        if (
            name is not None
            and text[after : after + 1] == "="
            and text[after + 1 : after + 2] != "="
        ):
            keywords.append(name.group(0))  # ``name = value``, comments or continuations between
        else:
            positional += 1
    return positional, keywords, starred


def _whole_words(text: str, name: str) -> Iterator[int]:
    """Where ``name`` (an identifier) is written as a whole word."""
    size, length = len(text), len(name)
    at = text.find(name)
    while at >= 0:
        after = at + length
        if starts_word(text, at) and (after >= size or not word_char(text[after])):
            yield at
        at = text.find(name, after)


def loop_variable(text: str, name: str) -> bool:
    """Is ``name`` written right after the keyword ``for`` (opening parentheses between), as
    the variable of a loop or a comprehension is, or can the text not tell?"""
    for at in _whole_words(text, name):
        j = previous_significant(text, at)
        while j >= 0 and text[j] == "(":
            j = previous_significant(text, j)
        if j == UNKNOWN or (j >= 0 and word_before(text, j) == "for"):
            return True
    return False


def checked_by_isinstance(text: str, name: str) -> bool:
    """Is ``isinstance(name, ...)`` written (or a call of ``isinstance`` whose first argument
    the text cannot tell)?"""
    for found in calls_of(text, "isinstance"):
        if not found.spans:
            return True
        first = next_significant(text, found.spans[0][0])
        after = first + len(name)
        if text.startswith(name, first) and (after >= len(text) or not word_char(text[after])):
            return True
    return False


_DEF = re.compile(r"\bdef[\s\\]+([^\W\d]\w*)[\s\\]*\(")


def called_parameter(text: str, name: str) -> bool:
    """Is ``name`` a parameter of a ``def`` that the text calls by its bare name (``f(...)``,
    not ``x.f(...)``), or a parameter list the text cannot read?"""
    for match in _DEF.finditer(text):
        found = arguments(text, match.end())
        if not found.plain and name in text[match.end() : found.end]:
            return True
        for begun, stop in found.spans:
            first = next_significant(text, begun)
            while first < stop and text[first] in "*/":
                first = next_significant(text, first + 1)
            parameter = _IDENTIFIER.match(text, first, stop)
            if parameter is not None and parameter.group(0) == name:
                if any(True for _ in calls_of(text, match.group(1), bare=True)):
                    return True
    return False
