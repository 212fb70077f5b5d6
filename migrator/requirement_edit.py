"""Raise a project's ``jax`` / ``jaxlib`` requirement so that it admits a target range of JAX.

Why: once jaxmigrate has rewritten a project for JAX ``floor``..``newest``, the migrated code
needs at least ``floor`` (the spellings were chosen for it) and should be installable up to
``newest``; a requirement such as ``jax==0.3.16`` or ``jax>=0.3.4,<0.4`` left as it was would
keep installing a JAX the new code does not run on.  :func:`raise_requirement` rewrites the
requirement in one packaging file, and the tool shows the result as a diff like any other fix.

What: a pure text-to-text edit.  Only the version specifier of a ``jax`` / ``jaxlib``
requirement changes; everything else of the file (extras, markers, comments, quotes,
indentation, line order, line endings, the trailing newline) is kept byte for byte.  The files
are never executed or re-serialised: ``setup.py`` string literals are found with :mod:`ast`
and edited at their positions, ``pyproject.toml`` with a small scanner that records where each
string value sits in the TOML document, ``setup.cfg`` and ``requirements*.txt`` line by line.

The rules for one requirement (:func:`_raise_spec`):

* a lower bound below ``floor`` is raised to ``>=floor``; one already at or above ``floor``
  is kept (a bound is never lowered, so ``>=0.5.0`` stays when ``floor`` is 0.4.1);
* an upper bound that excludes ``newest`` is dropped: ``<X`` with X <= newest, ``<=X`` with
  X < newest, and the implicit upper bound of ``==``, ``==X.*``, ``~=`` and Poetry's ``^`` /
  ``~`` (a compound clause whose lower part is kept becomes ``>=X``; one whose upper part is
  kept contributes an explicit ``<U``);
* a ``!=`` clause that excludes a version between the (new) lower bound and ``newest`` is
  dropped; others are kept;
* a requirement none of whose clauses needs a change is left exactly as it is, and so is one
  without a version (``jax``, ``jax[cpu]``) or with a direct reference (``jax @ URL``);
* the new clause list is the raised lower bound first (only when no kept clause gives a lower
  bound), then the kept clauses in their original order, joined with the original separator.

Deliberately not handled (such requirements are left unchanged): ``===`` clauses, versions
with an epoch, Poetry's ``||`` alternatives, requirements continued over several lines in a
requirements file (``\\`` continuations, usually ``--hash`` pins: a new version would not
match the hashes) or followed by per-requirement options, setup.py strings built at run time
(f-strings, concatenation, escapes) and TOML strings with escapes or spanning lines.
"""

from __future__ import annotations

import ast
import re
from typing import List, NamedTuple, Optional, Tuple, Union

__all__ = ["raise_requirement"]

_NAMES = frozenset({"jax", "jaxlib"})

# PEP 440 versions without an epoch; the release part is compared numerically.
_VERSION = re.compile(
    r"""
    v?
    (?P<release>\d+(?:\.\d+)*)
    (?P<wildcard>\.\*)?
    (?P<pre>[-_.]?(?:a|b|c|rc|alpha|beta|pre|preview)[-_.]?\d*)?
    (?P<post>-\d+|[-_.]?(?:post|rev|r)[-_.]?\d*)?
    (?P<dev>[-_.]?dev[-_.]?\d*)?
    (?P<local>\+[a-z0-9]+(?:[-_.][a-z0-9]+)*)?
    """,
    re.VERBOSE | re.IGNORECASE,
)
_PRE_RANK = {"a": -3, "alpha": -3, "b": -2, "beta": -2, "c": -1, "rc": -1, "pre": -1, "preview": -1}

# One clause: a PEP 440 operator (or Poetry's ^ / ~ / =, or none) and a version.
_CLAUSE = re.compile(r"(?P<op>===|~=|==|!=|<=|>=|<|>|\^|~|=)?\s*(?P<version>[^\s,]+)")
_SEPARATOR = re.compile(r"\s*,\s*")

