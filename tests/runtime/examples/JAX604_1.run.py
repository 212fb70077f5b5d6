"""Doc example JAX604-1: Mesh(create_device_mesh(...)) -> jax.make_mesh(..., axis_types=Auto).

Same device grid, and a matmul whose contracting dimension is sharded still computes (it would
raise under make_mesh's default Explicit axes).
"""

import jax
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec as P

from tests.runtime.summarize import summarize

LEGACY = "0.4.30"


def run(module):
    mesh = module.mesh
    a = jax.device_put(
        np.arange(64, dtype=np.float32).reshape(8, 8), NamedSharding(mesh, P("data", "model"))
    )
    b = jax.device_put(np.ones((8, 4), dtype=np.float32), NamedSharding(mesh, P("model", None)))
    return {
        "grid": [[d.id for d in row] for row in mesh.devices],
        "names": list(mesh.axis_names),
        "matmul": summarize(jax.jit(lambda x, y: x @ y)(a, b)),
    }
