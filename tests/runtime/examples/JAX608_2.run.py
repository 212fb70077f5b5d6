"""Doc example JAX608-2: jax.make_mesh((8,), ('x',)) -> the same with axis_types=(Auto,).

The before-file runs on real jax 0.6.2, where a bare make_mesh still made Auto axes (Explicit
from 0.9.0).  Compared: the device order, the axis names and types, and a matmul
whose contracting dimension is sharded on 'x' in both operands (computes on Auto axes, raises
ShardingTypeError on Explicit).
"""

import jax
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec as P

from tests.runtime.summarize import summarize

LEGACY = "0.6.2"


def run(module):
    mesh = module.mesh
    a = jax.device_put(
        np.arange(64, dtype=np.float32).reshape(8, 8), NamedSharding(mesh, P(None, "x"))
    )
    b = jax.device_put(np.ones((8, 4), dtype=np.float32), NamedSharding(mesh, P("x", None)))
    return {
        "ids": [d.id for d in mesh.devices],
        "names": list(mesh.axis_names),
        "axis_types": [str(t).rsplit(".", 1)[-1] for t in mesh.axis_types],
        "matmul": summarize(jax.jit(lambda x, y: x @ y)(a, b)),
    }
