"""Which JAX a run migrates *from* (the source) and *to* (the target), and what it says about
them.

The two are different questions.  A project's ``jax`` requirement (``jax==0.3.16``,
``jax>=0.3.4``) says what its code was written for: the source.  The target is what the
migrated code must run on: ``--target-version``, else a default that reaches the newest JAX
from the *floor* of the migration, the oldest JAX on which every rewrite and every JAX name of
the migrated code exists (:func:`floor_of_results`).  A requirement whose lower bound is at or
above the floor is kept as the target's lower bound (a library on ``jax>=0.4.30`` keeps
supporting 0.4.30); a lower one describes the code's past, and the target becomes
floor..newest.

Finding the floor takes a *survey*: the migration run once with every selected rule active
whatever its needs (:attr:`Settings.survey`), its output read and never written.
"""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path
from typing import (
    TYPE_CHECKING,
    AbstractSet,
    Callable,
    Collection,
    Dict,
    FrozenSet,
    Iterable,
    List,
    Optional,
    Protocol,
    Sequence,
    Set,
    Tuple,
)

from jaxmigrate.migrator.diagnostics import CLEANUP_CODE, Diagnostic
from jaxmigrate.migrator.floorbound import (
    bound_of_names,
    bound_of_words,
    floor_bound,
    may_name_from,
    words_of,
)
from jaxmigrate.migrator.source import (  # (ARRAY_FLOOR: no target starts before it)
    ARRAY_FLOOR,
    SourceRange,
    floor_noted,
    floor_of,
)
from jaxmigrate.migrator.version import Version, parse_version

if TYPE_CHECKING:  # pragma: no cover
    from jaxmigrate.migrator.codewords import CodeReading
    from jaxmigrate.migrator.project_version import Detected
    from jaxmigrate.migrator.rule import Rule


def shown(path: Path) -> str:
    """``path`` as a message names it (relative to the working directory when below it)."""
    from jaxmigrate.migrator.project_version import shown as relative

    return relative(path)


Floor = Tuple[str, str]  # (X.Y.Z, what sets it)


def dated_no_later_than_array_floor(qualnames: Iterable[str]) -> bool:
    """Does every one of these JAX names count for no floor past :data:`ARRAY_FLOOR` (the
    release that added it is no later, or it is gone from the newest JAX, which the floor does
    not date)?  Read from the API history, as the survey's floor reads the migrated text."""
    lines = [f"import {q.partition('.')[0]}\n{q}\n" for q in sorted(set(qualnames))]
    found = floor_of("".join(lines)) if lines else None
    return found is None or found[0] <= parse_version(ARRAY_FLOOR)


def survey_reach(
    text: str,
    tokens: Optional[Collection[str]],
    rules: Sequence["Rule"],
    low: Version,
    code: Optional["CodeReading"] = None,
) -> Version:
    """A release no older than the floor the survey (its ``rules``, from ``low``) can find in
    ``text``: what a fix of any of the rules needs; ``low``, where every other name a rule
    writes exists (``tests/test_emitted_names.py``); and the newest JAX name made of the
    text's words (:func:`migrator.floorbound.floor_bound`'s reading) together with those the
    rules' tables may write there whatever release added them (:meth:`Rule.survey_writes`).
    Its docstrings' programs add the conventional imports.  ``tokens``: gate 1's tokens of
    ``text``, if in hand; a set is used up (the words are added to it, not to a copy).
    ``code``: what :func:`migrator.codewords.read_code` read of the text's tree, if in hand:
    the names the migrated code can spell are then made of the words of its code and those
    the rules write, and only those its code's chains and imports can reference
    (:func:`migrator.codewords.chain_names`) or that the rules may write, whole or as the
    head of a chain's rest (:func:`migrator.codewords.chain_tails`), count (what the rules
    may write is still read from every word of the text)."""
    words = tokens if type(tokens) is set and text.isascii() else words_of(text, tokens)
    words |= _conventional_words()
    needs, writers, needers = _of_rules(tuple(rules))
    needs = max((needs, *fix_needs_in(needers, words)), key=lambda v: v or low)
    written: Set[str] = set()
    for rule in writers:  # (each reads the text's words alone)
        written |= rule.survey_writes(words)
    if code is None:
        named = bound_of_words(words | written)
    else:
        from jaxmigrate.migrator.codewords import chain_names, chain_tails

        words = code.words | _conventional_words() | written
        named = bound_of_names(words, chain_names(code, words), written, chain_tails(code))
    return max(low, needs or low, named or low)


