"""Doc example JAX608-1: jax.make_mesh((4, 2), names) -> the same with axis_types=(Auto,) * 2.

The before-file runs on real jax 0.6.2, where a bare make_mesh still made Auto axes (Explicit
from 0.9.0).  Compared: the device grid, the axis names, and a matmul whose
contracting dimension is sharded (computes on Auto axes, raises ShardingTypeError on Explicit).
"""

import jax
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec as P

from tests.runtime.summarize import summarize

LEGACY = "0.6.2"


def run(module):
    mesh = module.mesh
    a = jax.device_put(
        np.arange(64, dtype=np.float32).reshape(8, 8), NamedSharding(mesh, P("data", "model"))
    )
    b = jax.device_put(np.ones((8, 4), dtype=np.float32), NamedSharding(mesh, P("model", None)))
    return {
        "grid": [[d.id for d in row] for row in mesh.devices],
        "names": list(mesh.axis_names),
        "axis_types": [str(t).rsplit(".", 1)[-1] for t in mesh.axis_types],
        "matmul": summarize(jax.jit(lambda x, y: x @ y)(a, b)),
    }
