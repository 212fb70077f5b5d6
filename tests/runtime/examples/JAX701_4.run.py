"""Doc example JAX701-4: tree_multimap renamed with its import and through ``tree_util as tree``.

Modern side only: the before-text imports tree_multimap, removed in jax 0.3.16, so it imports on
no legacy JAX this suite has.  Checked on the newest JAX: a sum and a leafwise max of two trees.
"""

import jax.numpy as jnp

from tests.runtime.summarize import summarize


def run(module):
    a = {"p": jnp.float32(0.5), "q": [2.0, jnp.int32(-3)]}
    b = {"p": jnp.float32(1.5), "q": [-5.0, jnp.int32(6)]}
    return {"add": summarize(module.add(a, b)), "biggest": summarize(module.biggest(a, b))}
