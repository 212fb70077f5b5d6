"""Doc example JAX205-2: ``maps.Mesh`` / ``pjit.PartitionSpec`` -> ``jax.sharding`` (shim).

The example's after-text keeps ``pjit`` under ``with mesh:`` (JAX205 alone does not rewrite
pjit), so those two deprecations are allowed on the modern side.
"""

import jax.numpy as jnp

from tests.runtime.summarize import summarize

SHIM = True
MODERN_DEPRECATIONS = (
    "jax.experimental.pjit.pjit has been deprecated",
    "`with mesh:` context manager has been deprecated",
)


def run(module):
    with module.mesh:
        out = module.f(jnp.arange(16.0))
    return {"out": summarize(out), "names": list(module.mesh.axis_names)}
