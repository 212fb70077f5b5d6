"""JAX204 from-gda: ``pjit(f, in_axis_resources=FROM_GDA)`` -> ``pjit(f)``.

Implements catalog row PJ-3 (``FROM_GDA`` deprecated in 0.4.7, CL 0.4.7; already raises
AttributeError from 0.4.8, F jax/experimental/pjit.py@0.4.8, gotcha 12.9; listed as removed in
CL 0.4.11) and the migration guide's "FROM_GDA and jax.Array" section (MIG; seed
jax_array_migration_zh.txt): with jax.Array, inputs carry their sharding, so an all-``FROM_GDA``
``in_shardings`` is simply dropped.  ``FROM_GDA`` mixed with specs for host-local NumPy inputs
needs ``multihost_utils.host_local_array_to_global_array`` on those inputs (HUMAN): reported
with the recipe.
"""

from __future__ import annotations

from typing import List, Optional, Tuple

import libcst as cst

from migrator.context import Context, NameSite
from migrator.rule import Example, Rule, Safety
from rules._pjit import FROM_GDA, get_keyword, is_pjit_call, normalized_args, qualname_of

RECIPE = (
    "drop in_shardings and convert the non-FROM_GDA inputs to global jax.Arrays before the call: "
    "`a, b = multihost_utils.host_local_array_to_global_array((a, b), mesh, (spec_a, spec_b))` "
    "(on a single process `jax.device_put(a, NamedSharding(mesh, spec_a))` is equivalent)"
)


class FromGda(Rule):
    code = "JAX204"
    name = "from-gda"
    summary = "pjit(f, in_axis_resources=FROM_GDA) -> pjit(f): jax.Array inputs carry their sharding"
    safety = Safety.SAFE
    needs_jax = "0.4.4"
    deprecated_in = "0.4.7"
    removed_in = "0.4.8"
    catalog = ("PJ-3",)
    names = frozenset({FROM_GDA})
    doc = """
    **What it does.** Removes `in_shardings=FROM_GDA` / `in_axis_resources=FROM_GDA` (also a
    tuple or list made only of `FROM_GDA`) from `pjit` calls and `partial(pjit, ...)`
    decorators; other keywords are renamed to `in_shardings`/`out_shardings` on the way.
    `FROM_GDA` mixed with PartitionSpecs, or used anywhere else, is reported with the recipe.

    **Why.** `FROM_GDA` told pjit to take each input's sharding from its GlobalDeviceArray.
    With `jax.Array` every input carries its sharding and computation follows it, so the
    argument is not needed; `FROM_GDA` raises AttributeError from JAX 0.4.8.  `FROM_GDA` only
    ever accepted GDA inputs, which are `jax.Array`s once migrated, so dropping it keeps the
    behaviour.  Where it is mixed with specs for NumPy (host-local) inputs, those inputs must
    become global arrays first: which ones are host-local is only known at run time.

    **Use instead.** `pjit(f, out_shardings=...)` (then `jax.jit`, JAX202); for mixed inputs,
    `multihost_utils.host_local_array_to_global_array(np_inputs, mesh, specs)` before the call.
    """
    examples = (
        Example(
            before="""
            from jax.experimental.pjit import pjit, FROM_GDA
            from jax.sharding import PartitionSpec as P

            f = pjit(step, in_axis_resources=FROM_GDA, out_axis_resources=P('x'))
            """,
            after="""
            from jax.experimental.pjit import pjit
            from jax.sharding import PartitionSpec as P

            f = pjit(step, out_shardings=P('x'))
            """,
        ),
        Example(
            title="mixed with specs for NumPy inputs: reported",
            before="""
            from jax.experimental.pjit import pjit, FROM_GDA
            from jax.sharding import PartitionSpec as P

            f = pjit(step, in_shardings=(FROM_GDA, P('x')), out_shardings=None)
            """,
            after="""
            from jax.experimental.pjit import pjit, FROM_GDA
            from jax.sharding import PartitionSpec as P

            f = pjit(step, in_shardings=(FROM_GDA, P('x')), out_shardings=None)
            """,
        ),
    )

    def visit_name(self, site: NameSite, ctx: Context) -> None:
        if site.is_import:
            return
        found = self._pjit_argument(site, ctx)
        if found is None:
            ctx.report(site.node, "FROM_GDA no longer exists (jax.Array inputs carry their sharding): "
                       "remove it; pass nothing for in_shardings")
            return
        call, through_partial = found
        if id(call) in ctx.edits:
            return  # JAX201's renames go first
        args, ok = normalized_args(ctx, call, through_partial, site.scope)
        if not ok:
            return  # both spellings: JAX201 reports it
        args = list(args if args is not None else call.args)
        in_arg = get_keyword(args, "in_shardings")
        if in_arg is None or not self._contains(ctx, in_arg.value, site):
            ctx.report(site.node, f"FROM_GDA in an unusual place: {RECIPE}")
            return
        leaves = self._leaves(in_arg.value)
        kinds = [qualname_of(ctx, leaf, site.scope) == FROM_GDA for leaf in leaves]
        if leaves and all(kinds):
            new_args = [a for a in args if a is not in_arg]
            if new_args and new_args[-1].comma is not cst.MaybeSentinel.DEFAULT and call.args[-1].comma is cst.MaybeSentinel.DEFAULT:
                new_args[-1] = new_args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            ctx.replace(call, call.with_changes(args=new_args), "FROM_GDA: in_shardings dropped (jax.Array inputs carry their sharding)")
            return
        positions = [str(i) for i, is_gda in enumerate(kinds) if not is_gda]
        ctx.report(
            call,
            f"FROM_GDA mixed with specs (inputs {', '.join(positions)} are not GDAs): {RECIPE}",
        )

    @staticmethod
    def _pjit_argument(site: NameSite, ctx: Context) -> Optional[Tuple[cst.Call, bool]]:
        node: cst.CSTNode = site.node
        for ancestor in ctx.ancestors(site.node):
            if isinstance(ancestor, cst.Arg):
                call = ctx.parent(ancestor)
                through = is_pjit_call(ctx, call, ctx.scope_of(call))
                if through is not None:
                    return call, through  # type: ignore[return-value]
                return None
            if not isinstance(ancestor, (cst.Tuple, cst.List, cst.Element)):
                return None
            node = ancestor
        return None

    @staticmethod
    def _contains(ctx: Context, expr: cst.CSTNode, site: NameSite) -> bool:
        return any(leaf is site.node for leaf in FromGda._leaves(expr))

    @staticmethod
    def _leaves(expr: cst.BaseExpression) -> List[cst.BaseExpression]:
        if isinstance(expr, (cst.Tuple, cst.List)):
            result: List[cst.BaseExpression] = []
            for element in expr.elements:
                result.extend(FromGda._leaves(element.value))
            return result
        return [expr]
