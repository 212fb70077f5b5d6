"""JAX305 make-sharded-device-array: ``pxla.make_sharded_device_array`` with the plain pmap
layout -> ``jax.make_array_from_single_device_arrays`` over a 1-D mesh.

Deprecated in jax 0.4.6, removed in 0.4.14 (release notes); the jax.Array migration guide
("Creating jax.Array") names the replacement, and the "Migrating to the new jax.pmap" guide
gives the rank-preserving layout: a 1-D mesh with ``P('x')`` over the stacked leading axis,
shards of shape ``(1, ...)``).
"""

from __future__ import annotations

from typing import List, Optional

from jaxmigrate.migrator import lazycst as cst, references as refs
from jaxmigrate.migrator.context import Context, NameSite
from jaxmigrate.migrator.rule import Example, Lifecycle, Rule, Safety
from jaxmigrate.migrator.scope import Scope
from jaxmigrate.rules._flow import assignments
from jaxmigrate.rules._gda import (
    _assigned_values,
    bind_arguments,
    is_simple,
    positional_args,
)
from jaxmigrate.rules._helpers import called_or_report

PXLA_MODULES = ("jax.interpreters.pxla", "jax.pxla", "jax._src.interpreters.pxla")
SPEC_MODULES = PXLA_MODULES + ("jax.sharding", "jax._src.sharding_specs")
PARAMS = ("aval", "sharding_spec", "device_buffers", "indices")
SHAPED_ARRAYS = frozenset({"jax.core.ShapedArray", "jax._src.core.ShapedArray"})
MODERN = "jax.make_array_from_single_device_arrays"
RECIPE = (
    "jax.make_array_from_single_device_arrays(aval.shape, "
    "NamedSharding(Mesh(np.array(devices), ('x',)), P('x')), [b[None] for b in bufs]) "
    "for the pmap layout (per-device arrays get a leading axis of 1); "
    "for a pjit layout use NamedSharding(mesh, pspec) with the buffers as they are"
)


def _spec_class(node: cst.BaseExpression, ctx: Context, scope: Scope, name: str) -> bool:
    qualname = ctx.qualname(node, scope)
    return qualname is not None and any(qualname == f"{m}.{name}" for m in SPEC_MODULES)


def _call_of(node: cst.BaseExpression, ctx: Context, scope: Scope, name: str) -> Optional[cst.Call]:
    if isinstance(node, cst.Call) and _spec_class(node.func, ctx, scope, name):
        return node
    return None


def _is_int(node: cst.BaseExpression, value: Optional[int] = None) -> bool:
    return isinstance(node, cst.Integer) and (value is None or int(node.value) == value)


def is_pmap_layout(spec: cst.BaseExpression, ctx: Context, scope: Scope) -> bool:
    """The pmap layout:
    ``ShardingSpec(sharding=(Unstacked(n), NoSharding(), ...), mesh_mapping=(ShardedAxis(0),))``."""
    call = _call_of(spec, ctx, scope, "ShardingSpec")
    if call is None:
        return False
    bound, _ = bind_arguments(call, ("sharding", "mesh_mapping"))
    if bound is None:
        return False
    sharding, mapping = bound["sharding"], bound["mesh_mapping"]
    if not isinstance(sharding, (cst.Tuple, cst.List)) or not isinstance(
        mapping, (cst.Tuple, cst.List)
    ):
        return False
    parts = [e.value for e in sharding.elements if not isinstance(e, cst.StarredElement)]
    if len(parts) != len(sharding.elements) or not parts:
        return False
    first = _call_of(parts[0], ctx, scope, "Unstacked")
    if first is None or len(first.args) != 1 or first.args[0].star:
        return False
    if first.args[0].keyword is not None and first.args[0].keyword.value != "size":
        return False
    for part in parts[1:]:
        no = _call_of(part, ctx, scope, "NoSharding")
        if no is None or no.args:
            return False
    if len(mapping.elements) != 1 or isinstance(mapping.elements[0], cst.StarredElement):
        return False
    axis = _call_of(mapping.elements[0].value, ctx, scope, "ShardedAxis")
    if axis is None or len(axis.args) != 1 or axis.args[0].star:
        return False
    if axis.args[0].keyword is not None and axis.args[0].keyword.value != "axis":
        return False
    return _is_int(axis.args[0].value, 0)


