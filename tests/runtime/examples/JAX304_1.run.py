"""Doc example JAX304-1: from_batched_callback_with_devices -> grouped indices (shim)."""

import jax
import numpy as np
from jax.sharding import Mesh

from tests.runtime.summarize import summarize

SHIM = True


def run(module):
    mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y"))
    data = np.arange(16.0).reshape(8, 2)
    calls = []

    def put_batch(pairs):
        calls.append(
            [[[s.start, s.stop] for s in index], sorted(d.id for d in devices)]
            for index, devices in pairs
        )
        return [jax.device_put(data[index], d) for index, devices in pairs for d in devices]

    out = module.load(mesh, put_batch)
    return {"array": summarize(out), "calls": [sorted(map(str, c)) for c in calls]}
