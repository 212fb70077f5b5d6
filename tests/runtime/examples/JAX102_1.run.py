"""Doc example JAX102-1: ``isinstance(y, pxla.ShardedDeviceArray)`` -> the migration guide's
predicate (shim flavour ``sda-pre-0.4.1``: SDA = the type of pmap outputs, as before jax.Array).

Values that existed before jax.Array: a single-device array, an 8-device pmap output, NumPy.
A one-device pmap output is left out: it was an SDA but the predicate says False (documented
reason the fix is unsafe; see fixtures/sharded-device-array/predicate.run.py).
"""

import numpy as np

from tests.runtime.summarize import summarize

SHIM = True
SHIM_FLAVOURS = ("sda-pre-0.4.1",)


def run(module):
    import jax
    import jax.numpy as jnp

    single = jnp.arange(4.0)
    pmapped = jax.pmap(lambda v: v * 2)(np.arange(16.0).reshape(8, 2))
    host = np.ones(3)
    return {
        "single": summarize(module.first(single)),
        "pmapped": summarize(np.asarray(module.first(pmapped))),
        "numpy": summarize(module.first(host)),
    }
