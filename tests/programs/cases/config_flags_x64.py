# legacy: 0.4.13
# findings: none
"""Numerics test helpers from 2022: x64 via jax.config, the jax_array flag, DeviceArray checks."""
from jax.config import config

config.update("jax_enable_x64", True)
config.update("jax_array", True)

import jax
import jax.numpy as jnp
import numpy as np


def assert_array(x):
    assert isinstance(x, jnp.DeviceArray), type(x)
    return x


def to_host(tree):
    return jax.tree_map(lambda x: np.asarray(assert_array(x)), tree)


def kahan_sum(xs):
    total = jnp.zeros((), dtype=jnp.float64)
    comp = jnp.zeros((), dtype=jnp.float64)
    for x in xs:
        y = x - comp
        t = total + y
        comp = (t - total) - y
        total = t
    return total


def stats(x):
    return {"mean": jnp.mean(x), "var": jnp.var(x), "dtype": str(x.dtype)}


if __name__ == "__main__":
    print("x64 enabled:", config.jax_enable_x64)
    print("jax_array:", config.jax_array)
    x = jnp.linspace(0.0, 1.0, 11)
    print("dtype", x.dtype)
    values = [jnp.asarray(v) for v in np.linspace(0.1, 1.0, 10)]
    print("kahan", round(float(kahan_sum(values)), 10))
    host = to_host({"x": x, "sq": x ** 2})
    print("host sums", {k: round(float(v.sum()), 8) for k, v in sorted(host.items())})
    s = stats(x)
    print("mean", round(float(s["mean"]), 8), "var", round(float(s["var"]), 8), s["dtype"])