def fix_needs_in(rules: Iterable["Rule"], words: AbstractSet[str]) -> List[Version]:
    """What the fixes of ``rules`` (those with ``fix_needs``) may need in a file of ``words``
    beyond their ``needs_jax`` (:meth:`Rule.fix_needs_in`)."""
    found = (rule.fix_needs_in(words) for rule in rules)
    return [parse_version(needs) for needs in found if needs]


@functools.lru_cache(maxsize=1)
def _conventional_words() -> FrozenSet[str]:
    """The words of the conventional imports a docstring's programs add (read once)."""
    from jaxmigrate.migrator.docgate import CONVENTIONAL

    return frozenset(words_of(" ".join(CONVENTIONAL.values())))


@functools.lru_cache(maxsize=8)
def _of_rules(
    rules: Tuple["Rule", ...],
) -> Tuple[Optional[Version], Tuple["Rule", ...], Tuple["Rule", ...]]:
    """The newest ``needs_jax`` among ``rules`` (None: none has one), the rules that may
    write words beyond it (those overriding :meth:`Rule.survey_writes`, or with
    ``writes_since``), and those whose fixes may need more (``fix_needs``)."""
    from jaxmigrate.migrator.rule import Rule

    needs = max((parse_version(r.needs_jax) for r in rules if r.needs_jax), default=None)
    writers = tuple(
        rule
        for rule in rules
        if type(rule).survey_writes is not Rule.survey_writes or rule.writes_since
    )
    return needs, writers, tuple(rule for rule in rules if rule.fix_needs)


def newest_fix_needs(words: Callable[[], AbstractSet[str]]) -> Optional[Version]:
    """The newest ``needs_jax`` of the registered rules, and what their fixes may need beyond
    it in a file of ``words()`` (read only where some rule's ``fix_needs`` is newer): no
    :func:`fix_floor` of that file is newer."""
    from jaxmigrate.migrator.rule import REGISTRY, all_rules

    all_rules()  # (the rules registered)
    needs = _newest_needs(tuple(REGISTRY))
    needers = [r for r in REGISTRY.values() if r.fix_needs]
    most = [parse_version(r.fix_needs) for r in needers if r.fix_needs]
    if needs is not None and all(v <= needs for v in most):
        return needs
    return max((needs, *fix_needs_in(needers, words())), key=lambda v: v or (0,))


@functools.lru_cache(maxsize=4)
def _newest_needs(codes: Tuple[str, ...]) -> Optional[Version]:
    from jaxmigrate.migrator.rule import REGISTRY

    found = [REGISTRY[code].needs_jax for code in codes]
    return max((parse_version(needs) for needs in found if needs), default=None)


def newest_release() -> str:
    """The newest JAX release the API history knows: the top of every default target."""
    from jaxmigrate.migrator.rule_index import releases  # the history's, without loading it

    return releases()[-1]


def fix_floor(fixes: Iterable[Diagnostic]) -> Optional[Floor]:
    """The newest ``needs`` among the rules whose fixes these are (with the rule), or None."""
    fixes = list(fixes)
    if not fixes:
        return None  # (without importing the rules)
    from jaxmigrate.migrator.rule import all_rules

    rules = all_rules()
    best: Optional[Tuple[Version, str]] = None
    for fix in fixes:
        rule = rules.get(fix.code)
        if fix.code == CLEANUP_CODE or rule is None:
            continue
        for needs in (parse_version(n) for n in (rule.needs_jax, fix.needs) if n):
            if best is None or needs > best[0]:
                best = (needs, f"{rule.code} {rule.name}'s fix")
    return None if best is None else (_text(best[0]), best[1])


def file_floor(
    output: Optional[str], fixes: Sequence[Diagnostic], source: Optional[SourceRange] = None
) -> Optional[Floor]:
    """The floor of one migrated file: the newest of what its fixes need and of the JAX names
    its migrated text (``output``, None when it is not Python) spells, read as code written
    for ``source`` (:func:`migrator.source.evidence`)."""
    candidates = [fix_floor(fixes)]
    if output is not None and "jax" in output:
        named = floor_of(output, source)
        if named is not None:
            candidates.append((_text(named[0]), named[1]))
    return _newest(c for c in candidates if c is not None)


