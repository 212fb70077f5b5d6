# legacy: shim
# processes: 2
# findings: JAX306
"""Multi-host setup code: broadcast host 0's config and params, check every host agrees (2022)."""
import os

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import multihost_utils

jax.distributed.initialize(
    coordinator_address=os.environ["COORDINATOR_ADDRESS"],
    num_processes=int(os.environ["NUM_PROCESSES"]),
    process_id=int(os.environ["PROCESS_ID"]),
)


def host_params(seed):
    rng = np.random.RandomState(seed)
    return {"w": rng.randn(3, 2).astype(np.float32), "b": np.zeros(2, np.float32) + seed}


def checksum(tree):
    return round(float(sum(np.sum(np.asarray(x)) for x in jax.tree_leaves(tree))), 4)


def agree(tree):
    local = np.asarray([checksum(tree)], dtype=np.float32)
    everyone = multihost_utils.process_allgather(local)
    return bool(np.allclose(everyone, everyone.ravel()[0]))


def average(a, b):
    return jax.tree_multimap(lambda x, y: (np.asarray(x) + np.asarray(y)) / 2, a, b)


if __name__ == "__main__":
    mine = host_params(seed=jax.process_index())
    print("process", jax.process_index(), "own checksum", checksum(mine), "agree", agree(mine))
    shared = multihost_utils.broadcast_one_to_all(mine)
    print("after broadcast", checksum(shared), "agree", agree(shared))
    mixed = average(mine, shared)
    print("mixed", checksum(mixed))
    step = multihost_utils.broadcast_one_to_all(np.int32(100 + jax.process_index()))
    print("step", int(step))
    multihost_utils.sync_global_devices("end")
