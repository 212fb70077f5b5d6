# legacy: 0.4.13
# findings: none
"""GlobalDeviceArray helpers from a 2022 training codebase."""
import jax
import numpy as np
from jax.experimental import maps
from jax.experimental import PartitionSpec
from jax.experimental.global_device_array import GlobalDeviceArray

GLOBAL_SHAPE = (8, 4)
DATA = np.arange(32, dtype=np.float32).reshape(GLOBAL_SHAPE)


def make_mesh():
    devices = np.array(jax.devices()).reshape(4, 2)
    return maps.Mesh(devices, ("data", "model"))


def make_gda(mesh, spec):
    return GlobalDeviceArray.from_callback(GLOBAL_SHAPE, mesh, spec, lambda idx: DATA[idx])


def shard_report(gda):
    rows = []
    for shard in gda.local_shards:
        rows.append((shard.device.id, shard.index, float(shard.data.sum())))
    return rows


def first_local(gda):
    return np.asarray(gda.local_data(0))


def devices_of(gda):
    return sorted(s.data.device().id for s in gda.local_shards)


def spec_of(gda):
    return tuple(gda.mesh_axes)


if __name__ == "__main__":
    mesh = make_mesh()
    for spec in (PartitionSpec("data", "model"), PartitionSpec("data", None), PartitionSpec()):
        arr = make_gda(mesh, spec)
        print("spec", spec_of(arr), "mesh axes", arr.mesh.axis_names)
        for dev, index, total in shard_report(arr):
            print("  dev", dev, "index", [(s.start, s.stop) for s in index], "sum", total)
        print("  first local", first_local(arr).tolist())
        print("  devices", devices_of(arr))
