"""A big module's ``ast`` facts handed from one engine run to the next (migrator.handoff).

The survey and the run of a one-file default-target run read the same text: within
``handoff.handing_on`` the second starts from the facts the first made.  It must give exactly
what a run of its own gives, for another target and rule set, on every fixture; it must keep
nothing outside the context, and nothing under a whole-module LibCST parse.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import List

import pytest
from click.testing import CliRunner

from jaxmigrate.migrator import engine, handoff, piecewise
from jaxmigrate.migrator.cli import cli
from jaxmigrate.migrator.settings import Settings
from tests.fixture_support import FIXTURES, fixture_settings
from tests.test_gate_equivalence import outcome
from tests.test_piecewise import FILLER, LEGACY

# (the legacy line is a jax.tree_map rename: see conftest.fixes_through_libcst)
pytestmark = pytest.mark.usefixtures("fixes_through_libcst")

BIG = 300  # the threshold the tests set: their modules are "big"


def counting_ast_facts(monkeypatch) -> List[int]:  # noqa: ANN001
    """From now on, the lengths of the texts the engine makes CPython's facts of."""
    made: List[int] = []
    real = engine.ast_facts

    def counting(text: str):  # noqa: ANN202
        made.append(len(text))
        return real(text)

    monkeypatch.setattr(engine, "ast_facts", counting)
    return made


@pytest.fixture
def parses(monkeypatch) -> List[int]:
    """Lengths of the texts CPython's facts are made of, with small modules counted as big."""
    monkeypatch.setattr(piecewise, "BIG_CHARS", BIG)
    monkeypatch.setattr(piecewise, "PIECEWISE_CHARS", BIG)
    return counting_ast_facts(monkeypatch)


def fixture_paths() -> List[Path]:
    """Every fixture's before and after file (not the runtime drivers, not the noop ones)."""
    return [
        path
        for path in sorted(FIXTURES.glob("*/*.py"))
        if not path.name.endswith(".run.py") and path.parent.name != "noop"
    ]


@pytest.mark.parametrize("before", fixture_paths(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_run_after_the_survey_gives_what_a_run_of_its_own_gives(before, parses):
    text = before.read_text(encoding="utf-8") + FILLER.format(n=0)
    final = fixture_settings(text)
    survey = dataclasses.replace(final, survey=True, target_version="0.4.1", target_upper=None)
    alone = outcome(text, final)
    with handoff.handing_on():
        surveyed = outcome(text, survey)
        handed = outcome(text, final)
    assert handed == alone
    assert surveyed == outcome(text, survey)
    assert handoff._slot is None


def test_one_parse_serves_both_runs_and_nothing_stays(parses):
    # (a survey from 0.4.25 on rewrites jax.tree_map; an older one leaves JAX701 out)
    text = LEGACY + "".join(FILLER.format(n=n) for n in range(5))
    with handoff.handing_on():
        first = outcome(text, Settings(survey=True, target_version="0.4.30"))
        second = outcome(text, Settings(target_version="0.4.30"))
        assert handoff._slot is not None
    assert parses == [len(text)]
    assert handoff._slot is None
    assert first[0] == second[0] == text.replace("jax.tree_map", "jax.tree.map")
    outcome(text, Settings(target_version="0.4.30"))  # outside the context: parsed, not kept
    assert parses == [len(text)] * 2 and handoff._slot is None


def test_another_text_is_parsed_and_a_small_module_never_kept(parses):
    text = LEGACY + FILLER.format(n=0)
    other = text + "\ny = 1\n"
    with handoff.handing_on():
        outcome(text, Settings())
        outcome(other, Settings())
        assert handoff.take(text) is None and handoff.take(other) is not None
        outcome(LEGACY, Settings())  # under the threshold: not kept, and parsed whole
        assert handoff._slot is None  # (which no kept tree sits under)
    assert parses == [len(text), len(other), len(LEGACY)]


def test_the_tree_is_let_go_before_a_whole_module_parse(parses):
    # the pjit rule reads the whole module: no pieces, LibCST parses it whole
    text = "from jax.experimental.pjit import pjit\n\nz = pjit(f, in_axis_resources=None)\n" + (
        FILLER.format(n=0)
    )
    with handoff.handing_on():
        result = outcome(text, Settings())
        assert "in_shardings" in result[0]
        assert handoff._slot is None


def test_a_nested_context_leaves_the_decision_to_the_outer_one(parses):
    text = LEGACY + FILLER.format(n=0)
    with handoff.handing_on(False):
        with handoff.handing_on():
            outcome(text, Settings())
            assert handoff._slot is None
    with handoff.handing_on():
        with handoff.handing_on(False):
            outcome(text, Settings())
        assert handoff._slot is not None  # the inner exit keeps what the outer one keeps
    assert handoff._slot is None


def _cli(paths: List[str], *extra: str):  # noqa: ANN202
    return CliRunner().invoke(cli, [*paths, "--diff", "--no-cache", "-j", "1", *extra])


def _require_jax_tree(root: Path) -> None:
    """A project requiring a JAX with ``jax.tree``: its survey rewrites ``jax.tree_map`` (one
    starting before 0.4.25 runs without JAX701, whose fixes cannot move its floor there)."""
    (root / "pyproject.toml").write_text(
        '[project]\nname = "p"\ndependencies = ["jax>=0.4.30"]\n', encoding="utf-8"
    )


def test_a_one_file_run_parses_a_big_module_once(parses, tmp_path, monkeypatch):
    text = LEGACY + "".join(FILLER.format(n=n) for n in range(3))
    one, two = tmp_path / "one.py", tmp_path / "two.py"
    _require_jax_tree(tmp_path)
    one.write_text(text, encoding="utf-8")
    two.write_text(text.replace("y)", "z)"), encoding="utf-8")
    handed = _cli([str(one)])
    assert parses == [len(text)]  # the survey's facts served the run
    parses.clear()
    both = _cli([str(one), str(two)])
    # many files: the survey passes over both (neither names a JAX newer than the
    # requirement's), the run parses each
    assert len(parses) == 2
    parses.clear()
    real = handoff.handing_on
    monkeypatch.setattr(handoff, "handing_on", lambda enabled=True, modules=False: real(False))
    alone = _cli([str(one)])
    assert parses == [len(text)] * 2
    assert (handed.exit_code, handed.output) == (alone.exit_code, alone.output)
    assert "jax.tree.map(f, y)" in handed.output
    assert both.output.count("+x = jax.tree.map(f, y)") == 1  # two.py's: (f, z)


def test_stdin_parses_a_big_module_once(parses, tmp_path, monkeypatch):
    (tmp_path / ".git").mkdir()  # (no project around: this repository's own test extra names jax)
    monkeypatch.chdir(tmp_path)
    text = LEGACY + "".join(FILLER.format(n=n) for n in range(3))
    result = CliRunner().invoke(cli, ["-", "--no-cache"], input=text)
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert parses == [len(text)]
    assert "jax.tree_util.tree_map(f, y)" in result.output
