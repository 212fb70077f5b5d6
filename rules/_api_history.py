"""The history of JAX's public API, release by release, as data.

``rules/data/jax_api_history.json.gz`` is made by ``scripts/build_api_history.py`` from the
source distribution of every ``jax`` release since 0.2.0 (read with ``ast``, never imported).
For every public qualified name it holds the releases in which the name exists, the release
from which JAX's own deprecation table warned about it, and JAX's deprecation message (which
usually names the replacement).  It is loaded on first use, once per process.

Queries answer in terms of a *target range*: every release from the target version (the
oldest JAX the migrated code must run on) to ``upper`` (the newest the project allows), or
to the newest release in the history when there is no upper bound.
"""

from __future__ import annotations

import bisect
import dataclasses
import functools
import gzip
import json
from pathlib import Path
from typing import Dict, FrozenSet, List, Optional, Sequence, Set, Tuple, Type

from jaxmigrate.migrator import references as refs
from jaxmigrate.migrator.rule import Rule
from jaxmigrate.migrator.version import Version, parse_version

DATA = Path(__file__).resolve().parent / "data" / "jax_api_history.json.gz"
FORMAT = 2


def release_key(text: str) -> Tuple[int, ...]:
    """``"0.4.13"`` -> ``(0, 4, 13)``; four-part releases (``0.9.0.1``) keep their fourth part."""
    return tuple(int(part) for part in text.split("."))


@dataclasses.dataclass(frozen=True)
class NameHistory:
    """What the history knows of one qualified name."""

    qualname: str
    present: Tuple[Tuple[int, int], ...]  # inclusive (first, last) release indexes
    deprecated_since: Optional[int]  # release index, from JAX's deprecation table
    message: Optional[str]  # JAX's deprecation message
    is_module: bool


@dataclasses.dataclass(frozen=True)
class Absence:
    """Why a name is not there on every release of a target range."""

    qualname: str
    removed_in: Optional[str]  # the first release without it, after the target
    added_in: Optional[str]  # the first release with it, when that is after the target
    deprecated_since: Optional[str]
    message: Optional[str]  # JAX's own words
    never: bool = False  # in no release at all of the range
    by_name_only: Optional[str] = None  # a flag: the releases where only its name works
    # the release that has the name again after ``removed_in`` (within or after the range):
    # JAX 0.11.1 exports ``jax.interpreters.batching.batch_subtrace`` again, gone in 0.10.0
    back_in: Optional[str] = None

    def describe(self, target: str) -> str:
        """One sentence: what is missing and since when, then JAX's message."""
        if self.by_name_only is not None:
            return (
                f"{self.qualname} is not an attribute of jax.config in JAX {self.by_name_only} "
                f"(target {target}): those releases define the flag by name only"
            )
        if self.added_in is not None and self.removed_in is None:
            text = f"{self.qualname} does not exist before JAX {self.added_in} (target {target})"
        elif self.removed_in is not None:
            text = f"{self.qualname} was removed in JAX {self.removed_in}"
            if self.back_in is not None:
                text += f" and is back only from {self.back_in}"
            if self.deprecated_since is not None:
                text += f" (deprecated since {self.deprecated_since})"
        else:
            text = f"{self.qualname} is missing from some JAX releases after {target}"
        if self.message:
            text += f'; JAX says: "{self.message}"'
        return text


