# legacy: 0.4.13
# findings: none
"""A hand-written Adam optimizer over pytrees (2021: tree_multimap, tree_util.tree_flatten)."""
import jax
import jax.numpy as jnp
import numpy as np
from jax import tree_util


class Adam:
    def __init__(self, lr=0.1, b1=0.9, b2=0.999, eps=1e-8):
        self.lr, self.b1, self.b2, self.eps = lr, b1, b2, eps

    def init(self, params):
        zeros = jax.tree_map(jnp.zeros_like, params)
        return {"m": zeros, "v": jax.tree_map(jnp.zeros_like, params), "t": 0}

    def update(self, grads, state, params):
        t = state["t"] + 1
        m = jax.tree_multimap(lambda m, g: self.b1 * m + (1 - self.b1) * g, state["m"], grads)
        v = tree_util.tree_multimap(lambda v, g: self.b2 * v + (1 - self.b2) * g * g, state["v"], grads)
        mhat = jax.tree_map(lambda x: x / (1 - self.b1 ** t), m)
        vhat = jax.tree_map(lambda x: x / (1 - self.b2 ** t), v)
        new = jax.tree_multimap(lambda p, a, b: p - self.lr * a / (jnp.sqrt(b) + self.eps), params, mhat, vhat)
        return new, {"m": m, "v": v, "t": t}


def rosenbrock(p):
    return (1 - p["x"]) ** 2 + 100 * (p["y"] - p["x"] ** 2) ** 2


def global_norm(tree):
    leaves, _ = tree_util.tree_flatten(tree)
    return jnp.sqrt(sum(jnp.sum(l ** 2) for l in leaves))


def describe(tree):
    leaves, treedef = jax.tree_flatten(tree)
    rebuilt = jax.tree_unflatten(treedef, [l * 0 for l in leaves])
    return treedef.num_leaves, sorted(rebuilt)


if __name__ == "__main__":
    params = {"x": jnp.asarray(-1.0), "y": jnp.asarray(1.5)}
    opt = Adam(lr=0.05)
    state = opt.init(params)
    grad_fn = jax.jit(jax.grad(rosenbrock))
    for i in range(50):
        g = grad_fn(params)
        params, state = opt.update(g, state, params)
        if i % 10 == 0:
            print(i, round(float(rosenbrock(params)), 4), round(float(global_norm(g)), 4))
    print("final", {k: round(float(v), 4) for k, v in sorted(params.items())})
    print("describe", describe(params))
    print("leaves", len(jax.tree_leaves(state)))
