# legacy: 0.4.13
# findings: none
"""Trainer class that builds its mesh late, in setup(); pjit made in __init__ (2022)."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import maps
from jax.experimental.pjit import pjit
from jax.experimental import PartitionSpec as P


def _step(w, x, y):
    def loss(w):
        return jnp.mean((x @ w - y) ** 2)

    l, g = jax.value_and_grad(loss)(w)
    return w - 0.05 * g, l


class Trainer:
    def __init__(self, dim):
        self.dim = dim
        self.step = pjit(_step, in_axis_resources=(None, P("batch"), P("batch")),
                         out_axis_resources=(None, None))
        self.mesh = None

    def setup(self):
        devs = np.array(jax.devices())
        self.mesh = maps.Mesh(devs, ("batch",))

    def fit(self, xs, ys, epochs):
        w = jnp.zeros((self.dim, 1))
        history = []
        with self.mesh:
            for _ in range(epochs):
                w, l = self.step(w, xs, ys)
                history.append(round(float(l), 4))
        return w, history


if __name__ == "__main__":
    rng = np.random.RandomState(3)
    xs = rng.randn(16, 3).astype(np.float32)
    ys = xs @ np.array([[1.0], [-2.0], [0.5]], dtype=np.float32)
    trainer = Trainer(3)
    trainer.setup()
    w, history = trainer.fit(xs, ys, 6)
    print("history", history)
    print("w", np.round(np.asarray(w).ravel(), 4).tolist())
