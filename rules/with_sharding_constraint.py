"""JAX206 with-sharding-constraint: ``jax.experimental.pjit.with_sharding_constraint`` ->
``jax.lax.with_sharding_constraint``, and its ``axis_resources=`` keyword -> ``shardings=``.

The pjit-module spelling: jax.lax has it from 0.4.1, the old one warns from 0.4.16 (release
notes) and is gone from ``jax/experimental/pjit.py`` in 0.4.24; ``axis_resources=`` ->
``shardings=``: new in 0.4.4, removed in 0.4.11 (release notes).  Both are renames with
unchanged semantics: safe.
"""

from __future__ import annotations

from typing import List, Optional, Tuple

from jaxmigrate.migrator import lazycst as cst, references as refs
from jaxmigrate.migrator.context import Context, NameSite
from jaxmigrate.migrator.rule import Example, Lifecycle, Rule, Safety
from jaxmigrate.migrator.scope import Scope
from jaxmigrate.rules._flow import single_value
from jaxmigrate.rules._helpers import UNSAFE_ROOM, fitting
from jaxmigrate.rules._name_refs import local_name_for
from jaxmigrate.rules._pjit import (
    MESH_CTORS,
    NAMED_SHARDING_NAMES,
    PARTITION_SPEC_NAMES,
    module_facts,
    qualname_of,
)

LEGACY = "jax.experimental.pjit.with_sharding_constraint"
MODERN = "jax.lax.with_sharding_constraint"


