# legacy: 0.4.13
# findings: none
"""pjit built at import time, mesh entered later with the lower-case maps.mesh (2021-2022)."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import maps
from jax.experimental.pjit import pjit
from jax.experimental import PartitionSpec as P


def matmul(a, b):
    return jnp.dot(a, b)


sharded_matmul = pjit(matmul, in_axis_resources=(P("x", None), P(None, "y")), out_axis_resources=P("x", "y"))
scaled = pjit(lambda a: a * 3.0, in_axis_resources=P("x", "y"), out_axis_resources=P("x"))


def run(n):
    a = jnp.arange(n * n, dtype=jnp.float32).reshape(n, n) / n
    b = jnp.eye(n, dtype=jnp.float32) * 2
    devices = np.array(jax.devices()).reshape(4, 2)
    with maps.mesh(devices, ("x", "y")):
        c = sharded_matmul(a, b)
        d = scaled(c)
    return c, d


def shard_shapes(arr):
    return sorted({tuple(s.data.shape) for s in arr.addressable_shards})


if __name__ == "__main__":
    c, d = run(8)
    print("c sum", round(float(c.sum()), 3))
    print("d sum", round(float(d.sum()), 3))
    print("c shard shapes", shard_shapes(c))
    print("d shard shapes", shard_shapes(d))
    print("diag", np.round(np.diag(np.asarray(d)), 3).tolist())
    print("c spec", tuple(c.sharding.spec))
