"""What the piecewise path reads as a site on CPython's tree (:mod:`migrator.piecesites`).

Each statement below holds exactly one kind of site (or none), read the way the engine reads
it: ``holds_site`` must say so, and the statement that only looks like one must not be kept
for itself.  The end-to-end comparison of both paths is ``tests/test_piecewise.py``.
"""

from __future__ import annotations

import ast

import pytest

from jaxmigrate.migrator.piecesites import (
    Resolver,
    import_specs,
    qualnames,
    site_words,
    top_level_imports,
)
from tests.test_gate_equivalence import ALL_RULES

HEADER = (
    "import jax\nimport jax.numpy as jnp\nfrom jax.experimental import maps as M\n"
    "from . import helpers\n"
)


def holds(statement: str) -> bool:
    tree = ast.parse(HEADER + statement)
    bound = top_level_imports(tree.body)
    assert bound is not None
    resolver = Resolver(bound, site_words(tuple(ALL_RULES.active_rules())))
    return resolver.holds_site(tree.body[4:])


@pytest.mark.parametrize(
    "statement",
    [
        "x = jax.tree_map(f, y)\n",  # a name site through ``import jax``
        "def f():\n    return M.Mesh\n",  # the head names a removed module
        "y = x.device_buffer\n",  # an attribute site on anything
        "z = f(a, axis_resources=None)\n",  # a keyword site
        "flag = 'jax_array'\n",  # a string site
        "flag = 'JAX\\x5fARRAY'\n",  # written with an escape: its value is the site
        "s = ('jax_' 'array')\n",  # CPython joins the parts LibCST reads one by one
        "def g(a: 'Foo'):\n    pass\n",  # a string annotation: LibCST resolves inside
        "w = jnp._private\n",  # a private JAX name (JAX902 counts them module-wide)
        "v = globals()\n",  # resolution made dynamic
        "def __getattr__(name):\n    return name\n",  # a module-level __getattr__
    ],
)
def test_a_statement_with_a_site_is_held(statement):
    assert holds(statement)


@pytest.mark.parametrize(
    "statement",
    [
        "x = jnp.asarray(y) + jax.numpy.ones(3)\n",  # names, but none a rule's
        "y = helpers.tree_map(f, x)\n",  # a relative import is never a JAX name
        "z = model.eval()\n",  # ``eval`` as an attribute: not the builtin
        "# jax.tree_map in a comment\nw = 1\n",
        "def h(x):\n    '''Calls jax.tree_map.'''\n    return x\n",  # in a docstring
        "tree_map = 3\n",  # a bare word no import binds
    ],
)
def test_a_statement_without_one_is_not(statement):
    assert not holds(statement)


def test_imports_bind_what_the_analysis_resolves():
    tree = ast.parse(
        "import a.b.c\nimport a.b as ab\nfrom m import x as y\nfrom ..p import q\nfrom . import r\n"
    )
    specs = [spec for statement in tree.body for spec in import_specs(statement) or ()]
    assert [name for name, _spec in specs] == ["a", "ab", "y", "q", "r"]
    assert qualnames([spec for _name, spec in specs]) == ["a", "a.b", "m.x", "..p.q", ".r"]
    assert top_level_imports(ast.parse("from os import *\n").body) is None
