# legacy: shim
# processes: 2
# findings: none
"""pjit with static_argnums and donate_argnums on per-host inputs (2022 multi-host script)."""
import os
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import maps
from jax.experimental.pjit import pjit
from jax.experimental import PartitionSpec as P

jax.distributed.initialize(
    coordinator_address=os.environ["COORDINATOR_ADDRESS"],
    num_processes=int(os.environ["NUM_PROCESSES"]),
    process_id=int(os.environ["PROCESS_ID"]),
)


@partial(pjit, in_axis_resources=P("data"), out_axis_resources=P("data"), static_argnums=(1,))
def normalize(x, power):
    return (x - 1.0) ** power


@partial(pjit, in_axis_resources=(None, P("data")), out_axis_resources=None, donate_argnums=(0,))
def accumulate(total, x):
    return total + jnp.sum(x, axis=0)


def host_rows(step):
    pid = jax.process_index()
    return np.full((4, 2), float(pid * 10 + step), dtype=np.float32)


if __name__ == "__main__":
    mesh = maps.Mesh(np.array(jax.devices()), ("data",))
    total = jnp.zeros((2,))
    with mesh:
        for step in range(3):
            rows = host_rows(step)
            normed = normalize(rows, 2)
            total = accumulate(total, normed)
            print("step", step, "normed local", np.asarray(normed).ravel().tolist()[:4])
    print("process", jax.process_index(), "total", np.round(np.asarray(total), 2).tolist())
