"""Doc example JAX203-1 in 2 processes x 4 CPU devices: per-process NumPy batch ->
host_local_array_to_global_array / global_array_to_host_local_array around jax.jit.

Each process passes (8, 4) rows of its process index; the host-local result must be 2 * rows.
Modern side only: the before-text passes host-local NumPy data to ``jax.jit``; since jax.Array
(0.4.1) every installable JAX takes such inputs as global values, not host-local
rows (that meaning belonged to pre-jax.Array pjit), and the shim re-creates only pjit (jax
0.4.13 cannot even form a 2-process CPU run here: both workers report process 0).  The driver
checks the values itself.
"""

import numpy as np

from tests.runtime.summarize import summarize

PROCESSES = 2


def run(module):
    import jax
    from jax.sharding import Mesh

    mesh = Mesh(np.array(jax.devices()), ("data",))
    out = module.main(mesh, lambda b: b * 2)
    rows = np.ones((8, 4)) * jax.process_index()
    return {
        "process": jax.process_index(),
        "out": summarize(out),
        "matches": bool(np.array_equal(out, rows * 2)),
    }
