"""The survey's reach read from a module's code (``migrator.codewords``): comments and prose
docstrings left out, it must still bound the floor the survey finds, and a survey that passes
a file over on it, or sends it back to wait for a later turn, must say and write what one
without it does."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from jaxmigrate.migrator import MigrationError, Settings, migrate_source, runner
from jaxmigrate.migrator.codewords import chain_names, chain_tails, code_words, read_code
from jaxmigrate.migrator.diagnostics import CLEANUP_CODE
from jaxmigrate.migrator.plan import make_plan
from jaxmigrate.migrator.rule import with_follow_ups
from jaxmigrate.migrator.target import ARRAY_FLOOR, file_floor, survey_reach
from jaxmigrate.migrator.version import parse_version
from tests.fixture_support import fixture_settings
from tests.test_survey_reach import BEFORE, FIRST, _reach, _surveyed_both_ways

PROGRAM = '''\
"""A module.

>>> jax.tree_map(f, x)
"""
import jax.numpy as jnp  # a comment_word
from jax.experimental import maps as m


def f(x, *, axis=None):
    """Sums ``prose_word``."""
    s = "string_word"
    b = b"bytes_word"
    return jnp.sum(x, keepdims=True).attribute_word


class C:
    """A reST block::

        block_word
    """
'''


def test_the_words_of_code_leave_out_comments_and_prose_docstrings():
    words = code_words(ast.parse(PROGRAM))
    assert {"comment_word", "prose_word", "Sums"}.isdisjoint(words)
    expected = {"jax", "numpy", "jnp", "experimental", "maps", "m", "f", "x", "axis", "C"}
    expected |= {"string_word", "bytes_word", "attribute_word", "keepdims", "sum"}
    expected |= {"tree_map", "block_word", "module"}  # (docstrings that may hold programs)
    assert expected <= words, expected - words


def test_a_docstring_that_is_not_a_statement_of_its_owner_is_a_string():
    text = 'def f():\n    x = 1\n    """after_word"""\n'
    assert "after_word" in code_words(ast.parse(text))


PROGRAMS = sorted((Path(__file__).parent / "programs" / "cases").glob("*.py"))


@pytest.mark.parametrize("before", [*BEFORE, *PROGRAMS], ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_reach_of_code_bounds_the_floor_the_survey_finds(before: Path):
    """What the engine reads (the rules gate 1 passes and those that follow them, the words,
    chains and imports of the code) is no older than the floor of the module the survey
    migrates, whatever the file's target; and every rule that fixes there is one of those."""
    text = before.read_text(encoding="utf-8")
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return
    own = dataclasses.replace(fixture_settings(text), target_upper=None, survey=True)
    for low in (own.target_version, ARRAY_FLOOR):
        settings = dataclasses.replace(own, target_version=low, locate_fixes=False)
        plan = make_plan(tuple(settings.active_rules()))
        rules = with_follow_ups(plan.candidates(text), plan.rules)
        reach = survey_reach(text, None, rules, settings.target, read_code(tree))
        assert reach <= _reach(text, settings)
        try:
            result = migrate_source(text, settings)
        except MigrationError:
            continue
        fixed = {fix.code for fix in result.fixes} - {CLEANUP_CODE}
        assert fixed <= {rule.code for rule in rules}, "a rule that fixes and follows none"
        floor = file_floor(result.output, result.fixes)
        assert floor is None or parse_version(floor[0]) <= reach, low


LATER = FIRST + "# not lax.polynomial\n"  # words of a JAX 0.12.0 name, in a comment only


