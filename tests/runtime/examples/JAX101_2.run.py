"""Doc example JAX101-2: isinstance tuples collapse (shim: xla.DeviceArray is gone everywhere)."""

import jax
import jax.numpy as jnp
import numpy as np

SHIM = True


def run(module):
    traced = []

    @jax.jit
    def inside(v):
        traced.append(module.f(v))
        return v

    inside(jnp.ones(2))
    return {
        "jax": module.f(jnp.ones(2)),
        "numpy": module.f(np.ones(2)),
        "int": module.f(1),
        "tracer": traced,
    }
