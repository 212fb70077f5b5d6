# legacy: 0.4.13
# findings: JAX804 JAX902
"""A 2022 library's compatibility layer (flax 0.6.4 and rlax wrote these lines): options
defined through jax.config, a test of the JAX version whose branch names a removed function,
and a collective added to pmap's multi-host set.  On today's JAX each stopped the whole
package at import."""
import os

import jax
import jax.numpy as jnp
import numpy as np
from jax import config as jax_config


def define_bool_state(name, default, help):
    """The library's flags live in JAX's config, read from FLAX_<NAME> in the environment."""
    return jax_config.define_bool_state("flax_" + name, default, help)


os.environ["FLAX_USE_ORBAX"] = "true"
use_orbax = define_bool_state("use_orbax", False, "Checkpoint with orbax.")
filter_frames = define_bool_state("filter_frames", True, "Filter library frames.")

# pmax under pmap on several hosts was allowed only once listed here (rlax's mpo_ops)
jax.interpreters.pxla.multi_host_supported_collectives.add(jax.lax.pmax_p)

if tuple(map(int, jax.version.__version__.split("."))) >= (0, 3, 1):
    flatten = jax.tree_leaves
else:
    flatten = jax.tree_util.tree_flatten


def normalize(tree):
    leaves = flatten(tree)
    total = sum(float(jnp.sum(jnp.abs(leaf))) for leaf in leaves)
    return jax.tree_util.tree_map(lambda x: x / total, tree)


if __name__ == "__main__":
    print("use_orbax", jax_config.flax_use_orbax, "filter_frames", jax_config.flax_filter_frames)
    jax_config.update("flax_filter_frames", False)
    print("after update", bool(jax_config.flax_filter_frames))
    with filter_frames(True):
        print("in context", bool(jax_config.flax_filter_frames))
    with jax.default_device(jax.devices()[0]):
        out = jax.pmap(lambda v: jax.lax.pmax(v, "i"), axis_name="i")(jnp.arange(2.0))
    print("pmax", np.asarray(out).tolist())
    out = normalize({"a": jnp.arange(3.0), "b": [jnp.ones(2)]})
    rounded = {k: np.round(np.asarray(v if k == "a" else v[0]), 4) for k, v in out.items()}
    print("normalized", {k: v.tolist() for k, v in rounded.items()})
    print("leaves", len(flatten(out)))
