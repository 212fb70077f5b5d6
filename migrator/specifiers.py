"""One version specifier of a ``jax``/``jaxlib`` requirement, read and raised so that it admits
a target range (PEP 440 versions and clauses, and Poetry's ``^``/``~``): the rules
:mod:`migrator.requirement_edit` applies to each requirement it finds."""

from __future__ import annotations

import re
from typing import List, NamedTuple, Optional, Tuple, Union

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


def parse_version(text: str) -> Optional[_Version]:
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


def compare(a: _Version, b: _Version) -> int:
    """-1, 0 or 1 as ``a`` is below, equal to or above ``b`` (local labels ignored)."""
    width = max(len(a.release), len(b.release))
    key_a = (a.release + (0,) * (width - len(a.release)), a.rank)
    key_b = (b.release + (0,) * (width - len(b.release)), b.rank)
    return (key_a > key_b) - (key_a < key_b)


def _bump(release: Tuple[int, ...], index: int) -> Tuple[int, ...]:
    """``release`` cut after ``index`` with that part incremented: (0, 4, 1), 1 -> (0, 5)."""
    return release[:index] + (release[index] + 1,)


# --- one specifier ----------------------------------------------------------------------------


class Target(NamedTuple):
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
    version = parse_version(match.group("version"))
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
    order = compare(a.version, b.version)
    if order == 0:
        return a if not a.inclusive else b  # an exclusive bound is the higher one
    return a if order > 0 else b


def _excludes(clause: _Clause, lower: _Bound, newest: _Version) -> bool:
    """Whether the ``!=`` clause excludes a version between ``lower`` and ``newest``."""
    version = clause.version
    if version.wildcard:
        start = _release(version.release)
        stop = _release(_bump(version.release, len(version.release) - 1))
        return compare(start, newest) <= 0 and compare(stop, lower.version) > 0
    above = compare(version, lower.version)
    return (above > 0 or (above == 0 and lower.inclusive)) and compare(version, newest) <= 0


def _below(clause: _Clause, lower: _Bound) -> bool:
    """Whether every version the ``!=`` clause excludes is below ``lower``."""
    version = clause.version
    if version.wildcard:
        stop = _release(_bump(version.release, len(version.release) - 1))
        return compare(stop, lower.version) <= 0
    below = compare(version, lower.version)
    return below < 0 or (below == 0 and not lower.inclusive)


def raise_spec(spec: str, target: Target, poetry: bool) -> Optional[str]:
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
        lower_ok = lower is None or compare(lower.version, target.floor) >= 0
        upper_ok = upper is None or (
            compare(upper.version, target.newest) > 0
            or (compare(upper.version, target.newest) == 0 and upper.inclusive)
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
    excluding = [
        id(item)
        for item in kept
        if not isinstance(item, str) and _excludes(item, effective, target.newest)
    ]
    changed = changed or bool(excluding)
    texts: List[str] = []
    for item in kept:
        if isinstance(item, str):
            texts.append(item)
        elif id(item) not in excluding and not (changed and not lowers and _below(item, effective)):
            texts.append(item.text)  # (not one the raised lower bound makes redundant)
    if not changed:
        return None
    if not lowers:
        texts.insert(0, ">=" + target.floor_text)
    return joiner.join(texts)
