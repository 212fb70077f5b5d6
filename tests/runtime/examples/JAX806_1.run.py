"""Doc example JAX806-1: ``import jax.experimental.maps`` (only there to bind ``jax``) ->
``import jax``.

The before-file imports jax.experimental.maps on jax 0.4.30 (removed 0.4.31).  Compared: the
mesh built from the ``jax`` name the import binds, and a placement on it.
"""

import numpy as np

from tests.runtime.summarize import summarize

LEGACY = "0.4.30"


def run(module):
    import jax
    from jax.sharding import NamedSharding, PartitionSpec as P

    mesh = module.mesh
    a = jax.device_put(np.arange(16, dtype=np.float32).reshape(8, 2), NamedSharding(mesh, P("x")))
    return {"ids": [d.id for d in mesh.devices], "names": list(mesh.axis_names), "a": summarize(a)}
