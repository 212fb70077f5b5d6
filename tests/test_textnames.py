"""Gate 1b's reading of qualified JAX names from the text (:mod:`migrator.textnames`) must
say "yes" wherever gate 2 resolves one of the names, or an import under one of the modules."""

from __future__ import annotations

import random
from pathlib import Path
from typing import FrozenSet, Iterator, List, Tuple

import pytest

from jaxmigrate.migrator.astfacts import ast_facts
from jaxmigrate.migrator.textnames import prefixes_of, resolves
from tests.fixture_support import FIXTURES

PROGRAMS = Path(__file__).resolve().parent / "programs" / "cases"


def _resolves(text: str, names: FrozenSet[str], modules: FrozenSet[str] = frozenset()) -> bool:
    return resolves(text, names, modules, prefixes_of(names))


CASES = [
    # imports: the name itself, a name under it, a module an import sits under
    ("import jax.experimental.maps\n", {"jax.experimental.maps"}, True),
    ("from jax.experimental.maps import Mesh\n", {"jax.experimental.maps.Mesh"}, True),
    ("from jax.experimental import maps as m\n", {"jax.experimental.maps"}, True),
    ("from jax.experimental.maps import Mesh\n", {"jax.experimental.maps"}, True),
    (
        "from jax.experimental import (\n  pjit,  # it's\n  maps,\n)\n",
        {"jax.experimental.maps"},
        True,
    ),
    ("from jax.experimental import pjit\n", {"jax.experimental.maps"}, False),
    ("from . import maps\n", {"jax.experimental.maps"}, False),
    ("from .jax.experimental import maps\n", {"jax.experimental.maps"}, False),
    # chains on a name an import binds, however they are written
    ("import jax\njax.tree_map(f, x)\n", {"jax.tree_map"}, True),
    ("import jax.numpy as jnp\njnp.DeviceArray\n", {"jax.numpy.DeviceArray"}, True),
    ("from jax import numpy as np\nnp.DeviceArray\n", {"jax.numpy.DeviceArray"}, True),
    ("import jax\nx = (jax\n  .tree_map)\n", {"jax.tree_map"}, True),
    ("import jax\nx = jax . tree_map\n", {"jax.tree_map"}, True),
    ("import jax\nx = jax.\\\n  tree_map\n", {"jax.tree_map"}, True),
    ("import jax\nx = (jax  # it's\n  .tree_map)\n", {"jax.tree_map"}, True),
    ("import jax\r\njax.tree_map(f, x)\r\n", {"jax.tree_map"}, True),
    ("import jax\ny = jax.tree_map.__doc__\n", {"jax.tree_map"}, True),  # under a name
    ("import jax\ndef f():\n    import jax.numpy as jnp\n    jnp.x\n", {"jax.numpy.x"}, True),
    # what gate 2 does not resolve
    ("jax.tree_map(f, x)\n", {"jax.tree_map"}, False),  # no import binds the head
    ("import numpy as jnp\njnp.DeviceArray\n", {"jax.numpy.DeviceArray"}, False),
    ("import jax\nx.jax_tree_map\n", {"jax.tree_map"}, False),
    ("import jax\njax.tree_util.tree_map(f, x)\n", {"jax.tree_map"}, False),
    ("from jax._src import core\ncore.Primitive\n", {"jax.core.Primitive"}, False),
    ("import jax\njax.numpy.ones(3)\n", {"jax.numpy.DeviceArray"}, False),
    ("from jax.experimental.maps import *\n", {"jax.experimental.maps"}, True),
    ("from jax.experimental.maps import *\n", {"jax.experimental.maps.Mesh"}, False),
    ("from jax.experimental import *\n", {"jax.experimental.maps"}, False),
    ("from .maps import *\n", {"jax.experimental.maps"}, False),
    # the text cannot tell the module of these ``from`` imports: kept
    ("import jax\nx = 'from'  # import z\n", {"jax.zzz"}, True),
    ("import jax\nx = 'from'  # import *\n", {"jax.zzz"}, True),
]


@pytest.mark.parametrize("text, names, expected", CASES)
def test_resolves(text: str, names: set, expected: bool) -> None:
    assert _resolves(text, frozenset(names)) is expected


def test_an_import_under_a_module_resolves() -> None:
    text = "import jax.experimental.host_callback.id_tap\n"
    assert _resolves(text, frozenset(), frozenset({"jax.experimental.host_callback"}))
    assert not _resolves(text, frozenset(), frozenset({"jax.experimental.pjit"}))


def _texts() -> Iterator[Tuple[str, str]]:
    for path in sorted(FIXTURES.glob("*/*.py")):
        if not path.name.endswith(".run.py"):
            yield str(path.relative_to(FIXTURES)), path.read_text(encoding="utf-8")
    for path in sorted(PROGRAMS.glob("*.py")):
        yield path.name, path.read_text(encoding="utf-8")


def _jax(qualname: str) -> bool:
    return qualname.split(".", 1)[0] in ("jax", "jaxlib")


def _misses(label: str, text: str, limit: int = 0) -> List[str]:
    """Each JAX name gate 2 resolves in ``text`` (and each JAX import, as a module), asked
    alone: those the text's reading says no to.  ``limit``: at most this many of each, drawn
    at random (0: all)."""
    facts = ast_facts(text)
    if facts is None:
        return []
    names = sorted(q for q in facts.names if _jax(q) and not q.endswith(".*"))
    # (``from M import *`` gives ``M.*``, under the module M)
    imports = sorted(q[:-2] if q.endswith(".*") else q for q in facts.imports if _jax(q))
    if limit:
        pick = random.Random(label)
        names = pick.sample(names, min(limit, len(names)))
        imports = pick.sample(imports, min(limit, len(imports)))
    missed = [f"{label}: {q}" for q in names if not _resolves(text, frozenset({q}))]
    return missed + [
        f"{label}: import {q}" for q in imports if not _resolves(text, frozenset(), frozenset({q}))
    ]


def test_every_name_gate_2_resolves_on_the_fixtures_and_programs() -> None:
    missed: List[str] = []
    checked = 0
    for label, text in _texts():
        facts = ast_facts(text)
        checked += 0 if facts is None else sum(_jax(q) for q in facts.names)
        missed += _misses(label, text)
    assert checked > 1000, "the fixtures hardly name JAX"
    assert not missed, "\n".join(missed)


def test_every_name_gate_2_resolves_in_the_installed_jax_sources() -> None:
    """Real code no one here wrote: a sample of each module's names and imports."""
    import jax

    root = Path(jax.__file__).parent
    missed: List[str] = []
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
        missed += _misses(str(path.relative_to(root)), text, limit=8)
    assert not missed, "\n".join(missed[:50])
