"""host_callback's id_tap and id_print kept program order (JAX905): the rewrite asks for it
with ``ordered=True``, except in a module that runs code on several devices, where JAX
refuses ordered callbacks; there the fix says why it is unordered."""

from __future__ import annotations

import ast

import pytest

from jaxmigrate.migrator import Settings, migrate_source

TAPS = (
    "import jax\n"
    "from jax.experimental import host_callback as hcb\n\n\n"
    "@jax.jit\n"
    "def step(x):\n"
    "    hcb.id_tap(lambda v, t: print(v), x)\n"
    "    hcb.id_print(x, what='x')\n"
    "    return x\n"
)
UNSAFE = Settings(unsafe_fixes=True)


def _calls(output: str, name: str) -> list:
    return [
        node
        for node in ast.walk(ast.parse(output))
        if isinstance(node, ast.Call) and ast.unparse(node.func) == name
    ]


def test_taps_on_one_device_keep_program_order():
    result = migrate_source(TAPS, UNSAFE)
    for name in ("jax.debug.callback", "jax.debug.print"):
        (call,) = _calls(result.output, name)
        assert [(k.arg, ast.unparse(k.value)) for k in call.keywords] == [("ordered", "True")]
    assert all("Not ordered=True" not in fix.detail for fix in result.fixes)


@pytest.mark.parametrize(
    "line, shown",
    [
        ("p_step = jax.pmap(step)", "pmap, line 12"),
        ("mesh = jax.sharding.Mesh(jax.devices(), ('x',))", "Mesh, line 12"),
        ("spec = jax.sharding.PartitionSpec('x')", "PartitionSpec, line 12"),
        (
            "# not pmap here\nsharded = jax.device_put(1, jax.sharding.NamedSharding(m, s))",
            "NamedSharding, line 13",
        ),
    ],
)
def test_a_module_on_several_devices_gets_unordered_taps_and_says_why(line, shown):
    result = migrate_source(f"{TAPS}\n\n{line}\n", UNSAFE)
    for name in ("jax.debug.callback", "jax.debug.print"):
        (call,) = _calls(result.output, name)
        assert not call.keywords, ast.unparse(call)
    details = [fix.detail for fix in result.fixes if "host_callback.id_" in fix.detail]
    assert len(details) == 2, result.fixes
    for detail in details:
        assert f"several devices ({shown})" in detail, detail
        assert "ordered=True)" not in detail.split(":")[0], detail  # the recipe shown


def test_a_held_back_tap_says_the_same():
    result = migrate_source(f"{TAPS}\n\np_step = jax.pmap(step)\n", Settings())
    assert result.output == f"{TAPS}\n\np_step = jax.pmap(step)\n"
    held = [d for d in result.findings if "id_tap" in d.message]
    assert held and "several devices (pmap, line 12)" in held[0].detail, result.findings
