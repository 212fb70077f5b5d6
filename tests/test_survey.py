"""The default target's survey reads only fixes and what the migrated text names: a rule that
can only report there (``Rule.unsafe_fixes_only`` without --unsafe-fixes) does not run in it,
a rule may look only for what it can rewrite (``Rule.for_survey``), and the survey must still
give every file the output and floor it gives with every rule looking for everything."""

from __future__ import annotations

import dataclasses

import pytest

from jaxmigrate.migrator import Settings, migrate_source
from jaxmigrate.migrator.context import Context
from jaxmigrate.migrator.diagnostics import Safety
from jaxmigrate.migrator.errors import MigrationError
from jaxmigrate.migrator.rule import Rule, all_rules
from jaxmigrate.migrator.settings import _active_rules
from jaxmigrate.migrator.target import file_floor
from tests.fixture_support import fixture_cases, fixture_settings

UNSAFE_ONLY = sorted(code for code, rule in all_rules().items() if rule.unsafe_fixes_only)
# rules that look for less in the survey (only what they may rewrite)
NARROWED = sorted(
    code for code, rule in all_rules().items() if type(rule).for_survey is not Rule.for_survey
)


def _survey(text: str) -> Settings:
    settings = fixture_settings(text)
    return dataclasses.replace(settings, target_upper=None, survey=True, locate_fixes=False)


def _outcome(text: str, settings: Settings):  # noqa: ANN202
    try:
        result = migrate_source(text, settings)
    except MigrationError as error:
        return ("error", error.message)
    # what the survey reads: the migrated text, and its floor (from the text and what the
    # fixes' rules need; which rule a removed dead import is credited to may differ)
    return result.output, file_floor(result.output, result.fixes)


def _codes(settings: Settings) -> set:
    return {rule.code for rule in settings.active_rules()}


def test_the_survey_runs_the_report_only_rules_only_with_unsafe_fixes():
    assert {"JAX804", "JAX902", "JAX907"} <= set(UNSAFE_ONLY)
    assert {"JAX901", "JAX906"} <= set(NARROWED)
    survey = Settings(survey=True)
    assert not _codes(survey) & set(UNSAFE_ONLY)
    assert set(UNSAFE_ONLY) <= _codes(dataclasses.replace(survey, unsafe_fixes=True))


@pytest.mark.parametrize(
    "before", [case[1] for case in fixture_cases() if case[1].parent.name != "noop"]
)
def test_the_survey_without_report_only_rules_gives_the_same_floor(before, monkeypatch):
    text = before.read_text(encoding="utf-8")
    settings = _survey(text)
    skipped = _outcome(text, settings)
    for code in UNSAFE_ONLY:  # run them all (without --unsafe-fixes they still fix nothing)
        monkeypatch.setattr(type(all_rules()[code]), "unsafe_fixes_only", False)
    for code in NARROWED:  # each looking for all it reports
        monkeypatch.setattr(type(all_rules()[code]), "for_survey", Rule.for_survey)
    _active_rules.cache_clear()
    try:
        assert skipped == _outcome(text, settings)
    finally:
        monkeypatch.undo()
        _active_rules.cache_clear()


def test_the_survey_reads_only_the_keywords_jax906_rewrites():
    """A keyword the API history saw dropped is only reported: the survey's JAX906 does not
    look for it, and no gate sends the file on for it."""
    from jaxmigrate.migrator.plan import make_plan

    text = "import jax\n\ng = jax.checkpoint(f, concrete=True)\n"
    reported = migrate_source(text, Settings())
    assert [d.code for d in reported.findings] == ["JAX906"] and not reported.fixes
    survey = Settings(survey=True)
    assert "JAX906" in _codes(survey)
    assert "JAX906" not in {
        rule.code for rule in make_plan(tuple(survey.active_rules())).candidates(text)
    }
    rewritten = "import jax.numpy as jnp\n\ny = jnp.clip(x, a_min=0)\n"
    assert "JAX906" in {
        rule.code for rule in make_plan(tuple(survey.active_rules())).candidates(rewritten)
    }


def test_a_rule_of_unsafe_fixes_only_cannot_record_a_safe_fix(monkeypatch):
    rule = all_rules()["JAX907"]
    context = Context.__new__(Context)
    context.rule, context._unsafe_fixes = rule, True
    monkeypatch.setattr(Context, "is_suppressed", lambda self, node: False)
    with pytest.raises(ValueError, match="unsafe fixes only, yet made a safe fix"):
        context.replace(object(), object(), "x -> y", Safety.SAFE)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "before", [case[1] for case in fixture_cases() if case[1].parent.name != "noop"]
)
def test_the_survey_lays_nothing_out_and_finds_the_same_floor(before):
    """``survey_settings`` turns the layout passes off (``line_length=0``): realigning,
    rewrapping and laying out imports move no name, so the floor is the one a survey that lays
    the text out at a narrow width (most wrapping) finds."""
    from jaxmigrate.migrator.cli_versions import survey_settings

    text = before.read_text(encoding="utf-8")
    settings = _survey(text)
    assert survey_settings(settings, None).line_length == 0
    bare = _outcome(text, dataclasses.replace(settings, line_length=0))
    laid_out = _outcome(text, dataclasses.replace(settings, line_length=60))
    assert bare[-1] == laid_out[-1]
