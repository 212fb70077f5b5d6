# legacy: 0.4.13
# findings: none
"""Dump the HLO of a few functions to check what XLA sees (a 2021 debugging script)."""
import jax
import jax.numpy as jnp
import numpy as np


def affine(x, w, b):
    return jnp.dot(x, w) + b


def gelu(x):
    return 0.5 * x * (1 + jnp.tanh(0.7978845608 * (x + 0.044715 * x ** 3)))


def hlo_text(fn, *args):
    comp = jax.xla_computation(fn)(*args)
    return comp.as_hlo_text()


def count_ops(text, names):
    return {name: text.count(name) > 0 for name in names}


def check_shapes(fn, *args):
    out = jax.eval_shape(fn, *args)
    return tuple(out.shape), str(out.dtype)


if __name__ == "__main__":
    x = jnp.ones((4, 3))
    w = jnp.ones((3, 2))
    b = jnp.zeros(2)
    text = hlo_text(affine, x, w, b)
    print("affine has dot/add:", count_ops(text, ["dot", "add"]))
    print("affine shapes", check_shapes(affine, x, w, b))
    text2 = hlo_text(gelu, x)
    print("gelu has tanh/multiply:", count_ops(text2, ["tanh", "multiply"]))
    print("gelu value", np.round(np.asarray(gelu(jnp.linspace(-2, 2, 5))), 4).tolist())
    for name, fn, args in (("affine", affine, (x, w, b)), ("gelu", gelu, (x,))):
        print(name, "HloModule" in hlo_text(fn, *args))
