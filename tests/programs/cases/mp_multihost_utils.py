# legacy: shim
# processes: 2
# findings: JAX306
"""Converting host-local batches to global arrays and back with multihost_utils (2022-2023)."""
import os

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import multihost_utils
from jax.experimental.maps import Mesh
from jax.experimental import PartitionSpec as P

jax.distributed.initialize(
    coordinator_address=os.environ["COORDINATOR_ADDRESS"],
    num_processes=int(os.environ["NUM_PROCESSES"]),
    process_id=int(os.environ["PROCESS_ID"]),
)


def host_batch():
    pid = jax.process_index()
    return {
        "x": np.arange(8, dtype=np.float32).reshape(4, 2) + 100 * pid,
        "mask": np.ones((4,), dtype=np.float32) * (pid + 1),
    }


def to_global(batch, mesh):
    specs = {"x": P("batch"), "mask": P("batch")}
    return multihost_utils.host_local_array_to_global_array(batch, mesh, specs)


def replicated_scalar(value, mesh):
    return multihost_utils.host_local_array_to_global_array(np.asarray(value, np.float32), mesh, None)


@jax.jit
def weighted_mean(batch):
    return jnp.sum(batch["x"].sum(axis=1) * batch["mask"]) / jnp.sum(batch["mask"])


if __name__ == "__main__":
    mesh = Mesh(np.array(jax.devices()), ("batch",))
    global_batch = to_global(host_batch(), mesh)
    print("global x shape", global_batch["x"].shape)
    print("weighted mean", round(float(weighted_mean(global_batch)), 4))
    scale = replicated_scalar(2.0, mesh)
    print("scale", float(np.asarray(scale.addressable_data(0))))
    back = multihost_utils.global_array_to_host_local_array(global_batch, mesh, {"x": P("batch"), "mask": None})
    print("back x", np.asarray(back["x"]).tolist())
    print("back mask shape", np.asarray(back["mask"]).shape)
    gathered = multihost_utils.process_allgather(np.asarray([jax.process_index() * 1.5]))
    print("gathered", np.asarray(gathered).ravel().tolist())
    multihost_utils.sync_global_devices("done")
    print("synced")
