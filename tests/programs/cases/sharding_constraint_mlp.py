# legacy: 0.4.13
# findings: none
"""Two-layer MLP with pjit and with_sharding_constraint (early 2022 model-parallel code)."""
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import PartitionSpec
from jax.experimental.maps import Mesh
from jax.experimental.pjit import pjit, with_sharding_constraint

devices = np.asarray(jax.devices()).reshape(2, 4)
mesh = Mesh(devices, ("dp", "mp"))


def mlp(params, x):
    h = jnp.dot(x, params["w1"])
    h = with_sharding_constraint(h, PartitionSpec("dp", "mp"))
    h = jax.nn.relu(h)
    out = jnp.dot(h, params["w2"])
    return with_sharding_constraint(out, PartitionSpec("dp", None))


@functools.partial(
    pjit,
    in_axis_resources=({"w1": PartitionSpec(None, "mp"), "w2": PartitionSpec("mp", None)}, PartitionSpec("dp")),
    out_axis_resources=PartitionSpec("dp", None),
)
def forward(params, x):
    return mlp(params, x)


def make_params(din, dh, dout):
    rng = np.random.RandomState(1)
    return {
        "w1": jnp.asarray(rng.randn(din, dh).astype(np.float32) / 4),
        "w2": jnp.asarray(rng.randn(dh, dout).astype(np.float32) / 4),
    }


if __name__ == "__main__":
    params = make_params(6, 8, 3)
    x = jnp.arange(8 * 6, dtype=jnp.float32).reshape(8, 6) / 10.0
    with mesh:
        y = forward(params, x)
        y2 = forward(params, x * 2)
    print("y shape", y.shape, "sum", round(float(y.sum()), 3))
    print("y2 sum", round(float(y2.sum()), 3))
    print("row0", np.round(np.asarray(y[0]), 3).tolist())
    print("spec", tuple(y.sharding.spec))
