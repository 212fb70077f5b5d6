"""Doc example JAX910-2: ``jnp.NINF`` -> ``-jnp.inf`` (before-file on jax 0.4.13)."""

LEGACY = "0.4.13"


def run(module):
    return {"floor": str(module.floor), "type": type(module.floor).__name__}
