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
them.  Only "no rule passes" is taken from it: any other answer goes to the engine.

``tests/test_gateplan.py`` checks that the kept gates answer as the rules do on every fixture.
"""

from __future__ import annotations

import hashlib
import importlib
import marshal
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Set, Tuple, Type, cast

from jaxmigrate.migrator import rule_index

if TYPE_CHECKING:  # pragma: no cover
    from jaxmigrate.migrator.plan import Plan
    from jaxmigrate.migrator.rule import Rule
    from jaxmigrate.migrator.rulegate import RuleGate
    from jaxmigrate.migrator.settings import Settings

_FORMAT = 1
SUFFIX = ".gates"
_PLANS: Dict[Path, Optional["Plan"]] = {}
_SAVED: Set[Tuple[Path, "Settings"]] = set()  # (directory, settings) saved or tried
# (module, class name, the rule's gate fields and state) for each active rule, in code order
Entry = Tuple[str, str, Dict[str, Any]]


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


def passes_none(text: str, settings: "Settings", directory: Path) -> bool:
    """True when gates 1 and 1b pass no rule for ``text``, told from the kept gates: the engine
    would give ``text`` back unchanged, with no fix and no finding.  False says nothing (no
    gates kept, or some rule passes: the engine decides)."""
    plan = kept(settings, directory)
    return plan is not None and not plan.candidates(text)


def kept(settings: "Settings", directory: Path) -> Optional["Plan"]:
    """The plan of the gates of ``settings`` kept under ``directory``; None when none are
    kept, or when the rules are loaded already (their own plan answers as fast)."""
    if not settings.gates or _rules_loaded():
        return None
    where = path(directory, settings)
    if where not in _PLANS:
        _PLANS[where] = _load(where)
    return _PLANS[where]


def _rules_loaded() -> bool:
    return bool(getattr(sys.modules.get("jaxmigrate.rules"), "_LOADED", False))


def _load(where: Path) -> Optional["Plan"]:
    try:
        with open(where, "rb") as handle:  # (marshal.load reads a Python file piece by piece)
            kept: List[Entry] = marshal.loads(handle.read())
        os.utime(where)  # used now: the cache's sweep deletes the least recently used first
        return plan_of(kept)
    except Exception:  # noqa: BLE001  (unreadable, stale or foreign: the engine answers)
        return None


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
    if os.path.exists(where) and _PLANS.get(where, True) is not None:  # (kept, and readable)
        return
    from jaxmigrate.migrator.rule import all_rules

    if all_rules().keys() != rule_index.rules().keys():
        return
    kept = entries(tuple(settings.active_rules()))
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
