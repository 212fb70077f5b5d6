# legacy: 0.4.13
# findings: JAX804
"""Typed pmap utilities (2021): ShardedDeviceArray annotations, DeviceArray aliases."""
from typing import Dict, List

import jax
import jax.numpy as jnp
import numpy as np
from jax.interpreters import pxla
from jax.interpreters.pxla import ShardedDeviceArray

DeviceArray = jnp.DeviceArray
Batch = Dict[str, ShardedDeviceArray]


def shard(x: np.ndarray) -> ShardedDeviceArray:
    n = jax.local_device_count()
    return jax.pmap(lambda v: v)(x.reshape((n, -1) + x.shape[1:]))


def shard_batch(batch: Dict[str, np.ndarray]) -> Batch:
    return {k: shard(v) for k, v in batch.items()}


@jax.pmap
def step(x: DeviceArray) -> DeviceArray:
    return x.sum()


def per_device_sums(batch: Batch) -> List[float]:
    out: pxla.ShardedDeviceArray = step(batch["x"])
    return [round(float(v), 2) for v in np.asarray(out)]


def is_array(x) -> bool:
    return isinstance(x, DeviceArray)


if __name__ == "__main__":
    batch = {"x": np.arange(32, dtype=np.float32).reshape(16, 2), "y": np.ones((8,), np.float32)}
    sharded = shard_batch(batch)
    print("x sharded shape", sharded["x"].shape, "y", sharded["y"].shape)
    print("per device sums", per_device_sums(sharded))
    print("is array", is_array(sharded["x"]), is_array(np.ones(2)))
    print("n shards", len(sharded["x"].addressable_shards))
