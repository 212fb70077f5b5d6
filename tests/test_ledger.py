"""Reports a rule puts off (``migrator.ledger``): made when the findings are read, in order,
dropped with a hook that raises, and never made in a round that edits."""

from __future__ import annotations

from typing import List

import pytest

from jaxmigrate.migrator import Settings, migrate_source
from jaxmigrate.migrator.ledger import Ledger
from jaxmigrate.rules.missing_api import MissingApi

# (the legacy line is a jax.tree_map rename: see conftest.fixes_through_libcst)
pytestmark = pytest.mark.usefixtures("fixes_through_libcst")


class _Rule:
    def __init__(self, code: str) -> None:
        self.code = code


class _Round(Ledger):
    def __init__(self) -> None:
        super().__init__()
        self.rule = _Rule("A")  # type: ignore[assignment]

    def report(self, text: str) -> None:
        self.add_finding((text, self.rule.code))  # type: ignore[arg-type]


def test_deferred_reports_are_made_in_order_as_their_rule_when_read():
    ledger = _Round()
    ledger.defer(lambda: ledger.report("first"))
    ledger.report("at once")
    ledger.rule = _Rule("B")  # type: ignore[assignment]
    ledger.defer(lambda: ledger.report("second"))
    ledger.rule = _Rule("C")  # type: ignore[assignment]
    assert ledger._findings == [("at once", "A")]  # nothing made before a read
    assert ledger.findings == [("at once", "A"), ("first", "A"), ("second", "B")]
    assert ledger.rule.code == "C"


def test_a_hook_that_raises_loses_its_own_reports_only():
    ledger = _Round()
    ledger.defer(lambda: ledger.report("earlier hook"))
    mark = ledger.findings_mark()
    ledger.defer(lambda: ledger.report("failing hook, put off"))
    ledger.report("failing hook")
    assert len(ledger.findings) == 3  # the failing hook read the findings: all were made
    ledger.defer(lambda: ledger.report("failing hook, after its read"))
    ledger.roll_back_findings(mark)
    assert ledger.findings == [("earlier hook", "A")]


def test_a_roll_back_before_any_read_drops_the_put_off_reports():
    ledger = _Round()
    ledger.defer(lambda: ledger.report("kept"))
    mark = ledger.findings_mark()
    ledger.defer(lambda: ledger.report("dropped"))
    ledger.roll_back_findings(mark)
    assert ledger.findings == [("kept", "A")]


LEGACY = """\
import jax

level = jax.core.cur_sublevel()
tree = jax.tree_map(lambda x: x, {"a": 1})
"""


def test_a_round_that_edits_makes_no_backstop_report(monkeypatch):
    """JAX901's reports ask a position each; the round that rewrites ``jax.tree_map`` is
    followed by another, which alone reports, so only that round makes them (made at once,
    both rounds would)."""
    rounds: List[int] = []  # the round (its context) that made each JAX901 report
    real = MissingApi._settle

    def counting(self, node, absence, ctx, module) -> None:  # noqa: ANN001
        rounds.append(id(ctx))
        real(self, node, absence, ctx, module)

    monkeypatch.setattr(MissingApi, "_settle", counting)
    result = migrate_source(LEGACY, Settings(target_version="0.10.0"))
    assert "jax.tree_map" not in result.output
    assert any(d.code == "JAX901" for d in result.findings)
    assert len(rounds) == 1


def test_the_findings_are_those_of_reports_made_at_once(monkeypatch):
    settings = Settings(target_version="0.10.0")
    put_off = migrate_source(LEGACY, settings)
    monkeypatch.setattr(Ledger, "defer", lambda self, report: report())
    at_once = migrate_source(LEGACY, settings)
    assert (put_off.output, put_off.findings) == (at_once.output, at_once.findings)
    assert [d.line for d in put_off.findings if d.code == "JAX901"] == [3]
