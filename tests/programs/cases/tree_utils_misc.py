# legacy: 0.4.13
# findings: none
"""Pytree utilities from a 2021 research codebase (tree_multimap, tree_transpose, ...)."""
import collections

import jax
import jax.numpy as jnp
import numpy as np
from jax.tree_util import tree_multimap, tree_structure

Point = collections.namedtuple("Point", ["x", "y"])


def stack_trees(trees):
    return tree_multimap(lambda *xs: jnp.stack(xs), *trees)


def unstack(tree, n):
    return [jax.tree_map(lambda x: x[i], tree) for i in range(n)]


def transpose_list_of_points(points):
    outer = tree_structure([0] * len(points))
    inner = tree_structure(Point(0, 0))
    return jax.tree_transpose(outer, inner, points)


def l2(tree):
    return float(jnp.sqrt(sum(jnp.vdot(x, x) for x in jax.tree_leaves(tree))))


def scale_like(tree, factors):
    return jax.tree_util.tree_multimap(lambda x, f: x * f, tree, factors)


if __name__ == "__main__":
    trees = [{"a": jnp.full((2,), float(i)), "b": jnp.ones(3) * i} for i in range(4)]
    stacked = stack_trees(trees)
    print("stacked", {k: v.shape for k, v in sorted(stacked.items())})
    back = unstack(stacked, 4)
    print("round trip", all(np.allclose(back[i]["a"], trees[i]["a"]) for i in range(4)))
    points = [Point(jnp.asarray(float(i)), jnp.asarray(float(-i))) for i in range(3)]
    t = transpose_list_of_points(points)
    print("transposed x", [float(v) for v in t.x], "y", [float(v) for v in t.y])
    print("l2", round(l2(stacked), 4))
    scaled = scale_like(trees[2], {"a": 0.5, "b": 2.0})
    print("scaled", {k: np.asarray(v).tolist() for k, v in sorted(scaled.items())})
    print("num leaves", len(jax.tree_leaves(trees)), tree_structure(trees[0]).num_leaves)
