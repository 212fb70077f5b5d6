"""An unsafe fix whose replacement names a JAX newer than the default target is what the
default run holds back, and what ``--unsafe-fixes`` applies once its survey raises the target:
the default run said "not rewritten: ... newer than the target" instead (ott-jax 0.3.1's
``decomposition.py``: ``hcb.call(f, a, result_shape=None)`` becomes an ``io_callback``, JAX
0.4.2; a ``KeyArray`` check's predicate needs ``jax.dtypes.prng_key``, 0.4.14).  So
``--unsafe-fixes`` left the module dying at its ``host_callback`` import, and the check as it
was.  A target given on the command line does not rise: there it stays a finding."""

from __future__ import annotations

import json

import pytest

from tests.test_cli import invoke

CASES = [
    pytest.param(
        "import jax\nimport jax.experimental.host_callback as hcb\n\n\n"
        "def decompose(f, a):\n    return hcb.call(f, a, result_shape=None)\n",
        "jax.experimental.host_callback.call(...) -> jax.experimental.io_callback(f, None, x) "
        "[unsafe fix]",
        "jax.experimental.io_callback needs JAX 0.4.2: with --unsafe-fixes",
        "+    return jax.experimental.io_callback(f, None, a)",
        "0.4.2",
        id="io_callback",
    ),
    pytest.param(
        "import jax\n\n\ndef is_key(k):\n    return isinstance(k, jax.random.KeyArray)\n",
        "isinstance(..., KeyArray) -> isinstance(x, jax.Array) and ... [unsafe fix]",
        "It needs JAX 0.4.14: with --unsafe-fixes",
        "+        and jax.dtypes.issubdtype(k.dtype, jax.dtypes.prng_key)",
        "0.4.14",
        id="key_array_predicate",
    ),
]


def _findings(tmp_path, *flags):
    out = invoke("m.py", "--format", "json", "--no-cache", *flags, cwd=tmp_path).stdout
    data = json.loads(out)
    return data["target_range"]["lower"], data["files"][0]["findings"]


@pytest.mark.parametrize("text, message, detail, fixed, needs", CASES)
def test_held_back_until_unsafe_fixes_raise_the_target(
    tmp_path, text, message, detail, fixed, needs
):
    (tmp_path / ".git").mkdir()
    (tmp_path / "m.py").write_text(text)
    lower, findings = _findings(tmp_path)
    assert lower == "0.4.1"
    (held,) = [f for f in findings if f["message"] == message]
    assert held["safety"] == "unsafe" and detail in held["detail"]
    applied = invoke("m.py", "--diff", "--no-cache", "--unsafe-fixes", cwd=tmp_path)
    assert fixed in applied.stdout, applied.stdout
    assert f"migrating to {needs}.." in applied.stderr, applied.stderr
    given = _findings(tmp_path, "--unsafe-fixes", "--target-version", "0.4.1")[1]
    assert [f["safety"] for f in given if f["code"] != "JAX901"] == ["manual"]
    assert f"needs JAX {needs}" in json.dumps(given)
