# legacy: 0.4.13
# findings: none
"""Per-device code with the experimental shard_map (2023), mesh from mesh_utils."""
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import mesh_utils
from jax.experimental.shard_map import shard_map
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

devices = mesh_utils.create_device_mesh((4, 2))
mesh = Mesh(devices, axis_names=("x", "y"))


@partial(shard_map, mesh=mesh, in_specs=(P("x", "y"), P("y", None)), out_specs=P("x", None))
def matmul_psum(a_block, b_block):
    c = a_block @ b_block
    return jax.lax.psum(c, "y")


def local_norms(x):
    f = shard_map(lambda b: jnp.sqrt(jnp.sum(b * b, keepdims=True)), mesh, in_specs=P("x", "y"), out_specs=P("x", "y"))
    return f(x)


def place(x, spec):
    return jax.device_put(x, NamedSharding(mesh, spec))


if __name__ == "__main__":
    a = place(jnp.arange(8 * 4, dtype=jnp.float32).reshape(8, 4) / 10, P("x", "y"))
    b = place(jnp.ones((4, 3), dtype=jnp.float32), P("y", None))
    c = jax.jit(matmul_psum)(a, b)
    print("c", c.shape, round(float(c.sum()), 3))
    print("matches", bool(jnp.allclose(c, a @ b)))
    norms = local_norms(a)
    print("norms", norms.shape, np.round(np.asarray(norms).ravel(), 3).tolist())
    print("c spec", tuple(c.sharding.spec))
