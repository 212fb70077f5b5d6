"""Doc example JAX103-1: ``isinstance(x, GlobalDeviceArray)`` -> ``isinstance(x, jax.Array) and
not x.is_fully_addressable`` (shim: GDA exists on no installable JAX).

One process: values that are not GDAs must stay "not global" (a single-device array, an
8-device sharded array, NumPy).  A shim-made GDA in one process is the documented case where
the answers differ (why JAX103's predicate fix is unsafe); it cannot be built on the modern side.
"""

import numpy as np

SHIM = True


def run(module):
    import jax
    import jax.numpy as jnp
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y"))
    values = {
        "single": jnp.arange(4.0),
        "sharded": jax.device_put(
            np.arange(32.0).reshape(8, 4), NamedSharding(mesh, PartitionSpec("x", "y"))
        ),
        "numpy": np.ones(3),
    }
    return {k: bool(module.is_global(v)) for k, v in values.items()}
