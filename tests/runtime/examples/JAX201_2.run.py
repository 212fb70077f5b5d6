"""Doc example JAX201-2: pjit through functools.partial and positional ``None`` shardings.

Runs on real jax 0.4.13 and on the shim.  The example's after-text still uses
``jax.experimental.pjit.pjit`` under ``with mesh:`` (JAX201 alone only renames keywords; the
doc example is checked with ``select=JAX201``), so those deprecations are allowed.
"""

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh

from tests.runtime.summarize import summarize

LEGACY = "0.4.13"
SHIM = True
MODERN_DEPRECATIONS = (
    "jax.experimental.pjit.pjit has been deprecated",
    "`with mesh:` context manager has been deprecated",
)


def run(module):
    mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y"))
    with mesh:
        a = module.step(jnp.arange(8.0))
        b = module.g(jnp.arange(6.0).reshape(2, 3))
    return {"step": summarize(a), "g": summarize(b)}
