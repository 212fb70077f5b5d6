"""The shim is itself tested against recorded legacy behaviour.

* GDA (no installable JAX has it): the shim's observations must equal the values recorded in
  the catalog (section 3, 12.8), ``selftest.RECORDED_GDA``.
* Everything real jax 0.4.13 still has (pjit ``in_axis_resources`` semantics, DeviceArray and
  ShardedDeviceArray names, the ``jax_array`` flag): the shim on the newest JAX and the real
  jax 0.4.13 must observe the same (marker ``legacy``).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.runtime import harness
from tests.runtime.shim.selftest import RECORDED_GDA
from tests.runtime.test_runtime import legacy_python

pytestmark = pytest.mark.runtime
SCRIPT = harness.REPO / "tests" / "runtime" / "shim" / "selftest.py"
_CACHE = {}


def observe(python: str, mode: str):
    key = (python, mode)
    if key not in _CACHE:
        done = subprocess.run(
            [python, str(SCRIPT), mode], capture_output=True, text=True, env=harness.base_env(),
            cwd=str(harness.REPO), timeout=300,
        )
        lines = [l for l in done.stdout.splitlines() if l.startswith("JAXMIGRATE-SELFTEST ")]
        assert lines, f"selftest failed ({mode}):\n{done.stderr[-4000:]}"
        _CACHE[key] = json.loads(lines[-1].split(" ", 1)[1])
    return _CACHE[key]


def test_shim_gda_matches_recorded_legacy_behaviour():
    observed = observe(sys.executable, "shim")["gda"]
    subset = {k: observed[k] for k in RECORDED_GDA}
    diff = harness.diff_summaries(RECORDED_GDA, subset, "recorded legacy GDA")
    assert not diff, diff


@pytest.mark.legacy
def test_shim_matches_real_jax_0413():
    shim = observe(sys.executable, "shim")["common"]
    real = observe(legacy_python("0.4.13"), "real")["common"]
    diff = harness.diff_summaries(real, shim, "real jax 0.4.13")
    assert not diff, diff