class WithShardingConstraint(Rule, code="JAX206", safety=Safety.SAFE):
    """pjit.with_sharding_constraint(x, axis_resources=) -> jax.lax.with_sharding_constraint(x,
    shardings=)

    **What it does.** Replaces `jax.experimental.pjit.with_sharding_constraint` with
    `jax.lax.with_sharding_constraint`, and renames its `axis_resources=` keyword to
    `shardings=` (also on `jax.lax.with_sharding_constraint`).

    **Why.** The pjit-module spelling warns from JAX 0.4.16 and is gone in 0.4.24; the
    `axis_resources=` keyword was removed in 0.4.11.  `shardings=` exists from 0.4.4.

    As an unsafe fix, a bare `PartitionSpec(...)` argument inside a function becomes
    `NamedSharding(mesh, spec)` when the module builds exactly one Mesh, bound once to a
    module-level name: the `with mesh:` resource env the spec was resolved against can only be
    that mesh, and the pinned constraint no longer needs the block (deprecated in 0.10.1).

    **Use instead.** `jax.lax.with_sharding_constraint(x, shardings)`.  A bare
    `PartitionSpec` there still needs a `with mesh:` (or `jax.set_mesh`) around it; passing
    `NamedSharding(mesh, P(...))` makes it context-free.
    """

    lifecycle = Lifecycle(
        needs=("0.4.4", "shardings= replaces axis_resources="),
        deprecated=("0.4.16", "jax.experimental.pjit.with_sharding_constraint deprecated"),
        removed="0.4.24",
    )
    references = (
        refs.release_notes("0.4.1", "jax.lax.with_sharding_constraint is the public endpoint"),
        refs.release_notes("0.4.11", "axis_resources= removed"),
        refs.source_at(
            "0.4.24", "jax/experimental/pjit.py", "with_sharding_constraint no longer exported"
        ),
        refs.api("jax.lax.with_sharding_constraint"),
    )
    names = frozenset({LEGACY})
    keywords = frozenset({"axis_resources"})  # on jax.lax.with_sharding_constraint
    examples = (
        Example(
            before="""
            from jax.experimental.pjit import with_sharding_constraint
            from jax.sharding import PartitionSpec as P

            def f(x):
                return with_sharding_constraint(x, axis_resources=P("x"))
            """,
            after="""
            import jax
            from jax.sharding import PartitionSpec as P

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
        if isinstance(parent, cst.Call) and parent.func is node:
            call = parent
            args = list(call.args)
            keywords = [a.keyword.value for a in args if a.keyword is not None]
            if "axis_resources" in keywords and "shardings" in keywords:
                ctx.report(
                    call,
                    "both shardings= and its legacy spelling axis_resources= are given; keep one",
                )
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
            if _pin_mesh(ctx, call, func, args, site.scope):
                return
            if func is not call.func or args != list(call.args):
                ctx.replace(
                    call,
                    call.with_changes(func=func, args=args),
                    "with_sharding_constraint: jax.lax spelling, shardings= keyword",
                )
            return
        if site.qualname == LEGACY:
            ctx.replace(
                node,
                ctx.ref(MODERN, site.scope),
                "pjit.with_sharding_constraint -> jax.lax.with_sharding_constraint",
            )

    def visit_keyword(self, arg: cst.Arg, call: cst.Call, ctx: Context) -> None:
        scope = ctx.scope_of(call)
        if ctx.qualname(call.func, scope) != MODERN:
            return  # the legacy spelling is handled with its name
        keywords = [a.keyword.value for a in call.args if a.keyword is not None]
        if "shardings" in keywords:
            ctx.report(
                call, "both shardings= and its legacy spelling axis_resources= are given; keep one"
            )
            return
        args = [a.with_changes(keyword=cst.Name("shardings")) if a is arg else a for a in call.args]
        if _pin_mesh(ctx, call, call.func, args, scope):
            return
        ctx.replace(
            call,
            call.with_changes(args=args),
            "with_sharding_constraint: axis_resources= -> shardings=",
        )


def _pin_mesh(
    ctx: Context, call: cst.Call, func: cst.BaseExpression, args: List[cst.Arg], scope: Scope
) -> bool:
    """Unsafe fix: a bare ``PartitionSpec(...)`` argument inside a function of a module that
    builds exactly one Mesh, bound once at module level -> ``NamedSharding(mesh, P(...))``.
    The bare spec was resolved against the ``with mesh:`` resource env when the function was
    traced; that env can only be this mesh, and the pinned spec no longer needs the block
    (deprecated in 0.10.1).  True when the fix was recorded."""
    if not ctx.exists_throughout("jax.sharding.NamedSharding"):
        return False
    index = next(
        (i for i, a in enumerate(args) if a.keyword is not None and a.keyword.value == "shardings"),
        None,
    )
    if index is None and len(args) > 1 and args[1].keyword is None and not args[1].star:
        index = 1
    spec = args[index].value if index is not None else None
    if not isinstance(spec, cst.Call):
        return False
    if qualname_of(ctx, spec.func, scope) not in PARTITION_SPEC_NAMES:
        return False
    if not any(isinstance(a, (cst.FunctionDef, cst.Lambda)) for a in ctx.ancestors(call)):
        return False  # evaluated at import time: the mesh may not be bound yet
    mesh = _only_mesh(ctx)
    if mesh is None:
        return False
    name, line = mesh
    bindings = scope.lookup(name)
    module_scope = ctx.analysis.scopes[id(ctx.module)]
    if not bindings or len(bindings) != 1 or bindings[0].scope is not module_scope:
        return False  # shadowed where the constraint is
    named = local_name_for(ctx, NAMED_SHARDING_NAMES, "jax.sharding.NamedSharding", scope)
    comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    value = cst.Call(func=named, args=[cst.Arg(cst.Name(name), comma=comma), cst.Arg(spec)])
    args = [a.with_changes(value=value) if i == index else a for i, a in enumerate(args)]
    return ctx.replace(
        call,
        call.with_changes(func=func, args=args),
        fitting(
            f"with_sharding_constraint: bare PartitionSpec -> NamedSharding({name}, ...)",
            "with_sharding_constraint: bare PartitionSpec -> NamedSharding(mesh, ...)",
            room=UNSAFE_ROOM,
        ),
        safety=Safety.UNSAFE,
        detail=f"`{name}` (line {line}) is the only Mesh this module builds, so the `with mesh:` "
        "resource env the PartitionSpec was resolved against can only be that mesh.",
    )


def _only_mesh(ctx: Context) -> Optional[Tuple[str, int]]:
    """(name, line) of the one Mesh the module builds, when that is a module-level
    ``name = Mesh(...)`` bound once and no other Mesh is made anywhere in the file."""
    facts = module_facts(ctx)
    makers = [c for c in facts.calls if qualname_of(ctx, c.func, ctx.scope_of(c)) in MESH_CTORS]
    if len(makers) != 1:
        return None
    assign = ctx.parent(makers[0])
    if (
        not isinstance(assign, cst.Assign)
        or len(assign.targets) != 1
        or assign.value is not makers[0]
    ):
        return None
    target = assign.targets[0].target
    module_scope = ctx.analysis.scopes[id(ctx.module)]
    if not isinstance(target, cst.Name) or ctx.scope_of(assign) is not module_scope:
        return None
    if single_value(ctx, target, module_scope) is not makers[0]:
        return None  # bound more than once (the shared flow layer decides)
    return target.value, ctx.position(assign).start.line
