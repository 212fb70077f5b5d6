"""The gates only over-approximate: a run with every gate switched off (``Settings(gates=False)``:
no text prefilter, no text gate, no ``ast`` gate, every rule's ``visit_module`` in every round)
gives the same output, fixes, findings and errors as the gated run.

Checked on every fixture (inputs, outputs and look-alikes), on the runtime test programs, on
cases that once escaped a gate, and on generated programs (hypothesmith) with legacy lines
spliced in.  ``bench/gates.py`` runs the same comparison over the full bench corpora.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Iterator, List, Optional, Tuple

import hypothesmith
import pytest
from hypothesis import given, strategies as st

from jaxmigrate.migrator import MigrationError, Settings, migrate_source
from tests.fixture_support import FIXTURES, fixture_settings, property_profile

PROGRAMS = Path(__file__).resolve().parent / "programs" / "cases"
ALL_RULES = Settings(unsafe_fixes=True)


def outcome(text: str, options: Settings) -> Tuple[object, ...]:
    """Everything a run reports, comparable across runs (an error is an outcome too)."""
    try:
        result = migrate_source(text, options)
    except MigrationError as error:
        return ("error", type(error).__name__, error.message, error.line)
    return (
        result.output,
        sorted(map(repr, result.fixes)),
        sorted(map(repr, result.findings)),
        sorted(map(repr, result.errors)),
    )


def difference(text: str, options: Settings) -> Optional[str]:
    """None when the gated and the ungated run agree; else what differs."""
    gated = outcome(text, options)
    ungated = outcome(text, dataclasses.replace(options, gates=False))
    if gated == ungated:
        return None
    if gated[0] == "error" or ungated[0] == "error":
        return f"gated: {gated[:3]!r}, ungated: {ungated[:3]!r}"
    names = ("output", "fixes", "findings", "errors")
    parts = [
        f"{name}: gated {g!r} / ungated {u!r}"
        for name, g, u in zip(names, gated, ungated)
        if g != u
    ]
    return "; ".join(part[:600] for part in parts)


def _fixture_files() -> Iterator[Tuple[str, str, Settings]]:
    """Every input and look-alike, and one expected output in three (modern code: the
    time budget; ``bench/gates.py`` covers modern code at scale)."""
    outputs = 0
    for path in sorted(FIXTURES.glob("*/*.py")):
        if path.name.endswith(".run.py"):
            continue
        if path.name.endswith(".after.py"):
            outputs += 1
            if outputs % 3:
                continue
        text = path.read_text(encoding="utf-8")
        options = fixture_settings(text)
        yield str(path.relative_to(FIXTURES)), text, options


def _check(inputs: Iterator[Tuple[str, str, Settings]]) -> Tuple[int, List[str]]:
    count, offenders = 0, []
    for label, text, options in inputs:
        count += 1
        found = difference(text, options)
        if found is not None:
            offenders.append(f"{label}: {found}")
    return count, offenders


def test_gates_change_nothing_on_the_fixtures():
    # inputs, expected outputs (modern code) and look-alikes, each with its own settings
    count, offenders = _check(_fixture_files())
    assert count >= 600, "the fixtures went missing"
    assert not offenders, "gated and ungated runs differ:\n" + "\n".join(offenders)


def test_gates_change_nothing_on_the_runtime_programs():
    files = sorted(PROGRAMS.glob("*.py"))
    assert len(files) >= 20
    count, offenders = _check(
        (path.name, path.read_text(encoding="utf-8"), ALL_RULES) for path in files
    )
    assert not offenders, "gated and ungated runs differ:\n" + "\n".join(offenders)


ESCAPED = [
    # a comment ending in "." before the legacy line (the text gate misread it)
    "import jax\n# x.\nx = jax.tree_leaves(y)\n",
    # string annotations are reported by word, whatever the file imports
    'import jax.numpy as jnp\nx: "jnp.DeviceArray" = f()\n',
    'import jax\ndef f(x: "jax.numpy.DeviceArray")'
    ' -> "jax.interpreters.xla.DeviceArray":\n    return x\n',
    'from typing import List\ndef f(x: "List[DeviceArray]"):\n    pass\n',
    'def f(x: """\nShardedDeviceArray""") -> None:\n    pass\n',
    'class A:\n    x: "Optional[GlobalDeviceArray]" = None\n',
    "async def f() -> b'DeviceArray':\n    pass\n",
]


@pytest.mark.parametrize("text", ESCAPED)
def test_gates_change_nothing_on_cases_that_escaped_them(text):
    assert outcome(text, ALL_RULES)[2] or outcome(text, ALL_RULES)[0] != text, (
        "the case must need something"
    )
    assert difference(text, ALL_RULES) is None


LEGACY_LINES = [
    "import jax\n",
    "import jax.numpy as jnp\n",
    "from jax.experimental import pjit\n",
    "from jax.experimental.maps import xmap, Mesh\n",
    "x = jax.tree_map(f, y)\n",
    "leaves = jax.tree_leaves(y)  # x.\n",
    "def g(a: 'jnp.DeviceArray') -> 'DeviceArray':\n    return a.device_buffer\n",
    "y = jnp.DeviceArray\n",
    "jax.config.update('jax_array', True)\n",
    "with Mesh(devices, ('x',)):\n    pass\n",
    "z = pjit.pjit(f, in_axis_resources=None, out_axis_resources=None)\n",
    "isinstance(a, jax.xla.DeviceArray)\n",
    "b = a.to_py()\n",
]
# half the other property tests' examples: each costs two runs, the ungated one with LibCST
EXAMPLES = max(1, int(os.environ.get("JAXMIGRATE_PROPERTY_EXAMPLES", "40")) // 2)
PROFILE = property_profile(EXAMPLES)


@PROFILE
@given(hypothesmith.from_node(), st.lists(st.sampled_from(LEGACY_LINES), max_size=4), st.booleans())
def test_gates_change_nothing_on_generated_programs(program, lines, before):
    legacy = "".join(lines)
    text = legacy + program if before else program + "\n" + legacy
    assert difference(text, ALL_RULES) is None
