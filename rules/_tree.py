"""The table behind the tree-utility rules (JAX701, JAX702).

Each legacy top-level name maps to its ``jax.tree`` spelling (the ``jax.tree`` module exists
from JAX 0.4.25: jax 0.4.25 release notes) and its ``jax.tree_util`` spelling (every version).
``None`` in the ``jax.tree`` column means there is no ``jax.tree`` form.  Whether a
``jax.tree_util`` spelling holds on a target range is read from the API history
(:func:`holds_throughout`), never assumed.
"""

from __future__ import annotations

from typing import Dict, NamedTuple, Optional

from jaxmigrate.migrator.version import Version, parse_version
from jaxmigrate.rules._api_history import history

# First JAX with the ``jax.tree`` module (jax 0.4.25 release notes; jax 0.4.13 has none).
JAX_TREE_SINCE: Version = parse_version("0.4.25")


class TreeRow(NamedTuple):
    removed_in: str  # the JAX release without the legacy name
    tree: Optional[str]  # jax.tree spelling, None if there is none
    tree_util: str  # jax.tree_util spelling (exists on every supported JAX)


TREE_FUNCTIONS: Dict[str, TreeRow] = {
    "jax.tree_multimap": TreeRow("0.3.16", "jax.tree.map", "jax.tree_util.tree_map"),
    "jax.tree_util.tree_multimap": TreeRow("0.3.16", "jax.tree.map", "jax.tree_util.tree_map"),
    "jax.tree_map": TreeRow("0.6.0", "jax.tree.map", "jax.tree_util.tree_map"),
    "jax.tree_flatten": TreeRow("0.6.0", "jax.tree.flatten", "jax.tree_util.tree_flatten"),
    "jax.tree_leaves": TreeRow("0.6.0", "jax.tree.leaves", "jax.tree_util.tree_leaves"),
    "jax.tree_structure": TreeRow("0.6.0", "jax.tree.structure", "jax.tree_util.tree_structure"),
    "jax.tree_unflatten": TreeRow("0.6.0", "jax.tree.unflatten", "jax.tree_util.tree_unflatten"),
    "jax.tree_transpose": TreeRow("0.6.0", "jax.tree.transpose", "jax.tree_util.tree_transpose"),
    "jax.treedef_is_leaf": TreeRow("0.6.0", None, "jax.tree_util.treedef_is_leaf"),
}


def modern_tree_name(short: str, target: Version) -> str:
    """``"leaves"`` -> ``jax.tree.leaves`` on targets with ``jax.tree``, else
    ``jax.tree_util.tree_leaves``."""
    if target >= JAX_TREE_SINCE:
        return f"jax.tree.{short}"
    return f"jax.tree_util.tree_{short}"


def replacement_for(legacy: str, target: Version) -> str:
    row = TREE_FUNCTIONS[legacy]
    if row.tree is not None and target >= JAX_TREE_SINCE:
        return row.tree
    return row.tree_util


def holds_throughout(qualname: str, target: Version, upper: Optional[Version]) -> bool:
    """Does every release of ``target``..``upper`` (None: the newest) have ``qualname``, none of
    them deprecating it?  From the API history; False for a name it does not know."""
    known = history().lookup(qualname)
    if known is None or not history().exists_throughout(qualname, target, upper):
        return False
    return known.deprecated_since is None or known.deprecated_since > history().last_index(upper)
