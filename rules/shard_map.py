"""JAX601 shard-map: ``jax.experimental.shard_map.shard_map`` -> ``jax.shard_map``.

The keyword-only signature (0.6.1 adds ``jax.shard_map``, 0.8.0 deprecates the experimental
one: release notes), ``check_rep`` -> ``check_vma`` (a semantic change since 0.6.0:
scan/fori_loop/while_loop carries that start replicated are rejected) and ``auto=A`` ->
``axis_names=frozenset(mesh.axis_names) - A`` (the formula the experimental
wrapper used in 0.6.1-0.7.2; ``auto=`` was removed from the experimental API in 0.8.0).
"""

from __future__ import annotations

from typing import List, Optional

from jaxmigrate.migrator import lazycst as cst, references as refs
from jaxmigrate.migrator.context import Context, NameSite
from jaxmigrate.migrator.rule import Example, Lifecycle, Rule, Safety
from jaxmigrate.rules._api_history import added_in
from jaxmigrate.rules._flow import local_function
from jaxmigrate.rules._helpers import UNSAFE_ROOM, call_target, fitting
from jaxmigrate.rules._mesh import (
    append_arg,
    is_literal,
    is_simple_reference,
    keyword_arg,
    loop_carry_in,
    with_separators,
)

LEGACY = "jax.experimental.shard_map.shard_map"
MODERN = "jax.shard_map"
# The legacy positional parameters, in order (``f`` stays positional in the new API).
ORDER = ("f", "mesh", "in_specs", "out_specs", "check_rep", "auto")

RECIPE = (
    "jax.shard_map's check_vma (which replaces check_rep) rejects a scan/fori_loop/while_loop "
    "carry that starts replicated and becomes varying; the fix uses check_vma=False (same values, "
    "no replication checks). To keep the checks instead, pass check_vma=True and start the carry "
    "as jax.lax.pcast(init, '<axis>', to='varying')"
)


