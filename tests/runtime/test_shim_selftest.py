"""The shim is itself tested against recorded legacy behaviour.

* GDA (no installable JAX has it): the shim's observations must equal the values recorded in
  jax 0.3.25's GDA source, ``selftest.RECORDED_GDA``.
* Everything real jax 0.4.13 still has (pjit ``in_axis_resources`` semantics, DeviceArray and
  ShardedDeviceArray names, the ``jax_array`` flag): the shim on the newest JAX and the real
  jax 0.4.13 must observe the same (marker ``legacy``).
* Legacy behaviour no installable JAX has (``None`` pspecs, ``Device.live_buffers()``, the
  pre-jax.Array ShardedDeviceArray flavour, ``gda_serialization`` parameter names): the shim's
  models must give the documented answers, and the installed JAX must really lack them
  (``DOCUMENTED_MODELS``, ``shim/models_check.py``).
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
            [python, str(SCRIPT), mode],
            capture_output=True,
            text=True,
            env=harness.base_env(),
            cwd=str(harness.REPO),
            timeout=300,
        )
        lines = [x for x in done.stdout.splitlines() if x.startswith("JAXMIGRATE-SELFTEST ")]
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


# The shim's models of legacy behaviour that no installable JAX has (shim/models_check.py).
DOCUMENTED_MODELS = {
    # the installed JAX lacks each behaviour, so the shim is needed
    "real_none_pspec": "rejected",  # jax 0.4.13 release notes
    "real_live_buffers": 0,  # [] on every installable JAX (observed)
    "real_gda_serialization": False,  # removed in 0.4.11
    "real_none_dtype": "rejected",  # ShapeDtypeStruct requires a dtype from jax 0.4.2 (its sources)
    # None pspecs: a None pspec leaf meant replicated, beside a real P("x")
    "none_pspec": [True, True],
    # live_buffers: live buffers of that device; one per array on each device of its device set
    "live_buffers_delta": [1, 1, 4, 1, 1, 1, 1, 1],
    # SDA, per the migration guide: SDA = pmap output (one-device pmaps included), not a slice of it
    # nor a single-device array
    "sda": {"pmap_8": True, "pmap_1": True, "single_device": False, "indexed_pmap_output": False},
    # ShapeDtypeStruct(shape, None): np.dtype(None), float64, through jax 0.4.1 (its sources)
    "none_dtype": ["float64", "float64"],
    # gda_serialization: the legacy module's parameter names
    "gda_serialization": ["async_serialize", "run_serialization"],
}


def test_shim_models_match_documented_legacy_behaviour():
    done = subprocess.run(
        [sys.executable, str(SCRIPT.with_name("models_check.py"))],
        capture_output=True,
        text=True,
        env=harness.base_env(),
        cwd=str(harness.REPO),
        timeout=300,
    )
    lines = [x for x in done.stdout.splitlines() if x.startswith("JAXMIGRATE-MODELS ")]
    assert lines, f"models_check failed:\n{done.stderr[-4000:]}"
    observed = json.loads(lines[-1].split(" ", 1)[1])
    diff = harness.diff_summaries(DOCUMENTED_MODELS, observed, "documented legacy behaviour")
    assert not diff, diff
