"""The runtime proof has teeth: behaviour-changing rewrites of after-files must be caught.

Each mutation edits a *copy* of a fixture's after-file (e.g. drops ``tiled=True`` or
``make_mesh``'s ``axis_types``) and checks that the modern side then fails or that its summary
differs from the legacy side's.  The fixture files themselves are never touched.
"""

from __future__ import annotations

import dataclasses
import sys
from typing import Callable, Dict, Optional, Tuple

import pytest

from tests.runtime import harness
from tests.runtime.test_runtime import legacy_python

pytestmark = pytest.mark.runtime

MUTATIONS: Dict[str, Tuple[str, Callable[[str], str]]] = {
    # pjit out_shardings P("data") -> None: the result comes back replicated, not row-sharded.
    "pjit-out-replicated": (
        "pjit-axis-resources/keywords",
        lambda t: t.replace('out_shardings=P("data")', "out_shardings=None", 1),
    ),
    # process_allgather without tiled=True: (8,) became (1, 8) in single-process runs (0.5.0).
    "allgather-untiled": (
        "process-allgather-tiled/single_process",
        lambda t: t.replace("tiled=True", "tiled=False"),
    ),
    # make_mesh without axis_types: Explicit axes since 0.9.0, the sharded matmul raises.
    "make-mesh-explicit": (
        "make-mesh/runtime",
        lambda t: t.replace(", axis_types=(jax.sharding.AxisType.Auto,) * 2)", ")").replace(
            ", axis_types=(jax.sharding.AxisType.Auto,))", ")"
        ),
    ),
}


def _case(case_id: str) -> Optional[harness.Case]:
    for case in harness.fixture_cases():
        if case.id == case_id:
            return case
    return None


def _params():
    params = []
    for name, (case_id, _) in MUTATIONS.items():
        case = _case(case_id)
        marks = [pytest.mark.legacy] if case is not None and case.legacy and not case.shim else []
        params.append(pytest.param(name, marks=marks, id=name))
    return params


@pytest.mark.parametrize("name", _params())
def test_behaviour_changing_rewrite_is_caught(name, tmp_path):
    case_id, mutate = MUTATIONS[name]
    case = _case(case_id)
    if case is None:
        pytest.skip(f"fixture {case_id} has no runtime driver")
    original = case.after.read_text()
    mutated = mutate(original)
    if mutated == original:
        pytest.skip(f"mutation {name} does not apply to {case.after}")
    if case.shim:  # cheaper than an old-JAX environment, and runs in the fast loop
        python, mode, label = sys.executable, "shim", "the legacy shim"
    elif case.legacy:
        python, mode, label = legacy_python(case.legacy), "legacy", f"jax {case.legacy}"
    else:
        pytest.skip(f"{case_id} has no legacy side")
    copy = tmp_path / case.after.name
    copy.write_text(mutated)
    mutant = dataclasses.replace(case, after=copy)
    modern = harness.run_batch(sys.executable, "modern", [mutant], "modern")[case.id]
    legacy = harness.run_batch(python, mode, [case], "legacy")[case.id]
    assert legacy["ok"], harness.describe_failure(legacy, label)
    if modern["ok"]:
        diff = harness.diff_summaries(legacy["summary"], modern["summary"], label)
        assert diff, f"mutation {name} of {case_id} was NOT detected: summaries are equal"
