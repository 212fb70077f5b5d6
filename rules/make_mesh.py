"""JAX604 make-mesh: ``Mesh(mesh_utils.create_device_mesh(shape), names)`` -> ``jax.make_mesh``;
JAX608 make-mesh-axis-types: a bare ``jax.make_mesh(shape, names)`` gets explicit Auto axis types.

``jax.make_mesh`` was added in 0.4.32 (yanked; usable from 0.4.33); ``axis_types=tuple[AxisType,
...]`` settled in 0.5.3; from 0.9.0 omitting it gives Explicit axes (on real JAX a
sharded-contracting matmul then raises ShardingTypeError), so the rewrite always spells
``axis_types=(jax.sharding.AxisType.Auto,) * n`` from 0.5.3 on. ``create_device_mesh`` itself is
not deprecated: this is a modernisation, kept behaviour- preserving (no ``devices=``/other
options, which make_mesh handles differently). JAX608 covers code that already calls
``jax.make_mesh`` without ``axis_types`` (Auto up to 0.8.x, Explicit from 0.9.0: jax 0.8.1
release notes; checked on jax 0.10.2).
"""

from __future__ import annotations

import ast
from typing import List, Optional

from jaxmigrate.migrator import lazycst as cst, references as refs
from jaxmigrate.migrator.astfacts import Facts
from jaxmigrate.migrator.astview import AstView
from jaxmigrate.migrator.context import Context, NameSite
from jaxmigrate.migrator.diagnostics import Diagnostic
from jaxmigrate.migrator.rule import Example, Lifecycle, Rule, Safety
from jaxmigrate.migrator.version import parse_version
from jaxmigrate.rules._api_history import added_in
from jaxmigrate.rules._ast_sites import Resolver, called_at, legacy_imports_stay, name_sites
from jaxmigrate.rules._helpers import called
from jaxmigrate.rules._mesh import append_arg, keyword_arg
from jaxmigrate.rules._text_gates import MakeMeshGate

LEGACY = "jax.experimental.mesh_utils.create_device_mesh"
MESH = ("jax.sharding.Mesh",)
AXIS_TYPES_FROM = parse_version("0.5.3")


class _WritesMakeMesh(Rule):
    """The two rules of this module write ``jax.make_mesh`` and its axis types (an abstract
    base: no ``code``, not registered)."""

    safety = Safety.SAFE
    references = (refs.api("jax.make_mesh"), refs.explicit_sharding())


