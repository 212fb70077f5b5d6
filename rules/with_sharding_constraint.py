"""JAX206 with-sharding-constraint: ``jax.experimental.pjit.with_sharding_constraint`` ->
``jax.lax.with_sharding_constraint``, and its ``axis_resources=`` keyword -> ``shardings=``.

The pjit-module spelling: jax.lax has it from 0.4.1, the old one warns from 0.4.16 (release
notes) and is gone from ``jax/experimental/pjit.py`` in 0.4.24; ``axis_resources=`` ->
``shardings=``: new in 0.4.4, removed in 0.4.11 (release notes).  Both are renames with
unchanged semantics: safe.
"""

from __future__ import annotations

import libcst as cst

from jaxmigrate.migrator import references as refs
from jaxmigrate.migrator.context import Context, NameSite
from jaxmigrate.migrator.rule import Example, Rule, Safety

LEGACY = "jax.experimental.pjit.with_sharding_constraint"
MODERN = "jax.lax.with_sharding_constraint"


class WithShardingConstraint(Rule):
    code = "JAX206"
    name = "with-sharding-constraint"
    summary = "pjit.with_sharding_constraint(x, axis_resources=) -> jax.lax.with_sharding_constraint(x, shardings=)"
    safety = Safety.SAFE
    needs_jax = "0.4.4"
    deprecated_in = "0.4.16"
    removed_in = "0.4.24"
    references = (
        refs.release_notes("0.4.1", "jax.lax.with_sharding_constraint is the public endpoint"),
        refs.release_notes("0.4.4", "shardings= replaces axis_resources="),
        refs.release_notes("0.4.11", "axis_resources= removed"),
        refs.release_notes("0.4.16", "jax.experimental.pjit.with_sharding_constraint deprecated"),
        refs.source_at(
            "0.4.24", "jax/experimental/pjit.py", "with_sharding_constraint no longer exported"
        ),
        refs.api("jax.lax.with_sharding_constraint"),
    )
    names = frozenset({LEGACY})
    keywords = frozenset({"axis_resources"})  # on jax.lax.with_sharding_constraint
    doc = """
    **What it does.** Replaces `jax.experimental.pjit.with_sharding_constraint` with
    `jax.lax.with_sharding_constraint`, and renames its `axis_resources=` keyword to
    `shardings=` (also on `jax.lax.with_sharding_constraint`).

    **Why.** The pjit-module spelling warns from JAX 0.4.16 and is gone in 0.4.24; the
    `axis_resources=` keyword was removed in 0.4.11.  `shardings=` exists from 0.4.4.

    **Use instead.** `jax.lax.with_sharding_constraint(x, shardings)`.  A bare
    `PartitionSpec` there still needs a `with mesh:` (or `jax.set_mesh`) around it; passing
    `NamedSharding(mesh, P(...))` makes it context-free.
    """
    examples = (
        Example(
            before="""
            from jax.experimental.pjit import with_sharding_constraint
            from jax.sharding import PartitionSpec as P

            def f(x):
                return with_sharding_constraint(x, axis_resources=P("x"))
            """,
            after="""
            from jax.sharding import PartitionSpec as P
            import jax

            def f(x):
                return jax.lax.with_sharding_constraint(x, shardings=P("x"))
            """,
        ),
    )

    def visit_name(self, site: NameSite, ctx: Context) -> None:
        if site.is_import:
            return
        node = site.node
        parent = site.parent
        is_call = isinstance(parent, cst.Call) and parent.func is node
        if is_call:
            call = parent
            args = list(call.args)
            keywords = [a.keyword.value for a in args if a.keyword is not None]
            if "axis_resources" in keywords and "shardings" in keywords:
                ctx.report(call, "both shardings= and its legacy spelling axis_resources= are given; keep one")
                return
            args = [
                a.with_changes(keyword=cst.Name("shardings"))
                if a.keyword is not None and a.keyword.value == "axis_resources"
                else a
                for a in args
            ]
            func = call.func
            if site.qualname == LEGACY:
                func = ctx.ref(MODERN, site.scope)
            if func is not call.func or args != list(call.args):
                ctx.replace(
                    call,
                    call.with_changes(func=func, args=args),
                    "with_sharding_constraint: jax.lax spelling, shardings= keyword",
                )
            return
        if site.qualname == LEGACY:
            ctx.replace(node, ctx.ref(MODERN, site.scope), "pjit.with_sharding_constraint -> jax.lax.with_sharding_constraint")

    def visit_keyword(self, arg: cst.Arg, call: cst.Call, ctx: Context) -> None:
        scope = ctx.scope_of(call)
        if ctx.qualname(call.func, scope) != MODERN:
            return  # the legacy spelling is handled with its name
        keywords = [a.keyword.value for a in call.args if a.keyword is not None]
        if "shardings" in keywords:
            ctx.report(call, "both shardings= and its legacy spelling axis_resources= are given; keep one")
            return
        args = [a.with_changes(keyword=cst.Name("shardings")) if a is arg else a for a in call.args]
        ctx.replace(call, call.with_changes(args=args), "with_sharding_constraint: axis_resources= -> shardings=")
