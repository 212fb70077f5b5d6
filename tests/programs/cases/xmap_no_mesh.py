# legacy: 0.4.13
# findings: none
"""Named-axis batching with xmap, no mesh (the 2021 xmap tutorial's first examples)."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental.maps import xmap


def my_norm(x):
    return x / jnp.sqrt(jnp.sum(x ** 2))


def centered(x):
    return x - jax.lax.pmean(x, "batch")


batched_norm = xmap(my_norm, in_axes=["batch", ...], out_axes=["batch", ...])
batched_center = xmap(centered, in_axes=["batch", ...], out_axes=["batch", ...])


def pairwise(a, b):
    return jnp.dot(a, b)


batched_dot = xmap(pairwise, in_axes=(["batch", ...], ["batch", ...]), out_axes=["batch", ...])


def run_all(x):
    results = {}
    results["norm"] = batched_norm(x)
    results["center"] = batched_center(x)
    results["dot"] = batched_dot(x, x)
    return results


def summarize(results):
    lines = []
    for name in sorted(results):
        value = np.asarray(results[name])
        lines.append(f"{name}: shape={value.shape} sum={value.sum():.4f}")
    return lines


if __name__ == "__main__":
    x = jnp.arange(12.0).reshape(4, 3) + 1.0
    for line in summarize(run_all(x)):
        print(line)
    print("row 0 normed", np.round(np.asarray(batched_norm(x))[0], 4).tolist())
