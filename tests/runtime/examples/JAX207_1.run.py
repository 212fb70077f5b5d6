"""Doc example JAX207-1: a jaxpr walk naming ``pjit_p`` -> ``jit_p`` (before-file on jax 0.6.2)."""

import jax
import jax.numpy as jnp

LEGACY = "0.6.2"


def run(module):
    def f(x):
        return jax.jit(jnp.sin)(x) * 2

    equations = module.jit_equations(f, jnp.ones(3))
    inner = equations[0].params["jaxpr"].jaxpr
    return {"found": len(equations), "inner": [e.primitive.name for e in inner.eqns]}