class ApiHistory:
    """Lookups in the history.  Build one with :func:`history`."""

    def __init__(self, data: dict) -> None:
        if data.get("format") != FORMAT:
            raise ValueError(f"API history format {data.get('format')!r}, expected {FORMAT}")
        self.releases: Tuple[str, ...] = tuple(data["releases"])
        self.keys: Tuple[Tuple[int, ...], ...] = tuple(release_key(r) for r in self.releases)
        self._messages: List[str] = data["messages"]
        self._modules: Dict[str, Dict[str, list]] = data["modules"]
        self._flags: Dict[str, List[int]] = data.get("flags", {})
        self._private: Dict[str, Dict[str, List[int]]] = data.get("private", {})
        self._keywords: Dict[str, Dict[str, List[int]]] = data.get("keywords", {})
        self._missing: Dict[tuple, FrozenSet[str]] = {}
        self._grouped: Optional[Dict[Tuple[tuple, Optional[tuple]], List[str]]] = None
        self._distinct: Optional[Set[tuple]] = None  # (see _short_of)
        self._short: Dict[Tuple[int, int], Set[tuple]] = {}

    @property
    def newest(self) -> str:
        return self.releases[-1]

    def lookup(self, qualname: str) -> Optional[NameHistory]:
        parent, _, name = qualname.rpartition(".")
        entry = self._modules.get(parent, {}).get(name)
        if entry is None:
            return None
        flat = entry[0]
        deprecated = entry[1] if len(entry) > 1 and entry[1] >= 0 else None
        message = self._messages[entry[2]] if len(entry) > 2 and entry[2] >= 0 else None
        flags = entry[3] if len(entry) > 3 else ""
        present = tuple((flat[i], flat[i + 1]) for i in range(0, len(flat), 2))
        return NameHistory(qualname, present, deprecated, message, "m" in flags)

    def present_in(self, qualname: str, release: Version) -> Optional[bool]:
        """Does ``qualname`` exist in ``release`` (the newest release at or below it)?  Public
        names and modules, and the private names (``_x``) of public modules; None when the
        history does not know the name, nor its module in that release."""
        index = self.last_index(release)
        parent, _, name = qualname.rpartition(".")
        known = self.lookup(qualname)
        if known is not None:
            return any(first <= index <= last for first, last in known.present)
        flat = self._private.get(parent, {}).get(name)
        if flat is not None:
            return any(flat[i] <= index <= flat[i + 1] for i in range(0, len(flat), 2))
        module = self.lookup(parent)
        if module is not None and module.is_module and name.startswith("_"):
            # A private name the history never saw in this public module: absent where the
            # module is read, unless the module makes its names at run time.
            if not any(first <= index <= last for first, last in module.present):
                return False
            return None if parent in self._open_modules() else False
        return None

    def dropped_keyword(
        self, qualname: str, keyword: str, target: Version, upper: Optional[Version] = None
    ) -> Optional[str]:
        """The first release of the range whose ``qualname`` (its signature known there) takes
        neither ``keyword`` nor ``**kwargs``, for a keyword an earlier release took; None when
        every release of the range takes it, or nothing is known."""
        entry = self._keywords.get(qualname)
        if entry is None or keyword not in entry:
            return None
        low, high = self._bounds(target, upper)

        def holds(flat: List[int], index: int) -> bool:
            return any(flat[i] <= index <= flat[i + 1] for i in range(0, len(flat), 2))

        if holds(entry[keyword], len(self.releases) - 1):
            return None  # taken again today: a target older than that is another question
        first = entry[keyword][0]  # releases before the keyword came are another question
        for index in range(max(low, first + 1), high + 1):
            if holds(entry["read"], index) and not holds(entry.get("**", []), index):
                if not holds(entry[keyword], index):
                    return self.releases[index]
        return None

    def dropped_keywords(self) -> Dict[str, FrozenSet[str]]:
        """Function -> the keywords an earlier release took and the newest does not."""
        newest = len(self.releases) - 1
        found: Dict[str, FrozenSet[str]] = {}
        for qualname, entry in self._keywords.items():
            gone = frozenset(
                keyword
                for keyword, flat in entry.items()
                if keyword not in ("read", "**")
                and not any(flat[i] <= newest <= flat[i + 1] for i in range(0, len(flat), 2))
            )
            if gone:
                found[qualname] = gone
        return found

    def names_absent_in(self, release: Version) -> FrozenSet[str]:
        """The last parts of every name (public, or a private name of a public module) the
        history knows that ``release`` lacks: what ``hasattr(module, "...")`` can ask about."""
        index = self.last_index(release)
        found: Set[str] = set()
        for members in self._modules.values():
            found.update(name for name, entry in members.items() if not _holds(entry[0], index))
        for private in self._private.values():
            found.update(name for name, flat in private.items() if not _holds(flat, index))
        return frozenset(found)

    @functools.lru_cache(maxsize=1)  # noqa: B019 (one history object per process)
    def _open_modules(self) -> FrozenSet[str]:
        found = set()
        for parent, members in self._modules.items():
            for name, entry in members.items():
                if len(entry) > 3 and "o" in entry[3]:
                    found.add(f"{parent}.{name}")
        return frozenset(found)

    def _flag_present(self, flag: str) -> Optional[Tuple[Tuple[int, int], ...]]:
        flat = self._flags.get(flag)
        if flat is None:
            known = self.lookup(f"jax.config.{flag}")
            return known.present if known is not None else None
        return tuple((flat[i], flat[i + 1]) for i in range(0, len(flat), 2))

    def flag_absence(
        self, flag: str, target: Version, upper: Optional[Version] = None
    ) -> Optional[Absence]:
        """Why the flag ``flag`` cannot be set or read by name (``jax.config.update("jax_x",
        ...)``) on every release of the range; None when it can, or is unknown."""
        present = self._flag_present(flag)
        if present is None:
            return None
        known = self.lookup(f"jax.config.{flag}")
        history = NameHistory(
            f"jax.config.{flag}",
            present,
            known.deprecated_since if known else None,
            known.message if known else None,
            False,
        )
        return self._absence(history, target, upper)

    def attribute_flag_absence(
        self, flag: str, target: Version, upper: Optional[Version] = None
    ) -> Optional[Absence]:
        """Why ``jax.config.<flag>`` cannot be read on every release of the range, when the
        flag itself exists there throughout by name: the releases where it is no attribute."""
        absence = self.absence(f"jax.config.{flag}", target, upper)
        if absence is None or self.flag_absence(flag, target, upper) is not None:
            return absence
        if self._flag_present(flag) is None:
            return absence
        low, high = self._bounds(target, upper)
        known = self.lookup(f"jax.config.{flag}")
        attribute: Set[int] = set()
        for first, last in known.present if known is not None else ():
            attribute.update(range(first, last + 1))
        runs: List[List[int]] = []
        for index in range(low, high + 1):
            if index in attribute:
                continue
            if runs and runs[-1][1] == index - 1:
                runs[-1][1] = index
            else:
                runs.append([index, index])
        spans = ", ".join(
            self.releases[a] + (f"..{self.releases[b]}" if b != a else "") for a, b in runs
        )
        return dataclasses.replace(absence, by_name_only=spans)

    def first_index(self, target: Version) -> int:
        """The index of the oldest release of the range that starts at ``target``."""
        index = bisect.bisect_left(self.keys, tuple(target))  # (the keys ascend)
        return min(index, len(self.keys) - 1)

    def last_index(self, upper: Optional[Version]) -> int:
        """The index of the newest release at or below ``upper`` (None: the newest of all)."""
        if upper is None:
            return len(self.keys) - 1
        return max(bisect.bisect_right(self.keys, tuple(upper)) - 1, 0)

    def newest_at_most(self, upper: Version) -> Optional[str]:
        """The newest release at or below ``upper``, or None when the history has none."""
        index = bisect.bisect_right(self.keys, tuple(upper)) - 1
        return self.releases[index] if index >= 0 else None

    def _bounds(self, target: Version, upper: Optional[Version]) -> Tuple[int, int]:
        low, high = self.first_index(target), self.last_index(upper)
        return low, max(low, high)

    def absence(
        self, qualname: str, target: Version, upper: Optional[Version] = None
    ) -> Optional[Absence]:
        """Why ``qualname`` is missing somewhere in ``target``..``upper``; None when it is
        there throughout, or when the history does not know it."""
        known = self.lookup(qualname)
        if known is None:
            return None
        return self._absence(known, target, upper)

    def _absence(
        self, known: NameHistory, target: Version, upper: Optional[Version]
    ) -> Optional[Absence]:
        qualname = known.qualname
        low, high = self._bounds(target, upper)
        if any(first <= low and last >= high for first, last in known.present):
            return None
        inside = [(max(a, low), min(b, high)) for a, b in known.present if b >= low and a <= high]
        deprecated = (
            self.releases[known.deprecated_since] if known.deprecated_since is not None else None
        )
        if not inside:
            after = [a for a, _ in known.present if a > high]
            before = [b for _, b in known.present if b < low]
            return Absence(
                qualname,
                removed_in=self.releases[max(before) + 1] if before else None,
                added_in=None if before or not after else self.releases[min(after)],
                deprecated_since=deprecated,
                message=known.message,
                never=True,
                back_in=self.releases[min(after)] if before and after else None,
            )
        start, end = inside[0][0], inside[-1][1]
        earlier = [b for _, b in known.present if b < low]
        removed: Optional[str] = self.releases[end + 1] if end < high else None
        back: Optional[str] = None
        if start > low and earlier:  # gone before the range starts, back within it
            removed, back = self.releases[max(earlier) + 1], self.releases[start]
        elif start == low and len(inside) > 1:  # a gap within the range
            removed, back = self.releases[inside[0][1] + 1], self.releases[inside[1][0]]
        return Absence(
            qualname,
            removed_in=removed,
            added_in=self.releases[start] if start > low and back is None else None,
            deprecated_since=deprecated,
            message=known.message,
            back_in=back,
        )

    def missing_names(self, target: Version, upper: Optional[Version] = None) -> FrozenSet[str]:
        """Every qualified name the history knows that is missing somewhere in the range."""
        key = self._bounds(target, upper)
        found = self._missing.get(key)
        if found is None:
            low, high = key
            names: Set[str] = set()
            if not self._missing:  # the first range: read name by name (a one-file run's)
                for parent, members in self._modules.items():
                    for name, entry in members.items():
                        flat = entry[0]
                        if len(flat) == 2:  # (one run of releases, as most names have)
                            if flat[0] <= low and flat[1] >= high:
                                continue
                        elif _covers(flat, low, high):
                            continue
                        names.add(f"{parent}.{name}")
            else:  # (the groups pay for themselves from the second range on)
                short = self._short_of(low, high)
                for (runs, _parent), group in self._groups().items():
                    if runs in short:
                        names.update(group)
            found = self._missing[key] = frozenset(names)
        return found

    def first_missing(self, target: Version, upper: Optional[Version] = None) -> FrozenSet[str]:
        """The missing names whose parent is there throughout the range.  Any reference to a
        missing name spells (or imports from) one of these, so they are all a rule needs to
        look for: ``jax.experimental.host_callback`` stands for every one of its members."""
        low, high = self._bounds(target, upper)
        key = ("first", low, high)
        found = self._missing.get(key)
        if found is None and self._grouped is None:  # (see missing_names)
            missing = self.missing_names(target, upper)
            if self._grouped is None:
                found = frozenset(q for q in missing if q.rpartition(".")[0] not in missing)
                self._missing[key] = found
        if found is None:
            names: Set[str] = set()
            short = self._short_of(low, high)
            for (runs, parent), group in self._groups().items():
                if runs in short and (parent is None or parent not in short):
                    names.update(group)
            found = self._missing[key] = frozenset(names)
        return found

    def _short_of(self, low: int, high: int) -> Set[tuple]:
        """The runs of releases of the groups (:meth:`_groups`), theirs or their parents',
        that do not span ``low``..``high``: each distinct runs read once (there are about
        half as many as groups)."""
        found = self._short.get((low, high))
        if found is None:
            if self._distinct is None:
                pairs = self._groups()
                self._distinct = {runs for pair in pairs for runs in pair if runs is not None}
            found = {runs for runs in self._distinct if not _covers(runs, low, high)}
            self._short[(low, high)] = found
        return found

    def _groups(self) -> Dict[Tuple[tuple, Optional[tuple]], List[str]]:
        """Every qualified name the history knows, by its runs of releases and its parent's
        (None: the parent is no name of the history): a range's missing names are whole
        groups, and there are some thousands of groups to some tens of thousands of names."""
        if self._grouped is None:
            groups: Dict[Tuple[tuple, Optional[tuple]], List[str]] = {}
            modules = self._modules
            for parent, members in modules.items():
                head, _, last = parent.rpartition(".")
                above = modules.get(head, {}).get(last) if head else None
                parent_runs = tuple(above[0]) if above is not None else None
                for name, entry in members.items():
                    key = (tuple(entry[0]), parent_runs)
                    groups.setdefault(key, []).append(f"{parent}.{name}")
            self._grouped = groups
        return self._grouped

    def missing_modules(self, target: Version, upper: Optional[Version] = None) -> FrozenSet[str]:
        """Those of :meth:`first_missing` that are modules (a member can be imported from
        them): Python modules of some release, and the compiled jaxlib modules ``jax.lib``
        binds."""
        return frozenset(
            q
            for q in self.first_missing(target, upper)
            if q.startswith("jax.lib.") or (self.lookup(q) or _NOT_MODULE).is_module
        )

    def exists_throughout(
        self, qualname: str, target: Version, upper: Optional[Version] = None
    ) -> bool:
        """True when ``qualname`` exists on every release of the range (as far as known)."""
        return self.lookup(qualname) is not None and self.absence(qualname, target, upper) is None


