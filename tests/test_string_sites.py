"""The analysis finds a rule's string however the literal spells it: read verbatim where the
literal spells its value character for character, else evaluated as Python does."""

from __future__ import annotations

import ast

import libcst as cst
import pytest

from jaxmigrate.migrator.analysis import _verbatim_value, analyze
from jaxmigrate.migrator.scope import Interest

LITERALS = [
    "'jax_array'",
    '"jax_array"',
    "''",
    '""',
    "''''''",
    '""""""',
    '"""jax_array"""',
    "'''two\nlines'''",
    "r'jax_array'",
    "R'a\\nb'",
    "u'jax_array'",
    'U"x"',
    "b'jax_array'",
    "rb'jax_array'",
    "Br'x'",
    "'jax\\x5farray'",
    "'tab\\there'",
    "'quote\\'s'",
    "'''a ' b'''",
    '"""a "" b"""',
    "'\u00e9t\u00e9'",
    "'line\\\ncontinued'",
]


@pytest.mark.parametrize("literal", LITERALS)
def test_verbatim_value_is_the_literals_value_or_none(literal: str) -> None:
    value = _verbatim_value(literal)
    if value is not None:
        assert value == ast.literal_eval(literal)


@pytest.mark.parametrize(
    "literal,verbatim",
    [("'jax_array'", True), ('"""x"""', True), ("r'x'", True), ("b'x'", False)]
    + [("'a\\tb'", False), ("'''a\rb'''", False)],
)
def test_which_literals_are_read_verbatim(literal: str, verbatim: bool) -> None:
    assert (_verbatim_value(literal) is not None) is verbatim


def test_string_sites_are_found_however_spelled() -> None:
    source = "\n".join(
        [
            "a = 'jax_array'",
            'b = r"jax_array"',
            "c = 'jax\\x5farray'",
            'd = """jax_array"""',
            "e = b'jax_array'",
            "f = 'jax_arrays'",
            "g = 'jax_\\\narray'",
            "",
        ]
    )
    module = cst.parse_module(source)
    found = analyze(module, Interest(strings=frozenset({"jax_array"}))).string_sites
    lines = sorted(module.code_for_node(site.node) for site in found)
    assert lines == sorted(
        ["'jax_array'", 'r"jax_array"', "'jax\\x5farray'", '"""jax_array"""', "'jax_\\\narray'"]
    )
