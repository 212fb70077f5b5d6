"""LibCST's trees handed from the survey to the run (migrator.handoff, ``modules``).

A default-target run in one process migrates each file twice, for the survey and for the run.
Within ``handoff.handing_on(modules=True)`` the run takes the tree (and the code and spans of
its statements) the survey's parse made of the same text.  It must give exactly what a run of
its own gives, on every fixture; it must parse each text once, keep nothing outside the
context, keep nothing once the survey is over, and stay within its budget.
"""

from __future__ import annotations

import dataclasses
from typing import List

import pytest
from click.testing import CliRunner

from jaxmigrate.migrator import engine, handoff
from jaxmigrate.migrator.cli import cli
from jaxmigrate.migrator.settings import Settings
from tests.fixture_support import fixture_settings
from tests.test_gate_equivalence import outcome
from tests.test_handoff import _require_jax_tree, counting_ast_facts, fixture_paths

# (the legacy line is a jax.tree_map rename: see conftest.fixes_through_libcst)
pytestmark = pytest.mark.usefixtures("fixes_through_libcst")

LEGACY = "import jax\n\n\ndef f(x, y):\n    return jax.tree_map(x, y)\n"


@pytest.fixture
def parses(monkeypatch) -> List[int]:
    """Lengths of the texts LibCST parses."""
    made: List[int] = []
    real = engine.cst.parse_module

    def counting(text: str, *args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        made.append(len(text))
        return real(text, *args, **kwargs)

    monkeypatch.setattr(engine.cst, "parse_module", counting)
    return made


@pytest.mark.parametrize("before", fixture_paths(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_run_on_the_surveys_tree_gives_what_a_run_of_its_own_gives(before):
    text = before.read_text(encoding="utf-8")
    final = fixture_settings(text)
    survey = dataclasses.replace(final, survey=True, target_version="0.4.1", target_upper=None)
    alone = outcome(text, final)
    with handoff.handing_on(False, modules=True):
        surveyed = outcome(text, survey)
        handoff.stop_keeping_modules()
        handed = outcome(text, final)
    assert handed == alone
    assert surveyed == outcome(text, survey)


def test_one_parse_serves_both_runs_and_nothing_stays(parses):
    with handoff.handing_on(False, modules=True):
        first = outcome(LEGACY, Settings(survey=True, target_version="0.4.30"))
        handoff.stop_keeping_modules()
        assert set(handoff._modules) == {LEGACY}
        second = outcome(LEGACY, Settings(target_version="0.4.30"))
        assert not handoff._modules  # the run took it
        outcome(LEGACY, Settings(target_version="0.4.30"))  # the survey is over: not kept
        assert not handoff._modules
    assert parses == [len(LEGACY), len(LEGACY)]
    assert first[0] == second[0] == LEGACY.replace("jax.tree_map", "jax.tree.map")
    with handoff.handing_on(False, modules=True):
        outcome(LEGACY, Settings())
    assert not handoff._modules and handoff._modules.chars == 0  # the context let it go


def test_copies_of_a_text_share_one_parse_and_each_run_takes_it(parses):
    run = Settings(target_version="0.4.30")
    alone = outcome(LEGACY, run)
    parses.clear()
    with handoff.handing_on(False, modules=True):
        for _copy in range(3):  # the survey of three files with the same text
            outcome(LEGACY, Settings(survey=True, target_version="0.4.30"))
        handoff.stop_keeping_modules()
        assert handoff._modules[LEGACY][1] == 3
        handed = [outcome(LEGACY, run) for _copy in range(3)]
        assert not handoff._modules and handoff._modules.chars == 0  # the last run let it go
        outcome(LEGACY, run)  # a fourth run: nothing kept for it
    assert parses == [len(LEGACY), len(LEGACY)]
    assert handed == [alone] * 3


def test_the_budget_bounds_what_is_kept(parses, monkeypatch):
    other = LEGACY + "\n\ny = jax.tree_map(f, x)\n"
    monkeypatch.setattr(handoff, "MODULE_CHARS", len(other) + 1)
    with handoff.handing_on(False, modules=True):
        outcome(other, Settings())
        outcome(LEGACY, Settings())  # over the budget with the first: parsed, not kept
        assert set(handoff._modules) == {other}
        handoff.stop_keeping_modules()
        outcome(LEGACY, Settings())
        outcome(other, Settings())
        assert not handoff._modules
    assert parses == [len(other), len(LEGACY), len(LEGACY)]


def test_without_modules_nothing_is_kept(parses):
    with handoff.handing_on():
        outcome(LEGACY, Settings())
        assert not handoff._modules
        outcome(LEGACY, Settings())
    assert parses == [len(LEGACY)] * 2


def _cli(paths: List[str], *extra: str):  # noqa: ANN202
    return CliRunner().invoke(cli, [*paths, "--diff", "--no-cache", *extra])


# Two files that name a JAX newer than the project's requirement: the survey migrates the
# first, whose floor (jax.tree.broadcast's) is the newer, and passes over the second, whose
# floor cannot pass it (nor can a file's that names nothing newer than the requirement).
ONE = LEGACY + "\n\nb = jax.tree.broadcast\n"
TWO = LEGACY.replace("x, y)", "x, z)") + "\n\nt = jax.typeof\n"


def test_a_run_in_one_process_parses_each_module_once(parses, tmp_path, monkeypatch):
    one, two = tmp_path / "one.py", tmp_path / "two.py"
    _require_jax_tree(tmp_path)
    one.write_text(ONE, encoding="utf-8")
    two.write_text(TWO, encoding="utf-8")
    handed = _cli([str(one), str(two)], "-j", "1")
    assert sorted(parses) == sorted([len(ONE), len(TWO)])  # the survey's, taken by the run
    parses.clear()
    stated = _cli([str(one), str(two)], "-j", "1", "--target-version", "0.4.1")
    assert len(parses) == 2  # no survey: nothing kept, each parsed once
    parses.clear()
    monkeypatch.setattr(handoff, "MODULE_CHARS", 0)
    alone = _cli([str(one), str(two)], "-j", "1")
    assert sorted(parses) == sorted([len(ONE), len(ONE), len(TWO)])  # nothing kept
    assert (handed.exit_code, handed.output) == (alone.exit_code, alone.output)
    assert handed.output.count("+    return jax.tree.map(x, ") == 2
    assert stated.exit_code == handed.exit_code
    parses.clear()
    monkeypatch.setattr(handoff, "MODULE_CHARS", len(ONE))  # room for one text only
    two.write_text(ONE, encoding="utf-8")  # a copy of the first file
    copies = _cli([str(one), str(two)], "-j", "1")
    # the survey migrates the first copy only (the second only ties its floor): its tree
    # serves that copy's run, the other copy's run parses its own
    assert parses == [len(ONE)] * 2
    assert copies.output.count("+    return jax.tree.map(x, y)") == 2


def test_stdin_parses_once(parses, tmp_path, monkeypatch):
    (tmp_path / ".git").mkdir()  # (no project around: this repository's own test extra names jax)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["-", "--no-cache"], input=LEGACY)
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert parses == [len(LEGACY)]
    assert "jax.tree_util.tree_map(x, y)" in result.output


# -- CPython's facts: kept alike, for the modules the survey read with ``ast`` --------------------
# A fix (read by the survey too) and a private import JAX902 reports.
PRIVATE = LEGACY + "\n\nfrom jax._src import core\n\n\ndef g(x):\n    return core.get_aval(x)\n"


@pytest.fixture
def ast_reads(monkeypatch) -> List[int]:
    """Lengths of the texts the engine makes CPython's facts of."""
    return counting_ast_facts(monkeypatch)


@pytest.mark.parametrize("text", [PRIVATE, LEGACY], ids=["a fix and a finding", "a fix"])
def test_the_run_takes_the_surveys_facts_and_nothing_stays(ast_reads, text):
    run = Settings(target_version="0.4.30")
    alone = outcome(text, run)
    ast_reads.clear()
    with handoff.handing_on(False, modules=True):
        outcome(text, Settings(survey=True, target_version="0.4.30"))
        handoff.stop_keeping_modules()
        assert set(handoff._facts) == {text}
        handed = outcome(text, run)
        assert not handoff._facts and handoff._facts.chars == 0  # the run took them
        outcome(text, run)  # the survey is over: made again, not kept
        assert not handoff._facts
    assert ast_reads == [len(text), len(text)]
    assert handed == alone
    assert alone[0] != text  # (a real run, not a no-op)


def test_the_facts_budget_bounds_what_is_kept(ast_reads, monkeypatch):
    other = PRIVATE + "\n\ny = jax.tree_map(f, x)\n"
    monkeypatch.setattr(handoff, "FACTS_CHARS", len(other) + 1)
    with handoff.handing_on(False, modules=True):
        outcome(other, Settings())
        outcome(PRIVATE, Settings())  # over the budget with the first: read, not kept
        assert set(handoff._facts) == {other}
        handoff.stop_keeping_modules()
        outcome(PRIVATE, Settings())
        outcome(other, Settings())
        assert not handoff._facts
    assert ast_reads == [len(other), len(PRIVATE), len(PRIVATE)]


def test_a_run_in_one_process_reads_each_module_with_ast_once(ast_reads, tmp_path, monkeypatch):
    one, two = tmp_path / "one.py", tmp_path / "two.py"
    _require_jax_tree(tmp_path)
    one.write_text(ONE, encoding="utf-8")
    two.write_text(TWO, encoding="utf-8")
    handed = _cli([str(one), str(two)], "-j", "1")
    assert len(ast_reads) == 2  # the survey's reads, taken by the run
    ast_reads.clear()
    monkeypatch.setattr(handoff, "FACTS_CHARS", 0)
    alone = _cli([str(one), str(two)], "-j", "1")
    assert sorted(ast_reads) == sorted([len(ONE), len(ONE), len(TWO)])  # nothing kept
    assert (handed.exit_code, handed.output) == (alone.exit_code, alone.output)
    assert handed.output.count("+    return jax.tree.map(x, ") == 2
