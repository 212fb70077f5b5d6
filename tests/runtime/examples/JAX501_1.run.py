"""Doc example JAX501-1: the migration guide's ``jax.config.update('jax_array', True)`` is deleted.

The before-text runs on jax 0.4.13, where the update is accepted.
"""

import jax

from tests.runtime.summarize import summarize

LEGACY = "0.4.13"


def run(module):
    return {"x": summarize(module.x), "is_array": isinstance(module.x, jax.Array)}
