"""Doc example JAX402-1: GDA attribute names -> jax.Array names.

The shim provides local_shards etc.
"""

import jax
import numpy as np
from jax.sharding import Mesh, PartitionSpec as P

from tests.runtime.summarize import summarize

SHIM = True


def run(module):
    mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y"))
    data = np.arange(32.0).reshape(8, 4)
    local, first, spec, got_mesh = module.build(mesh, P("x", "y"), data)
    return {
        "local": summarize(local),
        "first": summarize(first),
        "spec": list(spec),
        "mesh_devices": [d.id for d in got_mesh.devices.flat],
        "mesh_names": list(got_mesh.axis_names),
    }
