"""Reading Python source text a few characters at a time, without tokenizing it.

The text gate (:mod:`migrator.textgate`) asks, for each occurrence of a word, what stands
around it; these are the primitives it reads with: the significant character before or after
an index (blanks, blank lines, comments and backslash continuations skipped, or
:data:`UNKNOWN` where the text cannot tell), the identifier or keyword before an index, and
the import statements of a file (:func:`bound_names`, :func:`jax_bound_names`), read from the
text with regular expressions.  Every answer errs towards "maybe": a caller may only use them
to skip work, never to decide a rewrite.
"""

from __future__ import annotations

import functools
import re
from typing import Dict, Iterator, List, Optional, Set, Tuple

_IDENT = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
_BLANK = " \t\f"
UNKNOWN = -2  # previous_significant: the preceding token cannot be told from the text
START = -1  # previous_significant: nothing precedes (start of the file)


def ident_char(c: str) -> bool:
    return c in _IDENT or (c >= "\x80" and ("a" + c).isidentifier())


def line_start(text: str, i: int) -> int:
    """Where the line holding index ``i`` starts (a line ends in ``\n``, ``\r\n`` or ``\r``):
    ``max`` of the two ``rfind`` calls, without reading back to the start of the text for a
    ``\r`` that a text without one never has."""
    start = text.rfind("\n", 0, i) + 1
    return text.rfind("\r", start, i) + 1 or start


def previous_significant(text: str, i: int) -> int:
    """Index of the last significant character before ``i``, skipping blanks, blank lines,
    comment-only lines, trailing comments and backslash continuations; START or UNKNOWN."""
    j = i - 1
    while True:
        while j >= 0 and text[j] in _BLANK:
            j -= 1
        if j < 0:
            return START
        c = text[j]
        if c != "\n" and c != "\r":
            return j
        end = j - 1 if (c == "\n" and j > 0 and text[j - 1] == "\r") else j
        start = line_start(text, end)
        hash_at = text.find("#", start, end)
        if hash_at >= 0:
            before = text[start:hash_at]
            if before.strip(_BLANK) and ('"' in before or "'" in before):
                return UNKNOWN  # the '#' may sit in a string: where the line ends is unknown
            end = hash_at  # a comment-only line becomes blank and is skipped below
        j = end - 1
        while j >= start and text[j] in _BLANK:
            j -= 1
        if j < start:  # a blank (or comment-only) line: keep going up
            j = start - 1
            continue
        if text[j] == "\\":  # a continued line: keep going on the line above
            j -= 1
            continue
        return j


def next_significant(text: str, i: int) -> int:
    """Index of the first significant character at or after ``i`` (blanks, newlines, comments
    and continuations skipped), or len(text)."""
    n = len(text)
    while i < n:
        c = text[i]
        if c in _BLANK or c == "\n" or c == "\r" or c == "\\":
            i += 1
        elif c == "#":
            newline = text.find("\n", i)
            i = n if newline < 0 else newline
        else:
            return i
    return n


def after_dot(text: str, i: int) -> bool:
    """Does a dot come right before index ``i`` (or can the text not tell)?"""
    j = previous_significant(text, i)
    return j == UNKNOWN or (j >= 0 and text[j] == ".")


def word_before(text: str, j: int) -> str:
    """The identifier that ends at index ``j`` ('' if text[j] does not end one)."""
    k = j
    while k >= 0 and ident_char(text[k]):
        k -= 1
    word = text[k + 1 : j + 1]
    return "" if not word or word[0].isdigit() else word


def keyword_before(text: str, word: str, i: int, low: int = 0) -> int:
    """Start of the last whole ``word`` before index ``i`` (and at or after ``low``), or -1."""
    j = text.rfind(word, low, i)
    n = len(text)
    while j >= 0:
        end = j + len(word)
        if (j == 0 or not ident_char(text[j - 1])) and (end >= n or not ident_char(text[end])):
            return j
        j = text.rfind(word, low, j)
    return -1


