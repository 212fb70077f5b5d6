# legacy: shim
# processes: 2
# findings: none
"""Multi-host evaluation: per-host batches in, host-local predictions out (2022)."""
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

N_CLASSES = 3


def load_eval_shard(process_index):
    rng = np.random.RandomState(100 + process_index)
    x = rng.randn(8, 5).astype(np.float32)
    labels = rng.randint(0, N_CLASSES, size=(8,)).astype(np.int32)
    return x, labels


def logits_fn(w, x):
    return x @ w


def accuracy(logits, labels):
    return float(np.mean(np.argmax(logits, axis=-1) == labels))


if __name__ == "__main__":
    w = jnp.asarray(np.linspace(-1.0, 1.0, 5 * N_CLASSES, dtype=np.float32).reshape(5, N_CLASSES))
    mesh = maps.Mesh(np.array(jax.devices()), ("batch",))
    eval_step = pjit(logits_fn, in_axis_resources=(None, P("batch")), out_axis_resources=P("batch"))
    with mesh:
        x, labels = load_eval_shard(jax.process_index())
        logits = eval_step(w, x)
    host_logits = np.asarray(logits)
    print("process", jax.process_index(), "logits shape", host_logits.shape)
    print("first row", np.round(host_logits[0], 4).tolist())
    print("accuracy", round(accuracy(host_logits, labels), 4))
    preds = logits.argmax(axis=-1) if hasattr(logits, "argmax") else None
    print("preds", np.asarray(preds).tolist())
