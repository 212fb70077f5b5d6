"""Doc example JAX502-2: ``import jax.config; jax.config.config.update(...)`` ->
``jax.config.update``.

Modern side only: ``jax.config.config`` is a jax 0.2/0.3 spelling; on jax 0.4.13 (the oldest
installable JAX) ``jax.config`` is already the Config object, so the before-text raises
AttributeError there.  The after-text enables debug_nans at import: the flag reads True and a
NaN-producing jitted computation raises FloatingPointError.
"""

import jax
import jax.numpy as jnp


def run(module):
    try:
        flag = bool(jax.config.jax_debug_nans)
        try:
            jax.jit(lambda v: jnp.log(v))(jnp.array(-1.0)).block_until_ready()
            raised = None
        except FloatingPointError as exc:
            raised = type(exc).__name__
        return {"debug_nans": flag, "raised": raised}
    finally:
        jax.config.update("jax_debug_nans", False)
