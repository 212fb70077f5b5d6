# legacy: 0.4.13
# findings: none
# target: 0.4.34
"""A 2022 training loop that talks to the host through jax.experimental.host_callback: a
metric computed by NumPy on the host (`hcb.call`), the loss tapped to a
Python logger (`id_tap`) and printed (`id_print`), then `barrier_wait` before the log is read.
host_callback is gone from today's JAX, so importing the module stopped the whole program.
Migrated for JAX 0.4.34 on, where pure_callback asks how it batches (`vmap_method`)."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import host_callback as hcb

LOG = []


def host_median(values):
    return np.median(values, axis=-1).astype(values.dtype)


def median(values):
    shape = jax.ShapeDtypeStruct(values.shape[:-1], values.dtype)
    return hcb.call(host_median, values, result_shape=shape)


def record(loss, transforms):
    LOG.append(round(float(loss), 4))


def loss_fn(w, x, y):
    return jnp.mean((x @ w - y) ** 2)


@jax.jit
def train_step(w, x, y):
    loss, grad = jax.value_and_grad(loss_fn)(w, x, y)
    hcb.id_tap(record, loss)
    w = w - 0.1 * grad
    residual = jnp.abs(x @ w - y)
    buckets = hcb.id_print(jnp.floor(residual * 4).astype(jnp.int32), what="residual buckets")
    return w, median(residual), buckets


@jax.jit
def row_medians(batch):
    flat = batch.reshape(-1, batch.shape[-1])
    return median(flat).reshape(batch.shape[:-1])


if __name__ == "__main__":
    x = jnp.linspace(-1.0, 1.0, 24).reshape(8, 3)
    y = x @ jnp.array([1.0, -2.0, 0.5]) + 0.25
    w = jnp.zeros(3)
    for step in range(3):
        w, med, buckets = train_step(w, x, y)
        hcb.barrier_wait()
        print("step", step, "median residual", round(float(med), 4), "max", int(buckets.max()))
    print("weights", np.round(np.asarray(w), 4).tolist())
    print("losses", LOG)
    batch = jnp.arange(24.0).reshape(2, 3, 4) ** 2
    print("row medians", np.asarray(row_medians(batch)).tolist())
