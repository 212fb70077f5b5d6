"""Doc example JAX202-3: pjit decorator with no mesh in sight is left alone (reported).

The text is the same before and after; it runs on real jax 0.4.13, on the shim and (with the
pjit and ``with mesh:`` deprecations allowed) on modern JAX, called under ``with mesh:`` as
its PartitionSpecs require.  ``out_shardings=None`` must mean replicated everywhere.
"""

import numpy as np

from tests.runtime.summarize import summarize

LEGACY = "0.4.13"
SHIM = True
MODERN_DEPRECATIONS = (
    "jax.experimental.pjit.pjit has been deprecated",
    "`with mesh:` context manager has been deprecated",
)


def run(module):
    import jax
    from jax.sharding import Mesh

    mesh = Mesh(np.array(jax.devices()), ("x",))
    x = np.arange(16.0).reshape(8, 2)
    with mesh:
        out = module.step(x)
        main = module.main(x)
    return {"step": summarize(out), "main": main}
