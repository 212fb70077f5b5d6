# legacy: 0.4.13
# findings: JAX804
"""Inspect where pmap put each replica (a 2021 debugging script)."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.interpreters.pxla import ShardedDeviceArray


def replicate_and_scale(x):
    return jax.pmap(lambda v: v * 2.0 + jax.lax.axis_index("i"), axis_name="i")(x)


def placement(arr: ShardedDeviceArray):
    """Device id of every buffer, in order."""
    return [buf.device().id for buf in arr.device_buffers]


def buffer_values(arr):
    out = []
    for buf in arr.device_buffers:
        out.append(round(float(jnp.sum(buf)), 3))
    return out


def check_one_device(buf):
    dev = buf.device()
    assert dev.platform == "cpu", dev
    return dev.id


def describe(arr):
    first = arr.device_buffers[0]
    return {
        "n_buffers": len(arr.device_buffers),
        "first_device": check_one_device(first),
        "shape": tuple(first.shape),
    }


if __name__ == "__main__":
    n = jax.local_device_count()
    x = jnp.arange(n * 3, dtype=jnp.float32).reshape(n, 3)
    y = replicate_and_scale(x)
    print("placement", placement(y))
    print("values", buffer_values(y))
    print("describe", describe(y))
    ids = {check_one_device(b) for b in y.device_buffers}
    print("distinct devices", len(ids))
    total = sum(np.asarray(b).sum() for b in y.device_buffers)
    print("total", round(float(total), 3))