def _unchecked(monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setattr(runner, "check_reach", lambda *args: None)


def test_a_file_whose_reach_was_its_comments_waits_for_a_later_turn(tmp_path, monkeypatch):
    """b.py's comment spells the words of ``jax.lax.polynomial`` (0.12.0): it takes its turn
    first, and the engine, reading its code, sends it back to wait at 0.11.1.  a.py, the first
    file at that floor, names it, and b.py is passed over; the run says and writes what one
    that migrates both does."""
    settings = Settings(survey=True, target_version=ARRAY_FLOOR)
    assert _reach(LATER, settings) > _reach(FIRST, settings) == parse_version("0.11.1")
    waited, surveyed, every = _surveyed_both_ways(tmp_path, monkeypatch, FIRST, LATER, _unchecked)
    assert surveyed == [FIRST] and every == [LATER, FIRST]
    assert "jax.get_mesh in a.py" in waited.stderr.replace(str(tmp_path) + "/", "")


def test_a_file_whose_code_cannot_set_the_floor_is_passed_over(tmp_path, monkeypatch):
    """a.py and b.py both reach 0.12.0 by their words (a.py in a string, b.py in a comment);
    a.py goes first and finds 0.11.1.  b.py, whose fix needs far less, is passed over by the
    engine when its code is read, before LibCST parses it; the run says and writes the
    same."""
    first = FIRST + 'NOTE = "not lax.polynomial"\n'
    fixed = "import jax.numpy as jnp\n\n\ndef g(y: jnp.DeviceArray):\n    return y\n"
    fixed += "# not jax.lax.polynomial\n"
    settings = Settings(survey=True, target_version=ARRAY_FLOOR)
    assert _reach(first, settings) == _reach(fixed, settings) == parse_version("0.12.0")
    passed, surveyed, every = _surveyed_both_ways(tmp_path, monkeypatch, first, fixed, _unchecked)
    assert surveyed == [first] and every == [first, fixed]
    said = passed.stderr.replace(str(tmp_path) + "/", "")
    assert "jax.get_mesh in a.py" in said and "b.py" in passed.stdout


CHAINS = """\
import jax
from jax.experimental import maps
from jax import numpy as np_, random
import jax.tree_util


def f(key, sharding):
    mesh = maps.Mesh(jax.devices(), ("x",))
    try:
        from jax.lax import polynomial
    except ImportError:
        polynomial = None
    return jax.random.split(key), np_.zeros(3), random.normal, sharding.Mesh, mesh
"""


def test_the_names_of_code_are_its_chains_through_what_may_bind_their_heads():
    """Chains read through the module's imports (a shim's too), ``import jax``, and, where the
    module binds no such name, any JAX module named like the chain's head (a fix may import
    one there): never a name whose parts come from different chains, such as
    ``jax.experimental.random``."""
    reading = read_code(ast.parse(CHAINS))
    names = chain_names(reading, reading.words)
    expected = {"jax.experimental.maps.Mesh", "jax.experimental", "jax.random.split"}
    expected |= {"jax.numpy.zeros", "jax.tree_util", "jax.lax.polynomial", "jax.devices"}
    expected |= {"jax.random.normal", "jax.sharding.Mesh"}  # (sharding: through its name)
    assert expected <= names, expected - names
    assert "jax.experimental.random" not in names
    assert {"jax.random.split", "jax.experimental.random"} & reading.words == set()
    assert {"experimental", "random", "split"} <= reading.words


def test_the_reach_of_code_counts_a_written_head_before_a_chains_rest():
    """A name that is no chain of the code counts where a rule may write its head and the
    rest is what follows the head of a chain (``random`` of ``random.split``):
    ``jax.experimental.random`` (0.9.0) bounds the reach only once ``experimental`` is
    written as well as ``jax``."""
    from jaxmigrate.migrator.floorbound import bound_of_names

    text = "from jax.experimental import maps\nfrom jax import random\n\nm = maps.Mesh\n"
    reading = read_code(ast.parse(text + "k = random.split\n"))
    names, tails = chain_names(reading, reading.words), chain_tails(reading)
    for written in (set(), {"jax"}, {"experimental"}):
        assert bound_of_names(reading.words, names, written, tails) is None
    written = {"jax", "experimental"}
    assert bound_of_names(reading.words, names, written, tails) >= parse_version("0.9.0")
