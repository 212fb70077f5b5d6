# legacy: 0.4.13
# findings: none
"""Sharded evaluation step returning a metrics dict, checked buffer by buffer (2022)."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import maps
from jax.experimental import PartitionSpec as P
from jax.experimental.pjit import pjit

mesh = maps.Mesh(np.asarray(jax.devices()).reshape(8), ("data",))


def eval_step(params, batch):
    logits = batch["x"] @ params
    labels = batch["y"]
    loss = jnp.mean((logits - labels) ** 2)
    return {"loss": loss, "logits": logits}


p_eval = pjit(
    eval_step,
    in_axis_resources=(None, {"x": P("data"), "y": P("data")}),
    out_axis_resources={"loss": None, "logits": P("data")},
)


def make_batch(seed):
    rng = np.random.RandomState(seed)
    x = rng.randn(16, 3).astype(np.float32)
    return {"x": x, "y": x.sum(axis=1, keepdims=True)}


def buffer_rows(arr):
    return [b.shape[0] for b in arr.device_buffers]


def mean_metrics(history):
    return jax.tree_map(lambda *xs: round(float(np.mean(xs)), 4), *history)


if __name__ == "__main__":
    params = jnp.ones((3, 1)) * 0.9
    history = []
    with mesh:
        for seed in range(3):
            out = p_eval(params, make_batch(seed))
            history.append({"loss": out["loss"]})
    print("last logits rows per buffer", buffer_rows(out["logits"]))
    print("loss buffers", len(out["loss"].device_buffers))
    print("mean", mean_metrics(history))
