"""The ast view's one walk (``migrator.astview``): which chains it keeps, and the bindings it
records for the chains it leaves out."""

from __future__ import annotations

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
