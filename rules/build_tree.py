"""JAX702 build-tree: ``jax.tree_util.build_tree(treedef, xs)`` -> ``jax.tree.unflatten``.

Deprecated in jax 0.6.0 (release notes) and gone from ``jax/tree_util.py`` in 0.7.0.
Only conditionally equivalent: ``build_tree`` takes a *nested* iterable that mirrors the treedef,
``unflatten`` takes the flat leaves, so the fix flattens ``xs`` first.  That reproduces the
leaf order only when no leaf value of ``xs`` is itself a pytree container or ``None``, which
cannot be checked statically: the fix is unsafe.
"""

from __future__ import annotations

from typing import Optional, Tuple

from jaxmigrate.migrator import lazycst as cst, references as refs
from jaxmigrate.migrator.context import Context, NameSite
from jaxmigrate.migrator.rule import Example, Lifecycle, Rule, Safety
from jaxmigrate.rules._helpers import called
from jaxmigrate.rules._tree import modern_tree_name

MESSAGE = "jax.tree_util.build_tree was removed in JAX 0.7.0; use jax.tree.unflatten"
RECIPE = (
    "jax.tree_util.build_tree was removed in JAX 0.7.0; use jax.tree.unflatten(treedef, leaves) "
    "with the flat leaves (build_tree took a nested iterable mirroring the treedef)."
)


def _arguments(call: cst.Call) -> Optional[Tuple[cst.BaseExpression, cst.BaseExpression]]:
    """(treedef, xs) of ``build_tree(treedef, xs)`` in positional or keyword form."""
    found = {}
    for index, arg in enumerate(call.args):
        if arg.star:
            return None
        if arg.keyword is None:
            key = ("treedef", "xs")[index] if index < 2 else None
        else:
            key = arg.keyword.value
        if key not in ("treedef", "xs") or key in found:
            return None
        found[key] = arg.value
    if len(found) != 2:
        return None
    return found["treedef"], found["xs"]


class BuildTree(Rule, code="JAX702", safety=Safety.UNSAFE):
    """jax.tree_util.build_tree(treedef, xs) -> jax.tree.unflatten(treedef, jax.tree.leaves(xs))

    **What it does.** Rewrites `jax.tree_util.build_tree(treedef, xs)` as
    `jax.tree.unflatten(treedef, jax.tree.leaves(xs))` (`jax.tree_util.tree_unflatten` /
    `tree_leaves` for targets below 0.4.25).  Other uses of `build_tree` (passing the
    function around) are reported.

    **Why.** `build_tree` was deprecated in JAX 0.6.0 and removed in 0.7.0.

    **Why unsafe.** `build_tree` takes a nested iterable that mirrors the treedef (a list of
    children per node), `unflatten` takes the flat list of leaves.  Flattening `xs` with
    `jax.tree.leaves` gives the same leaves only when no leaf value is itself a list, tuple,
    dict or `None`; such values would be flattened too (usually a loud length error, but a
    1-tuple leaf silently loses its tuple).  Where you already have the flat leaves, pass them
    to `jax.tree.unflatten` directly.
    """

    whole_module = False  # hooks read their sites and the names those resolve to

    unsafe_fixes_only = True  # (all its fixes are unsafe: the survey runs it only with them)
    # no gate: below 0.4.25 the spelling is jax.tree_util.tree_unflatten / tree_leaves
    lifecycle = Lifecycle(
        deprecated=("0.6.0", "jax.tree_util.build_tree deprecated; use jax.tree.unflatten"),
        removed=("0.7.0", "jax.tree_util.build_tree removed"),
    )
    references = (refs.api("jax.tree.unflatten"),)
    names = frozenset({"jax.tree_util.build_tree"})
    examples = (
        Example(
            unsafe_fixes=True,
            before="""
            import jax

            tree = jax.tree_util.build_tree(treedef, [[1, 2], [3, 4]])
            """,
            after="""
            import jax

            tree = jax.tree.unflatten(treedef, jax.tree.leaves([[1, 2], [3, 4]]))
            """,
        ),
        Example.reported(
            title="without --unsafe-fixes it is reported",
            code="""
            from jax.tree_util import build_tree

            tree = build_tree(treedef, xs)
            """,
        ),
    )

    def visit_name(self, site: NameSite, ctx: Context) -> None:
        if site.is_import:
            return  # the import goes once nothing uses it
        call = called(site)
        arguments = _arguments(call) if call is not None else None
        if call is None or arguments is None:
            ctx.report(site.node, MESSAGE, RECIPE)
            return
        treedef, xs = arguments
        unflatten = ctx.ref(modern_tree_name("unflatten", ctx.target), site.scope)
        leaves = ctx.ref(modern_tree_name("leaves", ctx.target), site.scope)
        new = cst.Call(
            func=unflatten,
            args=[
                cst.Arg(treedef, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
                cst.Arg(cst.Call(func=leaves, args=[cst.Arg(xs)])),
            ],
        )
        ctx.replace(
            call,
            new,
            "build_tree(treedef, xs) -> unflatten(treedef, leaves(xs))",
            detail="Check that no leaf of xs is a list/tuple/dict/None (leaves(xs) treats those "
            "as subtrees).",
        )
