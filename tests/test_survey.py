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
from jaxmigrate.migrator.target import ARRAY_FLOOR, file_floor
from jaxmigrate.migrator.version import parse_version
from tests.fixture_support import FIXTURES, fixture_cases, fixture_settings

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
    # (code written for jax 0.2.0: a rule that acts only on code older than a change runs too)
    survey = Settings(survey=True, source_version="0.2.0")
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
    for code in set(NARROWED) - set(LEFT_OUT):  # each looking for all it reports (a rule
        # left out changes the output, not the floor: see the tests of LEFT_OUT below)
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


# -- rules the survey leaves out (``Rule.for_survey`` gives None) ------------------------------
def _visible(floor):  # noqa: ANN001, ANN202
    """A file's floor as the default target can show it: none at or below the first
    jax.Array release, where every default target starts anyway."""
    if floor is None or parse_version(floor[0]) <= parse_version(ARRAY_FLOOR):
        return None
    return floor


def _floors_without_and_with(code: str, text: str) -> tuple:
    """The floor the default survey (no requirement: it starts at the first jax.Array release)
    finds in ``text`` as it runs, and with the rule ``code`` running in it as in the run."""
    settings = dataclasses.replace(_survey(text), target_version=ARRAY_FLOOR)
    _active_rules.cache_clear()
    as_run = _outcome(text, settings)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(type(all_rules()[code]), "for_survey", Rule.for_survey)
        _active_rules.cache_clear()
        every = _outcome(text, settings)
    _active_rules.cache_clear()
    return _visible(as_run[-1]), _visible(every[-1])


# the rules the default survey runs without (not the report-only ones it never runs)
LEFT_OUT = sorted(
    {code for code, rule in all_rules().items() if not rule.unsafe_fixes_only and not rule.opt_in}
    - _codes(Settings(survey=True, target_version=ARRAY_FLOOR))
)


def test_the_survey_leaves_out_jax701_only_before_jax_tree():
    """JAX701 writes ``jax.tree_util`` spellings for a target before 0.4.25: names as old as
    the first jax.Array release, so the survey (which starts there) runs without it; from
    0.4.25 it writes ``jax.tree.*`` (added in 0.4.25), which may set the floor.  JAX912 only
    drops entries of jit's keywords (it writes no name): the survey never runs it."""
    assert LEFT_OUT == ["JAX701", "JAX912"]
    for low, present in (("0.4.1", False), ("0.4.13", False), ("0.4.25", True), ("0.4.30", True)):
        survey = Settings(survey=True, target_version=low)
        assert ("JAX701" in _codes(survey)) is present, low
        assert "JAX912" not in _codes(survey), low
        assert "JAX701" in _codes(Settings(target_version=low))  # the run always has it
    text = "import jax\n\nout = jax.tree_map(f, x)\n"
    assert migrate_source(text, Settings(survey=True, target_version="0.4.1")).output == text
    assert "jax.tree.map" in migrate_source(text, Settings(target_version="0.4.30")).output


@pytest.mark.parametrize(
    "before", [case[1] for case in fixture_cases() if case[1].parent.name != "noop"]
)
@pytest.mark.parametrize("code", LEFT_OUT)
def test_a_rule_the_survey_leaves_out_never_moves_its_floor(code, before):
    without, every = _floors_without_and_with(code, before.read_text(encoding="utf-8"))
    assert without == every


def test_the_floor_check_sees_a_rule_that_moves_the_floor():
    """The comparison above can fail: JAX601's fix writes ``jax.shard_map`` (0.6.1), so a
    survey run without it finds an older floor."""
    texts = [p.read_text(encoding="utf-8") for p in sorted(FIXTURES.glob("shard-map/*.before.py"))]
    assert all(a == b for a, b in (_floors_without_and_with("JAX601", t) for t in texts))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(type(all_rules()["JAX601"]), "for_survey", lambda *args: None)
        floors = [_floors_without_and_with("JAX601", t) for t in texts]
    _active_rules.cache_clear()
    assert any(without != every for without, every in floors)
