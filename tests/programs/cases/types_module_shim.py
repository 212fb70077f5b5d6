# legacy: 0.4.13
# findings: none
"""A library's types module as 2021 code wrote it (chex 0.1.0's pytypes): a compatibility shim
for the sharded array class, and aliases of removed types used in annotations.  On today's JAX
the shim's branch names a removed class and the whole module died at import."""
from typing import Sequence, Union

import jax
import jax.numpy as jnp
import numpy as np

ArrayBatched = jax.interpreters.batching.BatchTracer
# `_ShardedDeviceArray` appears in jax 0.2.19
if hasattr(jax.interpreters.pxla, "_ShardedDeviceArray"):
    ArraySharded = jax.interpreters.pxla._ShardedDeviceArray  # pylint: disable=protected-access
else:
    ArraySharded = jax.interpreters.pxla.ShardedDeviceArray

Array = Union[ArraySharded, ArrayBatched, np.ndarray]


def total(x: Array) -> float:
    return float(jnp.sum(x))


def batched_norms(xs: Sequence[Array]) -> list:
    return [round(float(v), 4) for v in jax.vmap(jnp.linalg.norm)(jnp.stack(xs))]


def is_traced(x: Array) -> bool:
    """Whether ``x`` is a value under a transformation (a tracer) rather than a concrete array."""
    return isinstance(x, jax.core.Tracer)


def describe(tree) -> dict:
    leaves = jax.tree_util.tree_leaves(tree)
    return {
        "leaves": len(leaves),
        "sizes": [int(leaf.size) for leaf in leaves],
        "traced": [is_traced(leaf) for leaf in leaves],
    }


if __name__ == "__main__":
    print("total", total(jnp.arange(6.0)))
    print("norms", batched_norms([jnp.ones(3), 2 * jnp.ones(3)]))
    print("describe", describe({"a": jnp.ones(2), "b": (jnp.zeros(3),)}))
    print("traced under vmap", jax.vmap(lambda v: jnp.float32(is_traced(v)))(jnp.ones(2)).tolist())
