"""Runtime proof for what report-only findings tell a person to do, where it can be run.

JAX503 (threefry-partitionable) says that JAX 0.5.0 changed the values ``jax.random`` draws
from a key, and that ``jax.config.update("jax_threefry_partitionable", False)`` keeps the old
ones.  Both halves are checked on real JAX: the draws of a legacy JAX (0.4.30, before the
change) differ from the installed JAX's default draws, and equal them with the flag False.
If a JAX ever made the old draws the default again, or dropped the flag, this fails and the
rule's message must change.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.runtime import harness
from tests.runtime.test_runtime import legacy_python

pytestmark = [pytest.mark.runtime, pytest.mark.legacy]

# Every sampler reads the same bits: uniform, normal, randint and a split key's draws.
DRAWS = """
import json, sys
import jax
if sys.argv[1] == "old-bits":
    jax.config.update("jax_threefry_partitionable", False)
key = jax.random.PRNGKey(0)
first, second = jax.random.split(key)
print(json.dumps({
    "uniform": jax.random.uniform(key, (4,)).tolist(),
    "normal": jax.random.normal(first, (3,)).tolist(),
    "randint": jax.random.randint(second, (5,), 0, 1000).tolist(),
    "split": jax.random.key_data(jax.random.split(key, 3)).tolist()
    if hasattr(jax.random, "key_data") else jax.random.split(key, 3).tolist(),
}))
"""


def _draws(python: str, mode: str) -> dict:
    done = subprocess.run(
        [python, "-c", DRAWS, mode],
        env=harness.base_env(devices=1),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_threefry_flag_keeps_the_draws_of_older_jax() -> None:
    legacy = _draws(legacy_python("0.4.30"), "default")
    modern_default = _draws(harness.python_for_modern(), "default")
    modern_old_bits = _draws(harness.python_for_modern(), "old-bits")
    assert modern_old_bits == legacy
    assert modern_default["uniform"] != legacy["uniform"]
    assert modern_default["normal"] != legacy["normal"]
