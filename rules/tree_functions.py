"""JAX701 tree-functions: the removed top-level tree utilities -> ``jax.tree.*`` /
``jax.tree_util.*``.

Release notes: ``jax.tree_multimap``/``jax.tree_util.tree_multimap`` (deprecated 0.3.5, removed
0.3.16), ``jax.tree_map`` (deprecated 0.4.26, removed 0.6.0),
``jax.tree_{flatten,leaves,structure,unflatten,transpose}`` and ``jax.treedef_is_leaf``
(FutureWarning on call from 0.3.15, on access from 0.4.25, removed 0.6.0).  The ``jax.tree``
module exists from 0.4.25 (release notes; jax 0.4.13 has none), so older targets get the
``jax.tree_util.tree_*`` spelling.
"""

from __future__ import annotations

import functools
from typing import Optional

from jaxmigrate.migrator import references as refs
from jaxmigrate.migrator.context import Context, NameSite
from jaxmigrate.migrator.rule import Example, Lifecycle, Rule, Safety
from jaxmigrate.migrator.target import dated_no_later_than_array_floor
from jaxmigrate.migrator.version import Version
from jaxmigrate.rules._tree import TREE_FUNCTIONS, replacement_for


class TreeFunctions(Rule, code="JAX701", safety=Safety.SAFE):
    """jax.tree_map / tree_multimap / tree_flatten / ... -> jax.tree.* (or jax.tree_util.* below
    0.4.25)

    **What it does.** Replaces the top-level tree utilities `jax.tree_map`,
    `jax.tree_multimap`, `jax.tree_util.tree_multimap`, `jax.tree_flatten`,
    `jax.tree_leaves`, `jax.tree_structure`, `jax.tree_unflatten`, `jax.tree_transpose` and
    `jax.treedef_is_leaf`, in every import spelling (`jax.tree_map`, `from jax import
    tree_map as tm`, `import jax as j; j.tree_map`), with `jax.tree.map`,
    `jax.tree.flatten`, ... .  `tree_multimap` becomes `map` (it has been the same
    function since 0.3.5).  The legacy import is removed once nothing uses it.

    **Target version.** The `jax.tree` module appeared in JAX 0.4.25.  For an older
    `--target-version` the rule writes `jax.tree_util.tree_map`, `jax.tree_util.tree_flatten`,
    ..., which exist on every version.  `jax.treedef_is_leaf` has no `jax.tree` form and always
    becomes `jax.tree_util.treedef_is_leaf`.

    **Why.** `tree_multimap` was removed in 0.3.16; the other top-level aliases warned from
    0.3.15/0.4.25 and were removed in JAX 0.6.0 (AttributeError).

    **Behaviour.** Same functions, same argument order (`map(f, tree, *rest, is_leaf=None)`,
    `unflatten(treedef, leaves)`); `jax.tree.map` is a thin wrapper of `tree_util.tree_map`.
    Names that merely look alike (`jax.tree_util.tree_map`, `optax` helpers, your own
    `tree_map`) are left alone.
    """

    whole_module = False  # hooks read their sites and the names those resolve to

    # no gate: jax.tree_util.tree_* exists on every supported JAX; the spelling follows the target
    lifecycle = Lifecycle(
        deprecated=("0.4.26", "jax.tree_map deprecated"),
        removed=("0.6.0", "jax.tree_map and the top-level tree functions removed"),
    )
    references = (
        refs.release_notes("0.3.5", "tree_multimap deprecated"),
        refs.release_notes("0.3.16", "tree_multimap removed"),
        refs.release_notes("0.4.25", "the jax.tree module added"),
    )
    names = frozenset(TREE_FUNCTIONS)
    examples = (
        Example(
            title="jax.tree_map and friends",
            before="""
            import jax

            out = jax.tree_map(lambda a, b: a + b, x, y)
            leaves, treedef = jax.tree_flatten(x)
            """,
            after="""
            import jax

            out = jax.tree.map(lambda a, b: a + b, x, y)
            leaves, treedef = jax.tree.flatten(x)
            """,
        ),
        Example(
            title="an old target keeps jax.tree_util",
            target_version="0.4.13",
            before="""
            from jax import tree_map, tree_multimap

            out = tree_multimap(lambda a, b: a + b, x, tree_map(abs, y))
            """,
            after="""
            import jax

            out = jax.tree_util.tree_map(lambda a, b: a + b, x, jax.tree_util.tree_map(abs, y))
            """,
        ),
    )

    def for_survey(
        self, low: Version, high: Optional[Version], unsafe_fixes: bool
    ) -> Optional[Rule]:
        """Not in a survey starting before ``jax.tree`` (no requirement, or an older one): the
        ``jax.tree_util`` spellings it writes there and the names it replaces date from before
        the first jax.Array release or are gone, it needs no newer JAX, and no rule acts on
        ``jax.tree_util`` names, so its fixes cannot move the floor (most legacy files it
        fixes are then never parsed by the survey)."""
        return None if _floor_neutral(low) else self

    def visit_name(self, site: NameSite, ctx: Context) -> None:
        if site.is_import:
            return  # the import goes once nothing uses it
        modern = replacement_for(site.qualname, ctx.target)
        ctx.replace(site.node, ctx.ref(modern, site.scope), f"{site.qualname} -> {modern}")


@functools.cache
def _floor_neutral(low: Version) -> bool:
    written = (replacement_for(legacy, low) for legacy in TREE_FUNCTIONS)
    return dated_no_later_than_array_floor((*TREE_FUNCTIONS, *written))
