"""Fixes written from CPython's ``ast`` (:mod:`migrator.astfixes`, JAX701's renames through
``import jax``): the same output, fixes and findings as the LibCST path, on the cases it takes
and on the look-alikes it must leave to LibCST, and on generated programs."""

from __future__ import annotations

import dataclasses
from typing import List

import hypothesmith
import pytest
from hypothesis import given, strategies as st

from jaxmigrate.migrator import Settings, migrate_source
from tests.fixture_support import property_profile
from tests.test_gate_equivalence import ast_first_difference

OLD, NEW = Settings(target_version="0.4.13"), Settings(target_version="0.4.30")

# Written from ``ast``: each file's only fixes are renames through the module's one ``import
# jax`` (LibCST's parser never runs).
WRITTEN = [
    "import jax\n\nout = jax.tree_map(f, x)\n",
    "import jax\nimport jax.numpy as jnp\n\ndef f(x):\n    return jax.tree_leaves(jnp.abs(x))\n",
    "import jax as j\n\nleaves, tree = j.tree_flatten(x)\nback = j.tree_unflatten(tree, leaves)\n",
    "import jax\n\ndef add(a, b):\n    return jax.tree_multimap(lambda x, y: x + y, a, b)\n",
    "import jax\n\nif c:\n    out = jax.tree_map(f, x)\nelse:\n    out = jax.tree_map(g, x)\n",
    "import jax\n\nout = jax.tree_map(f, x)  # why\ny = jax.tree_util.tree_multimap(g, out)\n",
    "import jax\n\nx = jax.tree_map(f, 'é', jax.tree_leaves(y))  # ünïcode\n",
    "import jax\n\nout = jax.tree_structure(x)\r\nz = jax.tree_transpose(a, b, out)\r\n",
    # stores to one name in a row, none of them dead (the first does something, or the
    # second reads the name)
    "import jax\n\np = jax.tree_map(f, p)\np = jax.tree_map(g, p)\nq = 0\nq = jax.tree_leaves(q)\n",
    "import jax\n\nfirst = jax.tree_leaves(x)[0]\nd = {}\nd[jax.tree_structure(x)] = 1\n",
    "import jax\n\nok = callable(x) and jax.tree_map(f, x)\n",
    # continuation lines aligned after the parenthesis move with it, as LibCST realigns them
    "import jax\n\nout = jax.tree_multimap(lambda a, b: a + b,\n                        x,  # c\n\n"
    "                        # why\n                        [y,\n                         z])\n",
    "import jax\n\n\ndef f(x):\n    return g(jax.tree_map(h,\n                          x), 1,\n"
    "             2)\n",
    "import jax\n\nout = jax.tree_multimap(\n    f, [a,\n        b],\n                        x)\n",
    "import jax\n\nout = jax.tree_multimap (\n    f,\n                             x)\n",
    # hanging indents: a callee of another width moves no continuation line
    "import jax\n\nout = jax.tree_multimap(\n    f,\n\n    # why\n    x,\n)\n",
    "import jax\n\ndef f(a):\n    return jax.tree_map(g,  # c\n        a, [1,\n            2])\n",
]

# Left to LibCST: something besides the renamed text may change, or ``ref`` may spell the new
# name otherwise.
LIBCST = [
    "from jax import tree_map\n\nout = tree_map(f, x)\n",
    "import jax\nfrom jax import tree, tree_util\n\nout = jax.tree_map(f, x)\n",
    "import jax\nimport jax as j\n\nout = jax.tree_map(f, x)\n",
    "import jax\n\nout = (jax.tree_map)(f, x)\n",
    "import jax\n\nout = jax . tree_map(f, x)\n",
    "import jax\n\njax.tree_map = f\n",
    "import jax\n\nout = jax.tree_multimap(jax.tree_multimap(f,\n"
    + " " * 42
    + "a),\n                        x)\n",
    'import jax\n\nout = jax.tree_multimap(f, """\n                        x""")\n',
    "import jax\n\nout = jax.tree_multimap(\n\tf, x)\n",
    "import jax\n\nif c:\n    out = jax.tree_map(f, x)\nelse:\n    out = jax.tree.map(f, x)\n",
    "import jax\n\nout = None\nout = jax.tree_map(f, x)\n",
    "import jax\n\nout = jax.tree_map\nout = jax.tree.map(f, x)\n",
    "import jax\nfrom typing import Union\n\nT = Union[jax.tree_map, int]\n",
    "import jax\nimport typing as t\n\nT = t.Optional[jax.tree_map]\n",
    "import jax\n\nok = callable(x) or jax.tree_map(f, x)\n",
    "import jax\n\nok = isinstance(x, jax.tree_map)\n",
    "import jax\nfrom jax.experimental import pjit\n\nout = pjit.pjit(jax.tree_map)\n",
    "import jax\n\ndef f(jax):\n    return jax.tree_map(g, x)\n",
]


