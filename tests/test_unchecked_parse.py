"""The engine's LibCST parse skips LibCST's check of each node the parser makes
(``migrator.engine._parse_module``): the tree is the one LibCST's own parse gives, and every
node made afterwards (the rules' replacements) is checked again."""

from __future__ import annotations

import libcst as cst
import pytest

from jaxmigrate.migrator.engine import _parse_module
from tests.fixture_support import fixture_cases

BEFORE = [case[1] for case in fixture_cases()][::7]


@pytest.mark.parametrize("before", BEFORE, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_tree_is_libcsts_own(before):  # noqa: ANN001
    text = before.read_text(encoding="utf-8")
    tree = _parse_module(text)
    assert tree.deep_equals(cst.parse_module(text))
    assert tree.code == text


def test_nodes_made_after_a_parse_are_checked():
    _parse_module("x = 1\n")
    with pytest.raises(cst.CSTValidationError):
        cst.Name("not a name")


def test_nodes_are_checked_after_a_parse_that_fails():
    with pytest.raises(cst.ParserSyntaxError):
        _parse_module("def (:\n")
    with pytest.raises(cst.CSTValidationError):
        cst.Name("not a name")
