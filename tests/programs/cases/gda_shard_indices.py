# legacy: 0.4.13
# findings: none
"""Planning which host reads which slice of a file, with the GDA module's helpers (2022)."""
from typing import Dict, List

import jax
import numpy as np
from jax.experimental import global_device_array
from jax.experimental import maps
from jax.experimental import PartitionSpec
from jax.experimental.global_device_array import Shard

SHAPE = (16, 6)


def read_plan(mesh, spec) -> Dict[int, tuple]:
    indices = global_device_array.get_shard_indices(SHAPE, mesh, spec)
    plan = {}
    for device, index in indices.items():
        plan[device.id] = tuple((s.start, s.stop) for s in index)
    return plan


def unique_reads(mesh, spec) -> int:
    return len(set(read_plan(mesh, spec).values()))


def shard_sizes(shards: List[Shard]) -> List[int]:
    return [int(np.prod(s.data.shape)) for s in shards]


def build(mesh, spec):
    data = np.arange(np.prod(SHAPE), dtype=np.float32).reshape(SHAPE)
    gda = global_device_array.GlobalDeviceArray.from_callback(SHAPE, mesh, spec, lambda i: data[i])
    return gda


if __name__ == "__main__":
    mesh = maps.Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y"))
    for spec in (PartitionSpec("x", "y"), PartitionSpec("x"), PartitionSpec(None, "y")):
        plan = read_plan(mesh, spec)
        print(tuple(spec), "device 0 reads", plan[0], "device 7 reads", plan[7])
        print("  unique reads", unique_reads(mesh, spec))
    gda = build(mesh, PartitionSpec("x", "y"))
    print("shard sizes", shard_sizes(gda.local_shards))
    print("total", float(np.asarray(gda.local_data(3)).sum()))
