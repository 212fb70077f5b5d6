"""Doc example JAX101-1: ``from jax.interpreters.xla import DeviceArray`` -> jax.Array (shim)."""

import jax.numpy as jnp
import numpy as np

SHIM = True


def run(module):
    return {
        "jax": module.is_arr(jnp.ones(2)),
        "numpy": module.is_arr(np.ones(2)),
        "int": module.is_arr(1),
    }
