# legacy: shim
# processes: 2
# findings: none
"""Saving a sharded model on a multi-host job: replicate with pjit, write on host 0 (2022)."""
import io
import os

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import maps, multihost_utils
from jax.experimental import PartitionSpec as P
from jax.experimental.global_device_array import GlobalDeviceArray
from jax.experimental.pjit import pjit, FROM_GDA

jax.distributed.initialize(
    coordinator_address=os.environ["COORDINATOR_ADDRESS"],
    num_processes=int(os.environ["NUM_PROCESSES"]),
    process_id=int(os.environ["PROCESS_ID"]),
)


def make_param(mesh, shape, spec, scale):
    full = np.arange(np.prod(shape), dtype=np.float32).reshape(shape) * scale
    return GlobalDeviceArray.from_callback(shape, mesh, spec, lambda idx: full[idx])


def gather_tree(tree, mesh):
    replicate = pjit(lambda t: t, in_axis_resources=FROM_GDA, out_axis_resources=None)
    with mesh:
        full = replicate(tree)
    return jax.tree_map(np.asarray, full)


def save(tree):
    buffer = io.BytesIO()
    flat, _ = jax.tree_flatten(tree)
    np.savez(buffer, *flat)
    return len(flat), buffer.getbuffer().nbytes > 0


def checksum(tree):
    return round(float(sum(np.sum(l) for l in jax.tree_leaves(tree))), 3)


if __name__ == "__main__":
    mesh = maps.Mesh(np.array(jax.devices()).reshape(2, 4), ("data", "model"))
    params = {
        "embed": make_param(mesh, (8, 4), P("data", "model"), 0.5),
        "head": make_param(mesh, (4, 2), P("model", None), 1.0),
    }
    host = gather_tree(params, mesh)
    print("process", jax.process_index(), "shapes", {k: v.shape for k, v in sorted(host.items())})
    print("checksum", checksum(host))
    if jax.process_index() == 0:
        print("saved", save(host))
    multihost_utils.sync_global_devices("checkpoint")
    print("local embed shards", sorted(s.device.id for s in params["embed"].local_shards))
