"""JAX801 (``jax.device_put_sharded``/``device_put_replicated``) answers from ``ast`` what its
LibCST hook reports where its unsafe fixes are held back: the recipe where a site is no call
the fix can read, the fix's message marked ``[unsafe fix]`` where it is.  JAX's own docstrings
(``jax/_src/api.py`` of 0.10) and legacy pmap code carry these calls with nothing else to
fix, and each such file went to LibCST's parser only to report them (issue #29).
"""

from __future__ import annotations

import pytest

from jaxmigrate.migrator import Settings
from tests.test_gate_equivalence import ast_first_difference
from tests.test_gate_equivalence_rules import OPTION_IDS, OPTIONS, rule_answers, rule_difference

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


@pytest.mark.parametrize("text", DEVICE_PUT_CASES + DEVICE_PUT_UNSURE)
@pytest.mark.parametrize("options", OPTIONS, ids=OPTION_IDS)
def test_ast_first_reports_what_libcst_does_on_device_put(text, options):
    assert ast_first_difference(text, options) is None
    assert rule_difference(text, options) is None


def test_device_put_answers_from_ast():
    answers = [rule_answers(text, Settings()).get("JAX801") for text in DEVICE_PUT_CASES]
    assert [None if a is None else len(a) for a in answers] == DEVICE_PUT_ANSWERS, answers
    held = [a[0].message.endswith("[unsafe fix]") for a in answers if a]
    assert held == [True] * 7 + [False] * 7, held
    unsure = [rule_answers(text, Settings()).get("JAX801", []) for text in DEVICE_PUT_UNSURE]
    assert unsure == [None] * len(DEVICE_PUT_UNSURE), unsure


def test_device_put_leaves_its_fixes_to_libcst():
    unsafe = Settings(unsafe_fixes=True)
    answers = [rule_answers(text, unsafe).get("JAX801", []) for text in DEVICE_PUT_CASES]
    assert all(answer is None for answer in answers[:7]), answers
