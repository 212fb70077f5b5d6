"""Doc example JAX201-2 in 2 processes x 4 CPU devices: pjit with ``None`` shardings.

Legacy side: the shim's pjit, which (like 0.3-era pjit) treats numpy inputs as host-local and
returns host-local outputs; modern side: the after-text's pjit (= jit) on global values.  Both
processes pass the same rows, so both readings must give every process the same replicated
result; the driver reports what process-local device 0 holds.
"""

import jax
import numpy as np
from jax.sharding import Mesh

from tests.runtime.summarize import summarize

SHIM = True
PROCESSES = 2
MODERN_DEPRECATIONS = (
    "jax.experimental.pjit.pjit has been deprecated",
    "`with mesh:` context manager has been deprecated",
)


def run(module):
    mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("hosts", "x"))
    rows = np.arange(12, dtype=np.float32).reshape(3, 4)
    with mesh:
        a = module.step(rows)
        b = module.g(rows * 2)
    return {
        "process": jax.process_index(),
        "processes": jax.process_count(),
        "step": summarize(np.asarray(a.addressable_data(0))),
        "g": summarize(np.asarray(b.addressable_data(0))),
        "step_replicated": bool(a.is_fully_replicated),
    }
