"""JAX701 tree-functions: the removed top-level tree utilities -> ``jax.tree.*`` /
``jax.tree_util.*``.

Release notes: ``jax.tree_multimap``/``jax.tree_util.tree_multimap`` (deprecated 0.3.5, removed
0.3.16), ``jax.tree_map`` (deprecated 0.4.26, removed 0.6.0),
``jax.tree_{flatten,leaves,structure,unflatten,transpose}`` and ``jax.treedef_is_leaf``
(FutureWarning on call from 0.3.15, on access from 0.4.25, removed 0.6.0).  The ``jax.tree``
module exists from 0.4.25 (release notes; jax 0.4.13 has none), so older targets get the
``jax.tree_util.tree_*`` spelling.  A name imported on its own (``from jax import tree_map``)
is fixed at its import instead, to ``jax.tree_util``, where the API history shows that name on
every release of the target range.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Callable, List, Optional

from jaxmigrate.migrator import lazycst as cst, references as refs
from jaxmigrate.migrator.context import Context, NameSite
from jaxmigrate.migrator.rule import Example, Lifecycle, Rule, Safety
from jaxmigrate.migrator.target import dated_no_later_than_array_floor
from jaxmigrate.migrator.version import Version
from jaxmigrate.rules._ast_renames import renames_through_package
from jaxmigrate.rules._ast_sites import AnswersAtSites
from jaxmigrate.rules._renames import Move, RenameRule
from jaxmigrate.rules._tree import TREE_FUNCTIONS, holds_throughout, replacement_for

if TYPE_CHECKING:  # pragma: no cover
    from jaxmigrate.migrator.astfixes import AstEdit
    from jaxmigrate.migrator.astview import AstView

# Each legacy name as it is fixed where a name or a module binds it: its ``jax.tree_util``
# spelling (``from jax import tree_map`` -> ``from jax.tree_util import tree_map``).
AT_BINDINGS = tuple(Move(legacy, row.tree_util) for legacy, row in TREE_FUNCTIONS.items())


class TreeFunctions(AnswersAtSites, RenameRule, code="JAX701", safety=Safety.SAFE):
    """jax.tree_map / tree_multimap / tree_flatten / ... -> jax.tree.* (or jax.tree_util.* below
    0.4.25); a from-import of one -> jax.tree_util

    **What it does.** Replaces the top-level tree utilities `jax.tree_map`,
    `jax.tree_multimap`, `jax.tree_util.tree_multimap`, `jax.tree_flatten`,
    `jax.tree_leaves`, `jax.tree_structure`, `jax.tree_unflatten`, `jax.tree_transpose` and
    `jax.treedef_is_leaf` where the code reads them through `jax` (`jax.tree_map(...)`,
    `import jax as j; j.tree_map`) with `jax.tree.map`, `jax.tree.flatten`, ... .
    `tree_multimap` becomes `map` (it has been the same function since 0.3.5).

    **Imports.** A name imported on its own is fixed at its import, and its calls stay as
    they are: `from jax import tree_map, tree_leaves as leaves_of` becomes `from
    jax.tree_util import tree_map, tree_leaves as leaves_of` (an alias is kept).  So is a name
    read through a module bound to `jax.tree_util`: `from jax import tree_util as tree;
    tree.tree_multimap(f, a, b)` becomes `tree.tree_map(f, a, b)`.  `jax.tree_util` has each
    function under the same name; the API history must show it there, not deprecated, on
    every release of the target range, or the calls are rewritten as above and the legacy
    import goes once nothing uses it.

    **Renamed calls.** `tree_multimap`'s replacement has another name, so its uses are
    renamed with the import (`from jax.tree_util import tree_map`, `tree_multimap(f, a, b)`
    -> `tree_map(f, a, b)`): the call then says what it calls, and no dead name lives on in
    the module.  The import keeps the old name (`from jax.tree_util import tree_map as
    tree_multimap`) only where renaming could change what a name means or break an importer:
    where `tree_map` is bound to something else anywhere in the module (a parameter, a
    `def`, another import), where `__all__` lists `tree_multimap`, or where the module
    imports it without using it (a re-export other modules import by that name).

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

    # Its hooks read their sites, the names those resolve to, the imports and ``__all__``, and
    # whether ``tree_map`` is free in any scope (as JAX903's do: the piecewise path checks
    # that a name the migrated imports bind anew is bound in no statement it leaves out).
    whole_module = False

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
    moves = AT_BINDINGS
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
            import jax

            out = jax.tree_multimap(lambda a, b: a + b, x, jax.tree_map(abs, y))
            """,
            after="""
            import jax

            out = jax.tree_util.tree_map(lambda a, b: a + b, x, jax.tree_util.tree_map(abs, y))
            """,
        ),
        Example(
            title="a from-import is fixed where it is, and its calls stay",
            before="""
            from jax import tree_leaves as leaves_of, tree_map


            def scaled_total(tree, k):
                return sum(leaves_of(tree_map(lambda x: k * x, tree)))
            """,
            after="""
            from jax.tree_util import tree_leaves as leaves_of, tree_map


            def scaled_total(tree, k):
                return sum(leaves_of(tree_map(lambda x: k * x, tree)))
            """,
        ),
        Example(
            title="tree_multimap is renamed with its import, and through jax.tree_util",
            before="""
            from jax import tree_util as tree
            from jax.tree_util import tree_multimap


            def add(a, b):
                return tree_multimap(lambda x, y: x + y, a, b)


            def biggest(a, b):
                return tree.tree_multimap(max, a, b)
            """,
            after="""
            from jax import tree_util as tree
            from jax.tree_util import tree_map


            def add(a, b):
                return tree_map(lambda x, y: x + y, a, b)


            def biggest(a, b):
                return tree.tree_map(max, a, b)
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

    def ast_edits(self, view: AstView) -> Optional[List[AstEdit]]:
        """The calls through ``jax`` (the hook's last case, where ``ctx.ref`` reuses ``import
        jax``), written from ``ast``: :mod:`rules._ast_renames`."""
        return renames_through_package(
            view, self.code, self.names, self.legacy_modules, self._modern_of(view.target)
        )

    def _modern_of(self, target: Version) -> Callable[[str], Optional[str]]:
        return lambda qualname: (
            None if self.move_for(qualname) is None else replacement_for(qualname, target)
        )

    def allowed(self, move: Move, ctx: Context) -> bool:
        """The ``jax.tree_util`` spelling is there, and not deprecated, on every release of the
        target range (the API history says)."""
        return holds_throughout(move.modern, ctx.target, ctx.upper)

    def visit_name(self, site: NameSite, ctx: Context) -> None:
        move = self.move_for(site.qualname)
        if move is None:
            return
        if site.is_import:
            if isinstance(site.parent, cst.ImportFrom) and self.allowed(move, ctx):
                self._rewrite_import(site.parent, site, ctx)
            return  # else the import goes once nothing uses it
        if isinstance(site.node, cst.Name) and self._bound_in_place(site, ctx):
            self._visit_bare_name(site, move, ctx)  # renamed with its import, if need be
            return
        if self._through_module(site, move, ctx):
            return
        modern = replacement_for(site.qualname, ctx.target)
        ctx.replace(site.node, ctx.ref(modern, site.scope), f"{site.qualname} -> {modern}")

    def _bound_in_place(self, site: NameSite, ctx: Context) -> bool:
        """Is the name at ``site`` bound only by imports this rule rewrites in place?"""
        bindings = site.scope.lookup(site.node.value)  # type: ignore[attr-defined]
        if not bindings:
            return False
        return all(
            binding.node is not None and self._in_place_binding(binding, ctx) is not None
            for binding in bindings
        )

    def _through_module(self, site: NameSite, move: Move, ctx: Context) -> bool:
        """``tu.tree_multimap`` where ``tu`` is ``jax.tree_util`` (``import jax.tree_util as
        tu``, ``from jax import tree_util``) -> ``tu.tree_map``: the module's own name stays
        (done: True).  ``jax.tree_util.tree_multimap`` through ``jax`` is a call site like
        ``jax.tree_map``."""
        node = site.node
        if not (isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name)):
            return False
        if ctx.qualname(node.value, site.scope) != move.modern_module:
            return False
        if not self.allowed(move, ctx):
            return False
        ctx.replace(
            node,
            node.with_changes(attr=cst.Name(move.modern_name)),
            f"{site.qualname} -> {move.modern}",
        )
        return True


@functools.cache
def _floor_neutral(low: Version) -> bool:
    written = (replacement_for(legacy, low) for legacy in TREE_FUNCTIONS)
    return dated_no_later_than_array_floor((*TREE_FUNCTIONS, *written))
