"""The engine's gate 2 (``ast`` facts plus each rule's ``ast_gate``) may skip a rule only where
the rule does nothing.  Each check runs the rule alone with every gate bypassed, on inputs where
its gate says False, and requires no fix and no finding from it."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Iterable, List, Tuple

import libcst as cst
import pytest

from migrator import Settings
from migrator.astfacts import ast_facts
from migrator.engine import Plan, _run_rounds, make_plan
from migrator.rule import all_rules
from tests.fixture_support import FIXTURES, fixture_settings


_site_wanted = Plan.has_site  # gate 2 without the rule's own refinement


def _gated_out(text: str, settings: Settings) -> List[object]:
    facts = ast_facts(text)
    if facts is None:
        return []
    return [r for r in settings.active_rules() if _site_wanted(r, facts) and not r.ast_gate(facts)]


def _acts(rule, text: str, settings: Settings) -> List[str]:  # noqa: ANN001
    alone = dataclasses.replace(settings, select=(rule.code,), ignore=())
    _output, fixes, findings = _run_rounds(cst.parse_module(text), text, make_plan((rule,)), alone)
    return [f"{d.line}: {d.code} {d.message}" for d in fixes + findings if d.code == rule.code]


def _check(paths: Iterable[Tuple[str, str, Settings]]) -> Tuple[int, List[str]]:
    checked, offenders = 0, []
    for label, text, settings in paths:
        for rule in _gated_out(text, settings):
            checked += 1
            offenders += [f"{label}:{line}" for line in _acts(rule, text, settings)]
    return checked, offenders


def _fixture_inputs():
    for path in sorted(FIXTURES.glob("*/*.py")):
        if path.name.endswith((".after.py", ".run.py")):
            continue
        text = path.read_text(encoding="utf-8")
        settings = dataclasses.replace(fixture_settings(text), unsafe_fixes=True)
        yield str(path.relative_to(FIXTURES)), text, settings


def test_gates_hold_on_every_fixture():
    checked, offenders = _check(_fixture_inputs())
    assert checked >= 20, "the fixtures hardly exercise the gates"
    assert not offenders, "a gate skipped a rule that acts:\n" + "\n".join(offenders)


def test_gates_hold_on_the_installed_jax_sources():
    """Real code no one here wrote: every jax module where a gate skips a rule."""
    import jax

    root = Path(jax.__file__).parent
    settings = Settings(unsafe_fixes=True)
    plan = make_plan(tuple(settings.active_rules()))

    def inputs():
        for path in sorted(root.rglob("*.py")):
            text = path.read_text(encoding="utf-8", errors="surrogateescape")
            if plan.prefilter(text):
                yield str(path.relative_to(root)), text, settings

    checked, offenders = _check(inputs())
    assert checked >= 50
    assert not offenders, "a gate skipped a rule that acts:\n" + "\n".join(offenders)


CASES = [
    # (rule, source, gate says the rule may act)
    ("JAX402", "import jax\ndef f(self):\n    return self.mesh\n", False),
    ("JAX402", "import jax\ndef f(sharding):\n    return sharding.mesh, sharding.mesh_axes\n", False),
    ("JAX402", "import jax\ndef f(x: jax.Array):\n    return x.mesh\n", True),
    ("JAX402", "import jax\ndef f(x: 'jax.Array'):\n    return x.T.mesh\n", True),
    ("JAX402", "import jax.numpy as jnp\ny = jnp.ones(3)\nz = y[0] + 1\nz.mesh\n", True),
    ("JAX402", "import jax\nfrom jax.sharding import NamedSharding\nNamedSharding(m, s).mesh\n", False),
    ("JAX402", "import jax\n@jax.jit\ndef f(x):\n    return x\nf(1).mesh\n", True),
    ("JAX402", "import jax\nx.addressable_shards[0].data.mesh\n", False),
    ("JAX402", "import jax\ny = jax.device_put(1)\ny.addressable_shards[0].data.mesh\n", True),
    ("JAX402", "import jax\ndef f(x):\n    return x.local_shards\n", True),
    # scopes: the binding that counts is the one Python would use
    ("JAX402", "import jax\nx = jax.device_put(1)\ndef f(x):\n    return x.mesh\n", False),
    ("JAX402", "import jax\nx = jax.device_put(1)\ndef f():\n    return x.mesh\n", True),
    ("JAX402", "import jax\nx = jax.device_put(1)\nf = lambda x: x.mesh\n", False),
    ("JAX402", "import jax\nx = jax.device_put(1)\n[x.mesh for x in xs]\n", False),
    ("JAX402", "import jax\ndef f():\n    global x\n    return x.mesh\nx = jax.device_put(1)\n", True),
    ("JAX402", "import jax\nclass A:\n    x = jax.device_put(1)\n    def f(self):\n        return x.mesh\n", False),
    ("JAX402", "import jax\ndef f():\n    if (y := jax.device_put(1)) is not None:\n        return y.mesh\n", True),
    ("JAX402", "import jax\ndef f():\n    from jax import numpy as y\n    return y.mesh\n", False),
    ("JAX402", "import jax\ndef f(x):\n    return x\nf(1).mesh\n", False),
    ("JAX402", "import jax, functools\n@functools.partial(jax.jit, static_argnums=0)\ndef f(x):\n    return x\nf(1).mesh\n", True),
    ("JAX402", "import jax\ng = jax.jit(h)\ng(1).mesh\n", True),
    ("JAX402", "import jax\nfrom jax.sharding import NamedSharding\ndef f(m, s):\n    out = NamedSharding(m, s)\n    return out.mesh\n", False),
    ("JAX402", "from jax.experimental import global_device_array as gda\nx.mesh\n", True),
    ("JAX404", "import jax\nx.device\n", False),
    ("JAX404", "import jax\nx.device(0)\n", False),
    ("JAX404", "import jax\nx.device()\n", True),
    ("JAX203", "import jax\njax.process_index()\njax.jit(f, in_shardings=s)\n", True),
    ("JAX203", "import jax\njax.process_index()\njax.jit(f)\n", False),
    ("JAX607", "import jax\nm = jax.sharding.Mesh(d, ('x',))\nwith m:\n    pass\n", True),
    ("JAX607", "from jax.sharding import Mesh\nwith Mesh(d, ('x',)):\n    pass\n", True),
    ("JAX607", "from jax.sharding import Mesh\nm = Mesh(d, ('x',))\nwith jax.set_mesh(m):\n    pass\n", False),
    ("JAX608", "import jax\njax.make_mesh((2,), ('x',))\n", True),
    ("JAX608", "import jax\njax.make_mesh((2,), ('x',), axis_types=t)\n", False),
    ("JAX608", "import jax\njax.make_mesh(*a)\n", False),
]


@pytest.mark.parametrize("code, source, expected", CASES)
def test_gate_decisions(code, source, expected):
    rule = all_rules()[code]
    facts = ast_facts(source)
    assert _site_wanted(rule, facts), "the case must contain one of the rule's sites"
    assert rule.ast_gate(facts) is expected


@pytest.mark.parametrize("code, source, expected", [c for c in CASES if not c[2]])
def test_a_gated_out_case_really_needs_nothing(code, source, expected):
    rule = all_rules()[code]
    assert _acts(rule, source, Settings(unsafe_fixes=True)) == []
