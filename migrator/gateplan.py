"""Gates 1 and 1b of a run's settings, kept on disk: a later run answers them without the rules.

A file that names JAX but writes none of the active rules' trigger words as one of their sites
(most modern code: the pre-commit hook's and the editor's case) is given back unchanged by
the engine, with no fix and no finding, before anything is parsed.  Telling so needs only what
the rules declare for the gates (:class:`migrator.rulegate.RuleGate`), for the run's target
range; importing the rules to get it (with LibCST and the API history they load) costs several
times the rest of the run (issue #29).  So the first run with some settings that imports the
rules keeps it, in the result cache's directory, keyed by the tool's code and the settings
that choose the rules; a later process reads it back (objects of the rules' gate bases, with
the same declarations and the same hooks) and runs :meth:`migrator.plan.Plan.candidates` on
them.  "No rule passes" is answered from it alone; where some rules pass, the engine is given
them, and imports only their modules for as long as they answer the file alone
(:class:`Kept`, :func:`migrator.engine.migrate_source`).

``tests/test_gateplan.py`` checks that the kept gates answer as the rules do on every fixture.
"""

from __future__ import annotations

import hashlib
import importlib
import marshal
import os
import sys
from functools import cached_property
from pathlib import Path
from typing import (
    TYPE_CHECKING,
    Any,
    Dict,
    FrozenSet,
    List,
    Optional,
    Sequence,
    Set,
    Tuple,
    Type,
    cast,
)

from jaxmigrate.migrator import rule_index

if TYPE_CHECKING:  # pragma: no cover
    from jaxmigrate.migrator.plan import Plan
    from jaxmigrate.migrator.rule import Rule
    from jaxmigrate.migrator.rulegate import RuleGate
    from jaxmigrate.migrator.settings import Settings

_FORMAT = 2
SUFFIX = ".gates"
_KEPT: Dict[Path, Optional["Kept"]] = {}
_SAVED: Set[Tuple[Path, "Settings"]] = set()  # (directory, settings) saved or tried
# (module, class name, the rule's gate fields and state) for each active rule, in code order
Entry = Tuple[str, str, Dict[str, Any]]


class Kept:
    """The kept gates of some settings, and what gives the engine the real rules they pass
    without importing every rule: the module that registers each active rule, the names of
    the rules the settings do not choose (each active rule is made with them), and the rules
    whose copy for the settings holds nothing but what their gates keep (a rule the API
    history drives, with its names for the target range: rebuilt from the kept gates, the
    history unread)."""

    def __init__(
        self,
        plan: "Plan",
        modules: Dict[str, str],
        aside: FrozenSet[str],
        rebuilt: Dict[str, List[str]],
        settings: "Settings",
    ) -> None:
        self.plan = plan
        self.modules = modules
        self.aside = aside
        self.rebuilt = rebuilt
        self.settings = settings
        self._made: Dict[str, "Rule"] = {}

    def rules(self, codes: Sequence[str]) -> Tuple["Rule", ...]:
        """The active rules ``codes`` (in that order), as the settings' active rules have them,
        importing only their modules."""
        from jaxmigrate.migrator.rule import REGISTRY
        from jaxmigrate.migrator.settings import active_rule

        for code in codes:
            if code in self._made:
                continue
            if code not in REGISTRY:
                importlib.import_module(self.modules[code])
            if code in self.rebuilt:
                gate = next(gate for gate in self.plan.rules if gate.code == code)
                made = type(REGISTRY[code]).__new__(type(REGISTRY[code]))
                made.__dict__.update({field: getattr(gate, field) for field in self.rebuilt[code]})
            else:
                made = active_rule(self.settings, code, self.aside)
            self._made[code] = made
        return tuple(self._made[code] for code in codes)


def path(directory: Path, settings: "Settings") -> Path:
    """Where the gates of ``settings`` are kept under the cache ``directory``: named by the
    tool's code (:func:`migrator.cache.code_fingerprint`) and what chooses the rules."""
    from jaxmigrate.migrator.cache import code_fingerprint

    chosen = (
        settings.select,
        settings.ignore,
        settings.target_version,
        settings.target_upper,
        settings.survey,
        settings.survey and settings.unsafe_fixes,  # (the survey's rules depend on it)
        settings.source_version,  # (Rule.runs_for)
        settings.source_open,
    )
    key = f"{_FORMAT}|{code_fingerprint()}|{sys.version_info[:2]}|{chosen!r}"
    return directory / "gates" / (hashlib.sha256(key.encode()).hexdigest()[:24] + SUFFIX)


def kept(settings: "Settings", directory: Path) -> Optional["Plan"]:
    """The plan of the gates of ``settings`` kept under ``directory``; None when none are
    kept, or when the rules are loaded already (their own plan answers as fast)."""
    found = kept_gates(settings, directory)
    return None if found is None else found.plan


def kept_gates(settings: "Settings", directory: Path) -> Optional["Kept"]:
    """:func:`kept`, with what makes the real rules its gates pass (:meth:`Kept.rules`)."""
    if not settings.gates or _rules_loaded():
        return None
    where = path(directory, settings)
    if where not in _KEPT:
        _KEPT[where] = _load(where, settings)
    return _KEPT[where]


def _rules_loaded() -> bool:
    rules = sys.modules.get("jaxmigrate.rules")  # (not imported: none is loaded)
    return rules is not None and rules.loaded()


def _load(where: Path, settings: "Settings") -> Optional[Kept]:
    try:
        with open(where, "rb") as handle:  # (marshal.load reads a Python file piece by piece)
            data = marshal.loads(handle.read())
        os.utime(where)  # used now: the cache's sweep deletes the least recently used first
        return read(data, settings)
    except Exception:  # noqa: BLE001  (unreadable, stale or foreign: the engine answers)
        return None


