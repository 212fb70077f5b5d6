"""JAX802 xla-computation: ``jax.xla_computation(f)(*args)`` ->
``jax.jit(f).lower(*args).compiler_ir('hlo')``.

Deprecated in JAX 0.4.30, removed in 0.4.34; the release notes give this recipe.  Only the form
that calls the result at once is rewritten; a stored ``xla_computation(f)`` or one with options
jit does not take (``axis_env``, ``return_shape``, ``tuple_args``, ``backend``, ``in_parts``,
...) is reported.
"""

from __future__ import annotations

from typing import List, Optional

from jaxmigrate.migrator import lazycst as cst, references as refs
from jaxmigrate.migrator.context import Context, NameSite
from jaxmigrate.migrator.rule import Example, Lifecycle, Rule, Safety
from jaxmigrate.rules._helpers import called

RECIPE = (
    "jax.xla_computation was removed in JAX 0.4.34; use jax.jit(f).lower(*args).compiler_ir('hlo')",
    "Options like axis_env/return_shape/tuple_args have no direct equivalent.",
)
# Options of xla_computation that mean the same on jax.jit.
PASSTHROUGH = ("static_argnums",)


def _jit_args(inner: cst.Call) -> Optional[List[cst.Arg]]:
    if not inner.args or inner.args[0].keyword is not None or inner.args[0].star:
        return None
    for arg in inner.args[1:]:
        if arg.star or arg.keyword is None or arg.keyword.value not in PASSTHROUGH:
            return None
    args = list(inner.args)
    args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return args


class XlaComputation(Rule, code="JAX802", safety=Safety.SAFE):
    """jax.xla_computation(f)(*args) -> jax.jit(f).lower(*args).compiler_ir('hlo')

    **What it does.** Rewrites `jax.xla_computation(f)(*args)` (also with
    `static_argnums=`) as `jax.jit(f).lower(*args).compiler_ir('hlo')`, the recipe of the JAX
    0.4.34 changelog.  Both give an `XlaComputation` (`.as_hlo_text()`,
    `.as_serialized_hlo_module_proto()`).  Other uses are reported: a stored
    `xla_computation(f)` called later, or options jit does not have (`axis_env`,
    `return_shape`, `tuple_args`, `backend`, `in_parts`, `out_parts`, `donate_argnums`).

    **Why.** `jax.xla_computation` was deprecated in 0.4.30 and removed in 0.4.34.

    **Behaviour.** The computation is the same; the HLO module is named `jit_f` instead of
    `xla_computation_f`.  Text comparisons against a stored HLO dump may need updating.
    """

    whole_module = False  # hooks read their sites and the names those resolve to

    lifecycle = Lifecycle(
        needs="0.4.1",
        deprecated=("0.4.30", "jax.xla_computation deprecated"),
        removed=("0.4.34", "jax.xla_computation removed"),
    )
    references = (refs.aot(),)
    names = frozenset({"jax.xla_computation"})
    examples = (
        Example(
            before="""
            import jax

            hlo = jax.xla_computation(f)(x, y).as_hlo_text()
            """,
            after="""
            import jax

            hlo = jax.jit(f).lower(x, y).compiler_ir('hlo').as_hlo_text()
            """,
        ),
        Example.reported(
            title="a stored computation builder is reported",
            code="""
            import jax

            build = jax.xla_computation(f, axis_env=[("i", 8)])
            """,
        ),
    )

    def visit_name(self, site: NameSite, ctx: Context) -> None:
        if site.is_import:
            return  # the import goes once nothing uses it
        inner = called(site)
        if inner is None:
            ctx.report(site.node, *RECIPE)
            return
        outer = ctx.parent(inner)
        jit_args = _jit_args(inner)
        if not isinstance(outer, cst.Call) or outer.func is not inner or jit_args is None:
            ctx.report(inner, *RECIPE)
            return
        jit = cst.Call(func=ctx.ref("jax.jit", site.scope), args=jit_args)
        lowered = cst.Call(
            func=cst.Attribute(value=jit, attr=cst.Name("lower")),
            args=outer.args,
            whitespace_before_args=outer.whitespace_before_args,
        )
        new = cst.Call(
            func=cst.Attribute(value=lowered, attr=cst.Name("compiler_ir")),
            args=[cst.Arg(cst.SimpleString("'hlo'"))],
        )
        ctx.replace(
            outer,
            new,
            "jax.xla_computation(f)(*args) -> jax.jit(f).lower(*args).compiler_ir('hlo')",
        )
