"""An import of a removed module, answered from ``ast`` (issue #29): JAX806's report of the
import left over, JAX805's and JAX801's answers where that import is read (the engine keeps
an import the module reads), and JAX901's count of a removed module's uses where rules that
run before it spoke on some of their lines.  JAX's own ``ffi.py`` docstring, which brings all
of them together, was the one reason a run over JAX 0.10's sources imported LibCST.
"""

from __future__ import annotations

import dataclasses

import pytest

from jaxmigrate.migrator import Settings, engine, migrate_source
from tests.test_gate_equivalence import ast_first_difference
from tests.test_gate_equivalence_rules import OPTION_IDS, OPTIONS, rule_answers, rule_difference

# JAX 0.10's jax/_src/ffi.py, the example of register_custom_call_target's docstring
FFI_EXAMPLE = (
    "import ctypes\nimport jax\nfrom jax.lib import xla_client\n\n"
    "libfoo = ctypes.cdll.LoadLibrary('./foo.so')\n"
    "xla_client.register_custom_call_target(\n    name=\"bar\",\n"
    "    fn=jax.ffi.pycapsule(libfoo.bar),\n    platform=PLATFORM,\n"
    "    api_version=API_VERSION\n)\n"
)
LEFTOVER_CASES = [
    "from jax.lib import xla_client\nx = xla_client.Shape\n",
    "import jax.lib.xla_client as xc\nx = xc.Shape\n",
    "import jax\nfrom jax.lib import xla_client, xla_extension\nx = xla_client.Shape\n"
    "y = xla_extension.foo\n",
    "from jax.lib import xla_client  # jaxmigrate: ignore[JAX806]\nx = xla_client.Shape\n",
    "import os; from jax.lib import (\n    xla_client,\n)\nx = xla_client.Shape(os)\n",
    FFI_EXAMPLE,
]
LEFTOVER_ANSWERS = [1, 1, 1, 0, 1, 1]  # JAX806's findings, default target
# left to LibCST: an import nothing reads after it (the clean-up drops it), one in a function
# or under a guard, a dotted import (deleted once unused), a re-export, a name bound twice, a
# module whose members JAX806 reports, a star import
LEFTOVER_UNSURE = [
    "from jax.lib import xla_client\n",
    "x = xla_client.Shape\nfrom jax.lib import xla_client\n",
    "def f():\n    from jax.lib import xla_client\n    return xla_client.Shape\n",
    "try:\n    from jax.lib import xla_client\nexcept ImportError:\n    xla_client = None\n"
    "x = xla_client.Shape\n",
    "import jax.lib.xla_client\nx = jax.lib.xla_client.Shape\n",
    "from jax.lib import xla_client\n__all__ = ['xla_client']\nx = xla_client.Shape\n",
    "from jax.lib import xla_client\nfrom jax.lib import xla_client\nx = xla_client.Shape\n",
    "from jax.lib import xla_client\ndef f(xla_client):\n    return xla_client\n"
    "x = xla_client.Shape\n",
    "from jax.experimental.maps import Mesh\nm = Mesh(d, ('x',))\n",
    # (an unused name of the statement: the clean-up drops it from the import, a fix)
    "import jax\nfrom jax.lib import xla_client, xla_extension\nx = xla_client.Shape\n",
]


@pytest.mark.parametrize("text", LEFTOVER_CASES + LEFTOVER_UNSURE)
@pytest.mark.parametrize("options", OPTIONS, ids=OPTION_IDS)
def test_ast_first_reports_what_libcst_does_on_removed_imports(text, options):
    assert ast_first_difference(text, options) is None
    assert rule_difference(text, options) is None


def test_removed_imports_answer_from_ast():
    answers = [rule_answers(text, Settings()).get("JAX806") for text in LEFTOVER_CASES]
    assert [None if a is None else len(a) for a in answers] == LEFTOVER_ANSWERS, answers
    unsure = [rule_answers(text, Settings()).get("JAX806", []) for text in LEFTOVER_UNSURE]
    assert unsure == [None] * len(LEFTOVER_UNSURE), unsure
    capped = Settings(target_version="0.4.13", target_upper="0.4.20")  # (before the removal)
    assert rule_answers(LEFTOVER_CASES[0], capped).get("JAX806") == []


def test_ffi_example_never_reaches_libcst(monkeypatch):
    """Each of its rules answers on ``ast``; JAX901 counts ``jax.ffi``'s use but not
    ``xla_client``'s, whose lines JAX805 and JAX806 (run before it) spoke to."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("parsed with LibCST")

    since = Settings(target_version="0.4.1")  # (jax.ffi came in 0.5.0)
    expected = migrate_source(FFI_EXAMPLE, dataclasses.replace(since, ast_first=False))
    monkeypatch.setattr(engine, "_rewrite", refuse)
    found = migrate_source(FFI_EXAMPLE, since).findings
    assert found == expected.findings
    assert [(d.code, d.line) for d in found] == [("JAX806", 3), ("JAX805", 6), ("JAX901", 8)]