# -- import statements, read from the text --------------------------------------------------------
_COMMENT = re.compile(r"#[^\r\n]*")
_IMPORT_LIST = re.compile(r"[\w\s,.()\\]*")
_IMPORT_REGION = re.compile(r"(?:[\w\s,.()\\]|#[^\r\n]*)*")
_CONTINUATION = re.compile(r"\\(?:\r\n|\n|\r)")
_MODULE = re.compile(r"\w+(?:\.\w+)*")
# A comment runs to the end of its line: matched whole, never cut short where a "." or ","
# inside it would then read as code.  (One way to match "# ##": backtracking stays linear.)
SEP = r"(?:[\s\\]|#[^\r\n]*(?![^\r\n]))*"
_IMPORTED = re.compile(rf"{SEP}\(?{SEP}(\w+(?:{SEP}\.{SEP}\w+)*)(?:{SEP}\bas\b{SEP}(\w+))?")
_COMMA = re.compile(rf"{SEP},")
_DOTTED_BLANKS = re.compile(r"[\s\\]|#[^\r\n]*")


def _from_module(text: str, start: int) -> Optional[str]:
    """For the ``import`` keyword at ``start``: the module of a ``from M import`` ('' for a
    plain ``import``, None for a relative ``from . import``)."""
    head = keyword_before(text, "from", start)
    if head >= 0:
        newline = max(text.rfind("\n", head + 4, start), text.rfind("\r", head + 4, start))
        if newline >= 0 and not _continues(text, newline):
            return ""  # (a line ends between them: what is read below, without the copy)
        module = _CONTINUATION.sub("", text[head + 4 : start])
        if "\n" not in module and "\r" not in module:
            module = "".join(module.split())
            if module.startswith("."):
                return None
            if _MODULE.fullmatch(module):
                return module
    return ""


def _continues(text: str, newline: int) -> bool:
    """Is the line break at ``newline`` part of a backslash continuation?"""
    before = text[newline - 1] if newline else ""
    if text[newline] == "\n" and before == "\r":
        before = text[newline - 2] if newline > 1 else ""
    return before == "\\"


def import_list_module(text: str, i: int) -> Optional[str]:
    """If index ``i`` lies in the name list of an import statement: the module of a ``from``
    import ('' for a plain ``import``); None if it does not, or the import is relative."""
    start = keyword_before(text, "import", i)
    if start < 0 or _IMPORT_REGION.match(text, start + 6, i).end() != i:  # type: ignore[union-attr]
        return None  # (a cheap first look, that stops at the first character no list holds)
    names = _CONTINUATION.sub("", _COMMENT.sub("", text[start + 6 : i]))
    if not _IMPORT_LIST.fullmatch(names):
        return None
    if "(" in names:  # a parenthesized list: nothing but blanks before '(' and no ')'
        if names.split("(", 1)[0].strip() or ")" in names or names.count("(") > 1:
            return None
    elif "\n" in names or "\r" in names:
        return None  # a new line outside parentheses: a later statement
    return _from_module(text, start)


def _imported_items(text: str) -> Iterator[Tuple[int, "re.Match[str]"]]:
    """(position of the ``import`` keyword, match of one imported item) for every item of every
    import statement in ``text``, last statement first."""
    start = keyword_before(text, "import", len(text))
    while start >= 0:
        pos = start + 6
        while True:
            item = _IMPORTED.match(text, pos)
            if item is None:
                break
            yield start, item
            comma = _COMMA.match(text, item.end())
            if comma is None:
                break
            pos = comma.end()
        start = keyword_before(text, "import", start)


# One imported item: (the module of its ``from`` import, '' for a plain import or a ``from``
# whose module the text does not tell, None for a relative one; whether a ``from`` stands on
# the line of a plain-looking ``import``; the dotted name without blanks; its alias or None)
Item = Tuple[Optional[str], bool, str, Optional[str]]
_LAST_ITEMS: Tuple[Optional[str], List[Item]] = (None, [])  # the last text read, its items


def imported_items(text: str) -> List[Item]:
    """Every item of every import statement in ``text`` (:data:`Item`), read once for the last
    text asked: the three readings below ask for the same file in turn."""
    global _LAST_ITEMS
    last, found = _LAST_ITEMS  # (one tuple: read and replaced whole)
    if last is text:
        return found
    items: List[Item] = []
    statement: Dict[int, Tuple[Optional[str], bool]] = {}  # import position -> (module, from)
    for start, item in _imported_items(text):
        known = statement.get(start)
        if known is None:
            module = _from_module(text, start)
            on_line = False
            if module == "":  # a plain import, or a ``from`` on this line whose module is unclear
                line = line_start(text, start)
                on_line = keyword_before(text, "from", start, line) >= 0
            known = statement[start] = (module, on_line)
        items.append((*known, _DOTTED_BLANKS.sub("", item.group(1)), item.group(2)))
    _LAST_ITEMS = (text, items)
    return items


