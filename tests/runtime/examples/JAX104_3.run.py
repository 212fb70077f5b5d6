"""Doc example JAX104-3: ``xla.device_put(x, device)[0]`` -> ``jax.device_put(x, device)`` (shim:
``jax.interpreters.xla.device_put`` is gone since 0.4.11; it returned a tuple of buffers)."""

import jax.numpy as jnp

from tests.runtime.summarize import summarize

SHIM = True


def run(module):
    return {"put": summarize(module.put(jnp.arange(4.0)))}
