"""Whole legacy programs run unchanged after ``jaxmigrate --unsafe-fixes`` (see harness.py).

One test per program: the migration leaves exactly the findings its header records, the legacy
program runs on old JAX, the migrated one on the newest JAX with DeprecationWarnings as errors,
and both print the same.  A program the tool cannot migrate yet carries ``# xfail: <the missing
migration>`` and is a strict xfail: it turns red the day it runs unchanged (then update its
``# findings:`` line, which is only compared for programs that are expected to pass).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from tests.programs import harness

pytestmark = [pytest.mark.runtime, pytest.mark.legacy]

PROGRAMS = harness.programs()
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def _param(prog):
    marks = [pytest.mark.xfail(strict=True, reason=prog.xfail)] if prog.xfail else []
    return pytest.param(prog, id=prog.name, marks=marks)


@pytest.fixture(scope="module")
def outcome():
    with tempfile.TemporaryDirectory(prefix="jaxmigrate-programs-") as tmp:
        migrated = Path(tmp) / "migrated"
        findings = harness.migrate(PROGRAMS, migrated)
        runs = harness.run_all(PROGRAMS, migrated)
        texts = {p.name: (migrated / p.path.name).read_text() for p in PROGRAMS}
        yield findings, runs, texts


def test_suite_shape():
    assert len(PROGRAMS) >= 40
    assert sum(p.processes > 1 for p in PROGRAMS) >= 8
    for prog in PROGRAMS:
        lines = len(prog.text.splitlines())
        assert 40 <= lines <= 150, f"{prog.name}: {lines} lines"


@pytest.mark.parametrize("prog", [_param(p) for p in PROGRAMS])
def test_program(prog, outcome):
    findings, runs, texts = outcome
    legacy, modern = runs[prog.name]["legacy"], runs[prog.name]["modern"]
    if not legacy.ok and "environment unavailable" in legacy.stderr and not IN_CI:
        pytest.skip(legacy.stderr)
    assert legacy.ok, f"the legacy program fails on {prog.legacy}:\n{legacy.stderr}"
    assert legacy.stdout.strip(), "the legacy program printed nothing"
    assert modern.ok, (
        f"the migrated program fails on the newest JAX:\n{modern.stderr}"
        f"\n--- migrated ---\n{texts[prog.name]}"
    )
    assert modern.stdout == legacy.stdout, (
        f"outputs differ\n--- legacy ---\n{legacy.stdout}\n--- migrated ---\n{modern.stdout}"
    )
    if not prog.xfail:  # an xfail program's findings are recorded, but its run decides
        assert findings[prog.name] == prog.findings, "findings left after migration changed"
