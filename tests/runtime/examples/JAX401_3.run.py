"""Doc example JAX401-3: a parameter is a device because every call passes one (shim).

``live_buffers()`` returns [] on every installable JAX, so the legacy side is the shim's model of
its pre-jax.Array meaning.  ``snapshot`` must see two more arrays made on device 2 and one on
device 6, and nothing new elsewhere (deltas, so earlier arrays don't matter).
"""

import jax
import jax.numpy as jnp

SHIM = True


def run(module):
    devices = jax.devices()
    before = module.snapshot(devices)
    kept = [
        jax.device_put(jnp.zeros(2), devices[2]),
        jax.device_put(jnp.ones(2), devices[2]),
        jax.device_put(jnp.ones(3), devices[6]),
    ]
    after = module.snapshot(devices)
    del kept
    return {"delta": [b - a for a, b in zip(before, after)], "counted": len(module.before)}
