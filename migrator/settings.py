"""Settings: what the user asked for, from ``[tool.jaxmigrate]`` and the command line."""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, FrozenSet, List, Optional, Sequence, Tuple

from jaxmigrate.migrator import rule_index, tomlfile
from jaxmigrate.migrator.source import ARRAY_FLOOR, SourceRange, source_range
from jaxmigrate.migrator.version import LATEST_KNOWN_JAX, Version, parse_version

if TYPE_CHECKING:  # pragma: no cover
    from jaxmigrate.migrator.rule import Rule


class ConfigError(Exception):
    """A configuration value or command-line option that cannot be used."""


@dataclasses.dataclass(frozen=True)
class Settings:
    select: Tuple[str, ...] = ()  # rule codes or prefixes; empty means every rule
    ignore: Tuple[str, ...] = ()
    target_version: str = LATEST_KNOWN_JAX  # the oldest JAX the migrated code must run on
    # The newest JAX it must run on (the project's upper bound); None: every newer release.
    target_upper: Optional[str] = None
    # The JAX the code was written for (``0.3.16`` or ``0.4.13..0.4.38``; None: unknown), and
    # whether the user stated it (it then decides alone) or the project's requirement gave it
    # (a file's own references then come first): see :mod:`migrator.source`.
    source_version: Optional[str] = None
    source_explicit: bool = False
    # The requirement gave only a lower bound (``jax>=0.3.4``): the rules read it as the release
    # the code was written for, but a rule that must know the code never ran on a release from
    # some change on (:meth:`migrator.rule.Rule.runs_for`) is told the range is open above,
    # unless the bound predates jax.Array (see :func:`_active_rules`).
    source_open: bool = False
    # Every selected rule runs whatever the target (the survey that finds the floor of the
    # default target: migrator.target); such a run's output is read, never written.
    survey: bool = False
    unsafe_fixes: bool = False
    exclude: Tuple[str, ...] = ()
    extend_exclude: Tuple[str, ...] = ()
    # Line/column of every applied fix (one code-generation pass per round that changes
    # something).  Output that does not show fixes can turn it off: fixes then carry line 0.
    locate_fixes: bool = True
    # The engine's gates (text prefilter, text gate, ``ast`` gate) skip rules that cannot act,
    # for speed only.  False runs every active rule's hooks on every file LibCST parses:
    # the same output and findings, slower (tests/test_gate_equivalence.py, bench/gates.py).
    gates: bool = True
    # With the gates: a file whose every candidate rule can report from CPython's ``ast`` alone
    # and has no fix there is never parsed by LibCST (migrator.astfirst).  False always parses
    # with LibCST: the same findings (tests/test_gate_equivalence.py), slower.
    ast_first: bool = True
    # Lines a rewrite makes longer than this are wrapped (see migrator.wrap).  The runner
    # sets each file's project's own (migrator.linelength); None (a caller of the engine
    # that knows no project): no wrapping, the rewritten lines as the rules write them.  0 (the
    # default target's survey, which reads only names): no layout at all, not even the
    # realigning of a call's continuation lines after its callee's rewrite.
    line_length: Optional[int] = None
    # ``line_length`` is the default a project that configures none gets: a file's own style
    # may ask for less (migrator.linelength.styled; the runner reads it file by file).
    line_length_from_style: bool = False
    # The top-level names the project imports as its own (isort's first party), so that an
    # import a fix adds joins the right group; the runner sets them (migrator.importconfig).
    # None: none known (every absolute import that is not the standard library is third party).
    first_party: Optional[Tuple[str, ...]] = None

    def __post_init__(self) -> None:
        try:
            parse_version(self.target_version)
        except ValueError as error:
            raise ConfigError(f"target-version: {error}") from None
        if self.target_upper is not None:
            try:
                upper = parse_version(self.target_upper)
            except ValueError as error:
                raise ConfigError(f"target upper bound: {error}") from None
            if upper < self.target:
                raise ConfigError(
                    f"target range {self.target_version}..{self.target_upper} is empty "
                    "(the upper bound is older)"
                )
        try:
            source_range(self.source_version)
        except ValueError as error:
            raise ConfigError(f"source-version: {error}") from None
        for option, codes in (("select", self.select), ("ignore", self.ignore)):
            for code in codes:
                if not _known_prefix(code):
                    raise ConfigError(f"{option}: no rule code starts with {code!r}")

    @property
    def target(self) -> Version:
        return parse_version(self.target_version)

    @property
    def upper(self) -> Optional[Version]:
        """The newest JAX of the target range, or None when it reaches the newest release."""
        return None if self.target_upper is None else parse_version(self.target_upper)

    @property
    def source(self) -> SourceRange:
        """The JAX the code was written for, as far as the settings know."""
        return source_range(self.source_version)

    @property
    def target_range(self) -> str:
        """``0.4.13..0.4.38`` (or ``0.4.13..`` when the range is open above)."""
        return f"{self.target_version}..{self.target_upper or ''}"

    def active_rules(self) -> List[Rule]:
        """The rules that run: selected, not ignored, and valid on the target version."""
        from jaxmigrate.migrator.rule import REGISTRY  # (the rules: imported when first needed)

        return list(
            _active_rules(
                self.select,
                self.ignore,
                self.target_version,
                self.target_upper,
                len(REGISTRY),
                self.survey,
                self.survey and self.unsafe_fixes,
                self.source_version,
                self.source_open,
            )
        )

    def cache_key(self) -> str:
        codes = ",".join(rule.code for rule in self.active_rules())
        key = f"{codes}|{self.target_range}|{int(self.unsafe_fixes)}"
        if self.source_version is not None:
            key += f"|src{self.source_version}{'!' if self.source_explicit else ''}"
            key += ".." if self.source_open else ""
        key += "|survey" if self.survey else ""
        key = key if self.gates else key + "|ungated"
        key = key if self.ast_first else key + "|libcst"
        if self.line_length is not None:
            key += f"|ll{self.line_length}" + ("~" if self.line_length_from_style else "")
        if self.first_party:
            key += "|fp" + ",".join(self.first_party)
        return key if self.locate_fixes else key + "|unlocated"


