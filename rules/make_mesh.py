"""JAX604 make-mesh: ``Mesh(mesh_utils.create_device_mesh(shape), names)`` -> ``jax.make_mesh``.

Implements catalog row MESH-7: ``jax.make_mesh`` was added in 0.4.32 (yanked; usable from
0.4.33); ``axis_types=tuple[AxisType, ...]`` settled in 0.5.3; from 0.9.0 omitting it gives
Explicit axes (PROBE D: a sharded-contracting matmul then raises ShardingTypeError), so the
rewrite always spells ``axis_types=(jax.sharding.AxisType.Auto,) * n`` from 0.5.3 on.
``create_device_mesh`` itself is not deprecated: this is a modernisation, kept behaviour-
preserving (no ``devices=``/other options, which make_mesh handles differently).
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from migrator.context import Context, NameSite
from migrator.rule import Example, Rule, Safety
from migrator.version import parse_version
from rules._helpers import call_target
from rules._mesh import append_arg, keyword_arg

LEGACY = "jax.experimental.mesh_utils.create_device_mesh"
MESH = ("jax.sharding.Mesh",)
AXIS_TYPES_FROM = parse_version("0.5.3")


class MakeMesh(Rule):
    code = "JAX604"
    name = "make-mesh"
    summary = "Mesh(mesh_utils.create_device_mesh(shape), names) -> jax.make_mesh(shape, names, axis_types=(Auto,)*n)"
    safety = Safety.SAFE
    needs_jax = "0.4.33"
    catalog = ("MESH-7",)
    names = frozenset({LEGACY})
    doc = """
    **What it does.** Rewrites `Mesh(mesh_utils.create_device_mesh(shape), names)` to
    `jax.make_mesh(shape, names, axis_types=(jax.sharding.AxisType.Auto,) * n)` when the
    target is JAX 0.5.3 or newer, and to `jax.make_mesh(shape, names)` for targets
    0.4.33-0.5.2 (before `axis_types` existed, every mesh axis was Auto).  Older targets keep
    `create_device_mesh`.  Only the plain form is rewritten: `create_device_mesh(shape)` with
    no `devices=` or other options, `Mesh` with no arguments beyond the names, and a number
    of axes the rule can count (a literal tuple of names or of sizes).

    **Why.** `jax.make_mesh` picks the same device order and is the documented way to build
    a mesh.  It must get explicit Auto axis types: since JAX 0.9.0 a bare `jax.make_mesh`
    creates *Explicit* axes, under which, for example, a matmul with a sharded contracting
    dimension raises `ShardingTypeError`, whereas a `Mesh(...)` built by hand has Auto axes.
    `create_device_mesh` is not deprecated, so nothing breaks if you ignore this rule
    (`--ignore JAX604`).

    **Differences.** `make_mesh` uses the first `prod(shape)` devices where
    `create_device_mesh` requires the shape to cover every device, and it rejects multi-slice
    TPU topologies (use `create_hybrid_device_mesh` there).
    """
    examples = (
        Example(
            before="""
            from jax.experimental import mesh_utils
            from jax.sharding import Mesh

            mesh = Mesh(mesh_utils.create_device_mesh((4, 2)), ('data', 'model'))
            """,
            after="""
            import jax

            mesh = jax.make_mesh((4, 2), ('data', 'model'), axis_types=(jax.sharding.AxisType.Auto,) * 2)
            """,
        ),
        Example(
            title="targets before 0.5.3 have no axis_types (every axis is Auto there)",
            before="""
            from jax.experimental import mesh_utils
            from jax.sharding import Mesh

            mesh = Mesh(mesh_utils.create_device_mesh((8,)), ('x',))
            """,
            after="""
            import jax

            mesh = jax.make_mesh((8,), ('x',))
            """,
            target_version="0.4.33",
        ),
    )

    def visit_name(self, site: NameSite, ctx: Context) -> None:
        if site.is_import:
            return
        target = call_target(site, partial_names=())
        if target is None:
            return
        inner = target[0]
        arg = ctx.parent(inner)
        mesh_call = ctx.parent(arg) if isinstance(arg, cst.Arg) else None
        if not isinstance(mesh_call, cst.Call) or ctx.qualname(mesh_call.func, site.scope) not in MESH:
            return
        if mesh_call.args[0] is not arg or arg.keyword is not None and arg.keyword.value != "devices":
            return
        if len(inner.args) != 1 or inner.args[0].keyword is not None or inner.args[0].star:
            return  # devices=, contiguous_submeshes=, ...: make_mesh treats them differently
        shape = inner.args[0].value
        rest = mesh_call.args[1:]
        if len(rest) != 1 or rest[0].star or (rest[0].keyword is not None and rest[0].keyword.value != "axis_names"):
            return
        names = rest[0].value
        count = _count(names) or _count(shape)
        if isinstance(names, cst.SimpleString):
            names = cst.Tuple([cst.Element(names, comma=cst.Comma())])
            count = 1
        if count is None:
            return
        positional = dict(keyword=None, equal=cst.MaybeSentinel.DEFAULT)
        args = [arg.with_changes(value=shape, **positional), rest[0].with_changes(value=names, **positional)]
        if ctx.target >= AXIS_TYPES_FROM:
            auto = ctx.ref("jax.sharding.AxisType", site.scope)
            axis_types: cst.BaseExpression = cst.Tuple(
                [cst.Element(cst.Attribute(value=auto, attr=cst.Name("Auto")), comma=cst.Comma())]
            )
            if count > 1:
                axis_types = cst.BinaryOperation(
                    left=axis_types, operator=cst.Multiply(), right=cst.Integer(str(count))
                )
            args = append_arg(args, keyword_arg("axis_types", axis_types))
        new = mesh_call.with_changes(func=ctx.ref("jax.make_mesh", site.scope), args=args)
        ctx.replace(mesh_call, new, "Mesh(create_device_mesh(shape), names) -> jax.make_mesh with Auto axes")


def _count(node: cst.BaseExpression) -> Optional[int]:
    if isinstance(node, (cst.Tuple, cst.List)) and not any(isinstance(e, cst.StarredElement) for e in node.elements):
        return len(node.elements)
    return None
