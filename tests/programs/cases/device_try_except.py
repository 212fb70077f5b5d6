# legacy: 0.4.13
# findings: none
"""A utility that asks an array for "its" device, relying on ValueError for sharded arrays."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


def home_device(x):
    """The single device holding ``x``, or None when it is spread over several."""
    try:
        return x.device()
    except ValueError:
        return None


def placement_string(x):
    dev = home_device(x)
    if dev is None:
        return "sharded over %d devices" % len(x.devices())
    return "on device %d" % dev.id


def move_to_first(xs):
    first = jax.devices()[0]
    moved = []
    for x in xs:
        if home_device(x) != first:
            x = jax.device_put(x, first)
        moved.append(x)
    return moved


if __name__ == "__main__":
    mesh = Mesh(np.array(jax.devices()), ("x",))
    a = jnp.ones((8, 2))
    b = jax.device_put(jnp.arange(8.0), jax.devices()[3])
    c = jax.device_put(jnp.arange(16.0).reshape(8, 2), NamedSharding(mesh, P("x")))
    for name, arr in (("a", a), ("b", b), ("c", c)):
        print(name, placement_string(arr))
    moved = move_to_first([a, b, c])
    print("after move", [placement_string(m) for m in moved])
    print("sums", [round(float(m.sum()), 2) for m in moved])
