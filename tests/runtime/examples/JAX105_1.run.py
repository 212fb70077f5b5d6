"""Doc example JAX105-1: ``isinstance(x, xla_extension.ArrayImpl)`` -> ``isinstance(x, jax.Array)``.

Real jax 0.4.30 still has ``jax.lib.xla_extension.ArrayImpl``; every concrete array is one.
No tracers: ``isinstance(tracer, ArrayImpl)`` was False (the rule's documented caveat).
"""

import numpy as np

LEGACY = "0.4.30"


def run(module):
    import jax
    import jax.numpy as jnp
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    mesh = Mesh(np.array(jax.devices()), ("x",))
    values = {
        "single": jnp.arange(4.0),
        "sharded": jax.device_put(np.arange(8.0), NamedSharding(mesh, PartitionSpec("x"))),
        "numpy": np.ones(2),
        "list": [1.0],
        "float": 1.5,
    }
    return {k: module.concrete(v) for k, v in values.items()}