_STAR = re.compile(r"import(?:[ \t\f]|\\(?:\r\n?|\n))*\*")  # (a literal first: found fast)


def star_imported(text: str) -> List[Optional[str]]:
    """The module of every ``from M import *`` in ``text`` ('' where the text does not tell
    it, None for a relative one): :func:`imported_items` reads names, not the star.  (A word
    ending in ``import`` counts too: more is harmless.)"""
    return [_from_module(text, found.start()) for found in _STAR.finditer(text)]


def bound_names(text: str) -> Dict[str, Set[str]]:
    """Every name an import statement in ``text`` binds -> the last parts of what it is bound to
    (``import a.b`` binds a -> {a}; ``import a.b as c`` c -> {b}; ``from m import n as o``
    o -> {n}).  Relative imports and imports inside strings are included: more is harmless."""
    bound: Dict[str, Set[str]] = {}
    for module, _, name, alias in imported_items(text):
        dotted = name.split(".")
        if alias:
            bound.setdefault(alias, set()).add(dotted[-1])
        elif module == "":
            bound.setdefault(dotted[0], set()).add(dotted[0])
        else:
            bound.setdefault(dotted[-1], set()).add(dotted[-1])
    return bound


def jax_bound_names(text: str) -> Set[str]:
    """Every name an import statement in ``text`` may bind to a ``jax``/``jaxlib`` module or
    name (``import jax.numpy as jnp``, ``from jax import random``, ``import jax``).  A ``from``
    import whose module the text does not tell counts: more is harmless."""
    bound: Set[str] = set()
    for module, on_line, name, alias in imported_items(text):
        from_jax = on_line if module == "" else module is None or _is_jax(module)
        dotted = name.split(".")
        if from_jax or _is_jax(dotted[0]):
            bound.add(alias or (dotted[-1] if module else dotted[0]))
    return bound


UNTOLD = "?"  # in :func:`import_targets`: an import whose module the text does not tell


def import_targets(text: str) -> Dict[str, Set[str]]:
    """Every name an absolute import statement in ``text`` binds -> the qualified names it may
    be bound to, as CPython's ``ast`` resolves them (``import a.b`` binds a -> {a}; ``import
    a.b as c`` c -> {a.b}; ``from m import n as o`` o -> {m.n}); :data:`UNTOLD` for a ``from``
    import whose module the text does not tell.  Relative imports bind nothing here, as gate 2
    resolves no chain through them; imports inside strings count: more is harmless."""
    bound: Dict[str, Set[str]] = {}
    for module, on_line, dotted, alias in imported_items(text):
        if module is None:  # relative: no binding gate 2 resolves through
            continue
        if module == "" and on_line:
            bound.setdefault(alias or dotted.rpartition(".")[2], set()).add(UNTOLD)
        elif module:
            bound.setdefault(alias or dotted, set()).add(f"{module}.{dotted}")
        else:
            head = dotted.split(".", 1)[0]
            bound.setdefault(alias or head, set()).add(dotted if alias else head)
    return bound


def _is_jax(module: str) -> bool:
    head = module.split(".", 1)[0]
    return head == "jax" or head == "jaxlib"


# -- the items of ``with`` statements -----------------------------------------------------------
_WITH = re.compile(r"(?<!\w)with(?!\w)")
_LINE_START = re.compile(r"[ \t\f]*(?:async[ \t\f]+)?")  # what may stand before a ``with``
# One token of a ``with`` statement's header: blanks, continuations and comments (skipped), a
# string (with its prefix, escapes and continued lines; a triple-quoted one not closed: the
# caller is told it cannot tell), a name, a line break, any other character.
_HEADER_TOKEN = re.compile(
    r"""[ \t\f]+|\\(?:\r\n?|\n)|\#[^\r\n]*
    |(?P<string>[rRbBuUfF]{0,2}(?:'''(?:[^'\\]|\\.|'(?!''))*'''|\"\"\"(?:[^"\\]|\\.|"(?!""))*\"\"\"
        |'(?:[^'\\\r\n]|\\.)*'|"(?:[^"\\\r\n]|\\.)*"))
    |(?P<triple>[rRbBuUfF]{0,2}(?:'''|\"\"\"))
    |(?P<name>[^\W\d]\w*)
    |(?P<newline>\r\n?|\n)
    |(?P<other>.)""",
    re.X | re.S,
)
_OPENERS, _CLOSERS = "([{", ")]}"
HeaderItem = Tuple[str, ...]  # an item's tokens before its ``as``: names and other characters