# The name and extras of a PEP 508 requirement.
_REQUIREMENT = re.compile(
    r"\s*(?P<name>[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*(?P<extras>\[[^\]]*\])?\s*"
)
# pip: a comment starts at a '#' at the start of a line or after whitespace.
_COMMENT = re.compile(r"(?:^|\s)#")
_NEWLINE = re.compile(r"\r\n|\r|\n")

# setup.py keywords whose value may be a single requirement string.
_SETUP_KEYWORDS = frozenset({"install_requires", "setup_requires", "tests_require"})
_SETUP_CFG_OPTIONS = _SETUP_KEYWORDS


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


# --- versions ---------------------------------------------------------------------------------


class _Version(NamedTuple):
    text: str  # as written
    release: Tuple[int, ...]
    wildcard: bool  # "0.4.*"
    rank: Tuple[int, int]  # (-4 dev, -3 a, -2 b, -1 rc, 0 final, 1 post; its number)
    local: str  # "+cuda11.cudnn82" or ""

    def public_text(self) -> str:
        """The version as written without its ``.*`` and local label (for ``>=``)."""
        text = self.text[: len(self.text) - len(self.local)] if self.local else self.text
        return text[:-2] if self.wildcard else text


def _number(part: str) -> int:
    digits = re.sub(r"\D", "", part)
    return int(digits) if digits else 0


def _parse_version(text: str) -> Optional[_Version]:
    match = _VERSION.fullmatch(text)
    if match is None:
        return None
    wildcard = match.group("wildcard") is not None
    pre, post, dev = match.group("pre"), match.group("post"), match.group("dev")
    local = match.group("local") or ""
    if wildcard and (pre or post or dev or local):
        return None
    rank = (0, 0)
    if pre:
        label = re.sub(r"[^a-z]", "", pre.lower())
        rank = (_PRE_RANK[label], _number(pre))
    elif post:
        rank = (1, _number(post))
    elif dev:
        rank = (-4, _number(dev))
    release = tuple(int(part) for part in match.group("release").split("."))
    return _Version(text, release, wildcard, rank, local)


def _release(parts: Tuple[int, ...]) -> _Version:
    return _Version(".".join(map(str, parts)), parts, False, (0, 0), "")


def _cmp(a: _Version, b: _Version) -> int:
    """-1, 0 or 1 as ``a`` is below, equal to or above ``b`` (local labels ignored)."""
    width = max(len(a.release), len(b.release))
    key_a = (a.release + (0,) * (width - len(a.release)), a.rank)
    key_b = (b.release + (0,) * (width - len(b.release)), b.rank)
    return (key_a > key_b) - (key_a < key_b)


def _bump(release: Tuple[int, ...], index: int) -> Tuple[int, ...]:
    """``release`` cut after ``index`` with that part incremented: (0, 4, 1), 1 -> (0, 5)."""
    return release[:index] + (release[index] + 1,)


# --- one specifier ----------------------------------------------------------------------------


class _Target(NamedTuple):
    floor_text: str
    floor: _Version
    newest: _Version


class _Clause(NamedTuple):
    text: str  # as written, without surrounding whitespace
    op: str  # '>=', '>', '<=', '<', '==', '!=', '~=', '^', '~' or '*' (Poetry: anything)
    version: _Version


class _Bound(NamedTuple):
    version: _Version
    inclusive: bool


def _parse_clause(text: str, poetry: bool) -> Optional[_Clause]:
    stripped = text.strip()
    if poetry and stripped == "*":
        return _Clause(stripped, "*", _release((0,)))
    match = _CLAUSE.fullmatch(stripped)
    if match is None:
        return None
    op = match.group("op")
    if op is None or op == "=":
        if not poetry:
            return None
        op = "=="  # Poetry: a bare version is an exact one
    if op == "===" or (op in ("^", "~") and not poetry):
        return None
    version = _parse_version(match.group("version"))
    if version is None:
        return None
    if version.wildcard and op not in ("==", "!="):
        return None
    if op == "~=" and len(version.release) < 2:
        return None
    return _Clause(stripped, op, version)


