# legacy: 0.4.13
# findings: none
"""Sharded parameter initialisation with pjit (2022: init under the mesh, out_axis_resources)."""
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import maps
from jax.experimental import PartitionSpec as P
from jax.experimental.pjit import pjit

SPECS = {"embed": P("model", None), "proj": P(None, "model"), "norm": None}


def init_fn(rng):
    k1, k2 = jax.random.split(rng)
    return {
        "embed": jax.random.normal(k1, (16, 4)) * 0.02,
        "proj": jax.random.normal(k2, (4, 8)) * 0.02,
        "norm": jnp.ones((4,)),
    }


def apply_fn(params, ids):
    h = params["embed"][ids] * params["norm"]
    return h @ params["proj"]


def count_params(params):
    return sum(int(np.prod(p.shape)) for p in jax.tree_leaves(params))


def shard_counts(params):
    return {k: len({str(s.index) for s in v.addressable_shards}) for k, v in sorted(params.items())}


if __name__ == "__main__":
    mesh = maps.Mesh(np.array(jax.devices()).reshape(2, 4), ("data", "model"))
    sharded_init = pjit(init_fn, in_axis_resources=None, out_axis_resources=SPECS)
    forward = pjit(apply_fn, in_axis_resources=(SPECS, P("data")), out_axis_resources=P("data", "model"))
    with mesh:
        params = sharded_init(jax.random.PRNGKey(0))
        out = forward(params, jnp.arange(8) % 16)
    print("params", count_params(params))
    print("distinct shards", shard_counts(params))
    print("out", out.shape, round(float(jnp.abs(out).sum()), 5))
