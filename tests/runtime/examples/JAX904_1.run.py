"""Runtime driver for JAX904 example 1: removed type names in annotations.

LEGACY 0.4.13, where jax.random.KeyArray and batching.BatchTracer exist.  Compared: the key
the annotated function returns.
"""

from tests.runtime.summarize import summarize

LEGACY = "0.4.13"


def run(module):
    import jax

    return {"key": summarize(module.split(jax.random.PRNGKey(3), None))}