class ShardMap(Rule, code="JAX601", safety=Safety.SAFE):
    """jax.experimental.shard_map.shard_map(f, mesh, in, out) -> jax.shard_map(f, mesh=, in_specs=,
    out_specs=)

    **What it does.** Replaces the experimental `shard_map` with `jax.shard_map`, in calls and
    in `functools.partial(shard_map, ...)` decorators.  Everything after the function becomes a
    keyword (`mesh=`, `in_specs=`, `out_specs=`), `check_rep=False` becomes `check_vma=False`,
    and `auto=A` becomes `axis_names=frozenset(mesh.axis_names) - A` (only when `mesh` is a
    plain name, since it is evaluated twice).

    `check_rep=True` (the default) becomes the default `check_vma=True` only when the rule can
    see the mapped function (a `def` or `lambda` in the same file, and the same-file functions
    it calls) and finds no `lax.scan`, `lax.fori_loop` or `lax.while_loop` in it.  Otherwise the
    fix uses `check_vma=False` and is unsafe (reported; applied with `--unsafe-fixes`).

    **Why.** `jax.shard_map` exists from JAX 0.6.1; the experimental module is deprecated since
    0.8.0.  The new function takes only keywords after `f`: `jax.shard_map(f, mesh, P('x'),
    P('x'))` raises `TypeError`.  The replication checker was replaced in 0.6.0 by the
    varying-manual-axes type system: a loop carry initialised with `jnp.zeros(...)` that
    accumulates a sharded value now fails with "carry input and carry output must have equal
    types".  `check_vma=False` computes the same values.

    **Use instead.** `jax.shard_map(f, mesh=mesh, in_specs=..., out_specs=...)`; to keep the
    checks around loops, initialise carries with `jax.lax.pcast(init, axis, to='varying')`.
    Below 0.6.1 the rule does not run (the experimental spelling is the only one there).
    The `check_rep` semantics question needs no source version: a `check_rep=` spelling is
    itself the evidence of code written for the checker before 0.6.0.
    """

    lifecycle = Lifecycle(
        needs=added_in("jax.shard_map"),
        deprecated=("0.8.0", "jax.experimental.shard_map deprecated"),
    )
    references = (
        refs.shard_map_guide(),
        refs.api("jax.shard_map"),
    )
    names = frozenset({LEGACY})
    examples = (
        Example(
            before="""
            import jax
            from jax.experimental.shard_map import shard_map
            from jax.sharding import PartitionSpec as P

            def body(x):
                return jax.lax.psum(x.sum(), 'x')

            f = shard_map(body, mesh, P('x'), P())
            g = shard_map(body, mesh, in_specs=P('x'), out_specs=P(), check_rep=False)
            """,
            after="""
            import jax
            from jax.sharding import PartitionSpec as P

            def body(x):
                return jax.lax.psum(x.sum(), 'x')

            f = jax.shard_map(body, mesh=mesh, in_specs=P('x'), out_specs=P())
            g = jax.shard_map(body, mesh=mesh, in_specs=P('x'), out_specs=P(), check_vma=False)
            """,
        ),
        Example(
            title="a loop carry in the body: check_vma=False",
            before="""
            import jax
            from jax.experimental.shard_map import shard_map

            def body(x):
                return jax.lax.scan(lambda c, v: (c + v, None), x[0] * 0, x)[0]

            f = shard_map(body, mesh, P('x'), P('x'))
            """,
            after="""
            import jax

            def body(x):
                return jax.lax.scan(lambda c, v: (c + v, None), x[0] * 0, x)[0]

            f = jax.shard_map(body, mesh=mesh, in_specs=P('x'), out_specs=P('x'), check_vma=False)
            """,
            unsafe_fixes=True,
        ),
        Example(
            title="auto= becomes axis_names=",
            before="""
            from functools import partial
            from jax.experimental.shard_map import shard_map

            @partial(shard_map, mesh=mesh, in_specs=P('a'), out_specs=P('a'), auto=frozenset({'b'}))
            def step(x):
                return x * 2
            """,
            after="""
            from functools import partial
            import jax

            @partial(jax.shard_map, mesh=mesh, in_specs=P('a'), out_specs=P('a'), axis_names=frozenset(mesh.axis_names) - frozenset({'b'}))
            def step(x):
                return x * 2
            """,  # noqa: E501
        ),
    )

    def visit_name(self, site: NameSite, ctx: Context) -> None:
        if site.is_import:
            return
        target = call_target(site)
        if target is None:
            ctx.report(
                site.node,
                "shard_map used as a value: use jax.shard_map (all but f keyword-only)",
                "Call jax.shard_map(f, mesh=..., in_specs=..., out_specs=...) instead (everything "
                "after f is keyword-only).",
            )
            return
        call, through_partial = target
        self._convert(site, call, through_partial, ctx)

    def _convert(self, site: NameSite, call: cst.Call, through_partial: bool, ctx: Context) -> None:
        args = list(call.args)
        head: List[cst.Arg] = []
        if through_partial:
            head, args = [args[0]], args[1:]
        if any(arg.star for arg in args):
            ctx.report(
                call,
                "shard_map with *args/**kwargs: convert to jax.shard_map by hand",
                "Convert to jax.shard_map(f, mesh=..., in_specs=..., out_specs=...) by hand "
                "(everything after f is keyword-only).",
            )
            return
        named = {}
        index = 0
        for arg in args:
            if arg.keyword is None:
                if index >= len(ORDER):
                    ctx.report(call, "shard_map called with too many positional arguments")
                    return
                named[ORDER[index]] = arg
                index += 1
            else:
                named[arg.keyword.value] = arg
        if "f" in named and named["f"].keyword is not None:
            ctx.report(call, "shard_map(f=...): jax.shard_map takes the function positionally")
            return
        if "check_vma" in named or "axis_names" in named:
            ctx.report(
                call, "shard_map already uses the new keywords: switch to jax.shard_map by hand"
            )
            return
        body = self._body(site, call, named.get("f"), through_partial, ctx)

        safety = Safety.SAFE
        reasons: List[str] = []
        change = ""  # what the message says of check_vma when the fix is unsafe
        check_rep = named.get("check_rep")
        check_vma: Optional[cst.BaseExpression] = None
        if check_rep is not None and is_literal(check_rep.value, "False"):
            check_vma = cst.Name("False")
        elif check_rep is None or is_literal(check_rep.value, "True"):
            loop = None if body is None else loop_carry_in(ctx, body, site.scope)
            if body is not None and loop is None:
                check_vma = cst.Name("True") if check_rep is not None else None
            else:
                safety = Safety.UNSAFE
                check_vma = cst.Name("False")
                where = (
                    "the mapped function is not visible here"
                    if body is None
                    else f"the mapped function uses {loop}"
                )
                reasons.append(f"{where}; {RECIPE}")
                change = "(check_vma=False)"
        else:
            safety = Safety.UNSAFE
            check_vma = ctx.copy(check_rep.value)
            reasons.append(
                f"check_rep={ctx.code(check_rep.value)} is passed on as check_vma, "
                f"whose meaning differs; {RECIPE}"
            )
            change = ": check_rep -> check_vma, whose meaning differs"

        axis_names: Optional[cst.BaseExpression] = None
        auto = named.get("auto")
        if auto is not None and not _empty_frozenset(auto.value):
            mesh = named.get("mesh")
            if mesh is None or not is_simple_reference(mesh.value):
                ctx.report(
                    call,
                    "shard_map(auto=A): bind the mesh to a name, "
                    "then use jax.shard_map(axis_names=)",
                    "shard_map(auto=A): use jax.shard_map(..., "
                    "axis_names=frozenset(mesh.axis_names) - A) with the mesh bound to a name.",
                )
                return
            axis_names = cst.BinaryOperation(
                left=cst.Call(
                    func=cst.Name("frozenset"),
                    args=[
                        cst.Arg(
                            cst.Attribute(value=ctx.copy(mesh.value), attr=cst.Name("axis_names"))
                        )
                    ],
                ),
                operator=cst.Subtract(),
                right=_parenthesized(auto.value),
            )

        new_args: List[cst.Arg] = []
        placed_vma = False
        for arg in args:
            name = self._name_of(arg, named)
            if name == "f":
                new_args.append(arg)
            elif name == "check_rep":
                if check_vma is not None:
                    new_args.append(keyword_arg("check_vma", check_vma, arg))
                placed_vma = True
            elif name == "auto":
                if axis_names is not None:
                    new_args.append(keyword_arg("axis_names", axis_names, arg))
            elif arg.keyword is None:
                new_args.append(keyword_arg(name, arg.value, arg))
            else:
                new_args.append(arg)
        if check_vma is not None and not placed_vma:
            new_args = append_arg(new_args, keyword_arg("check_vma", check_vma))

        modern = ctx.ref(MODERN, site.scope)
        if through_partial:
            head = [head[0].with_changes(value=modern)]
            new_call = call.with_changes(args=with_separators(head + new_args))
        else:
            new_call = call.with_changes(func=modern, args=with_separators(new_args))
        message = fitting(
            f"{LEGACY} -> {MODERN}{change}", f"shard_map -> {MODERN}{change}", room=UNSAFE_ROOM
        )
        detail = f"{LEGACY} -> {MODERN}: {' '.join(reasons)}." if reasons else ""
        ctx.replace(call, new_call, message, safety=safety, detail=detail)

    @staticmethod
    def _name_of(arg: cst.Arg, named: dict) -> str:
        for key, value in named.items():
            if value is arg:
                return key
        return arg.keyword.value if arg.keyword is not None else ""

    @staticmethod
    def _body(
        site: NameSite,
        call: cst.Call,
        f_arg: Optional[cst.Arg],
        through_partial: bool,
        ctx: Context,
    ) -> Optional[cst.CSTNode]:
        value: Optional[cst.BaseExpression] = f_arg.value if f_arg is not None else None
        if value is None and through_partial:
            parent = ctx.parent(call)
            if isinstance(parent, cst.Decorator):
                owner = ctx.parent(parent)
                return owner if isinstance(owner, cst.FunctionDef) else None
            if (
                isinstance(parent, cst.Call)
                and parent.func is call
                and parent.args
                and parent.args[0].keyword is None
            ):
                value = parent.args[0].value
        if isinstance(value, cst.Lambda):
            return value
        if isinstance(value, cst.Name):
            return local_function(ctx, value, site.scope)
        return None


def _empty_frozenset(node: cst.BaseExpression) -> bool:
    return (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Name)
        and node.func.value == "frozenset"
        and not node.args
    )


def _parenthesized(node: cst.BaseExpression) -> cst.BaseExpression:
    if (
        isinstance(
            node,
            (
                cst.BinaryOperation,
                cst.BooleanOperation,
                cst.IfExp,
                cst.Lambda,
                cst.Comparison,
                cst.UnaryOperation,
            ),
        )
        and not node.lpar
    ):
        return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return node
