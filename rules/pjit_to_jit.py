"""JAX202 pjit-to-jit: ``pjit(f, in_shardings=P(...))`` -> ``jax.jit(f,
in_shardings=NamedSharding(mesh, P(...)))``.

Release notes: jit gains in_shardings in jax 0.4.4; 0.4.14's pjit docstring says it "is now
equivalent to jax.jit"; 0.7.0 makes everything but ``fun`` keyword-only; 0.8.0 deprecates
``jax.experimental.pjit.pjit``.  Not a rename: pjit resolves bare ``PartitionSpec``s and
``None`` against the ``with mesh:`` resource env (``None`` = replicated), ``jax.jit`` does not
(``None`` = unspecified; a bare P needs ``jax.set_mesh``).  So every P leaf becomes
``NamedSharding(mesh, p)`` and every ``None`` leaf ``NamedSharding(mesh, P())``.  Only a pjit
built before its mesh exists keeps bare specs, and its calls go under ``with
jax.set_mesh(mesh):`` (an unsafe fix, where every call sits in a block that makes no array
eagerly: under ``set_mesh`` eager arrays become committed and replicated, which then conflicts
with explicit jit shardings; see :mod:`rules._set_mesh`).
"""

from __future__ import annotations

from typing import List, Optional

from jaxmigrate.migrator import lazycst as cst, references as refs
from jaxmigrate.migrator.context import Context, NameSite
from jaxmigrate.migrator.diagnostics import MESSAGE_LIMIT
from jaxmigrate.migrator.rule import Example, Lifecycle, Rule, Safety
from jaxmigrate.migrator.scope import Scope, dotted_parts
from jaxmigrate.rules._helpers import UNSAFE_ROOM, fitting
from jaxmigrate.rules._pjit import (
    FROM_GDA,
    PJIT_NAMES,
    SHARDING_KEYWORDS,
    compiled_of,
    get_keyword,
    kwargs_variable,
    normalized_args,
    pjit_call_of,
    qualname_of,
)
from jaxmigrate.rules._pjit_mesh import bind_mesh_edit, find_mesh
from jaxmigrate.rules._pjit_shardings import Converter
from jaxmigrate.rules._set_mesh import set_mesh_blocks, set_mesh_edit

RECIPE = (
    "jax.jit(f, in_shardings=NamedSharding(mesh, P(...)), out_shardings=...): wrap every "
    "PartitionSpec leaf p as NamedSharding(mesh, p) and every None leaf as "
    "NamedSharding(mesh, P()) (pjit's None meant replicated; jit's None means unspecified)."
)
BY_HAND = "jax.jit with NamedShardings by hand"  # what a message says of RECIPE


