# legacy: shim
# processes: 2
# findings: none
"""Multi-host data-parallel training: every process feeds its own rows to pjit (2022)."""
import os

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

ROWS_PER_PROCESS = 8


def load_batch(process_index, step):
    start = process_index * ROWS_PER_PROCESS + step
    x = np.arange(start, start + ROWS_PER_PROCESS * 2, dtype=np.float32).reshape(ROWS_PER_PROCESS, 2)
    return x / 10.0


def predict(w, x):
    return jnp.tanh(x @ w)


def loss_and_update(w, x):
    def loss(w):
        return jnp.mean(predict(w, x) ** 2)

    l, g = jax.value_and_grad(loss)(w)
    return w - 0.5 * g, l


mesh = maps.Mesh(np.array(jax.devices()), ("data",))
update = pjit(loss_and_update, in_axis_resources=(None, P("data")), out_axis_resources=(None, None))
forward = pjit(predict, in_axis_resources=(None, P("data")), out_axis_resources=P("data"))

if __name__ == "__main__":
    w = jnp.ones((2, 3)) * 0.1
    with mesh:
        for step in range(3):
            batch = load_batch(jax.process_index(), step)
            w, l = update(w, batch)
            print("step", step, "loss", round(float(l), 5))
        preds = forward(w, load_batch(jax.process_index(), 0))
    local = np.asarray(preds)
    print("process", jax.process_index(), "of", jax.process_count())
    print("local preds shape", local.shape, "sum", round(float(local.sum()), 4))
    print("w", np.round(np.asarray(w), 4).tolist())
