# legacy: 0.4.13
# findings: none
"""Restoring a pytree from a flat list with build_tree (2021 checkpoint code)."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.tree_util import build_tree, tree_flatten, tree_structure


def template():
    return {"encoder": [jnp.zeros((2, 2)), jnp.zeros(2)], "decoder": (jnp.zeros(3), jnp.zeros(()))}


def save(tree):
    leaves, treedef = tree_flatten(tree)
    return [np.asarray(l) for l in leaves], treedef


def restore(flat, treedef):
    arrays = [jnp.asarray(l) for l in flat]
    return build_tree(treedef, [arrays[:2], arrays[2:]])  # decoder, encoder


def perturb(tree, eps):
    return jax.tree_map(lambda x: x + eps, tree)


def fingerprint(tree):
    return [round(float(jnp.sum(l)), 3) for l in jax.tree_leaves(tree)]


if __name__ == "__main__":
    t = perturb(template(), 0.5)
    flat, treedef = save(t)
    print("saved leaves", len(flat), [l.shape for l in flat])
    back = restore(flat, treedef)
    print("same structure", tree_structure(back) == tree_structure(t))
    print("fingerprint", fingerprint(back))
    nested = restore([np.ones(s.shape) for s in flat], treedef)
    print("ones", fingerprint(nested))
