# legacy: 0.4.13
# findings: JAX804
"""Replicate a parameter dict across devices and run a pmapped update (2021 style)."""
import jax
import jax.numpy as jnp
import numpy as np


def init(seed):
    rng = np.random.RandomState(seed)
    return {
        "dense": {"kernel": jnp.asarray(rng.randn(3, 2).astype(np.float32)), "bias": jnp.zeros(2)},
        "scale": jnp.asarray(rng.uniform(), dtype=jnp.float32),
    }


def loss(params, x):
    h = x @ params["dense"]["kernel"] + params["dense"]["bias"]
    return jnp.mean(h ** 2) * params["scale"]


@jax.pmap
def update(params, x):
    g = jax.grad(loss)(params, x)
    return jax.tree_multimap(lambda p, d: p - 0.05 * d, params, g)


def shard_batch(batch, devices):
    per_device = np.split(batch, len(devices))
    return jax.device_put_sharded([jnp.asarray(b) for b in per_device], devices)


def shard_tree(trees, devices):
    return jax.device_put_sharded(trees, devices)


def unreplicate(tree):
    return jax.tree_map(lambda x: x[0], tree)


if __name__ == "__main__":
    devices = jax.local_devices()
    params = init(42)
    replicated = jax.device_put_replicated(params, devices)
    print("replicated kernel shape", replicated["dense"]["kernel"].shape)
    batch = np.linspace(-1, 1, len(devices) * 4 * 3, dtype=np.float32).reshape(len(devices) * 4, 3)
    for step in range(3):
        replicated = update(replicated, shard_batch(batch, devices))
    final = unreplicate(replicated)
    print("kernel", np.round(np.asarray(final["dense"]["kernel"]), 4).tolist())
    print("scale", round(float(final["scale"]), 4))
    per_dev = shard_tree([{"a": jnp.full(2, i), "b": jnp.ones(1) * i} for i in range(len(devices))], devices)
    print("per-device tree", np.asarray(per_dev["a"]).sum(), per_dev["b"].shape)