@functools.lru_cache(maxsize=64)
def _active_rules(
    select: Tuple[str, ...],
    ignore: Tuple[str, ...],
    target_version: str,
    target_upper: Optional[str],
    _registered: int,
    survey: bool = False,
    unsafe_fixes: bool = False,
    source_version: Optional[str] = None,
    source_open: bool = False,
) -> Tuple[Rule, ...]:
    """Cached per selection (the engine asks once per file); keyed on the registry's size too,
    so a rule registered later (a test's) is seen.  ``survey``: rules whose replacement needs
    a JAX newer than the target run too (their fixes tell how far the target must rise), and
    a rule that can fix nothing there (``Rule.unsafe_fixes_only`` without ``unsafe_fixes``)
    does not run: the survey reads only fixes.  Its names are set aside like those of a rule
    the user switched off, so the backstop leaves them alone as it does in the real run.
    ``source_version`` (open above with ``source_open``): a rule that acts only on code written
    for an older JAX (:meth:`Rule.runs_for`) runs where it says so; its names are not set aside
    (it has not been switched off)."""
    from jaxmigrate.migrator.rule import all_rules

    target = parse_version(target_version)
    upper = None if target_upper is None else parse_version(target_upper)
    rules = all_rules()
    chosen, set_aside = _chosen(rules, select, ignore, survey, unsafe_fixes)
    source = _source_of(source_version, source_open)
    run = functools.partial(_as_run, target=target, upper=upper, set_aside=set_aside)
    return tuple(
        ran
        for ran in (
            run(rule, source=source, survey=survey, unsafe_fixes=unsafe_fixes)
            for code, rule in rules.items()
            if code in chosen and (survey or rule.runs_on(target)) and rule.runs_for(source)
        )
        if ran is not None
    )


def _chosen(
    rules: Dict[str, "Rule"],
    select: Tuple[str, ...],
    ignore: Tuple[str, ...],
    survey: bool,
    unsafe_fixes: bool,
) -> Tuple[FrozenSet[str], FrozenSet[str]]:
    """The codes of ``rules`` the selection chooses, and the names of those it does not."""
    chosen = frozenset(
        code
        for code in rules
        if (not select or _matches(code, select))
        and not _matches(code, ignore)
        and (not rules[code].opt_in or code in select)
        and not (survey and rules[code].unsafe_fixes_only and not unsafe_fixes)
    )
    set_aside = frozenset().union(*(rules[code].names for code in rules if code not in chosen))
    return chosen, set_aside


def set_aside(settings: Settings) -> FrozenSet[str]:
    """The names of the rules ``settings`` does not choose (every rule is loaded)."""
    from jaxmigrate.migrator.rule import all_rules

    survey = settings.survey
    return _chosen(
        all_rules(), settings.select, settings.ignore, survey, survey and settings.unsafe_fixes
    )[1]


def _source_of(source_version: Optional[str], source_open: bool) -> SourceRange:
    source = source_range(source_version)
    if source_open and not _before_arrays(source):
        source = dataclasses.replace(source, upper=None)
    return source


