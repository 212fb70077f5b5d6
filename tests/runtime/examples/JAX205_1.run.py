"""Doc example JAX205-1: ``jax.experimental.pjit.PartitionSpec`` -> ``jax.sharding.PartitionSpec``
(shim: the pjit re-export is gone on every installable JAX)."""

import numpy as np

from tests.runtime.summarize import summarize

SHIM = True


def run(module):
    import jax
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y"))
    return {
        "entries": list(module.spec),
        "is_spec": isinstance(module.spec, PartitionSpec),
        "layout": summarize(
            jax.device_put(np.arange(32.0).reshape(8, 4), NamedSharding(mesh, module.spec))
        ),
    }