_NOT_MODULE = NameHistory("", (), None, None, False)


def _holds(flat: List[int], index: int) -> bool:
    """Is release ``index`` in one of the runs ``flat`` lists (first, last, first, last...)?"""
    if len(flat) == 2:  # (one run of releases, as most names have)
        return flat[0] <= index <= flat[1]
    return any(flat[i] <= index <= flat[i + 1] for i in range(0, len(flat), 2))


# The public sources of what the history says, cited by the rules it drives: the changelog,
# and JAX's API compatibility policy (which names are public, and how they are deprecated).
HISTORY_SOURCES = (refs.CHANGELOG_PAGE, refs.api_compatibility())


@functools.lru_cache(maxsize=1)
def history() -> ApiHistory:
    """The shipped history, loaded once."""
    with gzip.open(DATA, "rt", encoding="utf-8") as handle:
        return ApiHistory(json.load(handle))


def added_in(qualname: str) -> str:
    """The first release that has ``qualname``: the version gate of a rule that writes that
    spelling, taken from the history so that it cannot drift from it."""
    known = history().lookup(qualname)
    if known is None or not known.present:
        raise LookupError(f"{qualname} is in no JAX release the API history knows")
    return history().releases[known.present[0][0]]


# Private modules and names (``jax._src``: the history records public names only) that a
# release no longer has, read from the sdists: code naming them fails at import from then on.
PRIVATE_GONE: Dict[str, str] = {
    "jax._src.prng": "0.10.2",  # moved to jax._src.random.prng (sdists of 0.10.1 and 0.10.2)
    # jax.random's aliases as jax._src.random defines them (dynamax 0.1.0's types.py): the
    # last sdist with KeyArray is 0.4.35's; PRNGKeyArray is in 0.4.13's, not in 0.4.23's
    "jax._src.random.KeyArray": "0.4.36",
    "jax._src.random.PRNGKeyArray": "0.4.23",
}


