"""Doc example JAX604-2 (target 0.4.33): Mesh(create_device_mesh((8,)), ('x',)) ->
jax.make_mesh((8,), ('x',)).

The before-file runs on jax 0.4.30.  Compared: the device order, the axis names, a row placement
and an elementwise computation on it.  Not compared: a matmul with a sharded contracting
dimension; the after-file is for targets 0.4.33-0.5.2, where every make_mesh axis is Auto, and
the jax 0.10.2 this suite runs makes Explicit axes for a bare make_mesh.
"""

import jax
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec as P

from tests.runtime.summarize import summarize

LEGACY = "0.4.30"


def run(module):
    mesh = module.mesh
    a = jax.device_put(np.arange(32, dtype=np.float32).reshape(8, 4), NamedSharding(mesh, P("x")))
    return {
        "ids": [d.id for d in mesh.devices],
        "names": list(mesh.axis_names),
        "a": summarize(a),
        "scaled": summarize(jax.jit(lambda x: x * 3 + 1)(a)),
    }
