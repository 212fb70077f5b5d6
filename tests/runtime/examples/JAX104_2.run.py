"""Doc example JAX104-2: ``from jax import xla`` -> ``from jax.interpreters import xla``.

``jax.xla`` still exists (deprecated alias) on real jax 0.4.13, and in the shim: ``handlers``
must be the very object of ``jax.interpreters.xla`` on both sides.
"""

import numpy as np

LEGACY = "0.4.13"
SHIM = True


def run(module):
    import jax.interpreters.xla as xla

    return {
        "same_object": module.handlers is xla.canonicalize_dtype_handlers,
        "ndarray_handler": callable(module.handlers[np.ndarray]),
    }