def _covers(runs: Sequence[int], low: int, high: int) -> bool:
    """Does one of ``runs`` (first, last, first, last, ... release indices) span low..high?"""
    return any(runs[i] <= low and runs[i + 1] >= high for i in range(0, len(runs), 2))


def private_missing(target: Version, upper: Optional[Version]) -> FrozenSet[str]:
    """The modules and names of :data:`PRIVATE_GONE` some release of the range lacks."""
    return frozenset(
        module
        for module, gone in PRIVATE_GONE.items()
        if upper is None or upper >= parse_version(gone)
    )


class ActsWhereMissing(Rule):
    """Base of rules that rewrite removed names only where the target range lacks them.

    Where every release of the range still has a name, code using it runs as it is, so the
    rule leaves it alone.  Subclasses list the names they handle in ``names`` and, in
    ``gone_modules``, whole modules whose imports go once the rewrites leave them unused.
    A private name counts as missing where it, or its module, is in :data:`PRIVATE_GONE`.
    """

    gone_modules: Tuple[str, ...] = ()

    def for_range(self, low: Version, high: Optional[Version], aside: FrozenSet[str]) -> Rule:
        # a class is hashable: mypy checks the instances' __hash__ against Hashable instead
        return _where_missing(type(self), low, high)  # type: ignore[arg-type]


@functools.lru_cache(maxsize=32)
def _where_missing(cls: Type[ActsWhereMissing], target: Version, upper: Optional[Version]) -> Rule:
    missing = history().missing_names(target, upper) | private_missing(target, upper)

    def gone(qualname: str) -> bool:
        parts = qualname.split(".")
        return any(".".join(parts[:cut]) in missing for cut in range(2, len(parts) + 1))

    copy = object.__new__(cls)
    # the copy's own sets shadow the class variables: one rule object per target range
    copy.names = frozenset(n for n in cls.names if gone(n))  # type: ignore[misc]
    copy.legacy_modules = frozenset(m for m in cls.gone_modules if m in missing)  # type: ignore[misc]
    return copy
