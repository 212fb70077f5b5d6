"""Doc example JAX407-1: ``x.tile(reps)`` -> ``jnp.tile(x, reps)``.

Shim: arrays have the DeviceArray ``tile`` method (``jnp.tile`` with the array first).
"""

from tests.runtime.summarize import summarize

SHIM = True


def run(module):
    return {"table": summarize(module.table)}
