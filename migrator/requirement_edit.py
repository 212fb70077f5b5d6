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

The rules for one requirement (:func:`raise_spec`):

* a lower bound below ``floor`` is raised to ``>=floor``; one already at or above ``floor``
  is kept (a bound is never lowered, so ``>=0.5.0`` stays when ``floor`` is 0.4.1);
* an upper bound that excludes ``newest`` is dropped: ``<X`` with X <= newest, ``<=X`` with
  X < newest, and the implicit upper bound of ``==``, ``==X.*``, ``~=`` and Poetry's ``^`` /
  ``~`` (a compound clause whose lower part is kept becomes ``>=X``; one whose upper part is
  kept contributes an explicit ``<U``);
* a ``!=`` clause that excludes a version between the (new) lower bound and ``newest`` is
  dropped, and so is one below a lower bound raised here (``>=0.2.8,!=0.3.2`` becomes
  ``>=0.4.1``); others are kept;
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
from typing import List, NamedTuple, Optional, Tuple

from jaxmigrate.migrator.specifiers import Target, compare, parse_version, raise_spec
from jaxmigrate.migrator.tomlscan import TomlError, TomlScanner

__all__ = ["raise_requirement"]

_NAMES = frozenset({"jax", "jaxlib"})

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


# --- one requirement --------------------------------------------------------------------------


class _Edit(NamedTuple):
    start: int  # span of the file's text replaced
    end: int
    replacement: str
    old: str  # the requirement before and after, for the message
    new: str


def _edit_requirement(text: str, offset: int, target: Target, comments: bool) -> Optional[_Edit]:
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
    new_spec = raise_spec(spec, target, poetry=False)
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


def _requirements_txt_edits(text: str, target: Target) -> List[_Edit]:
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


def _setup_cfg_edits(text: str, target: Target) -> List[_Edit]:
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


def _setup_py_edits(text: str, target: Target) -> Optional[List[_Edit]]:
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


def _pyproject_edits(text: str, target: Target) -> Optional[List[_Edit]]:
    try:
        strings = TomlScanner(text).scan()
    except TomlError:
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
        new_spec = raise_spec(spec, target, poetry=True)
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
    floor_version, newest_version = parse_version(floor), parse_version(newest)
    if floor_version is None or floor_version.wildcard:
        raise ValueError(f"not a version: {floor!r}")
    if newest_version is None or newest_version.wildcard:
        raise ValueError(f"not a version: {newest!r}")
    if compare(floor_version, newest_version) > 0:
        raise ValueError(f"the floor {floor} is above the newest version {newest}")
    target = Target(floor, floor_version, newest_version)
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
