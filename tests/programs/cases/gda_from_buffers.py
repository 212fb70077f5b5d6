# legacy: 0.4.13
# findings: none
"""Restoring a checkpoint onto devices: per-device buffers assembled into a GDA (2022)."""
import jax
import numpy as np
from jax.experimental import maps
from jax.experimental import PartitionSpec as P
from jax.experimental.global_device_array import GlobalDeviceArray


def saved_tensor(shape):
    return np.arange(np.prod(shape), dtype=np.float32).reshape(shape) / 4.0


def index_for(mesh, shape, spec, device):
    from jax.sharding import NamedSharding

    return NamedSharding(mesh, spec).devices_indices_map(shape)[device]


def restore(mesh, shape, spec):
    full = saved_tensor(shape)
    buffers = []
    for device in mesh.local_devices:
        idx = index_for(mesh, shape, spec, device)
        buffers.append(jax.device_put(full[idx], device))
    return GlobalDeviceArray(shape, mesh, spec, buffers)


def verify(gda, shape):
    full = saved_tensor(shape)
    ok = True
    for shard in gda.local_shards:
        ok = ok and np.array_equal(np.asarray(shard.data), full[shard.index])
    return ok


def buffer_devices(gda):
    return [buf.device().id for buf in gda.device_buffers]


if __name__ == "__main__":
    mesh = maps.Mesh(np.array(jax.devices()).reshape(2, 4), ("replica", "shard"))
    for shape, spec in (((8, 4), P("replica", "shard")), ((4, 8), P(None, "shard"))):
        gda = restore(mesh, shape, spec)
        print("restored", gda.shape, tuple(gda.mesh_axes), "ok", verify(gda, shape))
        print("  devices", buffer_devices(gda))
        print("  sum", float(np.asarray(gda.local_data(0)).sum()))