class PjitToJit(Rule, code="JAX202", safety=Safety.SAFE):
    """pjit(f, in_shardings=P(...)) -> jax.jit(f, in_shardings=NamedSharding(mesh, P(...)))

    **What it does.** Replaces `jax.experimental.pjit.pjit` with `jax.jit`.  Every bare
    `PartitionSpec` leaf `p` of `in_shardings`/`out_shardings` becomes `NamedSharding(mesh, p)`
    and every `None` leaf `NamedSharding(mesh, P())`; leaves that already are `Sharding`s stay.
    Sharding trees held in variables or attributes are converted leaf by leaf with
    `jax.tree.map(lambda s: NamedSharding(mesh, P() if s is None else s), specs,
    is_leaf=lambda s: s is None or isinstance(s, P))` (`jax.tree_util.tree_map` for targets
    below 0.4.25).  Legacy keywords and positional shardings become `in_shardings=`/
    `out_shardings=` keywords.  Handles `f = pjit(step, ...)`, `@partial(pjit, ...)`
    decorators and `pjit(step, ...)(x)`.

    The mesh comes from, in order: the `with mesh:` blocks around the calls of the compiled
    function (all the same mesh), the `with` block around its definition, the one module-level
    `Mesh`; as an unsafe fix, a `mesh` parameter or `self.mesh` attribute where the function
    is built.  A mesh built inline (`with Mesh(devs, ('x',)):`) is first bound to a name.

    When the mesh only exists after the function is built (a module-level pjit or decorator
    whose mesh is made later in a function or in `__main__`, a pjit made in `__init__` before
    `self.mesh`), and every call runs in a `with mesh:` block that visibly creates no array
    eagerly, the unsafe fix keeps the bare specs (`None` leaves -> `P()`) in `jax.jit` and turns
    each of those blocks into `with jax.set_mesh(mesh):`, which resolves them at call time as
    pjit did (targets from 0.7.1, where `jax.set_mesh` exists; measured: `jax.jit` rejects bare
    specs under `with mesh:` on 0.4.13-0.6.2).  Otherwise the call is reported, with why.

    **Why.** `jax.experimental.pjit.pjit` is deprecated from JAX 0.8.0.  pjit resolved bare
    specs and `None` against the `with mesh:` context, where `None` meant *replicated*;
    `jax.jit` ignores `with mesh:` and its `None` means *unspecified*, so a rename alone
    changes behaviour or fails.  The rewrite pins the mesh explicitly and works from 0.4.4
    to the newest JAX; bare specs under `jax.set_mesh` are only the fallback, because eager
    arrays made inside such a block are committed to the mesh, replicated, and a partitioned
    `in_shardings` then rejects them.

    **Use instead.** `jax.jit(f, in_shardings=NamedSharding(mesh, P(...)), out_shardings=...)`.
    """

    lifecycle = Lifecycle(
        needs=("0.4.4", "jax.jit accepts in_shardings and out_shardings"),
        deprecated=("0.8.0", "jax.experimental.pjit.pjit deprecated"),
    )
    references = (
        refs.api("jax.jit"),
        refs.module("jax.sharding"),
    )
    names = frozenset(PJIT_NAMES)
    # JAX201 renames pjit's keywords at the same name site; this rule waits for the renamed call.
    runs_after = frozenset({"JAX201"})
    examples = (
        Example(
            before="""
            from jax.experimental.pjit import pjit
            from jax.sharding import Mesh, PartitionSpec as P

            mesh = Mesh(devices, ('data',))
            f = pjit(step, in_shardings=(P('data'), None), out_shardings=P('data'))
            with mesh:
                y = f(x, w)
            """,
            after="""
            import jax
            from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

            mesh = Mesh(devices, ('data',))
            f = jax.jit(step, in_shardings=(NamedSharding(mesh, P('data')), NamedSharding(mesh, P())), out_shardings=NamedSharding(mesh, P('data')))
            with mesh:
                y = f(x, w)
            """,  # noqa: E501
            title="the mesh of the call site",
        ),
        Example(
            before="""
            from jax.experimental.pjit import pjit
            from jax.sharding import Mesh, PartitionSpec as P

            with Mesh(devices, ('x',)):
                f = pjit(step, in_axis_resources=P('x'), out_axis_resources=None)
                y = f(x)
            """,
            after="""
            import jax
            from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

            mesh = Mesh(devices, ('x',))
            with mesh:
                f = jax.jit(step, in_shardings=NamedSharding(mesh, P('x')), out_shardings=NamedSharding(mesh, P()))
                y = f(x)
            """,  # noqa: E501
            title="an inline mesh is bound to a name first",
        ),
        Example.reported(
            code="""
            from functools import partial
            from jax.experimental.pjit import pjit
            from jax.sharding import PartitionSpec as P

            @partial(pjit, in_shardings=P('x'), out_shardings=None)
            def step(x):
                return x

            def main(x):
                step(x)
            """,
            title="no mesh in sight: reported with the recipe",
        ),
    )

    def visit_name(self, site: NameSite, ctx: Context) -> None:
        if site.is_import:
            return
        found = pjit_call_of(ctx, site.node, site.scope)
        if found is None:
            ctx.report(site.node, f"pjit used without a call: replace it by {BY_HAND}", RECIPE)
            return
        call, through_partial = found
        if id(call) in ctx.edits:
            return  # JAX201's renames go first (runs_after); this one runs next round
        if through_partial and not isinstance(ctx.parent(call), cst.Decorator):
            ctx.report(
                call,
                f"partial(pjit, ...) outside a decorator: mesh unknown; use {BY_HAND}",
                f"The mesh of its uses is unknown: {RECIPE}",
            )
            return
        if _mentions(ctx, call, FROM_GDA, site.scope):
            return  # JAX204 drops FROM_GDA first (or reports it with its recipe)
        args, ok = normalized_args(ctx, call, through_partial, site.scope)
        if not ok:
            return  # both spellings: JAX201 reports it
        args = list(args if args is not None else call.args)
        if any(a.star == "**" for a in args):
            if not any(kwargs_variable(ctx, a, site.scope) for a in args):
                ctx.report(call, f"pjit with **kwargs of unknown content: use {BY_HAND}", RECIPE)
            else:
                ctx.report(
                    call,
                    "pjit with a **kwargs dict: spell its shardings as keywords, then use jax.jit",
                    f"Spell its shardings as keywords, then {RECIPE}",
                )
            return
        if through_partial and any(a.keyword is None and not a.star for a in args[1:]):
            ctx.report(call, f"partial(pjit, ...) with positional arguments: use {BY_HAND}", RECIPE)
            return

        dry = Converter(ctx, site.scope, None, dry=True)
        for keyword in SHARDING_KEYWORDS:
            arg = get_keyword(args, keyword)
            if arg is not None:
                dry.convert(arg.value)
        if dry.mixed:
            ctx.report(
                call,
                f"a sharding tree in a variable mixes Shardings and specs: use {BY_HAND}",
                f"A sharding tree held in a variable mixes Sharding objects and specs: {RECIPE}",
            )
            return
        mesh_expr: Optional[cst.BaseExpression] = None
        safety = Safety.SAFE
        how = mesh_from = ""
        if dry.needs_mesh:
            compiled = compiled_of(ctx, call, through_partial)
            mesh, why = find_mesh(ctx, compiled, call)
            if mesh is None:
                _under_set_mesh(ctx, site.scope, call, args, compiled, through_partial, why)
                return
            if mesh.bind is not None and mesh.hoist is not None:
                _hoist_mesh(ctx, mesh)
                return
            if mesh.bind is not None:
                ctx.replace(
                    mesh.bind,
                    bind_mesh_edit(ctx, mesh),
                    "bind the inline Mesh to a name for jax.jit's NamedShardings",
                )
                return
            mesh_expr = mesh.expr
            how, mesh_from = f" (mesh from {mesh.how})", mesh.how
            if mesh.unsafe:
                safety = Safety.UNSAFE
        converter = Converter(ctx, site.scope, mesh_expr)
        new_args: List[cst.Arg] = []
        for arg in args:
            if arg.keyword is not None and arg.keyword.value in SHARDING_KEYWORDS:
                arg = arg.with_changes(value=converter.convert(arg.value))
            new_args.append(arg)
        jit = ctx.ref("jax.jit", site.scope)
        if through_partial:
            new_args[0] = new_args[0].with_changes(value=jit)
            new = call.with_changes(args=new_args)
        else:
            new = call.with_changes(func=jit, args=new_args)
        message = fitting(
            f"pjit -> jax.jit with NamedShardings{how}",
            "pjit -> jax.jit with NamedShardings",
            room=UNSAFE_ROOM if safety is Safety.UNSAFE else MESSAGE_LIMIT,
        )
        said = mesh_from and mesh_from not in message  # where the line had no room for it
        detail = f"The mesh comes from {mesh_from}." if said else ""
        ctx.replace(call, new, message, safety=safety, detail=detail)