def _lower(clause: _Clause) -> Optional[_Bound]:
    if clause.op == ">":
        return _Bound(clause.version, False)
    if clause.op in (">=", "~=", "^", "~"):
        return _Bound(clause.version, True)
    if clause.op == "==":
        version = clause.version
        return _Bound(_release(version.release) if version.wildcard else version, True)
    return None


def _upper(clause: _Clause) -> Optional[_Bound]:
    version, op = clause.version, clause.op
    release = version.release
    if op in ("<", "<="):
        return _Bound(version, op == "<=")
    if op == "==":
        if version.wildcard:
            return _Bound(_release(_bump(release, len(release) - 1)), False)
        return _Bound(version, True)
    if op == "~=":
        return _Bound(_release(_bump(release, len(release) - 2)), False)
    if op == "^":  # Poetry: the first non-zero part may not change
        nonzero = [index for index, part in enumerate(release) if part]
        return _Bound(_release(_bump(release, nonzero[0] if nonzero else len(release) - 1)), False)
    if op == "~":  # Poetry: ~1.2.3 and ~1.2 allow < 1.3, ~1 allows < 2
        return _Bound(_release(_bump(release, 1 if len(release) >= 2 else 0)), False)
    return None


def _higher(a: _Bound, b: _Bound) -> _Bound:
    order = _cmp(a.version, b.version)
    if order == 0:
        return a if not a.inclusive else b  # an exclusive bound is the higher one
    return a if order > 0 else b


def _excludes(clause: _Clause, lower: _Bound, newest: _Version) -> bool:
    """Whether the ``!=`` clause excludes a version between ``lower`` and ``newest``."""
    version = clause.version
    if version.wildcard:
        start = _release(version.release)
        stop = _release(_bump(version.release, len(version.release) - 1))
        return _cmp(start, newest) <= 0 and _cmp(stop, lower.version) > 0
    above = _cmp(version, lower.version)
    return (above > 0 or (above == 0 and lower.inclusive)) and _cmp(version, newest) <= 0


def _raise_spec(spec: str, target: _Target, poetry: bool) -> Optional[str]:
    """The specifier ``spec`` raised to admit the target range; None when it is unchanged
    (it needs no change, or is not one this module understands)."""
    clauses: List[_Clause] = []
    for piece in spec.split(","):
        clause = _parse_clause(piece, poetry)
        if clause is None:
            return None
        clauses.append(clause)
    separator = _SEPARATOR.search(spec)
    joiner = separator.group() if separator else ","
    changed = False
    lowers: List[_Bound] = []
    kept: List[Union[str, _Clause]] = []  # != clauses wait for the lower bound
    for clause in clauses:
        if clause.op in ("*", "!="):
            kept.append(clause if clause.op == "!=" else clause.text)
            continue
        lower, upper = _lower(clause), _upper(clause)
        lower_ok = lower is None or _cmp(lower.version, target.floor) >= 0
        upper_ok = upper is None or (
            _cmp(upper.version, target.newest) > 0
            or (_cmp(upper.version, target.newest) == 0 and upper.inclusive)
        )
        if lower_ok and lower is not None:
            lowers.append(lower)
        if lower_ok and upper_ok:
            kept.append(clause.text)
            continue
        changed = True
        if lower is not None and lower_ok:  # ==0.5.0, ~=0.5.1, ^0.5 whose upper bound goes
            kept.append(">=" + clause.version.public_text())
        if upper is not None and upper_ok and clause.op not in ("<", "<="):
            # ~=0.4.0 with the floor 0.4.1 and newest 0.4.9: keep its upper bound, "<0.5"
            kept.append(("<=" if upper.inclusive else "<") + upper.version.public_text())
    effective = _Bound(target.floor, True)
    for lower in lowers:
        effective = _higher(effective, lower)
    texts: List[str] = []
    for item in kept:
        if isinstance(item, str):
            texts.append(item)
        elif _excludes(item, effective, target.newest):
            changed = True
        else:
            texts.append(item.text)
    if not changed:
        return None
    if not lowers:
        texts.insert(0, ">=" + target.floor_text)
    return joiner.join(texts)


# --- one requirement --------------------------------------------------------------------------


