# legacy: 0.4.13
# findings: none
"""xmap with axis_resources on a mesh (the 2021 xmap tutorial's sharded section)."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental.maps import Mesh, xmap


def layer(x, w):
    return jnp.tanh(x @ w)


def build(mesh_axis="devices"):
    return xmap(
        layer,
        in_axes=(["batch", ...], [...]),
        out_axes=["batch", ...],
        axis_resources={"batch": mesh_axis},
    )


def loss(out):
    return float(jnp.mean(out ** 2))


def row_norms(out):
    """Per-example L2 norms, rounded for printing."""
    return np.round(np.linalg.norm(np.asarray(out), axis=-1), 4).tolist()


if __name__ == "__main__":
    devices = np.array(jax.devices())
    x = jnp.arange(8 * 4, dtype=jnp.float32).reshape(8, 4) / 32.0
    w = jnp.ones((4, 2)) * 0.5
    fn = build()
    with Mesh(devices, ("devices",)):
        out = fn(x, w)
        out2 = fn(x * 2, w)
    print("out shape", out.shape)
    print("loss", round(loss(out), 5), round(loss(out2), 5))
    print("first rows", np.round(np.asarray(out[:2]), 4).tolist())
    print("sum", round(float(out.sum()), 4))
    print("row norms", row_norms(out))
