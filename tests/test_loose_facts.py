"""JAX402's gate 2 reads ``.mesh`` receivers without the module's scopes first
(``rules._receiver_gate.LooseFacts``): every binding of a name anywhere, merged.  Its "cannot
tie" must hold in every scope: wherever it says so, :func:`ast_may_tie` with the scopes says
False too.  Checked on every receiver of every attribute in the fixtures and programs (not
only ``.mesh``, for more receivers), and on look-alikes where the scopes must decide."""

from __future__ import annotations

import ast

import pytest

from jaxmigrate.migrator.astfacts import ast_facts
from jaxmigrate.rules._loose_facts import LooseFacts
from jaxmigrate.rules._receiver_gate import any_may_tie, ast_cannot_tie, ast_may_tie
from jaxmigrate.rules.gda_attributes import GdaAttributes
from tests.fixture_support import FIXTURES
from tests.test_gate_equivalence import PROGRAMS


def _receivers(tree: ast.AST):  # noqa: ANN202
    return [node.value for node in ast.walk(tree) if type(node) is ast.Attribute]


def _files():  # noqa: ANN202
    """(name, facts, loose facts, every attribute's receiver) of each fixture and program."""
    for path in sorted(FIXTURES.glob("*/*.py")) + sorted(PROGRAMS.glob("*.py")):
        facts = ast_facts(path.read_text(encoding="utf-8"))
        if facts is not None and facts.scopes() is not None:
            yield path.name, facts, LooseFacts.of(facts), _receivers(facts.tree)


def test_loose_facts_never_miss_a_tie_the_scopes_find():
    checked = loose_only = 0
    for name, facts, loose, receivers in _files():
        for receiver in receivers:
            if ast_cannot_tie(loose, receiver):
                checked += 1
                assert not ast_may_tie(facts, receiver, facts.scope_of(receiver)), (
                    name,
                    ast.unparse(receiver),
                )
            elif not ast_may_tie(facts, receiver, facts.scope_of(receiver)):
                loose_only += 1  # (the scopes are finer: the gate asks them next)
    assert checked > 1000 and loose_only >= 1, (checked, loose_only)


def test_receivers_asked_together_answer_as_each_asked_alone():
    """JAX402's gate asks all of a file's receivers in one question (``any_may_tie``), sharing
    what was read: what one receiver read and found no tie must not hide another's tie.  Each
    file's receivers, in order and in every window of five, asked together and one by one."""
    asked = tied = 0
    for name, facts, loose, receivers in _files():
        for start in range(0, len(receivers), 5):
            window = receivers[start : start + 5]
            scoped = [(r, facts.scope_of(r)) for r in window]
            alone = any(ast_may_tie(facts, r, scope) for r, scope in scoped)
            assert any_may_tie(facts, scoped) is alone, (name, start)
            loosely = any(ast_may_tie(loose, r, None) for r in window)
            assert any_may_tie(loose, [(r, None) for r in window]) is loosely, (name, start)
            asked += 1
            tied += alone
    assert asked > 200 and 0 < tied < asked, (asked, tied)


MESH_READS = [
    # answered without the scopes: no binding anywhere can tie the receiver
    ("import jax\ndef f(sharding):\n    return sharding.mesh\n", False, False),
    (
        "import jax\nclass S:\n    def m(self):\n        return self.mesh, (a := b).mesh\n",
        False,
        False,
    ),
    # a binding somewhere may tie: the scopes decide (here it is another function's)
    (
        "import jax\ndef f(x):\n    return x.mesh\ndef g():\n    x = jax.numpy.ones(3)\n",
        True,
        False,
    ),
    ("import jax\ndef f(x: jax.Array):\n    return x.mesh\n", True, True),
    ("import jax\nx = jax.device_put(y)\nz = [x.mesh for _ in r]\n", True, True),
    (
        "import jax\nclass S:\n    def m(self):\n        self.a = jax.numpy.ones(2)\n"
        "    def n(self):\n        return self.a.mesh\n",
        True,
        True,
    ),
]


@pytest.mark.parametrize("text, loosely, gated", MESH_READS)
def test_mesh_gate_asks_the_scopes_only_where_a_binding_may_tie(text, loosely, gated):
    facts = ast_facts(text)
    receivers = [n.value for n in facts.attribute_nodes["mesh"]]
    loose = LooseFacts.of(facts)
    assert (not all(ast_cannot_tie(loose, r) for r in receivers)) is loosely
    assert GdaAttributes().ast_gate(facts) is gated
    assert (facts._scopes is not None) is loosely  # the scopes' walk only where needed