class _Edit(NamedTuple):
    start: int  # span of the file's text replaced
    end: int
    replacement: str
    old: str  # the requirement before and after, for the message
    new: str


def _edit_requirement(text: str, offset: int, target: _Target, comments: bool) -> Optional[_Edit]:
    """The edit raising the PEP 508 requirement ``text`` (found at ``offset`` in the file);
    None unless it names jax or jaxlib and its specifier changes.  With ``comments``, a ``#``
    at the start or after whitespace starts a comment (requirements files, setup.cfg)."""
    body_end = len(text)
    if comments:
        comment = _COMMENT.search(text)
        if comment is not None:
            body_end = comment.start()
    body = text[:body_end]
    match = _REQUIREMENT.match(body)
    if match is None or _canonical(match.group("name")) not in _NAMES:
        return None
    position = match.end()
    if body.startswith("(", position):
        close = body.find(")", position)
        if close < 0:
            return None
        after = body[close + 1 :].strip()
        if after and not after.startswith(";"):
            return None
        spec_start, spec_end, requirement_end = position + 1, close, close + 1
    else:
        semicolon = body.find(";", position)
        stop = semicolon if semicolon >= 0 else len(body)
        spec_start = position
        spec_end = requirement_end = position + len(body[position:stop].rstrip())
    region = body[spec_start:spec_end]
    spec = region.strip()
    if not spec or spec.startswith("@"):  # no version, or a direct reference
        return None
    spec_start += len(region) - len(region.lstrip())
    spec_end = spec_start + len(spec)
    new_spec = _raise_spec(spec, target, poetry=False)
    if new_spec is None:
        return None
    name_start = match.start("name")
    old = body[name_start:requirement_end]
    new = body[name_start:spec_start] + new_spec + body[spec_end:requirement_end]
    return _Edit(offset + spec_start, offset + spec_end, new_spec, old, new)


# --- requirements*.txt and setup.cfg ----------------------------------------------------------


def _lines(text: str) -> List[Tuple[int, str]]:
    """(offset, content without its line ending) for each line of ``text``."""
    found: List[Tuple[int, str]] = []
    start = 0
    for match in _NEWLINE.finditer(text):
        found.append((start, text[start : match.start()]))
        start = match.end()
    if start < len(text):
        found.append((start, text[start:]))
    return found


def _requirements_txt_edits(text: str, target: _Target) -> List[_Edit]:
    edits: List[_Edit] = []
    continued = False
    for offset, line in _lines(text):
        continues = line.rstrip().endswith("\\")
        if continued or continues:  # part of a logical line over several: left alone
            continued = continues
            continue
        stripped = line.lstrip()
        if not stripped or stripped.startswith(("#", "-")):  # comments, -r / -e / options
            continue
        edit = _edit_requirement(line, offset, target, comments=True)
        if edit is not None:
            edits.append(edit)
    return edits


def _setup_cfg_edits(text: str, target: _Target) -> List[_Edit]:
    edits: List[_Edit] = []
    section = ""
    relevant = False
    for offset, line in _lines(text):
        stripped = line.strip()
        if not stripped or stripped.startswith(("#", ";")):
            continue  # blank lines and comments do not end a multi-line value
        indented = line[:1] in (" ", "\t")
        if not indented and stripped.startswith("["):
            header = re.match(r"\[([^\]]+)\]", stripped)
            section = header.group(1).strip().lower() if header else ""
            relevant = False
            continue
        if indented:
            value_offset = len(line) - len(line.lstrip())
        else:
            key = re.match(r"([^=:]+?)\s*[=:]\s*", line)
            if key is None:
                relevant = False
                continue
            name = key.group(1).strip().lower()
            relevant = section == "options.extras_require" or (
                section == "options" and name in _SETUP_CFG_OPTIONS
            )
            value_offset = key.end()
        if relevant and line[value_offset:].strip():
            edit = _edit_requirement(line[value_offset:], offset + value_offset, target, True)
            if edit is not None:
                edits.append(edit)
    return edits


# --- setup.py ---------------------------------------------------------------------------------

