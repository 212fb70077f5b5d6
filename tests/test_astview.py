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
