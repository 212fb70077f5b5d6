"""Doc example JAX303-1: GDA.from_batched_callback -> index map + one batched call (shim)."""

import jax
import numpy as np
from jax.sharding import Mesh

from tests.runtime.summarize import summarize

SHIM = True


def run(module):
    mesh = Mesh(np.array(jax.devices()[::-1]), ("x",))  # device order differs from id order
    data = np.arange(16.0).reshape(8, 2)
    calls = []

    def read_batch(indices):
        calls.append([[s.start, s.stop] for s in (i[0] for i in indices)])
        return [data[i] for i in indices]

    out = module.load(mesh, read_batch)
    return {"array": summarize(out), "calls": calls}
