# legacy: shim
# findings: none
"""A 2021 test utility that checks a training step for leaked device buffers: per-device
counts of `Device.live_buffers()` before and after the step.  The counters take a device (or
a list of them) with no annotation, and every call in the module passes one: jax.devices(), a
slice of local_devices(), or the devices of an array.  Since jax.Array the method returns []
on every JAX, so the check passed whatever leaked; the shim gives it its old meaning."""
import gc

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

CACHE = []


def live_count(device):
    return len(device.live_buffers())


def snapshot(devices):
    return [live_count(d) for d in devices]


def leaked_by(step, *args):
    gc.collect()
    before = snapshot(jax.devices())
    out = step(*args)
    jax.block_until_ready(out)
    del out
    gc.collect()
    return [b - a for a, b in zip(before, snapshot(jax.devices()))]


def on_home_device(values):
    x = jnp.asarray(values)
    return [live_count(d) - 1 for d in x.devices()]


def first_half():
    return snapshot(jax.local_devices()[:4])


def clean_step(w, x):
    return jnp.tanh(x @ w).sum()


def leaky_step(w, x):
    CACHE.append(jax.device_put(x * 2.0, jax.devices()[3]))
    return jnp.tanh(x @ w).sum()


def sharded_step(w, x):
    mesh = Mesh(np.array(jax.devices()), ("data",))
    CACHE.append(jax.device_put(x, NamedSharding(mesh, PartitionSpec("data"))))
    return (x @ w).sum()


if __name__ == "__main__":
    w = jnp.ones((4, 2))
    x = jnp.arange(32.0).reshape(8, 4)
    print("clean", leaked_by(clean_step, w, x))
    print("leaky", leaked_by(leaky_step, w, x))
    print("sharded", leaked_by(sharded_step, w, x))
    print("on home device", on_home_device([1.0, 2.0]))
    gc.collect()
    start = first_half()
    CACHE.append(jax.device_put(jnp.zeros(3), jax.devices()[1]))
    print("first half delta", [b - a for a, b in zip(start, first_half())])
    CACHE.clear()
    print("after clear", leaked_by(clean_step, w, x))
