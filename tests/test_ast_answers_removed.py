"""Answers from ``ast`` for the APIs JAX removed, where their LibCST hooks only report (issue
#29), checked against the LibCST path:

* JAX801 (``jax.device_put_sharded``/``device_put_replicated``, removed in 0.10.0) where its
  unsafe fixes are held back: the recipe where a site is no call the fix can read, the fix's
  message marked ``[unsafe fix]`` where it is (JAX 0.10's ``jax/_src/api.py`` docstrings,
  legacy pmap code);
* an import of a removed module: JAX806's report of the import left over, JAX805's and
  JAX801's answers where that import is read (the engine keeps an import the module reads),
  and JAX901's count of a removed module's uses where rules that run before it spoke on some
  of their lines (JAX 0.10's ``ffi.py`` docstring brings them all together).

Those two docstrings were the last reason a run over JAX 0.10's sources imported LibCST.
"""

from __future__ import annotations

import dataclasses

import pytest

from jaxmigrate.migrator import Settings, engine, migrate_source
from tests.test_gate_equivalence_rules import (
    OPTION_IDS,
    OPTIONS,
    answer_sizes,
    rule_answers,
    same_as_libcst,
)

HEAD = "import jax\nimport jax.numpy as jnp\n"
DEVICE_PUT_CASES = [
    # held-back fixes: positional, keyword and mixed arguments, devices from JAX's lists
    HEAD + "xs = jax.device_put_sharded([jnp.ones(3), jnp.zeros(3)], jax.devices())\n",
    HEAD + "ys = jax.device_put_replicated(jnp.ones(3), jax.local_devices())\n",
    HEAD + "ys = jax.device_put_replicated(x=params, devices=devices)\n",
    HEAD + "def f(d, p):\n    return jax.device_put_replicated(p, d.local)\n",
    HEAD + "from jax import numpy as np\nys = jax.device_put_sharded(\n    shards,\n"
    "    devices,\n)  # a comment\n",
    HEAD + "import jax as j\nys = j.device_put_sharded(shards, devices)\n",
    "from jax import device_put_sharded\nys = device_put_sharded(shards, devices)\n",
    # recipes: devices evaluated twice, a site that is no call, arguments it cannot read
    HEAD + "ys = jax.device_put_replicated(x, devices[:2])\n",
    HEAD + "ys = jax.device_put_replicated(x, my_devices())\n",
    HEAD + "put = jax.device_put_sharded\n",
    HEAD + "ys = jax.device_put_sharded(*args)\n",
    HEAD + "ys = jax.device_put_sharded(shards, devices, extra)\n",
    HEAD + "ys = jax.device_put_replicated(x, devices=d, **more)\n",
    HEAD + "ys = jax.device_put_replicated(x, x=d)\n",
    # silenced: on the call's first or last line
    HEAD + "ys = jax.device_put_sharded(s, d)  # jaxmigrate: ignore[JAX801]\n",
    HEAD + "ys = jax.device_put_replicated(\n    x, d)  # jaxmigrate: ignore\n",
    HEAD + "ys = jax.device_put_replicated(x, devices[0:1])  # jaxmigrate: ignore\n",
    # no site: a head bound two ways names nothing LibCST's analysis can tell
    HEAD + "if flag:\n    import other as jax\nys = jax.device_put_sharded(s, d)\n",
]
DEVICE_PUT_ANSWERS = [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0]
# LibCST decides: a rewrite that may spell ``leaf`` twice, an import of the name nothing reads
# (the engine may drop it), a devices call whose function the view cannot resolve, a head
# a function binds
DEVICE_PUT_UNSURE = [
    HEAD + "ys = jax.device_put_replicated(params, leaf_devices)\n",
    "from jax import device_put_sharded\nys = 1\n",
    HEAD + "def g(jax):\n    return jax\nys = jax.device_put_replicated(x, jax.local_devices())\n",
    HEAD + "def f():\n    import other as jax\n    return jax\nys = jax.device_put_sharded(s, d)\n",
]


def test_device_put_answers_from_ast():
    assert answer_sizes(DEVICE_PUT_CASES, "JAX801", Settings()) == DEVICE_PUT_ANSWERS
    answers = [rule_answers(text, Settings())["JAX801"] for text in DEVICE_PUT_CASES]
    held = [a[0].message.endswith("[unsafe fix]") for a in answers if a]
    assert held == [True] * 7 + [False] * 7, held
    assert answer_sizes(DEVICE_PUT_UNSURE, "JAX801", Settings()) == [None] * 4


def test_device_put_leaves_its_fixes_to_libcst():
    unsafe = Settings(unsafe_fixes=True)
    answers = [rule_answers(text, unsafe).get("JAX801", []) for text in DEVICE_PUT_CASES]
    assert all(answer is None for answer in answers[:7]), answers


# JAX 0.10's jax/_src/ffi.py, the example of register_custom_call_target's docstring
FFI_EXAMPLE = (
    "import ctypes\nimport jax\nfrom jax.lib import xla_client\n\n"
    "libfoo = ctypes.cdll.LoadLibrary('./foo.so')\n"
    'xla_client.register_custom_call_target(\n    name="bar",\n'
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


@pytest.mark.parametrize(
    "text", DEVICE_PUT_CASES + DEVICE_PUT_UNSURE + LEFTOVER_CASES + LEFTOVER_UNSURE
)
@pytest.mark.parametrize("options", OPTIONS, ids=OPTION_IDS)
def test_ast_first_reports_what_libcst_does(text, options):
    same_as_libcst(text, options)


def test_removed_imports_answer_from_ast():
    assert answer_sizes(LEFTOVER_CASES, "JAX806", Settings()) == LEFTOVER_ANSWERS
    unsure = answer_sizes(LEFTOVER_UNSURE, "JAX806", Settings())
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
