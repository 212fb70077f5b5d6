# legacy: 0.4.13
# findings: none
"""Device placement helpers (2021): values returned by local helpers, narrowed by isinstance."""
import jax
import jax.numpy as jnp
import numpy as np


def put_on(x, index):
    return jax.device_put(x, jax.devices()[index])


def make_buffer(value, index):
    arr = jnp.asarray(value, dtype=jnp.float32)
    return put_on(arr, index)


def device_id(x):
    if isinstance(x, jax.Array):
        return x.device().id
    return None


def round_robin(values):
    placed = [make_buffer(v, i % jax.device_count()) for i, v in enumerate(values)]
    return placed, [p.device().id for p in placed]


class Placer:
    def __init__(self, index):
        self.anchor = put_on(jnp.zeros(()), index)

    def colocate(self, x):
        return jax.device_put(x, self.anchor.device())


if __name__ == "__main__":
    a = make_buffer([1.0, 2.0], 5)
    print("a on", a.device().id, "sum", float(a.sum()))
    print("device_id", device_id(a), device_id(np.ones(2)))
    placed, ids = round_robin(range(10))
    print("round robin", ids)
    print("values", [float(p) for p in placed])
    placer = Placer(3)
    moved = placer.colocate(jnp.arange(4.0))
    print("colocated on", moved.device().id, moved.tolist())
