"""Runtime driver for JAX904 example 2: isinstance through jax.random.KeyArray (unsafe fix).

LEGACY 0.4.13.  Compared: the check on a raw uint32 key and on a plain array (False on both
sides: neither is a typed key).
"""

LEGACY = "0.4.13"


def run(module):
    import jax
    import jax.numpy as jnp

    return {"raw_key": module.is_key(jax.random.PRNGKey(0)), "array": module.is_key(jnp.ones(2))}
