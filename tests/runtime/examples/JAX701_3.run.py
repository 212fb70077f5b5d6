"""Doc example JAX701-3: ``from jax import tree_leaves as leaves_of, tree_map`` -> the same names
from jax.tree_util (before-file on jax 0.4.13, where both are in ``jax``): the same total."""

import jax.numpy as jnp

from tests.runtime.summarize import summarize

LEGACY = "0.4.13"


def run(module):
    tree = {"a": jnp.arange(4.0), "b": [jnp.ones(4), 1.5]}
    return {"total": summarize(module.scaled_total(tree, 2.0))}
