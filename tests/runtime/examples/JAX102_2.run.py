"""Doc example JAX102-2: ``ShardedDeviceArray`` annotation -> ``jax.Array``.

``from jax.interpreters.pxla import ShardedDeviceArray`` still imports (deprecated) on real jax
0.4.13, and in the shim.
"""

import numpy as np

LEGACY = "0.4.13"
SHIM = True


def run(module):
    import jax
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    mesh = Mesh(np.array(jax.devices()), ("i",))
    sharded = jax.device_put(np.arange(16.0).reshape(8, 2), NamedSharding(mesh, PartitionSpec("i")))
    pmapped = jax.pmap(lambda v: v * 3)(np.arange(8.0))
    return {
        "sharded": module.total(sharded),
        "pmapped": module.total(pmapped),
        "numpy": module.total(np.ones(4)),
    }
