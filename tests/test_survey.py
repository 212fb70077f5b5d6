"""The default target's survey reads only fixes and what the migrated text names: a rule that
can only report there (``Rule.unsafe_fixes_only`` without --unsafe-fixes) is skipped, and the
survey must still give every file the output and fixes it gives with the rule run."""

from __future__ import annotations

import dataclasses

import pytest

from jaxmigrate.migrator import Settings, migrate_source
from jaxmigrate.migrator.context import Context
from jaxmigrate.migrator.diagnostics import Safety
from jaxmigrate.migrator.errors import MigrationError
from jaxmigrate.migrator.rule import Rule, all_rules
from tests.fixture_support import fixture_cases, fixture_settings

UNSAFE_ONLY = sorted(code for code, rule in all_rules().items() if rule.unsafe_fixes_only)


def _survey(text: str) -> Settings:
    settings = fixture_settings(text)
    return dataclasses.replace(settings, target_upper=None, survey=True, locate_fixes=False)


def _outcome(text: str, settings: Settings):  # noqa: ANN202
    try:
        result = migrate_source(text, settings)
    except MigrationError as error:
        return ("error", error.message)
    return result.output, sorted((d.line, d.code, d.message) for d in result.fixes)


def test_some_rules_only_report_without_unsafe_fixes():
    assert {"JAX804", "JAX902", "JAX907"} <= set(UNSAFE_ONLY)
    rule = all_rules()["JAX907"]
    assert rule.fixes_nothing(Settings()) and not rule.fixes_nothing(Settings(unsafe_fixes=True))


@pytest.mark.parametrize(
    "before", [case[1] for case in fixture_cases() if case[1].parent.name != "noop"]
)
def test_the_survey_skipping_report_only_rules_gives_the_same_fixes(before, monkeypatch):
    text = before.read_text(encoding="utf-8")
    settings = _survey(text)
    skipped = _outcome(text, settings)
    monkeypatch.setattr(Rule, "fixes_nothing", lambda self, settings: False)
    assert skipped == _outcome(text, settings)


def test_a_rule_of_unsafe_fixes_only_cannot_record_a_safe_fix(monkeypatch):
    rule = all_rules()["JAX907"]
    context = Context.__new__(Context)
    context.rule, context._unsafe_fixes = rule, True
    monkeypatch.setattr(Context, "is_suppressed", lambda self, node: False)
    with pytest.raises(ValueError, match="unsafe fixes only, yet made a safe fix"):
        context.replace(object(), object(), "x -> y", Safety.SAFE)  # type: ignore[arg-type]
