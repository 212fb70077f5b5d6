"""JAX204 from-gda: ``pjit(f, in_axis_resources=FROM_GDA)`` -> ``pjit(f)``.

``FROM_GDA`` is deprecated in jax 0.4.7 (release notes), no longer defined in
``jax/experimental/pjit.py`` from 0.4.8 (AttributeError) and listed as removed in the 0.4.11
release notes.  The jax.Array migration guide's "FROM_GDA and jax.Array" section: with
jax.Array, inputs carry their sharding, so an all-``FROM_GDA`` ``in_shardings`` is simply
dropped.  ``FROM_GDA`` mixed with specs for host-local NumPy inputs needs
``multihost_utils.host_local_array_to_global_array`` on those inputs (HUMAN).  Where every call
site is known, under a ``with mesh:``, and each non-FROM_GDA argument is a name bound from a
NumPy call, the guide's recipe is applied as an UNSAFE fix (in_shardings dropped, the NumPy
inputs converted before each call); everything else is reported with the recipe.
"""

from __future__ import annotations

from typing import List, Optional, Tuple

from jaxmigrate.migrator import lazycst as cst, references as refs
from jaxmigrate.migrator.context import Context, NameSite
from jaxmigrate.migrator.rule import Example, Lifecycle, Rule, Safety, Safety as _Safety
from jaxmigrate.rules import _multiprocess as mp
from jaxmigrate.rules._name_refs import module_ref
from jaxmigrate.rules._pjit import (
    FROM_GDA,
    PARTITION_SPEC_NAMES,
    call_qualname,
    compiled_of,
    get_keyword,
    is_pjit_call,
    normalized_args,
    qualname_of,
)
from jaxmigrate.rules._pjit_mesh import innermost_mesh_with

MULTIHOST = "jax.experimental.multihost_utils"

RECIPE = (
    "drop in_shardings and convert the non-FROM_GDA inputs to global jax.Arrays before the call: "
    "`a, b = multihost_utils.host_local_array_to_global_array((a, b), mesh, (spec_a, spec_b))` "
    "(on a single process `jax.device_put(a, NamedSharding(mesh, spec_a))` is equivalent)"
)
BY_HAND = "drop in_shardings, make the other inputs global"  # RECIPE in a few words


