# legacy: shim
# processes: 2
# findings: none
"""Multi-host input pipeline building GlobalDeviceArrays from a per-host callback (2022)."""
import os

import jax
import numpy as np
from jax.experimental import maps
from jax.experimental import PartitionSpec as P
from jax.experimental.global_device_array import GlobalDeviceArray

jax.distributed.initialize(
    coordinator_address=os.environ["COORDINATOR_ADDRESS"],
    num_processes=int(os.environ["NUM_PROCESSES"]),
    process_id=int(os.environ["PROCESS_ID"]),
)

GLOBAL_BATCH = 16
FEATURES = 3


def global_data(step):
    base = np.arange(GLOBAL_BATCH * FEATURES, dtype=np.float32).reshape(GLOBAL_BATCH, FEATURES)
    return base + step


def make_global_batch(mesh, step):
    data = global_data(step)
    return GlobalDeviceArray.from_callback((GLOBAL_BATCH, FEATURES), mesh, P("data"), lambda idx: data[idx])


def local_rows(gda):
    rows = []
    for shard in gda.local_shards:
        rows.append((shard.index[0].start, shard.index[0].stop))
    return sorted(rows)


def local_sum(gda):
    return float(sum(np.asarray(s.data).sum() for s in gda.local_shards))


def local_devices(gda):
    return [s.device.id for s in gda.local_shards]


if __name__ == "__main__":
    mesh = maps.Mesh(np.array(jax.devices()), ("data",))
    print("process", jax.process_index(), "devices", jax.local_device_count(), "of", jax.device_count())
    for step in range(2):
        batch = make_global_batch(mesh, step)
        print("step", step, "global shape", batch.shape)
        print("  local rows", local_rows(batch))
        print("  local sum", round(local_sum(batch), 2))
        print("  local devices", local_devices(batch))
        print("  first local", np.asarray(batch.local_data(0)).tolist())