BARE_FIX = "pjit -> jax.jit with bare PartitionSpecs"


def _under_set_mesh(
    ctx: Context,
    scope: Scope,
    call: cst.Call,
    args: List[cst.Arg],
    compiled,
    through_partial: bool,
    why: str,  # noqa: ANN001
) -> None:
    """No mesh where the function is built: ``jax.jit`` with bare specs (None -> P()), every
    ``with mesh:`` around its calls -> ``with jax.set_mesh(mesh):`` (unsafe, see _set_mesh)."""
    blocks, why_not = set_mesh_blocks(ctx, compiled)
    if blocks is None:
        ctx.report(
            call,
            "pjit -> jax.jit needs a mesh not in sight; keep pjit or use NamedShardings by hand",
            f"pjit -> jax.jit needs the mesh, but {why}, and {why_not}; keep pjit or {RECIPE}",
        )
        return
    message = f"{BARE_FIX}, `with mesh:` -> `with jax.set_mesh(mesh):`"
    detail = (
        f"{BARE_FIX} (None -> P()): {why}, and every call runs in a `with mesh:` block that "
        "creates no array eagerly, which becomes `with jax.set_mesh(mesh):` (JAX's replacement "
        "for `with mesh:`; it resolves bare specs at call time, as pjit did)."
    )
    if any(ctx.is_suppressed(b) for b in blocks):
        ctx.report(
            call,
            "pjit -> jax.jit needs a mesh; a `with mesh:` around its calls is suppressed",
            f"pjit -> jax.jit needs the mesh, but {why}, "
            f"and a `with mesh:` block around its calls is suppressed; {RECIPE}",
        )
        return
    for block in blocks:
        existing = ctx.edits.get(id(block))
        if existing is not None and not existing.message.startswith(BARE_FIX):
            return  # the block is rewritten otherwise first; decided again next round
    converter = Converter(ctx, scope, None, bare=True)
    new_args = [
        a.with_changes(value=converter.convert(a.value))
        if a.keyword is not None and a.keyword.value in SHARDING_KEYWORDS
        else a
        for a in args
    ]
    jit = ctx.ref("jax.jit", scope)
    if through_partial:
        new_args[0] = new_args[0].with_changes(value=jit)
        new = call.with_changes(args=new_args)
    else:
        new = call.with_changes(func=jit, args=new_args)
    if not ctx.replace(call, new, message, safety=Safety.UNSAFE, detail=detail):
        return  # not applied (without --unsafe-fixes: one finding, at the pjit call)
    for block in blocks:
        ctx.replace(
            block,
            set_mesh_edit(ctx, block, ctx.scope_of(block)),
            message,
            safety=Safety.UNSAFE,
            detail=detail,
        )


