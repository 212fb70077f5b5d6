"""Doc example JAX206-1: ``pjit.with_sharding_constraint(x, axis_resources=P("x"))`` ->
``jax.lax.with_sharding_constraint(x, shardings=P("x"))``.

Shim only: real jax 0.4.13's pjit.with_sharding_constraint already rejects ``axis_resources=``
(signature ``(x, shardings)``).  A bare PartitionSpec needs a mesh context: ``with mesh:`` on
both sides (deprecated on modern JAX: allowed).
"""

import numpy as np

from tests.runtime.summarize import summarize

SHIM = True
MODERN_DEPRECATIONS = ("`with mesh:` context manager has been deprecated",)


def run(module):
    import jax
    from jax.sharding import Mesh

    mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y"))
    with mesh:
        out = jax.jit(module.f)(np.arange(32.0).reshape(8, 4))
    return {"out": summarize(out)}