def survey_floor(
    output: Optional[str],
    fixes: Sequence[Diagnostic],
    settle: bool,
    tokens: Optional[Collection[str]] = None,
    source: Optional[SourceRange] = None,
) -> Tuple[Optional[Floor], Optional[str]]:
    """The survey's answer for one file: (its floor, None) as :func:`file_floor`, or (what its
    fixes need, a bound) where the floor of the names in ``output`` would take a parse that may
    decide nothing.  The bound (:func:`migrator.floorbound.floor_bound`) is the newest that floor
    can be; the run reads it only if it reaches the newest floor of the others
    (:func:`settle_floors`).  ``settle``: read it now whatever the bound (the text is one the
    run cannot read again, as a migrated one).  A named floor that cannot pass the first
    jax.Array release, nor what the fixes need, is never read: it cannot set the target.
    ``tokens``: gate 1's identifier-like tokens of ``output``, when it has them.  ``source``:
    what the code was written for (:func:`file_floor`)."""
    fixed = fix_floor(fixes)
    if output is None or "jax" not in output or floor_noted(output, source):
        return file_floor(output, fixes, source), None
    bound = floor_bound(output, tokens)
    low = max(parse_version(ARRAY_FLOOR), parse_version(fixed[0]) if fixed else (0,))
    if bound is None or bound <= low:
        return fixed, None
    if settle:
        return file_floor(output, fixes, source), None
    return fixed, _text(bound)


class Surveyed(Protocol):
    """What :func:`settle_floors` reads and writes of a survey's result (a ``FileResult``)."""

    path: str
    floor: Optional[Floor]
    floor_bound: Optional[str]


def settle_floors(
    results: Sequence[Surveyed],
    read: Callable[[str], Optional[str]],
    low: Optional[str] = None,
    source: Optional[SourceRange] = None,
) -> None:
    """Reads the named floors the survey left open (``floor_bound``, with the text ``read``
    gives for a path) where they may set the run's: newest bound first, while a bound reaches
    the newest floor known (a tie too: the first file that reaches it names the floor).  The
    survey's lower bound ``low`` (else the first jax.Array release) stands for a floor no file
    names: one no newer is not named (:func:`default_target`).  ``source``: what the code was
    written for (:func:`file_floor`)."""
    from jaxmigrate.migrator.plan import tokens_ahead  # (read ahead by the survey's bounds)

    floors = [parse_version(r.floor[0]) for r in results if r.floor]
    best = max([parse_version(low or ARRAY_FLOOR), *floors])
    # where the first file whose floor is ``best`` stands: a later one can only tie
    holder = next((i for i, r in enumerate(results) if r.floor and _at(r, best)), -1)
    bounded = [(parse_version(r.floor_bound), i, r) for i, r in enumerate(results) if r.floor_bound]
    bounded.sort(key=lambda entry: entry[0], reverse=True)
    for bound, index, result in bounded:
        result.floor_bound = None
        if bound < best or (bound == best and index > holder):
            continue
        text = read(result.path)
        named = None
        if text is not None and may_name_from(text, best, tokens_ahead(text)):
            named = floor_of(text, source)
        if named is not None:
            result.floor = _newest(f for f in (result.floor, (_text(named[0]), named[1])) if f)
            if parse_version(result.floor[0]) > best:  # type: ignore[index]
                best, holder = parse_version(result.floor[0]), index  # type: ignore[index]
            elif _at(result, best):
                holder = min(holder, index)


def _at(result: Surveyed, version: Version) -> bool:
    return result.floor is not None and parse_version(result.floor[0]) == version


def floor_of_results(results: Iterable[object]) -> Optional[Tuple[str, str, str]]:
    """(floor, what sets it, in which file) over a survey's results (``FileResult``\\ s)."""
    best: Optional[Tuple[str, str, str]] = None
    for result in results:
        floor = getattr(result, "floor", None)
        if floor is not None and (best is None or parse_version(floor[0]) > parse_version(best[0])):
            best = (floor[0], floor[1], getattr(result, "path", ""))
    return best


def _newest(floors: Iterable[Floor]) -> Optional[Floor]:
    best: Optional[Floor] = None
    for floor in floors:
        if best is None or parse_version(floor[0]) > parse_version(best[0]):
            best = floor
    return best


def _text(version: Version) -> str:
    return ".".join(str(part) for part in version)


