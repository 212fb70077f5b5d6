"""Gate 2 on CPython's facts of a file, and the gates of a text the fixes written on ``ast`` made
(:mod:`migrator.astfixes`): which rules read it again, and their findings there."""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Tuple

from jaxmigrate.migrator.astfacts import Facts, imports_jax
from jaxmigrate.migrator.astfirst import findings_on_ast
from jaxmigrate.migrator.astfixes import Answer, Gate
from jaxmigrate.migrator.plan import Plan, make_plan
from jaxmigrate.migrator.rule import Rule
from jaxmigrate.migrator.settings import Settings

if TYPE_CHECKING:  # pragma: no cover
    from jaxmigrate.migrator.gateplan import Kept


def wanted(plan: Plan, candidates: Tuple[Rule, ...], facts: Facts) -> Tuple[Rule, ...]:
    """Gate 2: the ``candidates`` still wanted by the ``ast`` facts of the file."""
    jax_imported = imports_jax(facts)
    return tuple(
        rule
        for rule in candidates
        if (jax_imported or not rule.needs_jax_import) and plan.wanted_by(rule, facts)
    )


def gates_on(settings: Settings, before: Tuple[Rule, ...], kept: Optional["Kept"] = None) -> Gate:
    """The gates of a text fixes from ``ast`` wrote: every active rule they pass there (LibCST's
    later rounds read them all), and the rules ``before``, those they passed on the file as
    read (a rule may act on what that says the code was written for: JAX503 where a removed
    name the fix replaced dates it).  With ``kept`` gates, the rules they pass there only."""
    if kept is not None:
        return _kept_gates_on(kept, before)
    plan = make_plan(tuple(settings.active_rules()))

    def gate(text: str, facts: Facts) -> Tuple[Rule, ...]:
        passed = set(wanted(plan, plan.candidates(text), facts)).union(before)
        return tuple(rule for rule in plan.rules if rule in passed)

    return gate


def _kept_gates_on(kept: "Kept", before: Tuple[Rule, ...]) -> Gate:
    """:func:`gates_on` from the rules ``kept`` passes (in the kept plan's order, which is the
    active rules' run order: ``tests/test_gateplan.py``)."""
    order = {gate.code: at for at, gate in enumerate(kept.plan.rules)}

    def gate(text: str, facts: Facts) -> Tuple[Rule, ...]:
        rules = kept.rules(tuple(gate.code for gate in kept.plan.candidates(text)))
        passed = set(wanted(make_plan(rules), rules, facts)).union(before)
        return tuple(sorted(passed, key=lambda rule: order[rule.code]))

    return gate


def answer_on(settings: Settings) -> Answer:
    """The findings on a text fixes from ``ast`` wrote (:func:`findings_on_ast`)."""
    return lambda text, facts, rules, as_read: (
        findings_on_ast(text, facts, rules, settings, as_read) if rules else []
    )