_LITERAL = re.compile(r"(?P<prefix>[rRuU]?)(?P<quote>['\"])(?P<body>.*)(?P=quote)", re.DOTALL)


def _setup_py_edits(text: str, target: _Target) -> Optional[List[_Edit]]:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    starts = [0] + [match.end() for match in _NEWLINE.finditer(text)]

    def offset(line: int, column: int) -> int:  # ast columns count UTF-8 bytes
        start = starts[line - 1]
        end = starts[line] if line < len(starts) else len(text)
        return start + len(text[start:end].encode("utf-8")[:column].decode("utf-8", "replace"))

    strings: List[ast.Constant] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            strings.extend(element for element in node.elts if isinstance(element, ast.Constant))
        elif isinstance(node, ast.Dict):
            strings.extend(value for value in node.values if isinstance(value, ast.Constant))
        elif isinstance(node, ast.keyword) and node.arg in _SETUP_KEYWORDS:
            if isinstance(node.value, ast.Constant):
                strings.append(node.value)
    edits: List[_Edit] = []
    seen = set()
    for node in strings:
        if not isinstance(node.value, str) or node.end_lineno != node.lineno:
            continue
        if node.end_col_offset is None or (node.lineno, node.col_offset) in seen:
            continue
        seen.add((node.lineno, node.col_offset))
        start = offset(node.lineno, node.col_offset)
        end = offset(node.lineno, node.end_col_offset)
        literal = _LITERAL.fullmatch(text, start, end)
        if literal is None or literal.group("body") != node.value:  # escapes, concatenation
            continue
        edit = _edit_requirement(node.value, literal.start("body"), target, comments=False)
        if edit is not None:
            edits.append(edit)
    return edits


# --- pyproject.toml ---------------------------------------------------------------------------


class _TomlError(Exception):
    pass


class _TomlString(NamedTuple):
    start: int  # the content, between the quotes
    end: int
    value: str
    path: Tuple[str, ...]  # table and keys; array elements add nothing
    in_array: bool  # directly an element of an array
    editable: bool  # a one-line string without escapes


class _TomlScanner:
    """Where each string value of a TOML document is, and under which keys.  Just enough of
    TOML to find them; anything it does not follow raises :class:`_TomlError`."""

    _BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
    _SCALAR = re.compile(r"[0-9A-Za-z_+\-.:]+(?:[ T]\d\d:\d\d[0-9A-Za-z_+\-.:]*)?")

    def __init__(self, text: str) -> None:
        self.text = text
        self.index = 0
        self.strings: List[_TomlString] = []

    def scan(self) -> List[_TomlString]:
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
                raise _TomlError(f"unexpected text at {self.index}")

    def _peek(self, literal: str) -> bool:
        return self.text.startswith(literal, self.index)

    def _expect(self, literal: str) -> None:
        self._skip(newlines=False)
        if not self._peek(literal):
            raise _TomlError(f"expected {literal!r} at {self.index}")
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
                    raise _TomlError(f"expected a key at {self.index}")
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
                    raise _TomlError("unterminated string")
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
                raise _TomlError("unterminated string")
            index += 2 if quote == '"' and text[index] == "\\" else 1
        if index >= len(text):
            raise _TomlError("unterminated string")
        value = text[start + 1 : index]
        self.index = index + 1
        if record is not None:
            editable = not (quote == '"' and "\\" in value)
            self.strings.append(_TomlString(start + 1, index, value, *record, editable))
        return value

    def _value(self, path: Tuple[str, ...], in_array: bool) -> None:
        self._skip(newlines=False)
        if self.index >= len(self.text):
            raise _TomlError("expected a value")
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
                    raise _TomlError(f"expected ',' or ']' at {self.index}")
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
                    raise _TomlError(f"expected ',' or '}}' at {self.index}")
            self.index += 1
        else:
            match = self._SCALAR.match(self.text, self.index)
            if match is None:
                raise _TomlError(f"expected a value at {self.index}")
            self.index = match.end()


