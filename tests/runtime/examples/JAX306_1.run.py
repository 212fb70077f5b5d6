"""Doc example JAX306-1: process_allgather(x) -> process_allgather(x, tiled=True).

Single process: on jax 0.4.30 the untiled gather returns shape (8,); since 0.5.0 it is (1, 8)
(JAX commit b3833dc, jax 0.5.0), so ``tiled=True`` keeps the old result.
"""

from tests.runtime.summarize import summarize

LEGACY = "0.4.30"


def run(module):
    return {"full": summarize(module.full)}
