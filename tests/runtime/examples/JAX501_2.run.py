"""Doc example JAX501-2: ``if jax.config.jax_array:`` folds to its true branch."""

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

from tests.runtime.summarize import summarize

LEGACY = "0.4.13"
SHIM = True


def run(module):
    mesh = Mesh(np.array(jax.devices()), ("x",))
    x = jax.device_put(np.arange(8.0), NamedSharding(mesh, P("x")))
    return {"shards": summarize(module.shards(x))}