@dataclasses.dataclass(frozen=True)
class Versions:
    """What a run migrates from and to, where each came from, and the note that says so."""

    target_lower: str
    target_upper: Optional[str]
    target_origin: str
    source: SourceRange
    note: str = ""  # the one stderr line (empty: nothing to say)
    # the floor the survey found; a kept requirement's lower bound where nothing needs newer
    # (the survey starts there: it looks for no floor below it)
    floor: Optional[str] = None

    def as_dict(self) -> Dict[str, object]:
        source = self.source
        return {
            "source_range": {
                "lower": None if source.lower is None else _text(source.lower),
                "upper": None if source.upper is None else _text(source.upper),
                "origin": source.origin or "unknown",
            },
            "target_range": {"lower": self.target_lower, "upper": self.target_upper},
            "target_version_source": self.target_origin,
            "floor": self.floor,
            "note": self.note or None,
        }

    def target_span(self) -> str:
        return f"{self.target_lower}..{self.target_upper or newest_release()}"


def _said(source: SourceRange) -> str:
    if source.known:
        return f"{source.describe()} ({source.origin})" if source.origin else source.describe()
    return "unknown, but for what each file's own JAX names prove"


def survey_lower(detected: Optional["Detected"]) -> str:
    """Where the survey's target starts: the requirement's lower bound when it is a jax.Array
    release (a library keeps it when the floor allows), else the first jax.Array release."""
    if detected is not None and detected.version is not None:
        if parse_version(detected.version) >= parse_version(ARRAY_FLOOR):
            return detected.version
    return ARRAY_FLOOR


def admits_the_array_releases(detected: Optional["Detected"]) -> bool:
    """Does the requirement ``detected`` admit every jax.Array release, from a lower bound
    before the first (``jax>=0.3.0``, or no bound at all)?  The default target then starts at
    that first release, which the migrated code may not need."""
    if detected is None or detected.upper is not None:
        return False
    return detected.version is None or parse_version(detected.version) < parse_version(ARRAY_FLOOR)


def named_past_the_array_floor(found: Optional[Tuple[str, str, str]]) -> bool:
    """Did the survey find a floor (``found``) past the first jax.Array release?"""
    return found is not None and parse_version(found[0]) > parse_version(ARRAY_FLOOR)


def default_target(
    detected: Optional["Detected"],
    source: SourceRange,
    found: Optional[Tuple[str, str, str]],
) -> Versions:
    """The target when none is given: from the floor ``found`` by the survey (None: nothing
    needs anything) and the project's requirement ``detected``, with the note that says so.
    A floor no newer than where the survey started (:func:`survey_lower`) is not named: the
    survey passes over the files that could only find one (:mod:`migrator.surveyorder`)."""
    newest = newest_release()
    floor = ARRAY_FLOOR
    why = "the first jax.Array release"
    # (nothing found past it: the code need not need it, only no target starts before it)
    need = f"the oldest target is {floor}, {why}: nothing in the code needs a newer JAX"
    if found is not None and parse_version(found[0]) > parse_version(floor):
        where = f" in {found[2]}" if found[2] else ""
        floor, why = found[0], f"{found[1]}{where}"
        need = f"the migrated code needs {floor}: {why}"
    if detected is not None and detected.version is not None:
        pin = f"{shown(detected.source)} has {detected.requirement}"
        if parse_version(detected.version) >= parse_version(floor):
            # (the survey starts at a kept lower bound: it looks for no floor below it)
            return Versions(
                detected.version,
                None,
                f"the lower bound of {detected.source.name}: {detected.requirement}",
                source,
                f"{pin}: migrating to {detected.version}..{newest} (kept: nothing in the "
                "migrated code needs a newer JAX); --target-version to choose",
                detected.version,
            )
        return Versions(
            floor,
            None,
            f"the floor of the migration ({why})",
            source,
            f"{pin} (the JAX this code was written for); migrating to {floor}..{newest} "
            f"({need}); --target-version to choose",
            floor,
        )
    where = (
        f"{shown(detected.source)} has {detected.requirement} (no lower bound)"
        if detected is not None
        else "no jax requirement found"
    )
    hint = (  # (a source the user stated needs no hint to state it)
        "--target-version to choose"
        if source.known
        else "--source-version states what the code was written for"
    )
    return Versions(
        floor,
        None,
        f"the floor of the migration ({why})",
        source,
        f"{where}: source {_said(source)}; migrating to {floor}..{newest} ({need}); {hint}",
        floor,
    )