def _as_run(
    rule: "Rule",
    target: Version,
    upper: Optional[Version],
    set_aside: FrozenSet[str],
    source: SourceRange,
    survey: bool,
    unsafe_fixes: bool,
) -> Optional["Rule"]:
    """``rule`` (one chosen that runs) as it runs: for the target range, the source, and (in the
    survey, which reads only fixes) as the survey runs it (None: it cannot move the floor)."""
    ran = rule.for_target(target, set_aside, upper).for_source(source)
    return ran.for_survey(target, upper, unsafe_fixes) if survey else ran


@functools.lru_cache(maxsize=256)
def active_rule(settings: Settings, code: str, set_aside: FrozenSet[str]) -> "Rule":
    """The active rule ``code`` of ``settings`` as :meth:`Settings.active_rules` has it, where
    ``set_aside`` are the names of the rules not chosen (:func:`_active_rules`): only its own
    module is imported (and what it imports), not every rule (:mod:`migrator.gateplan` knows
    ``code`` is active, and the module that registers it)."""
    from jaxmigrate.migrator.rule import REGISTRY

    ran = _as_run(
        REGISTRY[code],
        parse_version(settings.target_version),
        None if settings.target_upper is None else parse_version(settings.target_upper),
        set_aside,
        _source_of(settings.source_version, settings.source_open),
        settings.survey,
        settings.survey and settings.unsafe_fixes,
    )
    if ran is None:  # (the kept gates said it runs)
        raise LookupError(f"{code} does not run with these settings")
    return ran


def _before_arrays(source: SourceRange) -> bool:
    """Does the source start before jax.Array (:data:`migrator.source.ARRAY_FLOOR`)?  A library may
    keep an old lower bound while its code moves on, so a requirement open above says little
    of when its code was written; but code that still admits a JAX from before jax.Array was
    written for one (blackjax 0.9.6's ``jax>=0.3.13``, whose tests expect the draws of JAX
    before 0.5.0), and a file whose own names are newer says so itself
    (:meth:`migrator.context.Context.written_before`)."""
    return source.lower is not None and source.lower < parse_version(ARRAY_FLOOR)


def _known_prefix(code: str) -> bool:
    """Does some rule's code start with ``code`` (or is it ``ALL``)?  The rule index answers
    for the shipped rules without importing them; the registry, for any other."""
    if code == "ALL" or any(known.startswith(code) for known in rule_index.rules()):
        return True
    from jaxmigrate.migrator.rule import all_rules

    return any(known.startswith(code) for known in all_rules())


def _matches(code: str, patterns: Sequence[str]) -> bool:
    return any(p == "ALL" or code.startswith(p) for p in patterns)


_KEYS = {
    "select": "select",
    "ignore": "ignore",
    "target-version": "target_version",
    "source-version": "source_version",
    "unsafe-fixes": "unsafe_fixes",
    "exclude": "exclude",
    "extend-exclude": "extend_exclude",
}


def find_config(paths: Sequence[Path]) -> Optional[Path]:
    """The first ``pyproject.toml`` with a ``[tool.jaxmigrate]`` table, walking up from the
    paths."""
    starts = [p.resolve() for p in paths] or [Path.cwd().resolve()]
    start = Path(_common_parent(starts))
    for directory in (start, *start.parents):
        candidate = directory / "pyproject.toml"
        if candidate.is_file() and load_config(candidate) is not None:
            return candidate
    return None


def _common_parent(paths: Sequence[Path]) -> str:
    import os.path

    dirs = [str(p if p.is_dir() else p.parent) for p in paths]
    return os.path.commonpath(dirs)


def load_config(path: Path) -> Optional[Dict[str, Any]]:
    """The ``[tool.jaxmigrate]`` table of a pyproject.toml as Settings keywords (None if absent)."""
    try:
        data = tomlfile.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise ConfigError(f"{path}: cannot read configuration: {error}") from None
    table = data.get("tool", {}).get("jaxmigrate")
    if table is None:
        return None
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.jaxmigrate] must be a table")
    result: Dict[str, Any] = {}
    for key, value in table.items():
        if key not in _KEYS:
            raise ConfigError(f"{path}: unknown key {key!r} in [tool.jaxmigrate]")
        field = _KEYS[key]
        if field in ("select", "ignore", "exclude", "extend_exclude"):
            if isinstance(value, str):
                value = [value]
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ConfigError(f"{path}: {key} must be a list of strings")
            value = tuple(value)
        elif field == "unsafe_fixes" and not isinstance(value, bool):
            raise ConfigError(f"{path}: unsafe-fixes must be true or false")
        elif field in ("target_version", "source_version") and not isinstance(value, str):
            # A bare 0.10 in TOML is the float 0.1: insist on a string.
            raise ConfigError(f'{path}: {key} must be a string such as "0.4.30"')
        result[field] = value
        if field == "source_version":
            result["source_explicit"] = True
    return result
