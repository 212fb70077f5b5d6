"""JAX307 multihost-none-pspec: ``None`` pspecs of the multihost array converters -> ``P()``.

Safe.  jax 0.4.13 release notes: ``None`` is no longer a valid pspec for
``multihost_utils.host_local_array_to_global_array`` and ``global_array_to_host_local_array``;
use ``PartitionSpec()`` to replicate.
"""

from __future__ import annotations

import ast
from typing import List, Optional

from jaxmigrate.migrator import lazycst as cst, references as refs
from jaxmigrate.migrator.astview import AstView
from jaxmigrate.migrator.context import Context, NameSite
from jaxmigrate.migrator.diagnostics import Diagnostic
from jaxmigrate.migrator.rule import Example, Lifecycle, Rule, Safety
from jaxmigrate.rules._ast_sites import Resolver, called_at, may_be_sites, name_sites

MULTIHOST = "jax.experimental.multihost_utils"
PSPEC = "jax.sharding.PartitionSpec"


class MultihostNonePspec(Rule, code="JAX307", safety=Safety.SAFE):
    """None pspecs in host_local_array_to_global_array / global_array_to_host_local_array -> P()

    **What it does.** In calls of `multihost_utils.host_local_array_to_global_array` and
    `global_array_to_host_local_array`, replaces a `None` pspecs argument, and `None`
    leaves of tuple, list and dict literals of pspecs, with `PartitionSpec()` (reusing the
    module's `P` alias or importing `PartitionSpec` from `jax.sharding`).  A `None`
    *inside* a `PartitionSpec(...)` (an unsharded dimension) is left alone.

    **Why.** JAX 0.4.13 made `None` invalid here (to a pytree, `None` is an empty subtree,
    not a leaf); `P()` means replicated, which is what `None` meant before.

    **Use instead.** `jax.sharding.PartitionSpec()` (`P()`) for a replicated input or output.
    """

    whole_module = False  # hooks read their sites and the names those resolve to

    lifecycle = Lifecycle(needs="0.4.1")
    references = (
        refs.release_notes(
            "0.4.13", "None is no longer a valid pspec for the multihost array converters"
        ),
        refs.api("jax.experimental.multihost_utils.host_local_array_to_global_array"),
    )
    names = frozenset(
        {
            f"{MULTIHOST}.host_local_array_to_global_array",
            f"{MULTIHOST}.global_array_to_host_local_array",
        }
    )
    names_are_legacy = False  # both functions still exist: never drop their imports
    examples = (
        Example(
            title="pspecs with None leaves",
            before="""
            from jax.experimental import multihost_utils
            from jax.sharding import PartitionSpec as P

            a, b = multihost_utils.host_local_array_to_global_array((x, y), mesh, (P('data'), None))
            out = multihost_utils.global_array_to_host_local_array(z, mesh, None)
            """,
            after="""
            from jax.experimental import multihost_utils
            from jax.sharding import PartitionSpec as P

            a, b = multihost_utils.host_local_array_to_global_array((x, y), mesh, (P('data'), P()))
            out = multihost_utils.global_array_to_host_local_array(z, mesh, P())
            """,
        ),
    )

    def visit_name(self, site: NameSite, ctx: Context) -> None:
        if site.is_import:
            return
        parent = site.parent
        if not (isinstance(parent, cst.Call) and parent.func is site.node):
            return
        pspecs = _pspecs_arg(parent)
        if pspecs is None:
            return
        for none in _none_leaves(pspecs.value):
            replicated = cst.Call(func=ctx.ref(PSPEC, site.scope, prefer_from=True))
            ctx.replace(
                none, replicated, "None pspec -> PartitionSpec() (None is invalid since JAX 0.4.13)"
            )

    def ast_findings(self, view: AstView) -> Optional[List[Diagnostic]]:
        """:meth:`visit_name` on ``ast``: it never reports, so nothing (``[]``) where no call
        of the converters passes a ``None`` pspec leaf; None (LibCST fixes) where one does.
        Where the view cannot tell which chains are sites (JAX's own ``pmap.py`` imports
        ``multihost_utils`` inside the functions that call it), every chain that may be one is
        read.  Its imports stay (``names_are_legacy`` is False)."""
        resolver = Resolver(view, self.names)
        sites = name_sites(view, resolver)
        calls = called_at(view, may_be_sites(view, resolver) if sites is None else sites)
        for call in calls.values():
            pspecs = _ast_pspecs_arg(call)
            if pspecs is not None and _ast_has_none_leaf(pspecs):
                return None
        return []


def _ast_pspecs_arg(call: ast.Call) -> Optional[ast.expr]:
    """:func:`_pspecs_arg` on ``ast`` (a ``*`` or ``**`` argument is one of LibCST's
    positional ``Arg``s with a star)."""
    for keyword in call.keywords:
        if keyword.arg == "pspecs":
            return keyword.value
    if any(type(arg) is ast.Starred for arg in call.args) or any(
        keyword.arg is None for keyword in call.keywords
    ):
        return None
    return call.args[2] if len(call.args) >= 3 else None


def _ast_has_none_leaf(expr: ast.expr) -> bool:
    """Would :func:`_none_leaves` find a leaf in ``expr``?"""
    if type(expr) is ast.Constant:
        return expr.value is None
    if type(expr) in (ast.Tuple, ast.List):
        elements = expr.elts  # type: ignore[attr-defined]
        return any(type(e) is not ast.Starred and _ast_has_none_leaf(e) for e in elements)
    if type(expr) is ast.Dict:
        pairs = zip(expr.keys, expr.values)
        return any(key is not None and _ast_has_none_leaf(value) for key, value in pairs)
    return False


def _pspecs_arg(call: cst.Call) -> Optional[cst.Arg]:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "pspecs":
            return arg
    positional = [arg for arg in call.args if arg.keyword is None]
    if any(arg.star for arg in positional):
        return None
    return positional[2] if len(positional) >= 3 else None


def _none_leaves(expr: cst.BaseExpression):  # noqa: ANN202
    if isinstance(expr, cst.Name) and expr.value == "None":
        yield expr
    elif isinstance(expr, (cst.Tuple, cst.List)):
        for element in expr.elements:
            if isinstance(element, cst.Element):
                yield from _none_leaves(element.value)
    elif isinstance(expr, cst.Dict):
        for entry in expr.elements:
            if isinstance(entry, cst.DictElement):
                yield from _none_leaves(entry.value)