def _poetry_dependency(path: Tuple[str, ...]) -> Optional[str]:
    """The dependency whose version ``path`` names in Poetry's tables, if it does:
    ``tool.poetry.dependencies.jax`` or ``...jax.version`` (also dev- and group
    dependencies)."""
    if path[:2] != ("tool", "poetry"):
        return None
    rest = path[2:]
    if rest[:1] in (("dependencies",), ("dev-dependencies",)):
        rest = rest[1:]
    elif len(rest) >= 3 and rest[0] == "group" and rest[2] == "dependencies":
        rest = rest[3:]
    else:
        return None
    if len(rest) == 1 or (len(rest) == 2 and rest[1] == "version"):
        return rest[0]
    return None


def _pyproject_edits(text: str, target: _Target) -> Optional[List[_Edit]]:
    try:
        strings = _TomlScanner(text).scan()
    except _TomlError:
        return None
    edits: List[_Edit] = []
    for string in strings:
        if not string.editable:
            continue
        if string.in_array:  # [project] dependencies, optional-dependencies, groups, ...
            edit = _edit_requirement(string.value, string.start, target, comments=False)
            if edit is not None:
                edits.append(edit)
            continue
        name = _poetry_dependency(string.path)
        if name is None or _canonical(name) not in _NAMES:
            continue
        spec = string.value.strip()
        if not spec:
            continue
        new_spec = _raise_spec(spec, target, poetry=True)
        if new_spec is None:
            continue
        start = string.start + len(string.value) - len(string.value.lstrip())
        old, new = f"{name} {spec}", f"{name} {new_spec}"
        edits.append(_Edit(start, start + len(spec), new_spec, old, new))
    return edits


def _still_parses_toml(text: str) -> bool:
    try:
        import tomllib
    except ImportError:  # Python < 3.11: the scanner's edits only touch string contents
        return True
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return False
    return True


# --- the entry point --------------------------------------------------------------------------


def raise_requirement(
    path_name: str, text: str, floor: str, newest: str
) -> Optional[Tuple[str, List[str]]]:
    """New text of the packaging file named ``path_name`` (only its base name matters:
    'requirements*.txt' (any name ending .txt is read as a requirements file), 'setup.py',
    'setup.cfg', 'pyproject.toml'), with every jax / jaxlib requirement raised so it admits
    floor..newest; and one line per changed requirement saying what changed (e.g.
    "requirements.txt: jax==0.3.16 -> jax>=0.4.1").  None when nothing changes.

    ``floor`` and ``newest`` are versions such as "0.4.1" and "0.12.0"; the new lower bound
    is written as ``floor`` is.  Raises ValueError when either is not a version or
    ``floor`` is above ``newest``."""
    floor_version, newest_version = _parse_version(floor), _parse_version(newest)
    if floor_version is None or floor_version.wildcard:
        raise ValueError(f"not a version: {floor!r}")
    if newest_version is None or newest_version.wildcard:
        raise ValueError(f"not a version: {newest!r}")
    if _cmp(floor_version, newest_version) > 0:
        raise ValueError(f"the floor {floor} is above the newest version {newest}")
    target = _Target(floor, floor_version, newest_version)
    base = re.split(r"[\\/]", path_name)[-1]
    edits: Optional[List[_Edit]]
    if base == "setup.py":
        edits = _setup_py_edits(text, target)
    elif base == "setup.cfg":
        edits = _setup_cfg_edits(text, target)
    elif base == "pyproject.toml":
        edits = _pyproject_edits(text, target)
    elif base.lower().endswith(".txt"):
        edits = _requirements_txt_edits(text, target)
    else:
        return None
    if not edits:
        return None
    edits.sort(key=lambda edit: edit.start)
    pieces: List[str] = []
    position = 0
    for edit in edits:
        pieces.append(text[position : edit.start])
        pieces.append(edit.replacement)
        position = edit.end
    pieces.append(text[position:])
    new_text = "".join(pieces)
    if base == "pyproject.toml" and _still_parses_toml(text) and not _still_parses_toml(new_text):
        return None  # defensive: the scanner misread the file
    if base == "setup.py":
        try:
            ast.parse(new_text)
        except SyntaxError:
            return None
    return new_text, [f"{path_name}: {edit.old} -> {edit.new}" for edit in edits]
