"""Doc example JAX103-2: ``gda_lib.GlobalDeviceArray`` annotation -> ``jax.Array`` (shim: the GDA
module is gone on every installable JAX)."""

import numpy as np

SHIM = True


def run(module):
    import jax
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y"))
    data = np.arange(32.0).reshape(8, 4)
    arr = jax.make_array_from_callback(
        data.shape, NamedSharding(mesh, PartitionSpec("x", "y")), lambda i: data[i]
    )
    return {"global": list(module.shape_of(arr)), "numpy": list(module.shape_of(np.ones((2, 3))))}
