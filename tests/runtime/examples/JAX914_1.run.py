"""Doc example JAX914-1: ``core.gensym([jaxpr], suffix="_x")`` -> ``core.gensym()``: the
before-file on jax 0.4.13, the after-file on the newest JAX (where ``jax.core.gensym`` is
deprecated, JAX903 renaming it on a target that reaches 0.11); the same avals, as many
distinct variables, none of them the jaxpr's."""

LEGACY = "0.4.13"
MODERN_DEPRECATIONS = ("jax.core.gensym is deprecated",)


def run(module):
    import jax
    import jax.numpy as jnp

    jaxpr = jax.make_jaxpr(lambda x, n: x * n)(jnp.ones(3, jnp.float32), 2).jaxpr
    made = module.fresh(jaxpr, [var.aval for var in jaxpr.invars])
    return {
        "avals": [(list(v.aval.shape), str(v.aval.dtype)) for v in made],
        "distinct": len({id(v) for v in made}),
        "apart": all(v is not w for v in made for w in jaxpr.invars),
    }
