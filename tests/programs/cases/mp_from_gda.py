# legacy: shim
# processes: 2
# findings: none
"""pjit over GlobalDeviceArray inputs with FROM_GDA, multi-host (mid 2022)."""
import os

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import maps
from jax.experimental import PartitionSpec as P
from jax.experimental.global_device_array import GlobalDeviceArray
from jax.experimental.pjit import pjit, FROM_GDA

jax.distributed.initialize(
    coordinator_address=os.environ["COORDINATOR_ADDRESS"],
    num_processes=int(os.environ["NUM_PROCESSES"]),
    process_id=int(os.environ["PROCESS_ID"]),
)

SHAPE = (8, 4)


def build(mesh, spec, offset):
    data = np.arange(np.prod(SHAPE), dtype=np.float32).reshape(SHAPE) + offset
    return GlobalDeviceArray.from_callback(SHAPE, mesh, spec, lambda index: data[index])


def combine(a, b):
    return a * 2 + b, jnp.sum(a * b)


def shard_sums(arr):
    return sorted(round(float(np.asarray(s.data).sum()), 1) for s in arr.addressable_shards)


if __name__ == "__main__":
    mesh = maps.Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y"))
    a = build(mesh, P("x", "y"), 0)
    b = build(mesh, P("x", None), 100)
    fn = pjit(combine, in_axis_resources=FROM_GDA, out_axis_resources=(P("x", "y"), None))
    with mesh:
        out, dot = fn(a, b)
    print("process", jax.process_index())
    print("out shape", out.shape, "spec", tuple(out.sharding.spec))
    print("dot", round(float(np.asarray(dot.addressable_data(0))), 2))
    print("out shard sums", shard_sums(out))
    print("a local shards", len(a.local_shards), "b local shards", len(b.local_shards))
