"""The ast view's one walk (``migrator.astview``): which chains it keeps, and the bindings it
records for the chains it leaves out."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from jaxmigrate.migrator import Settings
from jaxmigrate.migrator.astfacts import ast_facts
from jaxmigrate.migrator.astview import AstView


def _view(text: str) -> AstView:
    facts = ast_facts(text)
    assert facts is not None
    return AstView(text, facts, Settings(), ("JAX902",))


def test_only_chains_whose_head_an_import_binds_are_kept():
    view = _view(
        "x = other.attr\n"
        "y = late.inner._p\n"  # ``late`` is imported below, in a function: kept
        "def f(a):\n    import late\n    return a.b, late\n"
        "from .rel import near as n\nz = f'{n._q}' + 'k'\n"
        "import jax.numpy\nw = (1).real, jax.numpy.ones, g().h.i\n"
    )
    kept = sorted(chain.parts for chain in view.chains)
    assert kept == [("jax", "numpy", "ones"), ("late",), ("late", "inner", "_p"), ("n", "_q")]


def test_bindings_of_chains_left_out_are_still_recorded():
    view = _view(
        "x = 1\nq.r = 2\nfor i in y:\n    pass\ndef f(a):\n    b = a\n    import j\n"
        "class C:\n    t = 3\n"
    )
    assert not view.chains or all(c.parts[0] == "j" for c in view.chains)
    assert {"x", "i", "f", "C"} <= view._module_other
    assert {"a", "b", "j", "t"} <= view._inner
    assert "q" not in view._module_other  # ``q.r = 2`` binds no name
    assert view.binds("x") and view.binds("t") and view.binds("j") and not view.binds("q")


def test_feature_tests_are_read_wherever_their_words_are_written():
    """A test guards its branch when it reads ``hasattr`` or a JAX version word as a name, an
    attribute, a keyword or a lambda's parameter; the view reads the tests only in a module
    whose identifiers hold such a word (a "Version" in a licence comment is none)."""
    guarded_by = {
        "name": "if jax_version >= (0, 4):",
        "attribute": "if jax.__version_info__ >= (0, 4):",
        "keyword": "if check(jax_version=1):",
        "lambda": "if (lambda jaxlib_version: 1)(2):",
        "hasattr": "if hasattr(jax, 'Array'):",
    }
    for case, test in guarded_by.items():
        text = f"# Version 2.0\nimport jax\n{test}\n    from jax._src import core\n"
        view = _view(text)
        assert view._tests, case
        assert all(i.guarded for i in view.imports if i.imported.startswith("jax._src")), case
    licence = "# Licensed under the Apache License, Version 2.0\n"
    plain = _view(f"{licence}import jax\nif x:\n    y = 1\n")
    assert not plain._tests


def test_a_view_for_some_words_walks_the_statements_that_spell_them():
    """``only``: a statement that spells none of the words and does not import is left out
    (its chains and bindings with it); one that does is walked, with what it binds, and each
    statement inside it is asked in turn."""
    text = (
        "import jax\nimport jax.numpy as jnp\nfrom jax._src import core\n"
        "a = jnp.ones(3)\n"  # spells no word: left out
        "b = jax._src.dtypes\n"
        "@jax.jit\ndef f(x):\n    y = core.thing\n    return jax.lax\n"  # (its decorator)
        "def g(jax):\n    return 1\n"  # binds ``jax`` inside: walked, so the view is unsure
        "class C:\n    'Uses jax.'\n    z = core.other\n"  # ``jax`` in a string: walked
        "def h():\n    import numpy\n    return numpy\n"  # imports
    )
    facts = ast_facts(text)
    assert facts is not None
    only = AstView(text, facts, Settings(), ("JAX902",), only=frozenset({"jax"}))
    full = AstView(text, facts, Settings(), ("JAX902",))
    kept = {chain.parts for chain in only.chains}
    assert kept == {("jax", "_src", "dtypes"), ("jax", "jit"), ("jax", "lax")}
    assert {("jnp", "ones"), ("core", "thing"), ("core", "other")} <= {
        chain.parts for chain in full.chains
    }
    assert {"jax", "numpy", "x"} <= only._inner and "y" not in only._inner
    assert {"f", "g", "C", "b"} <= only._module_other and "a" not in only._module_other
    assert only.resolve("jax") == full.resolve("jax") == (False, None)


def test_view_words_give_the_findings_of_a_whole_walk(monkeypatch):
    """Every fixture and runtime program, and JAX's own modules: the findings made on ``ast``
    with the view reading only the statements its rules ask for (``Rule.view_words``) are
    those of a view that reads every statement."""
    import jax

    from jaxmigrate.migrator import astfirst
    from jaxmigrate.migrator.plan import make_plan
    from tests.fixture_support import FIXTURES

    settings = Settings()
    plan = make_plan(tuple(settings.active_rules()))
    paths = [p for p in sorted(FIXTURES.glob("*/*.py")) if not p.name.endswith(".run.py")]
    paths += sorted((Path(__file__).parent / "programs" / "cases").glob("*.py"))
    paths += sorted(Path(jax.__file__).parent.rglob("*.py"))
    words, differ, real = 0, [], astfirst._words
    for path in paths:
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
        facts = ast_facts(text) if plan.candidates(text) else None
        rules = [r for r in plan.rules if facts is not None and plan.wanted_by(r, facts)]
        if not rules or real(facts, rules) is None:
            continue
        words += 1
        answer = astfirst.findings_on_ast(text, facts, rules, settings)
        monkeypatch.setattr(astfirst, "_words", lambda *args: None)
        if astfirst.findings_on_ast(text, facts, rules, settings) != answer:
            differ.append(str(path))
        monkeypatch.setattr(astfirst, "_words", real)
    assert words >= 300, "the view read all of nearly every file"
    assert not differ, "\n".join(differ)


@pytest.mark.parametrize(
    "test,guards",
    [
        ("hasattr(self, '_f')", False),  # coax 0.1.12's cache: the program's own object
        ("not hasattr(cls, 'table')", False),
        ("hasattr(self, '_f') and hasattr(jax, 'tree_map')", True),
        ("hasattr(self.array, 'device_buffer')", True),  # a JAX object held by the instance
        ("hasattr(x, 'device_buffer')", True),
        ("hasattr(self, 'f', jax.__version__)", True),  # (its other arguments are read)
        ("hasattr(jax, 'Array')", True),
    ],
)
def test_the_three_readers_of_a_feature_test_agree(test: str, guards: bool) -> None:
    """LibCST's and both ``ast`` readers of an ``if`` test give one answer: ``hasattr(self,
    ...)`` tests the program's own object, not a feature of JAX."""
    import libcst

    from jaxmigrate.migrator.astguards import feature_test as view_test
    from jaxmigrate.migrator.scope import is_feature_test
    from jaxmigrate.migrator.source import feature_test

    parsed = ast.parse(test, mode="eval").body
    assert is_feature_test(libcst.parse_expression(test)) is guards
    assert feature_test(parsed) is guards
    assert view_test(parsed) is guards
