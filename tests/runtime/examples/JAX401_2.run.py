"""Doc example JAX401-2: annotated parameters and comprehension variables are devices (shim).

``live_buffers()`` returns [] on every installable JAX, so the legacy side is the shim's model of
its pre-jax.Array meaning.  The driver is imported before the module: it keeps two arrays on
device 0 and one on device 3 alive, so the module-level ``counts`` differ by device (reported
relative to device 7's count); ``count(dev)`` must then see one more array made on device 5.
"""

import jax
import jax.numpy as jnp

SHIM = True

_D = jax.local_devices()
_KEEP = [
    jax.device_put(jnp.zeros(2), _D[0]),
    jax.device_put(jnp.ones(2), _D[0]),
    jax.device_put(jnp.ones(3), _D[3]),
]


def run(module):
    base = module.counts[_D[-1].id]
    before = module.count(_D[5])
    extra = jax.device_put(jnp.arange(4.0), _D[5])
    after = module.count(_D[5])
    del extra
    return {
        "counts_relative": {str(k): v - base for k, v in sorted(module.counts.items())},
        "count_delta": after - before,
    }
