# legacy: 0.4.13
# findings: none
"""Precision checks with the experimental x64 context managers (2022 numerics tests)."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import enable_x64, disable_x64


def harmonic(n, dtype):
    return jnp.sum(1.0 / jnp.arange(1, n + 1, dtype=dtype))


def precise_harmonic(n):
    with enable_x64():
        value = harmonic(n, jnp.float64)
        return float(value), str(value.dtype)


def fast_harmonic(n):
    with disable_x64():
        value = harmonic(n, jnp.float32)
        return float(value), str(value.dtype)


def compare(n):
    hi, hi_dtype = precise_harmonic(n)
    lo, lo_dtype = fast_harmonic(n)
    return {"hi": round(hi, 9), "lo": round(lo, 4), "dtypes": (hi_dtype, lo_dtype)}


def default_dtype():
    return str(jnp.zeros(()).dtype)


if __name__ == "__main__":
    print("default", default_dtype())
    for n in (10, 1000, 100000):
        result = compare(n)
        print(n, result["hi"], result["lo"], result["dtypes"])
    print("default after", default_dtype())
    with enable_x64():
        x = jnp.arange(3, dtype=jnp.int64)
        print("x64 ints", x.dtype, x.tolist())
