"""Rule order is data: ``Rule.runs_after``, applied by :func:`migrator.rule.in_run_order`."""

from __future__ import annotations

from pathlib import Path

import pytest

from jaxmigrate.migrator import Settings, migrate_source
from jaxmigrate.migrator.plan import make_plan
from jaxmigrate.migrator.rule import all_rules, in_run_order

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


class _Fake:
    def __init__(self, code: str, after: frozenset = frozenset()) -> None:
        self.code = code
        self.runs_after = after


def test_declarations_name_registered_rules() -> None:
    rules = all_rules()
    for code, rule in rules.items():
        assert rule.runs_after <= rules.keys() - {code}, code


def test_the_plan_honours_every_declaration_whatever_order_it_is_given() -> None:
    rules = tuple(all_rules().values())
    for given in (rules, tuple(reversed(rules))):
        order = [rule.code for rule in make_plan(given).rules]
        assert sorted(order) == sorted(rule.code for rule in rules)
        for rule in rules:
            for before in rule.runs_after:
                assert order.index(before) < order.index(rule.code), (before, rule.code)
        by_name = make_plan(given).by_name["jax.experimental.pjit.pjit"]
        assert [r.code for r in by_name][:2] == ["JAX201", "JAX202"]


def test_in_run_order_is_code_order_except_where_declared() -> None:
    a, b, c = _Fake("JAX1", frozenset({"JAX3"})), _Fake("JAX2"), _Fake("JAX3")
    assert [r.code for r in in_run_order([c, b, a])] == ["JAX2", "JAX3", "JAX1"]
    # a declaration about a rule that is switched off changes nothing
    assert [r.code for r in in_run_order([b, a])] == ["JAX1", "JAX2"]
    with pytest.raises(ValueError, match="cycle"):
        in_run_order([_Fake("JAX1", frozenset({"JAX2"})), _Fake("JAX2", frozenset({"JAX1"}))])


def test_jax202_sees_jax201s_renames_first() -> None:
    """Why JAX202 declares ``runs_after = {"JAX201"}``: at a ``pjit`` name site JAX201 renames
    ``*_axis_resources`` and JAX202 waits for the next round, so the rename is JAX201's fix
    (its patch under ``--split``); the other way round JAX202 would rewrite the call alone."""
    text = (FIXTURES / "pjit-to-jit" / "inline_mesh.before.py").read_text()
    result = migrate_source(text, Settings())  # the fixture's own settings (no header)
    codes = [fix.code for fix in result.fixes]
    assert "JAX201" in codes and "JAX202" in codes
    assert codes.index("JAX201") < codes.index("JAX202")
