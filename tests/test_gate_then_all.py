"""Gate 1b stops reading a file's text once one rule passes (``Plan.candidates``): gate 2 reads
the file's ``ast`` then, and decides for the others as it would after a full gate 1b.  These
tests hold the three promises that rest on: the same files pass, the same rules reach LibCST,
and a file with no ``ast`` facts still has each rule read by gate 1b."""

from __future__ import annotations

from typing import List, Tuple

import pytest

from jaxmigrate.migrator import Settings, engine, migrate_source
from jaxmigrate.migrator.plan import make_plan
from tests.fixture_support import FIXTURES
from tests.test_gate_equivalence import PROGRAMS

SETTINGS = [Settings(), Settings(unsafe_fixes=True), Settings(target_version="0.4.13")]


def _inputs() -> List[Tuple[str, str]]:
    found = []
    for path in sorted(FIXTURES.glob("*/*.py")) + sorted(PROGRAMS.glob("*.py")):
        if not path.name.endswith((".after.py", ".run.py")):
            found.append((path.name, path.read_text(encoding="utf-8")))
    return found


@pytest.mark.parametrize("options", SETTINGS, ids=["default", "unsafe", "0.4.13"])
def test_candidates_pass_what_every_candidate_passes(options):
    plan = make_plan(tuple(options.active_rules()))
    shortened = 0
    for label, text in _inputs():
        some, every = plan.candidates(text), plan.every_candidate(text)
        assert bool(some) == bool(every), label
        assert set(map(id, every)) <= set(map(id, some)), label
        assert [r.code for r in some] == sorted(r.code for r in some) or len(some) < 2, label
        shortened += len(some) > len(every)
    assert shortened, "no input where gate 1b stopped early: the test reads nothing"


def _rules_at_libcst(text: str, options: Settings, monkeypatch) -> List[str]:  # noqa: ANN001
    """The codes of the rules the engine hands to LibCST for ``text``."""
    seen: List[str] = []
    real = engine._rewrite

    def rewrite(text, plan, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        seen.extend(rule.code for rule in plan.rules)
        return real(text, plan, *args, **kwargs)

    monkeypatch.setattr(engine, "_rewrite", rewrite)
    monkeypatch.setattr(engine, "findings_on_ast", lambda *args, **kwargs: None)
    migrate_source(text, options)
    return seen


def test_a_file_without_ast_facts_reaches_libcst_with_gate_1b_read(monkeypatch):
    # no gate 2 (CPython's parse failed: a file nested too deeply for it): gate 1b chooses
    text = "import jax\nfrom jax._src import core\nx = jax.tree_map(f, y)\nz = core.foo\n"
    options = Settings(unsafe_fixes=True)
    plan = make_plan(tuple(options.active_rules()))
    every = [r.code for r in plan.every_candidate(text)]
    assert len(plan.candidates(text)) > len(every)  # (else this input tests nothing)
    monkeypatch.setattr(engine, "_facts", lambda text: None)
    assert _rules_at_libcst(text, options, monkeypatch) == every


def test_the_rules_after_gate_2_are_those_of_a_full_gate_1b(monkeypatch):
    text = "import jax\nfrom jax._src import core\nx = jax.tree_map(f, y)\nz = core.foo\n"
    options = Settings(unsafe_fixes=True)
    plan = make_plan(tuple(options.active_rules()))
    assert len(plan.candidates(text)) > len(plan.every_candidate(text))
    with monkeypatch.context() as patched:
        shortened = _rules_at_libcst(text, options, patched)
    with monkeypatch.context() as patched:
        patched.setattr(type(plan), "candidates", type(plan).every_candidate)
        full = _rules_at_libcst(text, options, patched)
    assert shortened == full and shortened
