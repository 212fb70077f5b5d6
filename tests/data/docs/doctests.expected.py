"""Helpers with old examples in their docstrings.

>>> import jax
>>> jax.tree.map(lambda a: a + 1, [1])
[2]
"""
import jax
import jax.numpy as jnp


def leaves(tree):
    """The leaves of a tree.

    >>> import jax
    >>> from jax.sharding import Mesh
    >>> jax.tree.leaves({"a": 1})
    [1]
    """
    return jax.tree.map(lambda a: a, tree)


def untouched():
    """A docstring whose example has a backslash (an escape: not what the file spells) is skipped.

    >>> jax.tree_map(lambda s: s + "\\n", ["a"])
    ['a\\n']
    """


def raw_backslash():
    r"""A raw docstring's backslashes are the example's own: it is migrated.

    >>> jax.tree.map(lambda s: s + "\n", ["a"])
    ['a\n']
    """


def doubled(x):
    """Twice ``x``; the examples use the module's ``jnp`` and print the old reprs.

    >>> doubled(jnp.arange(8.).reshape(2, 4))
    Array([[ 0.,  2.,  4.,  6.],
           [ 8., 10., 12., 14.]], dtype=float32)
    >>> doubled(jnp.add(0.5, 0.5))
    Array(2., dtype=float32, weak_type=True)
    >>> jax.pmap(doubled)(jnp.ones((1, 2)))
    Array([[2., 2.]], dtype=float32)
    >>> isinstance(doubled(jnp.ones(2)), jax.Array)
    True
    """
    return x * 2


def kept_empty():
    """An empty array prints its shape today (``Array([], shape=(0,), dtype=float32)``): the
    old output is not rewritten (no exact translation), and the doctest is not run.

    >>> jnp.zeros(0)
    DeviceArray([], dtype=float32)
    """


def not_an_example():
    """Mentions jax.tree_map in prose only."""
