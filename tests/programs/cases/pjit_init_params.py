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


def init_fn(scale):
    embed = jnp.arange(16 * 4, dtype=jnp.float32).reshape(16, 4) % 7 - 3.0
    proj = jnp.arange(4 * 8, dtype=jnp.float32).reshape(4, 8) % 5 - 2.0
    return {"embed": embed * scale, "proj": proj * scale, "norm": jnp.ones((4,))}


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
        params = sharded_init(jnp.float32(0.02))
        out = forward(params, jnp.arange(8) % 16)
    print("params", count_params(params))
    print("distinct shards", shard_counts(params))
    print("out", out.shape, round(float(jnp.abs(out).sum()), 5))