class Written:
    """Counts the files the engine answered by writing fixes from ``ast``."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from jaxmigrate.migrator import engine

        self.answers: List[bool] = []
        real = engine.written_on_ast

        def counting(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
            found = real(*args, **kwargs)
            self.answers.append(found is not None)
            return found

        monkeypatch.setattr(engine, "written_on_ast", counting)


@pytest.mark.parametrize("settings", [OLD, NEW], ids=["0.4.13", "0.4.30"])
@pytest.mark.parametrize("text", WRITTEN)
def test_renames_written_from_ast_are_libcsts(text, settings, monkeypatch):
    written = Written(monkeypatch)
    result = migrate_source(text, settings)
    assert result.fixes and result.output != text
    assert written.answers == [True], "the file was not written from ast"
    assert ast_first_difference(text, settings) is None
    assert migrate_source(result.output, settings).output == result.output  # idempotent


@pytest.mark.parametrize("settings", [OLD, NEW], ids=["0.4.13", "0.4.30"])
@pytest.mark.parametrize("text", LIBCST)
def test_look_alikes_are_left_to_libcst(text, settings, monkeypatch):
    written = Written(monkeypatch)
    migrate_source(text, settings)
    assert True not in written.answers, "written from ast where LibCST might differ"
    assert ast_first_difference(text, settings) is None


def test_continuation_lines_move_with_the_parenthesis(monkeypatch):
    # jax.tree.map is as long as jax.tree_map; 0.4.13's jax.tree_util.tree_map is longer
    text = "import jax\n\nout = jax.tree_map(f,\n                   x)\n"
    written = Written(monkeypatch)
    assert migrate_source(text, NEW).output == text.replace("tree_map", "tree.map")
    old = migrate_source(text, OLD).output
    assert old == "import jax\n\nout = jax.tree_util.tree_map(f,\n                             x)\n"
    assert written.answers == [True, True]
    assert ast_first_difference(text, NEW) is None and ast_first_difference(text, OLD) is None


@pytest.mark.parametrize(
    "width,settings,written",
    [(75, OLD, False), (75, NEW, True), (83, OLD, True), (83, NEW, True)],
    ids=["made-long", "same-length", "already-long", "already-long-same-length"],
)
def test_a_line_the_rename_makes_too_long_is_left_to_libcst(width, settings, written, monkeypatch):
    # LibCST's rounds wrap a line a fix made longer than the limit, not one the user wrote so
    text = "import jax\n\nout = jax.tree_map(f, " + "x" * (width - 23) + ")\n"
    assert len(text.splitlines()[2]) == width
    limited = dataclasses.replace(settings, line_length=79)
    answers = Written(monkeypatch)
    migrate_source(text, limited)
    assert answers.answers == [written]
    assert ast_first_difference(text, limited) is None


def test_fixes_are_located_as_libcst_locates_them():
    text = "import jax\n\n\ndef f(x):\n    return {'é': jax.tree_map(g, x)}\n"
    (fix,) = migrate_source(text, NEW).fixes
    assert (fix.line, fix.column, fix.end_line) == (5, 18, 5)  # characters, not bytes
    assert fix.message == "jax.tree_map -> jax.tree.map"
    assert ast_first_difference(text, NEW) is None


TREE_LINES = [
    "out = jax.tree_map(f, y)\n",
    "leaves = jax.tree_leaves(y)  # x.\n",
    "z = jax.tree_multimap(f, a,\n    b)\n",
    "if c:\n    q = jax.tree_flatten(y)\nelse:\n    q = jax.tree_flatten(y)\n",
    "w = 0\nw = jax.tree_structure(y)\n",
    "from jax import tree_util\n",
    "k = jax.random.normal(jax.random.PRNGKey(0), ())\n",
    "s = jax.tree_util.tree_multimap(f,\n                               s)\n",
]


@property_profile(20)
@given(
    hypothesmith.from_node(),
    st.lists(st.sampled_from(TREE_LINES), min_size=1, max_size=4),
    st.sampled_from([OLD, NEW]),
)
def test_written_from_ast_on_generated_programs(program, lines, settings):
    text = "import jax\n" + "".join(lines) + program
    assert ast_first_difference(text, settings) is None


def test_a_big_module_is_left_to_the_piecewise_path(monkeypatch):
    # (its tree and the new text's both held: a big module's LibCST parse is a few statements)
    from jaxmigrate.migrator import astfixes

    text = WRITTEN[0]
    monkeypatch.setattr(astfixes, "WRITTEN_CHARS", len(text) - 1)
    written = Written(monkeypatch)
    assert migrate_source(text, NEW).fixes
    assert written.answers == [False]
