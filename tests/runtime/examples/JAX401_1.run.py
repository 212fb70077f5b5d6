"""Doc example JAX401-1: ``len(jax.devices()[0].live_buffers())`` -> live arrays on that
device (shim).

``live_buffers()`` returns [] on every installable JAX, so the legacy side is the shim's model of
its pre-jax.Array meaning.  The module counts at import time and the driver is imported first:
it keeps three arrays on device 0 and one on device 1 alive, and reports the module's count
minus the arrays that were on device 0 before those were made (so unrelated arrays don't
matter).  ``count`` is left alone by the rule (untied receiver) and is not called.
"""

import jax
import jax.numpy as jnp

SHIM = True

_BEFORE = len([a for a in jax.live_arrays() if jax.devices()[0] in a.devices()])
_KEEP = [jax.device_put(jnp.arange(3.0) * i, jax.devices()[0]) for i in range(3)]
_KEEP.append(jax.device_put(jnp.ones(2), jax.devices()[1]))


def run(module):
    return {"n_minus_before": module.n - _BEFORE}
