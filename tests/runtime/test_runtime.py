"""Runtime proof: migrated fixtures run on real jax.Arrays and behave like the legacy code.

* ``test_modern``: every case's after-file runs on the installed JAX (8 CPU devices, JAX
  DeprecationWarnings are errors).                                   markers: runtime
* ``test_shim``: cases with ``SHIM = True``: before-file on the test-only shim, summaries
  compared with the modern side.                                     markers: runtime
* ``test_legacy``: cases with ``LEGACY = "0.4.13"``/``"0.4.30"``/``"0.6.2"``: before-file on
  that real JAX in a cached virtual environment, compared.           markers: runtime, legacy

``pytest -m "not legacy"`` skips the old-JAX environments.  Single-process cases of one side run
batched in one worker per environment; ``PROCESSES = 2`` cases run as 2 processes x 4 devices.
"""

from __future__ import annotations

import os
from typing import Any, Dict

import pytest

from tests.runtime import harness, venvs

pytestmark = pytest.mark.runtime

CASES = harness.all_cases()
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def _ids(cases):
    return [c.id for c in cases]


SHIM_CASES = [c for c in CASES if c.shim]
LEGACY_CASES = [c for c in CASES if c.legacy]


@pytest.fixture(scope="session")
def modern_results() -> Dict[str, Dict[str, Any]]:
    single = [c for c in CASES if c.processes == 1]
    return harness.run_batch(harness.python_for_modern(), "modern", single, "modern")


@pytest.fixture(scope="session")
def shim_results() -> Dict[str, Dict[str, Any]]:
    single = [c for c in SHIM_CASES if c.processes == 1]
    return harness.run_batch(harness.python_for_modern(), "shim", single, "legacy")


_LEGACY_CACHE: Dict[str, Any] = {}


def legacy_python(version: str) -> str:
    if version not in _LEGACY_CACHE:
        try:
            _LEGACY_CACHE[version] = str(venvs.ensure(version))
        except venvs.VenvUnavailable as exc:
            _LEGACY_CACHE[version] = exc
    value = _LEGACY_CACHE[version]
    if isinstance(value, Exception):
        message = f"legacy JAX {version} environment unavailable: {value}"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    return value


@pytest.fixture(scope="session")
def legacy_results():
    batches: Dict[str, Dict[str, Dict[str, Any]]] = {}

    def get(version: str) -> Dict[str, Dict[str, Any]]:
        python = legacy_python(version)
        if version not in batches:
            single = [c for c in LEGACY_CASES if c.legacy == version and c.processes == 1]
            batches[version] = harness.run_batch(python, "legacy", single, "legacy")
        return batches[version]

    return get


def _modern(case, modern_results):
    if case.processes > 1:
        result = harness.run_multiprocess(harness.python_for_modern(), "modern", case, "modern")
    else:
        result = modern_results[case.id]
    assert result["ok"], harness.describe_failure(result, f"modern (after-file {case.after.name})")
    return result["summary"]


_MODERN_MP: Dict[str, Any] = {}


def _modern_cached(case, modern_results):
    if case.id not in _MODERN_MP:
        _MODERN_MP[case.id] = _modern(case, modern_results)
    return _MODERN_MP[case.id]


@pytest.mark.parametrize("case", CASES, ids=_ids(CASES))
def test_modern(case, modern_results):
    _modern_cached(case, modern_results)


def _compare(case, legacy, modern, label):
    diff = harness.diff_summaries(legacy, modern, label)
    assert not diff, (
        f"{case.id}: the before-file on {label} and the after-file on modern JAX "
        "behave differently\n" + diff
    )


@pytest.mark.parametrize("case", SHIM_CASES, ids=_ids(SHIM_CASES))
def test_shim(case, modern_results, shim_results):
    if case.processes > 1:
        result = harness.run_multiprocess(harness.python_for_modern(), "shim", case, "legacy")
    else:
        result = shim_results[case.id]
    assert result["ok"], harness.describe_failure(result, f"shim (before-file {case.before.name})")
    _compare(case, result["summary"], _modern_cached(case, modern_results), "the legacy shim")


@pytest.mark.legacy
@pytest.mark.parametrize("case", LEGACY_CASES, ids=_ids(LEGACY_CASES))
def test_legacy(case, modern_results, legacy_results):
    if case.processes > 1:
        result = harness.run_multiprocess(legacy_python(case.legacy), "legacy", case, "legacy")
    else:
        result = legacy_results(case.legacy)[case.id]
    assert result["ok"], (
        harness.describe_failure(result, f"jax {case.legacy} (before-file {case.before.name})")
        + f"\n(the before-file must run on real jax {case.legacy}: "
        "fix it or the driver's LEGACY constant)"
    )
    _compare(case, result["summary"], _modern_cached(case, modern_results), f"jax {case.legacy}")
