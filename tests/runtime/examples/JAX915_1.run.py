"""Doc example JAX915-1: ``jax.ShapeDtypeStruct(x.shape, x.dtype, x.named_shape)`` ->
``jax.ShapeDtypeStruct(x.shape, x.dtype)``: the before-file on jax 0.4.13, the after-file on
the newest JAX; the same shapes and dtypes."""

LEGACY = "0.4.13"


def run(module):
    import jax
    import jax.numpy as jnp

    avals = jax.make_jaxpr(lambda x: (x, x.sum()))(jnp.ones(3, jnp.float32)).out_avals
    return [(list(s.shape), str(s.dtype)) for s in module.shapes_of(avals)]
