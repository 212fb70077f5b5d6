# legacy: 0.4.13
# findings: none
"""Metrics helpers written against 2021 jax.numpy names (product, alltrue, cumproduct...)."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.config import config


def geometric_mean(x):
    return jnp.product(x) ** (1.0 / x.size)


def all_positive(x):
    return bool(jnp.alltrue(x > 0))


def running_product(x):
    return jnp.cumproduct(x)


def any_nan(tree):
    return any(bool(jnp.sometrue(jnp.isnan(leaf))) for leaf in jax.tree_leaves(tree))


def report(name, x):
    return {
        "name": name,
        "gmean": round(float(geometric_mean(x)), 5),
        "positive": all_positive(x),
        "running": np.round(np.asarray(running_product(x)), 4).tolist(),
    }


if __name__ == "__main__":
    config.update("jax_numpy_rank_promotion", "raise")
    data = {
        "a": jnp.asarray([1.0, 2.0, 4.0]),
        "b": jnp.asarray([0.5, 0.25, 2.0, 8.0]),
    }
    for key in sorted(data):
        print(report(key, data[key]))
    print("nan?", any_nan(data), any_nan({"c": jnp.asarray([jnp.nan])}))
    print("rank promotion", config.jax_numpy_rank_promotion)
