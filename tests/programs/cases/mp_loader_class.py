# legacy: shim
# processes: 2
# findings: none
"""A per-host data loader class whose batches go straight into a pjit train step (2022)."""
import os

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental.maps import Mesh
from jax.experimental.pjit import pjit, PartitionSpec

jax.distributed.initialize(
    coordinator_address=os.environ["COORDINATOR_ADDRESS"],
    num_processes=int(os.environ["NUM_PROCESSES"]),
    process_id=int(os.environ["PROCESS_ID"]),
)


class HostLoader:
    """Yields this host's share of each global batch, as NumPy."""

    def __init__(self, global_batch, dim, seed=0):
        self.per_host = global_batch // jax.process_count()
        self.dim = dim
        self.rng = np.random.RandomState(seed + jax.process_index())

    def __iter__(self):
        while True:
            x = self.rng.randint(0, 5, size=(self.per_host, self.dim)).astype(np.float32)
            y = x.sum(axis=1, keepdims=True)
            yield x, y


def train_step(params, x, y):
    def loss(p):
        return jnp.mean((x @ p["w"] + p["b"] - y) ** 2)

    value, grads = jax.value_and_grad(loss)(params)
    new = jax.tree_map(lambda p, g: p - 0.01 * g, params, grads)
    return new, value


if __name__ == "__main__":
    devices = np.array(jax.devices()).reshape(4, 2)
    mesh = Mesh(devices, ("data", "model"))
    step_fn = pjit(
        train_step,
        in_axis_resources=(None, PartitionSpec("data"), PartitionSpec("data")),
        out_axis_resources=(None, None),
    )
    params = {"w": jnp.zeros((4, 1)), "b": jnp.zeros((1,))}
    loader = iter(HostLoader(global_batch=16, dim=4))
    losses = []
    with mesh:
        for _ in range(4):
            x, y = next(loader)
            params, value = step_fn(params, x, y)
            losses.append(round(float(value), 4))
    print("process", jax.process_index(), "losses", losses)
    print("w", np.round(np.asarray(params["w"]).ravel(), 4).tolist())
    print("b", round(float(params["b"][0]), 4))
