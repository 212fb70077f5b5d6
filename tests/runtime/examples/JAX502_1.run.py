"""Doc example JAX502-1: ``from jax.config import config`` -> ``jax.config``.

x64 is enabled at import.  ``from jax.config import config`` works on jax 0.4.13, so the
before-text runs there.
"""

import jax
import jax.numpy as jnp

LEGACY = "0.4.13"


def run(module):
    try:
        return {
            "x64": bool(jax.config.jax_enable_x64),
            "int": str(jnp.arange(2).dtype),
            "float": str(jnp.ones(2).dtype),
        }
    finally:
        jax.config.update("jax_enable_x64", False)
