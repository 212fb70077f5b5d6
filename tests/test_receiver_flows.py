"""JAX402's gates and the flows of ``rules._flow``: a receiver tied by what a helper returns,
what a loop walks, an ``isinstance`` check or what every caller passes must reach the rule
with the gates on, as it does with them off.  (Gates 1b and 2 once read only assignments and
annotations, and a gated run dropped these fixes and findings.)"""

from __future__ import annotations

import dataclasses

import libcst as cst
import pytest

from jaxmigrate.migrator import Settings, migrate_source
from jaxmigrate.migrator.astfacts import ast_facts
from jaxmigrate.migrator.plan import make_plan
from jaxmigrate.migrator.rounds import run_rounds
from jaxmigrate.migrator.rule import all_rules
from jaxmigrate.migrator.textgate import admitted

SETTINGS = Settings(target_version="0.4.30", unsafe_fixes=True)

FLOWS = {
    "a helper's return": (
        "import jax\n\n\ndef make(d):\n    return jax.device_put(d)\n\n\n"
        "def use(d):\n    arr = make(d)\n    return arr.mesh\n"
    ),
    "a helper's return, read at once": (
        "import jax.numpy as jnp\n\n\ndef make(n):\n    out = jnp.ones(n)\n    return out\n\n\n"
        "def use(n):\n    return make(n).mesh\n"
    ),
    "every caller's argument": (
        "import jax.numpy as jnp\n\n\ndef describe(arr):\n    return arr.mesh_axes\n\n\n"
        "def main():\n    return describe(jnp.ones(3))\n"
    ),
    "a comprehension over a list of arrays": (
        "import jax.numpy as jnp\n\n\ndef describe(n):\n"
        "    arrays = [jnp.ones(3) for _ in range(n)]\n    return [a.mesh for a in arrays]\n"
    ),
    "a loop over an array's buffers": (
        "import jax.numpy as jnp\n\n\ndef describe(n):\n    x = jnp.ones(n)\n"
        "    for b in x.device_buffers:\n        print(b.mesh)\n"
    ),
    "a shard's data": (
        "import jax.numpy as jnp\n\n\ndef describe(n):\n    x = jnp.ones(n)\n"
        "    return [s.data.mesh for s in x.addressable_shards]\n"
    ),
    "a caller's variable of the parameter's own name": (
        "import jax.numpy as jnp\n\n\ndef describe(arr):\n    return arr.mesh_axes\n\n\n"
        "def main():\n    arr = jnp.ones(3)\n    return describe(arr)\n"
    ),
    "a helper's variable of the reader's own name": (
        "import jax.numpy as jnp\n\n\ndef make():\n    x = jnp.ones(3)\n    return x\n\n\n"
        "def use():\n    x = make()\n    return x.mesh\n"
    ),
    "an isinstance check": (
        "import jax\n\n\ndef describe(x):\n    if isinstance(x, jax.Array):\n"
        "        return x.mesh_axes, x.mesh\n    return None\n"
    ),
}

# The same shapes where nothing ties: the gates may turn them away, and the rule does nothing.
NO_FLOWS = {
    "a helper returning a sharding": (
        "import jax\nfrom jax.sharding import NamedSharding\n\n\n"
        "def make(m, s):\n    return NamedSharding(m, s)\n\n\n"
        "def use(m, s):\n    return make(m, s).mesh\n"
    ),
    "a caller passing a sharding": (
        "import jax\n\n\ndef describe(s):\n    return s.mesh\n\n\n"
        "describe(jax.sharding.NamedSharding(m, p))\n"
    ),
    "a parameter of a function nobody calls": (
        "import jax\n\n\ndef describe(s):\n    return s.mesh\n"
    ),
    "a method's parameter": (
        "import jax\n\n\nclass A:\n    def f(self, s):\n        return s.mesh\n\n"
        "    def g(self):\n        return self.f(jax.device_put(1))\n"
    ),
    "a loop over something unknown": (
        "import jax\n\n\ndef describe(shardings):\n    for s in shardings:\n        print(s.mesh)\n"
    ),
    "a jitted function defined in a function": (
        "import jax\n\n\ndef outer():\n    @jax.jit\n    def f(x):\n        return x\n\n"
        "    return f(1).mesh\n"
    ),
    "an isinstance check of another type": (
        "import jax\n\n\ndef describe(x):\n    if isinstance(x, jax.sharding.Mesh):\n"
        "        return x.shape\n    return x.mesh\n"
    ),
}


def _fixes(result_fixes) -> list:  # noqa: ANN001
    return sorted((d.code, d.line, d.message) for d in result_fixes)


@pytest.mark.parametrize("source", FLOWS.values(), ids=list(FLOWS))
def test_gated_and_ungated_runs_agree_where_a_receiver_flows(source):
    result = migrate_source(source, SETTINGS)
    plan = make_plan(tuple(SETTINGS.active_rules()))
    output, fixes, _findings = run_rounds(cst.parse_module(source), source, plan, SETTINGS)
    assert (result.output, _fixes(result.fixes)) == (output, _fixes(fixes))
    assert any(d.code == "JAX402" for d in result.fixes)


@pytest.mark.parametrize("source", FLOWS.values(), ids=list(FLOWS))
def test_both_gates_keep_jax402_where_a_receiver_flows(source):
    rule = all_rules()["JAX402"]
    plan = make_plan((rule,))
    candidates, hits = plan.prefilter_hits(source)
    assert admitted(source, candidates, hits) == (rule,)
    assert plan.wanted_by(rule, ast_facts(source))


@pytest.mark.parametrize("source", NO_FLOWS.values(), ids=list(NO_FLOWS))
def test_where_nothing_flows_the_rule_does_nothing_and_gate_2_says_so(source):
    rule = all_rules()["JAX402"]
    assert not make_plan((rule,)).wanted_by(rule, ast_facts(source))
    alone = dataclasses.replace(SETTINGS, select=("JAX402",))
    _output, fixes, findings = run_rounds(
        cst.parse_module(source), source, make_plan((rule,)), alone
    )
    assert [d for d in fixes + findings if d.code == "JAX402"] == []


@pytest.mark.parametrize(
    "source",
    [NO_FLOWS["a parameter of a function nobody calls"], NO_FLOWS["a method's parameter"]],
)
def test_gate_1b_reads_which_parameters_a_call_can_pass(source):
    rule = all_rules()["JAX402"]
    plan = make_plan((rule,))
    candidates, hits = plan.prefilter_hits(source)
    assert candidates == (rule,)
    assert admitted(source, candidates, hits) == ()