def _mentions(ctx: Context, call: cst.Call, qualname: str, scope: Scope) -> bool:
    for arg in call.args:
        for node in _names_in(arg.value):
            if qualname_of(ctx, node, scope) == qualname:
                return True
    return False


def _names_in(expr: cst.CSTNode) -> List[cst.BaseExpression]:
    class _NamesIn(cst.CSTVisitor):
        def __init__(self) -> None:
            super().__init__()
            self.found: List[cst.BaseExpression] = []

        def visit_Name(self, node: cst.Name) -> None:
            self.found.append(node)

        def visit_Attribute(self, node: cst.Attribute) -> Optional[bool]:
            if dotted_parts(node):
                self.found.append(node)
                return False
            return True

    names = _NamesIn()
    expr.visit(names)
    return names.found


def _hoist_mesh(ctx: Context, mesh) -> None:  # noqa: ANN001
    """``f = pjit(...)`` ... ``with Mesh(...):`` -> ``mesh = Mesh(...)``, ``f = pjit(...)`` ...
    ``with mesh:`` (the next round builds f's shardings from ``mesh``)."""
    item = mesh.bind.items[0]
    assign = cst.SimpleStatementLine(
        body=[cst.Assign(targets=[cst.AssignTarget(cst.Name(mesh.bind_name))], value=item.item)],
        leading_lines=mesh.hoist.leading_lines,
    )
    why = (
        "bind the inline Mesh to a name where the pjit function is built (its NamedShardings "
        "need it)"
    )
    new_with = mesh.bind.with_changes(items=[item.with_changes(item=cst.Name(mesh.bind_name))])
    if ctx.replace(mesh.bind, new_with, why):
        moved = mesh.hoist.with_changes(leading_lines=())
        ctx.replace(mesh.hoist, cst.FlattenSentinel([assign, moved]), why)
