"""Doc example JAX309-1: ``jax.host_id`` / ``jax.host_count`` -> ``jax.process_index`` /
``jax.process_count`` (before-file on jax 0.4.13): the module seeds NumPy with the process
index at import, so the next draw must match."""

import numpy as np

LEGACY = "0.4.13"


def run(module):
    return {"draw": round(float(np.random.rand()), 12)}