def with_items(text: str) -> Iterator[Optional[HeaderItem]]:
    """The items of every ``with`` statement of ``text`` (``with a, b as c:`` gives ``a`` and
    ``b``; ``with (a, b):`` the same), each as its tokens before ``as``, strings as ``'``;
    None where a header cannot be read (a triple-quoted string left open, the end of the
    text).  Every word ``with`` that begins a line (after blanks, or ``async``) is read as
    one, in strings and comments too (their "headers" end at the first line break): more
    items are harmless.  A ``with`` statement is compound: it always begins a line so."""
    for found in _WITH.finditer(text):
        start = found.start()
        line = line_start(text, start)
        if line < start and not _LINE_START.fullmatch(text, line, start):
            continue  # (prose: "... with the ...")
        header = _header(text, found.end())
        if header is None:
            yield None
            continue
        tokens, depths = header
        if tokens and tokens[0] == "(" and _closing(depths, 0) == len(tokens) - 1:
            tokens, depths = tokens[1:-1], [d - 1 for d in depths[1:-1]]  # with (a, b):
        start = 0
        for index in range(len(tokens) + 1):
            if index == len(tokens) or (tokens[index] == "," and depths[index] == 0):
                item = tokens[start:index]
                if "as" in item:
                    item = item[: item.index("as")]  # (a name inside brackets is no ``as``)
                yield tuple(item)
                start = index + 1


def _header(text: str, position: int) -> Optional[Tuple[List[str], List[int]]]:
    """The tokens from ``position`` to the first ``:`` outside brackets, and the depth of each
    (a line break outside brackets or a closing bracket first: no tokens, not a header); None
    where it cannot tell."""
    tokens: List[str] = []
    depths: List[int] = []
    depth = 0
    for match in _HEADER_TOKEN.finditer(text, position):
        kind = match.lastgroup
        if kind is None:
            continue  # blanks, a continuation, a comment
        if kind == "triple":
            return None
        if kind == "newline":
            if depth == 0:
                return [], []
            continue
        token = "'" if kind == "string" else match.group()
        if token == ":" and depth == 0:
            return tokens, depths
        if token in _CLOSERS:
            depth -= 1
            if depth < 0:  # a header's brackets open before they close: prose, not code
                return [], []
        tokens.append(token)
        depths.append(depth)
        if token in _OPENERS:
            depth += 1
    return None


def _closing(depths: List[int], opener: int) -> int:
    """The index of the bracket that closes the one at ``opener`` (-1 if none)."""
    for index in range(opener + 1, len(depths)):
        if depths[index] == depths[opener]:
            return index
    return -1


# -- dotted chains --------------------------------------------------------------------------------
# What may stand between the parts of a dotted chain: blanks and line breaks (in brackets),
# backslash continuations and comments, and before a dot the closing brackets of ``(jax).x``.
# A comment runs to its line's end, so a text is read one way only (no backtracking through
# the ways to split ``# a # b``).
_GAP = r"(?:\s|\\\r?\n|#[^\r\n]*(?![^\r\n]))*"
_BEFORE_DOT = r"(?:\s|\\\r?\n|#[^\r\n]*(?![^\r\n])|\))*"


@functools.lru_cache(maxsize=512)
def _chain(head: str, rest: str) -> "re.Pattern[str]":
    body = "".join(rf"{_BEFORE_DOT}\.{_GAP}{re.escape(part)}" for part in rest.split("."))
    return re.compile(rf"{re.escape(head)}{body}(?![\w])")  # (starts with a literal: found fast)


def spells_chain(text: str, head: str, rest: str) -> bool:
    """Does ``text`` spell the dotted chain ``head.rest`` (``rest``: dotted parts), as code may
    write one (:data:`_GAP`)?  In strings and comments too: more is harmless."""
    pattern = _chain(head, rest)
    found = pattern.search(text)
    while found is not None:
        start = found.start()
        if not start or not (ident_char(text[start - 1]) or text[start - 1] == "."):
            return True
        found = pattern.search(text, start + 1)  # (a head inside this match may be one)
    return False