def read(data: Any, settings: "Settings") -> Kept:
    """The kept gates of ``settings`` from ``data`` (what :func:`data_of` made of them)."""
    kept: List[Entry]
    kept, modules, aside, rebuilt = data
    if not all(module.startswith("jaxmigrate.rules.") for module in modules.values()):
        raise ValueError("not a rule module")
    held = {fields["code"]: fields.keys() for _module, _name, fields in kept}
    if not all(set(rebuilt[code]) <= held[code] for code in rebuilt):
        raise ValueError("a rule rebuilt from what its gates do not keep")
    return Kept(plan_of(kept), modules, frozenset(aside), rebuilt, settings)


def plan_of(kept: List[Entry]) -> "Plan":
    """The plan of the kept gates: objects of the rules' gate bases, which answer everything
    gates 1 and 1b read of a rule (:mod:`migrator.rulegate`)."""
    from jaxmigrate.migrator.plan import make_plan

    gates = tuple(_gate(module, name, fields) for module, name, fields in kept)
    return make_plan(cast("Tuple[Rule, ...]", gates))


def _gate(module: str, name: str, fields: Dict[str, Any]) -> "RuleGate":
    from jaxmigrate.migrator.rulegate import RuleGate

    if module != __name__.rpartition(".")[0] + ".rulegate" and not module.startswith(
        "jaxmigrate.rules._"
    ):
        raise ValueError(f"not a gate base: {module}")
    cls = getattr(importlib.import_module(module), name)
    if not (isinstance(cls, type) and issubclass(cls, RuleGate)):
        raise ValueError(f"not a gate base: {module}.{name}")
    gate = cls.__new__(cls)
    gate.__dict__.update(fields)
    return gate


def gate_base(rule: "RuleGate") -> Optional[Type["RuleGate"]]:
    """The class whose gate hooks ``rule`` runs: the first gate base in its MRO that is not a
    rule (:class:`RuleGate` itself, or a light base such as ``rules._text_gates``); None when
    the rule or a rule class above it overrides what the gates call (then it cannot be kept)."""
    from jaxmigrate.migrator.rule import Rule
    from jaxmigrate.migrator.rulegate import RuleGate

    kind = type(rule)
    base = next(c for c in kind.__mro__ if issubclass(c, RuleGate) and not issubclass(c, Rule))
    for hook in ("text_gate", "gate_words", "word_sites", "trigger_words", "prelude_only"):
        if getattr(kind, hook) is not getattr(base, hook):
            return None
    return base


def entries(rules: "Tuple[Rule, ...]") -> Optional[List[Entry]]:
    """What is kept of ``rules`` (the active rules of some settings); None when one of them
    cannot be kept."""
    from jaxmigrate.migrator.rulegate import GATE_FIELDS

    kept: List[Entry] = []
    for rule in rules:
        base = gate_base(rule)
        if base is None:
            return None
        fields = {field: getattr(rule, field) for field in (*GATE_FIELDS, *base.gate_state)}
        kept.append((base.__module__, base.__qualname__, fields))
    return kept


def save(settings: "Settings", directory: Path) -> None:
    """Keep the gates of ``settings`` (once per process and settings) if the rules are
    loaded, unless they are kept already or cannot be: a rule registered at run time (a
    test's) is not among the shipped rules of :mod:`migrator.rule_index`."""
    if not settings.gates or not _rules_loaded():
        return
    if (directory, settings) in _SAVED:  # (asked once per file: the path hashes the code)
        return
    _SAVED.add((directory, settings))
    where = path(directory, settings)
    if os.path.exists(where) and _KEPT.get(where, True) is not None:  # (kept, and readable)
        return
    from jaxmigrate.migrator.rule import all_rules

    if all_rules().keys() != rule_index.rules().keys():
        return
    kept = data_of(settings)
    if kept is None:
        return
    try:
        import tempfile  # (on use: most runs keep nothing)

        data = marshal.dumps(kept)
        where.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=where.parent, suffix=".tmp")
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(temp, where)
    except (OSError, ValueError):
        pass  # not kept: only slower


def data_of(settings: "Settings") -> Optional[Tuple[Any, ...]]:
    """What is kept of the gates of ``settings`` (the rules loaded), as :func:`marshal.dumps`
    takes it; None when a rule's gates cannot be kept."""
    from jaxmigrate.migrator.rule import REGISTRY
    from jaxmigrate.migrator.settings import set_aside

    active = tuple(settings.active_rules())
    kept = entries(active)
    if kept is None:
        return None
    modules = {rule.code: type(REGISTRY[rule.code]).__module__ for rule in active}
    rebuilt = {rule.code: fields for rule in active if (fields := rebuilt_from_gates(rule))}
    return kept, modules, sorted(set_aside(settings)), rebuilt


def rebuilt_from_gates(rule: "Rule") -> Optional[List[str]]:
    """The fields of ``rule`` (an active rule) when it is a copy of its registered rule that
    differs from its class only in what its gates keep (:data:`GATE_FIELDS` and its gate
    base's ``gate_state``): a copy made of them is the rule.  None for any other rule."""
    from jaxmigrate.migrator.rule import REGISTRY
    from jaxmigrate.migrator.rulegate import GATE_FIELDS

    registered, base = REGISTRY[rule.code], gate_base(rule)
    if rule is registered or type(rule) is not type(registered) or base is None:
        return None
    kind = type(rule)
    cached = {name for name in vars(rule) if isinstance(getattr(kind, name, None), cached_property)}
    fields = sorted(set(vars(rule)) - cached)  # (what it caches of them is made again on use)
    return fields if set(fields) <= {*GATE_FIELDS, *base.gate_state} else None
