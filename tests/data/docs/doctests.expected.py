"""Helpers with old examples in their docstrings.

>>> import jax
>>> jax.tree.map(lambda a: a + 1, [1])
[2]
"""
import jax


def leaves(tree):
    """The leaves of a tree.

    >>> import jax
    >>> from jax.sharding import Mesh
    >>> jax.tree.leaves({"a": 1})
    [1]
    """
    return jax.tree.map(lambda a: a, tree)


def untouched():
    r"""A raw docstring whose example has a backslash is skipped.

    >>> jax.tree_map(lambda s: s + "\n", ["a"])
    ['a\n']
    """


def not_an_example():
    """Mentions jax.tree_map in prose only."""
