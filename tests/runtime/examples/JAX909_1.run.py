"""Doc example JAX909-1: ``jax.ShapeDtypeStruct((3,), None)`` -> ``(3,), "float64"`` (the
before-file under the shim: no JAX before 0.4.2 installs on Python 3.11): the same struct."""

SHIM = True


def run(module):
    return {"shape": list(module.shape.shape), "dtype": str(module.shape.dtype)}