class FromGda(Rule, code="JAX204", safety=Safety.SAFE):
    """pjit(f, in_axis_resources=FROM_GDA) -> pjit(f): jax.Array inputs carry their sharding

    **What it does.** Removes `in_shardings=FROM_GDA` / `in_axis_resources=FROM_GDA` (also a
    tuple or list made only of `FROM_GDA`) from `pjit` calls and `partial(pjit, ...)`
    decorators; other keywords are renamed to `in_shardings`/`out_shardings` on the way.
    `FROM_GDA` mixed with PartitionSpecs (a flat tuple/list) is rewritten by the migration
    guide's recipe when every call site is known, sits in a `with mesh:` block and passes
    names bound from NumPy calls for the PartitionSpec positions: `in_shardings` is dropped
    and those inputs are converted with `multihost_utils.host_local_array_to_global_array`
    before each call (an unsafe fix: applied with `--unsafe-fixes`, otherwise reported).
    Other mixed uses, or `FROM_GDA` anywhere else, are reported with the recipe.

    **Why.** `FROM_GDA` told pjit to take each input's sharding from its GlobalDeviceArray.
    With `jax.Array` every input carries its sharding and computation follows it, so the
    argument is not needed; `FROM_GDA` raises AttributeError from JAX 0.4.8.  `FROM_GDA` only
    ever accepted GDA inputs, which are `jax.Array`s once migrated, so dropping it keeps the
    behaviour.  Where it is mixed with specs for NumPy (host-local) inputs, those inputs must
    become global arrays first: which ones are host-local is only known at run time.

    **Use instead.** `pjit(f, out_shardings=...)` (then `jax.jit`, JAX202); for mixed inputs,
    `multihost_utils.host_local_array_to_global_array(np_inputs, mesh, specs)` before the call.
    """

    lifecycle = Lifecycle(
        needs="0.4.4", deprecated=("0.4.7", "FROM_GDA deprecated"), removed="0.4.8"
    )
    references = (
        refs.source_at("0.4.8", "jax/experimental/pjit.py", "FROM_GDA no longer defined"),
        refs.release_notes("0.4.11", "FROM_GDA listed as removed"),
        refs.array_migration("FROM_GDA and jax.Array"),
    )
    names = frozenset({FROM_GDA})
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
        Example.reported(
            title="mixed with specs for NumPy inputs: reported",
            code="""
            from jax.experimental.pjit import pjit, FROM_GDA
            from jax.sharding import PartitionSpec as P

            f = pjit(step, in_shardings=(FROM_GDA, P('x')), out_shardings=None)
            """,
        ),
        Example(
            title="mixed, NumPy inputs at known call sites",
            before="""
            import numpy as np
            from jax.experimental.pjit import pjit, FROM_GDA
            from jax.sharding import PartitionSpec as P

            f = pjit(step, in_shardings=(FROM_GDA, P('x')), out_shardings=None)

            def main(mesh, gda):
                batch = np.ones((8, 4))
                with mesh:
                    return f(gda, batch)
            """,
            after="""
            import numpy as np
            from jax.experimental import multihost_utils
            from jax.experimental.pjit import pjit
            from jax.sharding import PartitionSpec as P

            f = pjit(step, out_shardings=None)

            def main(mesh, gda):
                batch = np.ones((8, 4))
                with mesh:
                    batch = multihost_utils.host_local_array_to_global_array(batch, mesh, P('x'))
                    return f(gda, batch)
            """,
            unsafe_fixes=True,
        ),
    )

    def visit_name(self, site: NameSite, ctx: Context) -> None:
        if site.is_import:
            return
        found = self._pjit_argument(site, ctx)
        if found is None:
            ctx.report(
                site.node,
                "FROM_GDA no longer exists; remove it and pass nothing for in_shardings",
                "jax.Array inputs carry their sharding: FROM_GDA has no successor.",
            )
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
            ctx.report(site.node, f"FROM_GDA in an unusual place: {BY_HAND}", f"{RECIPE}.")
            return
        leaves = self._leaves(in_arg.value)
        kinds = [qualname_of(ctx, leaf, site.scope) == FROM_GDA for leaf in leaves]
        if leaves and all(kinds):
            ctx.replace(
                call,
                _without(call, args, in_arg),
                "FROM_GDA: in_shardings dropped (jax.Array inputs carry their sharding)",
            )
            return
        positions = [str(i) for i, is_gda in enumerate(kinds) if not is_gda]
        if self._fix_mixed(ctx, call, through_partial, args, in_arg, leaves, kinds, site):
            return
        ctx.report(
            call,
            f"FROM_GDA mixed with specs: {BY_HAND}",
            f"FROM_GDA mixed with specs (inputs {', '.join(positions)} are not GDAs): {RECIPE}.",
        )

    def _fix_mixed(
        self,
        ctx: Context,
        call: cst.Call,
        through_partial: bool,
        args: List[cst.Arg],
        in_arg: cst.Arg,
        leaves: List[cst.BaseExpression],
        kinds: List[bool],
        site: NameSite,
    ) -> bool:
        """The guide's recipe where every call site is known: drop in_shardings and convert the
        NumPy-bound inputs with host_local_array_to_global_array first (UNSAFE: which inputs
        are host-local is decided from their NumPy assignments)."""
        if not isinstance(in_arg.value, (cst.Tuple, cst.List)) or len(leaves) != len(
            in_arg.value.elements
        ):
            return False  # nested pytrees: report
        scope = site.scope
        for leaf, is_gda in zip(leaves, kinds):
            if not is_gda and call_qualname(ctx, leaf, scope) not in PARTITION_SPEC_NAMES:
                return False
        compiled = compiled_of(ctx, call, through_partial)
        if not compiled.complete or not compiled.calls:
            return False
        holder_statement = self._statement(ctx, call)
        plans: List[
            Tuple[cst.SimpleStatementLine, List[str], List[cst.BaseExpression], cst.BaseExpression]
        ] = []
        for use in compiled.calls:
            if len(use.args) != len(leaves) or any(
                a.keyword is not None or a.star for a in use.args
            ):
                return False
            statement = mp.block_statement(ctx, use)
            if statement is None or statement is holder_statement:
                return False
            with_mesh = innermost_mesh_with(ctx, use)
            if with_mesh is None or with_mesh.bind is not None:
                return False
            use_scope = ctx.scope_of(use)
            names: List[str] = []
            specs: List[cst.BaseExpression] = []
            for arg, leaf, is_gda in zip(use.args, leaves, kinds):
                if is_gda:
                    continue
                if not mp.host_local(ctx, arg.value):
                    return False
                if call_qualname(ctx, leaf, use_scope) not in PARTITION_SPEC_NAMES:
                    return False  # the spec's name is not visible at the call site
                names.append(arg.value.value)  # type: ignore[attr-defined]
                specs.append(leaf)
            plans.append((statement, names, specs, with_mesh.expr))
        if len({id(p[0]) for p in plans}) != len(plans):
            return False
        ctx.replace(
            call,
            _without(call, args, in_arg),
            "FROM_GDA mixed with specs: in_shardings dropped, NumPy inputs made global",
            safety=_Safety.UNSAFE,
            detail="in_shardings dropped, the NumPy inputs are converted with "
            "host_local_array_to_global_array at each call site.",
        )
        for statement, names, specs, mesh in plans:
            utils = module_ref(ctx, MULTIHOST, ctx.scope_of(statement))
            convert = self._convert(ctx, utils, names, specs, mesh)
            body = [
                convert.with_changes(leading_lines=statement.leading_lines),
                statement.with_changes(leading_lines=()),
            ]
            ctx.replace(
                statement,
                cst.FlattenSentinel(body),
                f"FROM_GDA mixed: NumPy {mp.listed(names, 20)} -> host_local_array_to_global_array",
                safety=_Safety.UNSAFE,
                detail=f"NumPy input(s) {', '.join(names)} -> host_local_array_to_global_array.",
            )
        return True

    @staticmethod
    def _statement(ctx: Context, node: cst.CSTNode) -> Optional[cst.CSTNode]:
        for ancestor in ctx.ancestors(node):
            if isinstance(ancestor, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                return ancestor
        return None

    @staticmethod
    def _convert(
        ctx: Context,
        utils: cst.BaseExpression,
        names: List[str],
        specs: List[cst.BaseExpression],
        mesh: cst.BaseExpression,
    ) -> cst.SimpleStatementLine:
        comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))

        def pack(items: List[cst.BaseExpression]) -> cst.BaseExpression:
            if len(items) == 1:
                return items[0]
            elements = [cst.Element(item, comma=comma) for item in items[:-1]] + [
                cst.Element(items[-1])
            ]
            return cst.Tuple(elements)

        value = cst.Call(
            func=cst.Attribute(
                value=ctx.copy(utils), attr=cst.Name("host_local_array_to_global_array")
            ),
            args=[
                cst.Arg(pack([cst.Name(n) for n in names]), comma=comma),
                cst.Arg(ctx.copy(mesh), comma=comma),
                cst.Arg(pack([ctx.copy(s) for s in specs])),
            ],
        )
        target: cst.BaseAssignTargetExpression = (
            cst.Name(names[0])
            if len(names) == 1
            else cst.Tuple(
                [cst.Element(cst.Name(n), comma=comma) for n in names[:-1]]
                + [cst.Element(cst.Name(names[-1]))],
                lpar=[],
                rpar=[],
            )
        )
        return cst.SimpleStatementLine(
            body=[cst.Assign(targets=[cst.AssignTarget(target)], value=value)]
        )

    @staticmethod
    def _pjit_argument(site: NameSite, ctx: Context) -> Optional[Tuple[cst.Call, bool]]:
        for ancestor in ctx.ancestors(site.node):
            if isinstance(ancestor, cst.Arg):
                call = ctx.parent(ancestor)
                if not isinstance(call, cst.Call):
                    return None  # a class's base
                through = is_pjit_call(ctx, call, ctx.scope_of(call))
                if through is not None:
                    return call, through
                return None
            if not isinstance(ancestor, (cst.Tuple, cst.List, cst.Element)):
                return None
        return None

    @staticmethod
    def _contains(ctx: Context, expr: cst.BaseExpression, site: NameSite) -> bool:
        return any(leaf is site.node for leaf in FromGda._leaves(expr))

    @staticmethod
    def _leaves(expr: cst.BaseExpression) -> List[cst.BaseExpression]:
        if isinstance(expr, (cst.Tuple, cst.List)):
            result: List[cst.BaseExpression] = []
            for element in expr.elements:
                result.extend(FromGda._leaves(element.value))
            return result
        return [expr]


def _without(call: cst.Call, args: List[cst.Arg], in_arg: cst.Arg) -> cst.Call:
    """``call`` with ``args`` less ``in_arg``; the new last argument keeps a trailing comma
    only if the call's last argument had one."""
    new_args = [a for a in args if a is not in_arg]
    if (
        new_args
        and new_args[-1].comma is not cst.MaybeSentinel.DEFAULT
        and call.args[-1].comma is cst.MaybeSentinel.DEFAULT
    ):
        new_args[-1] = new_args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return call.with_changes(args=new_args)
