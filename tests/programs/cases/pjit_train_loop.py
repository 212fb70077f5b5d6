# legacy: 0.4.13
# findings: none
"""Data-parallel linear regression with pjit (2022 style: maps.Mesh, in_axis_resources)."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import maps
from jax.experimental.pjit import pjit, PartitionSpec as P

mesh = maps.Mesh(np.array(jax.devices()).reshape(4, 2), ("data", "model"))


def init_params(seed, din, dout):
    rng = np.random.RandomState(seed)
    return {"w": jnp.asarray(rng.randn(din, dout).astype(np.float32)) * 0.1, "b": jnp.zeros((dout,))}


def loss_fn(params, x, y):
    pred = x @ params["w"] + params["b"]
    return jnp.mean((pred - y) ** 2)


def sgd_step(params, x, y):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    params = jax.tree_map(lambda p, g: p - 0.1 * g, params, grads)
    return params, loss


param_spec = {"w": P(None, "model"), "b": P("model")}
train_step = pjit(
    sgd_step,
    in_axis_resources=(param_spec, P("data", None), P("data", None)),
    out_axis_resources=(param_spec, None),
)


def batches(n, din, dout):
    rng = np.random.RandomState(0)
    true_w = rng.randn(din, dout).astype(np.float32)
    for _ in range(n):
        x = rng.randn(16, din).astype(np.float32)
        yield x, x @ true_w


def is_device_array(x):
    return isinstance(x, jnp.DeviceArray)


if __name__ == "__main__":
    params = init_params(0, 8, 4)
    with mesh:
        for step, (x, y) in enumerate(batches(5, 8, 4)):
            params, loss = train_step(params, x, y)
            print("step", step, "loss", round(float(loss), 4))
    leaves = jax.tree_leaves(params)
    print("leaves are arrays:", [is_device_array(l) for l in leaves])
    print("w sum", round(float(params["w"].sum()), 4))
    print("w sharding spec", tuple(params["w"].sharding.spec))