class MakeMesh(_WritesMakeMesh, code="JAX604"):
    """opt-in (--select JAX604): Mesh(mesh_utils.create_device_mesh(shape), names) ->
    jax.make_mesh(shape, names, axis_types=(Auto,)*n)

    **Opt-in.** Runs only with `--select JAX604` (the code itself, not a prefix): it
    modernises code that works on every JAX, so a plain run leaves it alone.

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

    **Use instead.** `jax.make_mesh(shape, names, axis_types=(jax.sharding.AxisType.Auto,) *
    len(names))`; keep `Mesh(mesh_utils.create_device_mesh(...), names)` where you pass
    devices or options.
    """

    whole_module = False  # hooks read their sites and the names those resolve to

    lifecycle = Lifecycle(needs=added_in("jax.make_mesh"))
    # create_device_mesh is not deprecated: code using it works on every JAX, and a run on
    # today's code must change nothing (the newest flax examples build meshes this way).
    opt_in = True
    names = frozenset({LEGACY})
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
            """,  # noqa: E501
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
        inner = called(site)
        if inner is None:  # an import, or not called
            return
        arg = ctx.parent(inner)
        mesh_call = ctx.parent(arg) if isinstance(arg, cst.Arg) else None
        if (
            not isinstance(mesh_call, cst.Call)
            or ctx.qualname(mesh_call.func, site.scope) not in MESH
        ):
            return
        if (
            mesh_call.args[0] is not arg
            or arg.keyword is not None
            and arg.keyword.value != "devices"
        ):
            return
        if len(inner.args) != 1 or inner.args[0].keyword is not None or inner.args[0].star:
            return  # devices=, contiguous_submeshes=, ...: make_mesh treats them differently
        shape = inner.args[0].value
        rest = mesh_call.args[1:]
        if (
            len(rest) != 1
            or rest[0].star
            or (rest[0].keyword is not None and rest[0].keyword.value != "axis_names")
        ):
            return
        names = rest[0].value
        count = _count(names) or _count(shape)
        if isinstance(names, cst.SimpleString):
            names = cst.Tuple([cst.Element(names, comma=cst.Comma())])
            count = 1
        if count is None:
            return
        positional = dict(keyword=None, equal=cst.MaybeSentinel.DEFAULT)
        args = [
            arg.with_changes(value=shape, **positional),
            rest[0].with_changes(value=names, **positional),
        ]
        if ctx.target >= AXIS_TYPES_FROM:
            axis_types = _auto_axes(count, ctx, site)
            args = append_arg(args, keyword_arg("axis_types", axis_types))
        new = mesh_call.with_changes(func=ctx.ref("jax.make_mesh", site.scope), args=args)
        ctx.replace(
            mesh_call, new, "Mesh(create_device_mesh(shape), names) -> jax.make_mesh with Auto axes"
        )


def _auto_axes(count: int, ctx: Context, site: NameSite) -> cst.BaseExpression:
    """``(jax.sharding.AxisType.Auto,) * count`` (no ``* 1``): the axis types jax.make_mesh
    used before JAX 0.9.0 made Explicit the default."""
    auto = ctx.ref("jax.sharding.AxisType", site.scope)
    axis_types: cst.BaseExpression = cst.Tuple(
        [cst.Element(cst.Attribute(value=auto, attr=cst.Name("Auto")), comma=cst.Comma())]
    )
    if count > 1:
        axis_types = cst.BinaryOperation(
            left=axis_types, operator=cst.Multiply(), right=cst.Integer(str(count))
        )
    return axis_types


def _count(node: cst.BaseExpression) -> Optional[int]:
    if isinstance(node, (cst.Tuple, cst.List)) and not any(
        isinstance(e, cst.StarredElement) for e in node.elements
    ):
        return len(node.elements)
    return None


EXPLICIT_DEFAULT_FROM = parse_version("0.9.0")
UNKNOWN_SOURCE = (
    "jax.make_mesh makes Explicit axes from 0.9.0: add Auto axis_types? --source-version says "
    "which",
    "jax.make_mesh makes Explicit axes from JAX 0.9.0 (Auto before): code written for an older "
    "JAX needs axis_types=Auto; --source-version says which.",
)
UNCOUNTED = (
    "jax.make_mesh makes Explicit axes since JAX 0.9.0: pass Auto axis_types to keep",
    "jax.make_mesh without axis_types makes Explicit axes since JAX 0.9.0 (Auto before): add "
    "axis_types=(jax.sharding.AxisType.Auto,) * len(axis_names) to keep the old behaviour.",
)


class MakeMeshAxisTypes(MakeMeshGate, _WritesMakeMesh, code="JAX608"):
    """jax.make_mesh(shape, names) without axis_types -> axis_types=(AxisType.Auto,) * n

    **What it does.** Adds `axis_types=(jax.sharding.AxisType.Auto,) * n` to `jax.make_mesh`
    calls that have no `axis_types` where the code was written for a JAX before 0.9.0 and the
    target reaches 0.9.0 (the question: *written before the change, and will it run after
    it?*): the code was written for the Auto default and must keep that meaning.  Code written
    for 0.9.0 or later uses the Explicit default (a bare `jax.make_mesh` is today's documented
    usage): left alone, as is a target that ends before 0.9.0 (Auto throughout).  What the
    code was written for comes from `--source-version`, the file's own references, or the
    project's `jax` requirement; where nothing says, the call is reported with both
    readings.

    **Why.** Until 0.8.x a bare `jax.make_mesh` made Auto axes (0.8.1 warned that the default
    would change); since 0.9.0 it makes **Explicit** axes.  Code written for the old default
    then fails: `jax.shard_map(..., in_specs=P('x'))` on an unsharded input raises "in_specs
    ... does not match the specs of the input", and a matmul with a sharded contracting
    dimension raises `ShardingTypeError`.

    **Use instead.** Spell the axis types: `jax.make_mesh(shape, names,
    axis_types=(jax.sharding.AxisType.Auto,) * len(names))`, or adopt explicit sharding on
    purpose (`AxisType.Explicit`, with `jax.set_mesh` and `out_sharding=` where needed).
    """

    whole_module = False  # hooks read their sites and the names those resolve to

    lifecycle = Lifecycle(needs=added_in("jax.sharding.AxisType"))
    names = frozenset({"jax.make_mesh"})
    follows = frozenset({"JAX604"})  # (a bare make_mesh, for a target before 0.5.3)
    names_are_legacy = False
    examples = (
        Example(
            before="""
            import jax

            mesh = jax.make_mesh((4, 2), ('data', 'model'))
            """,
            after="""
            import jax

            mesh = jax.make_mesh((4, 2), ('data', 'model'), axis_types=(jax.sharding.AxisType.Auto,) * 2)
            """,  # noqa: E501
            source_version="0.5.3",
        ),
        Example(
            title="code written for 0.6.2, and --target-version 0.6.2 (a range reaching 0.9.0)",
            before="""
            import jax

            mesh = jax.make_mesh((8,), ('x',))
            """,
            after="""
            import jax

            mesh = jax.make_mesh((8,), ('x',), axis_types=(jax.sharding.AxisType.Auto,))
            """,
            target_version="0.6.2",
            source_version="0.6.2",
        ),
        Example.reported(
            title="nothing says which JAX the code was written for: reported with both readings",
            code="""
            import jax

            mesh = jax.make_mesh((8,), ('x',))
            """,
        ),
    )

    def ast_gate(self, facts: Facts) -> bool:
        # a direct call without axis_types, * or ** arguments, and fewer than 3 positional ones
        return any(_bare(call) for call in facts.calls_of(set(self.names)))

    def ast_findings(self, view: AstView) -> Optional[List[Diagnostic]]:
        """:meth:`visit_name` on ``ast``: its findings where nothing says which JAX the code
        was written for, or the axes cannot be counted; None (LibCST decides) where it adds
        the axis types, the sites could differ, or the engine might drop an import."""
        if view.upper is not None and view.upper < EXPLICIT_DEFAULT_FROM:
            return []  # Auto on every release of the target range
        if not legacy_imports_stay(view, self.names, frozenset()):
            return None
        sites = name_sites(view, Resolver(view, self.names))
        if sites is None:
            return None
        calls = [call for call in called_at(view, sites).values() if _bare(call)]
        if not calls:
            return []
        written_before = view.written_before(EXPLICIT_DEFAULT_FROM)
        if written_before is False:
            return []  # written for the Explicit default: today's usage
        found: List[Optional[Diagnostic]] = []
        for call in calls:
            named = {keyword.arg: keyword.value for keyword in call.keywords}
            shape = call.args[0] if call.args else named.get("axis_shapes")
            names = call.args[1] if len(call.args) > 1 else named.get("axis_names")
            if shape is None or names is None:
                continue
            if written_before is None:
                found.append(view.report(self.code, call, *UNKNOWN_SOURCE))
            elif (_ast_count(names) or _ast_count(shape)) is None:
                found.append(view.report(self.code, call, *UNCOUNTED))
            else:
                return None  # a fix
        return [finding for finding in found if finding is not None]

    def visit_name(self, site: NameSite, ctx: Context) -> None:
        call = called(site)
        if call is None:  # an import, or not called
            return
        if any(arg.star for arg in call.args):
            return
        if not ctx.reaches(EXPLICIT_DEFAULT_FROM):
            return  # Auto on every release of the target range
        written_before, why = ctx.written_before(EXPLICIT_DEFAULT_FROM)
        if written_before is False:
            return  # written for the Explicit default: today's usage
        positional = [arg for arg in call.args if arg.keyword is None]
        keywords = {arg.keyword.value: arg for arg in call.args if arg.keyword is not None}
        if len(positional) >= 3 or "axis_types" in keywords:
            return
        shape = (
            positional[0].value
            if positional
            else getattr(keywords.get("axis_shapes"), "value", None)
        )
        names = (
            positional[1].value
            if len(positional) > 1
            else getattr(keywords.get("axis_names"), "value", None)
        )
        if shape is None or names is None:
            return
        count = _count(names) or _count(shape)
        if written_before is None:
            ctx.report(call, *UNKNOWN_SOURCE)
            return
        if count is None:
            ctx.report(call, *UNCOUNTED)
            return
        axis_types = _auto_axes(count, ctx, site)
        message = "jax.make_mesh(...) -> jax.make_mesh(..., axis_types=Auto axes)"
        ctx.replace(
            call,
            call.with_changes(args=append_arg(call.args, keyword_arg("axis_types", axis_types))),
            message,
            detail="jax.make_mesh without axis_types: the Auto axes it made before JAX 0.9.0 "
            f"are spelled out ({why}).",
        )


def _bare(call: ast.Call) -> bool:
    """A call :meth:`MakeMeshAxisTypes.visit_name` reads: no ``*``/``**`` argument, fewer than
    three positional ones, no ``axis_types``."""
    return (
        not any(type(arg) is ast.Starred for arg in call.args)
        and len(call.args) < 3
        and all(keyword.arg not in (None, "axis_types") for keyword in call.keywords)
    )


def _ast_count(node: ast.AST) -> Optional[int]:
    """:func:`_count` on ``ast``."""
    if type(node) in (ast.Tuple, ast.List):
        elements = node.elts  # type: ignore[attr-defined]
        if not any(type(e) is ast.Starred for e in elements):
            return len(elements)
    return None