class MakeShardedDeviceArray(Rule, code="JAX305", safety=Safety.UNSAFE):
    """pxla.make_sharded_device_array(aval, <pmap ShardingSpec>, bufs) ->
    jax.make_array_from_single_device_arrays over a 1-D mesh of the buffers' devices

    **What it does.** Rewrites `pxla.make_sharded_device_array(aval, sharding_spec,
    device_buffers)` when `sharding_spec` is spelled out (inline, or as a name bound once to
    it) as the plain pmap layout `ShardingSpec(sharding=(Unstacked(n), NoSharding(), ...),
    mesh_mapping=(ShardedAxis(0),))`: buffer `i` holds row `i` of the result.  The
    replacement is `jax.make_array_from_single_device_arrays(aval.shape,
    NamedSharding(Mesh(np.array([next(iter(b.devices())) for b in bufs]), ('x',)), P('x')),
    [b[None] for b in bufs])`: the mesh is made of the buffers' own devices in the
    buffers' order, so no device list is guessed, and every buffer gets the leading axis
    of length 1 that NamedSharding shards have.  `aval` given as
    `jax.core.ShapedArray(shape, dtype)` contributes its shape directly.

    **Why.** `make_sharded_device_array` was deprecated in JAX 0.4.6 and removed in 0.4.14;
    `PmapSharding`, which the migration guide suggested for pmap inputs, was itself removed in
    0.10.0.

    **Safety.** Unsafe: the array holds the same values on the same devices, but its shards
    are rank-preserving, `(1, ...)` instead of `(...)` (JAX's pmap migration guide), so code reading
    `addressable_shards[i].data` or feeding the array to `pmap` sees different shard shapes.

    **Not rewritten.** Any other ShardingSpec (`Chunked`, `Replicated`, several mesh
    axes), a spec that is a parameter or is computed, buffers given as an expression with
    calls (it is used twice), and an explicit `indices` argument are reported with the
    recipe: pick `NamedSharding(mesh, pspec)` for pjit-style layouts.
    """

    unsafe_fixes_only = True  # (all its fixes are unsafe: the survey runs it only with them)
    lifecycle = Lifecycle(
        needs="0.4.1",
        deprecated=("0.4.6", "make_sharded_device_array deprecated"),
        removed=("0.4.14", "make_sharded_device_array removed"),
    )
    references = (
        refs.array_migration("Creating jax.Array"),
        refs.pmap_migration(),
        refs.api("jax.make_array_from_single_device_arrays"),
    )
    names = frozenset(f"{m}.make_sharded_device_array" for m in PXLA_MODULES)
    examples = (
        Example(
            before="""
            import numpy as np
            from jax.interpreters import pxla

            spec = pxla.ShardingSpec(
                sharding=(pxla.Unstacked(4), pxla.NoSharding()),
                mesh_mapping=(pxla.ShardedAxis(0),),
            )
            arr = pxla.make_sharded_device_array(aval, spec, bufs)
            """,
            after="""
            import jax
            import numpy as np
            from jax.sharding import Mesh, NamedSharding, PartitionSpec

            arr = jax.make_array_from_single_device_arrays(aval.shape, NamedSharding(Mesh(np.array([next(iter(buf.devices())) for buf in bufs]), ('x',)), PartitionSpec('x')), [buf[None] for buf in bufs])
            """,  # noqa: E501
            unsafe_fixes=True,
        ),
        Example.reported(
            title="a spec that is not spelled out: reported",
            code="""
            from jax.interpreters import pxla

            def wrap(aval, spec, bufs):
                return pxla.make_sharded_device_array(aval, spec, bufs)
            """,
        ),
    )

    def visit_name(self, site: NameSite, ctx: Context) -> None:
        message = f"make_sharded_device_array no longer exists; use {MODERN}"
        call = called_or_report(site, ctx, message, f"Use {RECIPE}.")
        if call is None:
            return
        bound, reason = bind_arguments(call, PARAMS)
        if bound is None and reason == "indices is missing":
            bound, reason = bind_arguments(call, PARAMS[:3])
        if bound is None:
            ctx.report(
                call,
                f"make_sharded_device_array cannot be rewritten; use {MODERN}",
                f"make_sharded_device_array cannot be rewritten ({reason}); use {RECIPE}.",
            )
            return
        indices = bound.get("indices")
        if indices is not None and not (isinstance(indices, cst.Name) and indices.value == "None"):
            ctx.report(
                call,
                "make_sharded_device_array with explicit indices: choose the sharding by hand",
                f"Choose the sharding by hand; use {RECIPE}.",
            )
            return
        scope = site.scope
        spec = bound["sharding_spec"]
        specs: List[cst.BaseExpression] = [spec]
        if isinstance(spec, cst.Name):
            specs = _assigned_values(ctx, scope, spec.value) or [spec]
        if not all(is_pmap_layout(s, ctx, scope) for s in specs):
            ctx.report(
                call,
                "make_sharded_device_array: the sharding is unknown; choose it by hand",
                "The ShardingSpec is not the plain pmap layout written out here, so the sharding "
                f"is unknown; use {RECIPE}.",
            )
            return
        buffers = bound["device_buffers"]
        if not is_simple(buffers) or isinstance(buffers, (cst.Lambda, cst.Tuple, cst.List)):
            ctx.report(
                call,
                f"make_sharded_device_array -> {MODERN}: name the buffers first",
                f"Bind the buffers to a name first (they are used twice); use {RECIPE}.",
            )
            return
        shape = self._shape(bound["aval"], ctx, scope)
        mesh = ctx.ref("jax.sharding.Mesh", scope, prefer_from=True)
        named = ctx.ref("jax.sharding.NamedSharding", scope, prefer_from=True)
        pspec = ctx.ref("jax.sharding.PartitionSpec", scope, prefer_from=True)
        jax_func = ctx.ref("jax.make_array_from_single_device_arrays", scope)
        array = ctx.ref("numpy.array", scope)
        devices = cst.parse_expression(
            f"[next(iter(buf.devices())) for buf in {ctx.code(buffers)}]"
        )
        axis = cst.SimpleString("'x'")
        mesh_call = cst.Call(
            func=mesh,
            args=[
                _arg(cst.Call(func=array, args=[cst.Arg(value=devices)]), more=True),
                _arg(cst.Tuple(elements=[cst.Element(value=axis, comma=cst.Comma())])),
            ],
        )
        sharding = cst.Call(
            func=named,
            args=[
                _arg(mesh_call, more=True),
                _arg(cst.Call(func=pspec, args=[cst.Arg(value=axis)])),
            ],
        )
        expanded = cst.parse_expression(f"[buf[None] for buf in {ctx.code(buffers)}]")
        new = call.with_changes(
            func=jax_func, args=positional_args(call.args, [shape, sharding, expanded])
        )
        message = f"make_sharded_device_array -> {MODERN}"
        detail = (
            f"make_sharded_device_array -> {MODERN} over a 1-D mesh of the buffers' devices; "
            "shards are (1, ...) instead of rank-reduced."
        )
        spec_line = self._spec_line(spec, ctx, scope)
        if spec_line is None:
            ctx.replace(call, new, message, detail=detail)
            return
        # ShardingSpec no longer exists in current JAX: drop ``spec = ShardingSpec(...)``,
        # whose only use was this call, and give its blank lines/comments to the next statement.
        line, following = spec_line
        if any(a is following for a in ctx.ancestors(call)):
            replacement = following.deep_replace(call, new)
        else:
            replacement = following
            if not ctx.replace(call, new, message, detail=detail):
                return
        replacement = replacement.with_changes(
            leading_lines=[*line.leading_lines, *following.leading_lines]
        )
        if ctx.replace(following, replacement, message, detail=detail):
            ctx.replace(
                line,
                cst.RemovalSentinel.REMOVE,
                "removed the ShardingSpec the rewrite no longer needs",
            )

    @staticmethod
    def _spec_line(spec: cst.BaseExpression, ctx: Context, scope: Scope):
        """(``spec = ShardingSpec(...)`` line, the statement after it) when this call is the
        spec's only use; else None."""
        if not isinstance(spec, cst.Name) or ctx.analysis.loads.get(spec.value, 0) != 1:
            return None
        bindings = scope.lookup(spec.value)
        if not bindings or len(bindings) != 1:
            return None
        assigns = assignments(ctx, spec.value, bindings[0].scope)
        if len(assigns) != 1:
            return None
        line = ctx.parent(assigns[0])
        block = ctx.parent(line) if line is not None else None
        if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
            return None
        if not isinstance(block, (cst.IndentedBlock, cst.Module)):
            return None
        body = list(block.body)
        index = next(i for i, statement in enumerate(body) if statement is line)
        if index + 1 >= len(body):
            return None
        return line, body[index + 1]

    @staticmethod
    def _shape(aval: cst.BaseExpression, ctx: Context, scope: Scope) -> cst.BaseExpression:
        if isinstance(aval, cst.Call) and ctx.qualname(aval.func, scope) in SHAPED_ARRAYS:
            bound, _ = bind_arguments(aval, ("shape", "dtype", "weak_type"))
            if bound is None:
                bound, _ = bind_arguments(aval, ("shape", "dtype"))
            if bound is not None:
                return bound["shape"]
        value = aval
        if not isinstance(aval, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)):
            value = aval.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        return cst.Attribute(value=value, attr=cst.Name("shape"))


def _arg(value: cst.BaseExpression, more: bool = False) -> cst.Arg:
    comma = (
        cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")) if more else cst.MaybeSentinel.DEFAULT
    )
    return cst.Arg(value=value, comma=comma)
