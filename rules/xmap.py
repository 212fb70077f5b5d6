"""JAX606 xmap: the common ``xmap`` form -> ``jax.vmap(f, axis_name=...)`` (under ``jax.jit``
with ``NamedSharding`` in/out shardings when the axis is mapped onto a mesh axis).

``jax.experimental.maps.xmap`` was deprecated in 0.4.26 and deleted in 0.4.31 (release notes:
"xmap has been deleted. Please use shard_map").  Named-axis semantics do not map 1:1,
so only one form is rewritten: a single named axis on the leading dimension of every argument
and output, used inside only by collectives; every other form is reported.
"""

from __future__ import annotations

from typing import List, Optional, Tuple

from jaxmigrate.migrator import lazycst as cst, references as refs
from jaxmigrate.migrator.context import Context, NameSite
from jaxmigrate.migrator.rule import Example, Lifecycle, Rule, Safety
from jaxmigrate.migrator.scope import Scope
from jaxmigrate.migrator.traversal import fast_visit
from jaxmigrate.migrator.version import parse_version
from jaxmigrate.rules._flow import local_function
from jaxmigrate.rules._helpers import UNSAFE_ROOM, call_target, fitting, nodes_under
from jaxmigrate.rules._mesh import keyword_arg

LEGACY = "jax.experimental.maps.xmap"
JIT_SHARDINGS_FROM = parse_version("0.4.4")  # jax 0.4.4 release notes: jit gains in_shardings
# Collectives that take the axis name and mean the same under vmap(axis_name=...).
COLLECTIVES = frozenset(
    {
        "psum",
        "pmean",
        "pmax",
        "pmin",
        "all_gather",
        "axis_index",
        "ppermute",
        "all_to_all",
        "psum_scatter",
        "pshuffle",
        "pswapaxes",
    }
)
BY_HAND = "xmap was removed in JAX 0.4.31; rewrite with jax.vmap, jax.shard_map or jax.jit"
GUIDANCE = (
    "rewrite by hand: jax.vmap(f, axis_name=name) for a named leading axis without resources, "
    "jax.shard_map(f, mesh=mesh, in_specs=P('x'), out_specs=P('x')) when each device should "
    "run f on its block, or jax.jit with NamedSharding in/out shardings around jax.vmap to place "
    "a vmapped axis on a mesh axis"
)


class Xmap(Rule, code="JAX606", safety=Safety.SAFE):
    """xmap(f, in_axes=['b', ...], out_axes=['b', ...]) -> jax.vmap(f, axis_name='b') (jitted onto
    the mesh)

    **What it does.** Rewrites the common `xmap` form: one named axis on the leading
    dimension of every argument and output (`in_axes=['batch', ...]`, `{0: 'batch'}`, or a
    tuple of those, one per argument; the same for `out_axes`), where the mapped function (a
    `def` in the same file or a `lambda`) uses the name only in collectives (`psum`, `pmean`,
    `all_gather`, `axis_index`, ...):

    * without `axis_resources`: `jax.vmap(f, axis_name='batch')`;
    * with `axis_resources={'batch': 'x'}` inside `with mesh:` (`mesh = Mesh(...)` in the same
      file) or `with Mesh(...) as mesh:` (an unsafe fix when the `with` target is not visibly
      a Mesh):
      `jax.jit(jax.vmap(f, axis_name='batch'), in_shardings=NamedSharding(mesh, P('x')),
      out_shardings=NamedSharding(mesh, P('x')))`, which gives xmap's values and per-device
      layout (checked against xmap on JAX 0.4.13).

    An argument xmap does not map (`[...]` or `{}` in an `in_axes` tuple) gets `in_axes=None`
    in the vmap and `P()` as its sharding.  When no mesh is visible where the xmap is built (a
    helper returns it, `fn = build()`) but every call of it sits directly in a `with mesh:`
    block on a Mesh that nothing else in the block needs, the unsafe fix is
    `jax.jit(jax.vmap(...), out_shardings=P('x'))` with a bare PartitionSpec and `with
    jax.set_mesh(mesh):` around those calls (targets from JAX 0.7.1): a bare PartitionSpec in
    `jax.jit` reads the mesh `jax.set_mesh` sets (jax 0.4.13 to 0.6.2 reject it even under `with
    mesh:`).  Only the output is pinned: `jax.set_mesh` commits arrays made eagerly in the block,
    and `jax.jit` refuses a committed argument whose sharding differs from `in_shardings`.

    Every other form (several named axes, axes other than the leading one, `axis_sizes`,
    named-axis reductions like `x.sum('batch')`, a mapped function the rule cannot see, an
    unknown mesh) is reported with guidance.

    **Why.** xmap was deprecated in JAX 0.4.26 and deleted in 0.4.31 together with
    `jax.experimental.maps`.

    **Use instead.** `jax.vmap(f, axis_name=...)`, `jax.shard_map`, or `jax.jit` with
    `NamedSharding`s.  A `with mesh:` left around the new code is handled by JAX607.
    """

    lifecycle = Lifecycle(
        needs="0.4.1",
        deprecated=("0.4.26", "xmap deprecated"),
        removed=("0.4.31", "xmap deleted; use shard_map"),
    )
    references = (refs.api("jax.vmap"),)
    names = frozenset({LEGACY})
    examples = (
        Example(
            before="""
            import jax
            from jax.experimental.maps import xmap

            def center(x):
                return x - jax.lax.pmean(x, 'batch')

            f = xmap(center, in_axes=['batch', ...], out_axes=['batch', ...])
            """,
            after="""
            import jax

            def center(x):
                return x - jax.lax.pmean(x, 'batch')

            f = jax.vmap(center, axis_name='batch')
            """,
        ),
        Example(
            title="axis_resources inside `with mesh:`",
            before="""
            import jax
            from jax.experimental.maps import xmap
            from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

            mesh = Mesh(devices, ('x',))

            def center(x):
                return x - jax.lax.pmean(x, 'batch')

            with mesh:
                y = xmap(center, in_axes=['batch', ...], out_axes=['batch', ...], axis_resources={'batch': 'x'})(x)
            """,  # noqa: E501
            after="""
            import jax
            from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

            mesh = Mesh(devices, ('x',))

            def center(x):
                return x - jax.lax.pmean(x, 'batch')

            with mesh:
                y = jax.jit(jax.vmap(center, axis_name='batch'), in_shardings=NamedSharding(mesh, P('x')), out_shardings=NamedSharding(mesh, P('x')))(x)
            """,  # noqa: E501
        ),
    )

    def visit_name(self, site: NameSite, ctx: Context) -> None:
        if site.is_import:
            return
        target = call_target(site)
        if target is None or target[1]:
            ctx.report(site.node, BY_HAND, f"xmap was removed in JAX 0.4.31; {GUIDANCE}.")
            return
        call = target[0]
        self.unsure = False
        self.blocks: List[cst.With] = []
        self.detail = ""  # what the fix's message leaves out
        why, new = self._convert(call, site.scope, ctx)
        message = fitting(f"xmap -> {why}", "xmap -> jax.jit(jax.vmap(...))", room=UNSAFE_ROOM)
        detail = (
            f"xmap -> {why}{self.detail}." if self.detail or message != f"xmap -> {why}" else ""
        )
        if new is None:
            ctx.report(call, BY_HAND, f"xmap was removed in JAX 0.4.31 and {why}; {GUIDANCE}.")
            return
        if self.blocks:
            from jaxmigrate.rules._context_mesh import set_mesh_item

            ctx.replace(call, new, message, safety=Safety.UNSAFE, detail=detail)
            for block in self.blocks:
                node, item = set_mesh_item(ctx, block)
                ctx.replace(
                    node,
                    item,
                    "`with mesh:` -> `with jax.set_mesh(mesh):` for the rewritten xmap",
                    safety=Safety.UNSAFE,
                    detail="The xmap rewritten to jax.jit with bare PartitionSpecs, called here, "
                    "reads that mesh.",
                )
            return
        if self.unsure:
            ctx.replace(
                call,
                new,
                message,
                safety=Safety.UNSAFE,
                detail=f"xmap -> {why}: the `with` target is not visibly a Mesh built in this "
                "file.",
            )
            return
        ctx.replace(call, new, message, detail=detail)

    def _convert(
        self, call: cst.Call, scope: Scope, ctx: Context
    ) -> Tuple[str, Optional[cst.BaseExpression]]:
        order = ("fun", "in_axes", "out_axes")
        args = {}
        positional = 0
        for arg in call.args:
            if arg.star:
                return "it is called with *args/**kwargs", None
            if arg.keyword is None:
                if positional >= len(order):
                    return "it has unexpected positional arguments", None
                args[order[positional]] = arg.value
                positional += 1
            else:
                args[arg.keyword.value] = arg.value
        extra = set(args) - {"fun", "in_axes", "out_axes", "axis_resources"}
        if extra:
            return f"it uses {', '.join(sorted(extra))}", None
        if not {"fun", "in_axes", "out_axes"} <= set(args):
            return "its function or axes are missing", None
        name_out = _specs_name(args["out_axes"])
        mapped = _arg_specs(args["in_axes"])  # per argument: mapped (True) or not; None: all
        name_in = _specs_name(args["in_axes"]) if mapped is None else _mapped_name(args["in_axes"])
        if name_in is None or name_out is None or name_in != name_out:
            return "its axes are not one named leading axis on every argument and output", None
        fun = args["fun"]
        body: Optional[cst.CSTNode] = fun if isinstance(fun, cst.Lambda) else None
        if isinstance(fun, cst.Name):
            body = local_function(ctx, fun, scope)
        if body is None:
            return "the mapped function is not visible here", None
        misuse = _non_collective_use(body, name_in)
        if misuse:
            return misuse, None
        comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        vmap_args = [cst.Arg(ctx.copy(fun), comma=comma)]
        if mapped is not None and not all(mapped):  # xmap's [...]: an unmapped argument
            axes = cst.Tuple(
                [cst.Element(cst.Integer("0") if m else cst.Name("None")) for m in mapped]
            )
            vmap_args.append(keyword_arg("in_axes", axes).with_changes(comma=comma))
        vmap = cst.Call(
            func=ctx.ref("jax.vmap", scope),
            args=[*vmap_args, keyword_arg("axis_name", cst.SimpleString(f"'{name_in}'"))],
        )
        resources = args.get("axis_resources")
        if resources is None or (isinstance(resources, cst.Name) and resources.value == "None"):
            return f"jax.vmap(axis_name='{name_in}')", vmap
        mesh_axis = _single_resource(resources, name_in)
        if mesh_axis is None:
            return "its axis_resources are not a single {name: mesh_axis} literal", None
        if ctx.target < JIT_SHARDINGS_FROM:
            return "jax.jit takes in_shardings= only from 0.4.4", None
        found = _enclosing_mesh(call, ctx)
        mesh: Optional[str] = None
        if found is None:
            why = self._late_mesh(call, ctx)
            if why:
                return (
                    f"the mesh it runs under is not visible (no enclosing `with mesh:`) and {why}",
                    None,
                )
        else:
            mesh, with_node = found
            if not _is_mesh(mesh, with_node, ctx):
                self.unsure = True

        def sharding(axis: Optional[cst.BaseExpression]) -> cst.BaseExpression:
            spec = cst.Call(
                func=ctx.ref("jax.sharding.PartitionSpec", scope, prefer_from=True),
                args=[cst.Arg(ctx.copy(axis))] if axis is not None else [],
            )
            if mesh is None:  # resolved against `with jax.set_mesh(mesh):` where it is called
                return spec
            return cst.Call(
                func=ctx.ref("jax.sharding.NamedSharding", scope, prefer_from=True),
                args=[cst.Arg(cst.Name(mesh), comma=comma), cst.Arg(spec)],
            )

        in_shardings = sharding(mesh_axis)
        if mapped is not None and not all(mapped):
            in_shardings = cst.Tuple(
                [cst.Element(sharding(mesh_axis if m else None)) for m in mapped]
            )
        # Under jax.set_mesh, arrays made eagerly in the block are committed (replicated): jit
        # rejects a committed argument whose sharding differs from in_shardings, where xmap
        # resharded it.  So the late-mesh form pins only the output (the layout xmap gave).
        jit_args = [cst.Arg(vmap, comma=comma)]
        if mesh is not None:
            jit_args.append(keyword_arg("in_shardings", in_shardings).with_changes(comma=comma))
        jit = cst.Call(
            func=ctx.ref("jax.jit", scope),
            args=[*jit_args, keyword_arg("out_shardings", sharding(mesh_axis))],
        )
        axis_text = ctx.code(mesh_axis)
        if mesh is None:
            self.detail = (
                ", resolved against `with jax.set_mesh(mesh):` around its calls (was `with mesh:`; "
                "set_mesh also commits arrays created eagerly in the block)"
            )
            return f"jax.jit(jax.vmap(axis_name='{name_in}'), out_shardings=P({axis_text}))", jit
        return (
            f"jax.jit(jax.vmap(axis_name='{name_in}')) with NamedSharding(mesh, P({axis_text}))",
            jit,
        )

    def _late_mesh(self, call: cst.Call, ctx: Context) -> Optional[str]:
        """For an xmap built where no mesh is visible: plan ``with mesh:`` -> ``with
        jax.set_mesh(mesh):`` around every call of it (``self.blocks``); why not, else None."""
        from jaxmigrate.rules import _context_mesh
        from jaxmigrate.rules._mesh_env import call_needs_env

        if not ctx.exists_throughout("jax.set_mesh"):
            return "jax.set_mesh (for a mesh chosen where it is called) needs JAX 0.7.1"
        try:
            blocks, names = _context_mesh.calling_blocks(ctx, call)
        except _context_mesh.NotFound as reason:
            return str(reason)
        for block in blocks:
            for other in _context_mesh.other_calls(block, names):
                why = call_needs_env(other, ctx.scope_of(block), ctx, depth=5, seen=set())
                if why:
                    return f"its `with mesh:` block needs the legacy mesh otherwise ({why})"
        self.unsure = True
        self.blocks = blocks
        return None


def _spec_name(node: cst.BaseExpression) -> Optional[str]:
    """``['batch', ...]`` or ``{0: 'batch'}`` -> 'batch'."""
    if isinstance(node, cst.List) and len(node.elements) == 2:
        first, second = node.elements[0].value, node.elements[1].value
        if isinstance(first, cst.SimpleString) and isinstance(second, cst.Ellipsis):
            return first.evaluated_value  # type: ignore[return-value]
    if isinstance(node, cst.Dict) and len(node.elements) == 1:
        element = node.elements[0]
        if (
            isinstance(element, cst.DictElement)
            and isinstance(element.key, cst.Integer)
            and element.key.value == "0"
            and isinstance(element.value, cst.SimpleString)
        ):
            return element.value.evaluated_value  # type: ignore[return-value]
    return None


def _specs_name(node: cst.BaseExpression) -> Optional[str]:
    """One spec, or a tuple/list of specs that all name the same axis."""
    single = _spec_name(node)
    if single is not None:
        return single
    if isinstance(node, (cst.Tuple, cst.List)) and node.elements:
        names = {_spec_name(e.value) for e in node.elements}
        if len(names) == 1 and None not in names:
            return names.pop()
    return None


def _single_resource(node: cst.BaseExpression, name: str) -> Optional[cst.BaseExpression]:
    """``{'batch': 'x'}`` (or ``{'batch': axis}``, a name) -> the mesh axis expression."""
    if isinstance(node, cst.Dict) and len(node.elements) == 1:
        element = node.elements[0]
        if (
            isinstance(element, cst.DictElement)
            and isinstance(element.key, cst.SimpleString)
            and element.key.evaluated_value == name
            and isinstance(element.value, (cst.SimpleString, cst.Name))
        ):
            return element.value
    return None


def _unmapped(node: cst.BaseExpression) -> bool:
    """``[...]`` or ``{}``: an argument xmap does not map (every instance sees all of it)."""
    if isinstance(node, cst.List) and len(node.elements) == 1:
        return isinstance(node.elements[0].value, cst.Ellipsis)
    return isinstance(node, cst.Dict) and not node.elements


def _arg_specs(node: cst.BaseExpression) -> Optional[List[bool]]:
    """A tuple of per-argument specs with an unmapped one: mapped or not, per argument."""
    if _spec_name(node) is not None or not isinstance(node, cst.Tuple):
        return None
    flags = [not _unmapped(e.value) for e in node.elements]
    return flags if not all(flags) else None


def _mapped_name(node: cst.BaseExpression) -> Optional[str]:
    """The one name of the mapped specs in a tuple that also holds unmapped ones."""
    if not isinstance(node, cst.Tuple):
        return None
    names = {_spec_name(e.value) for e in node.elements if not _unmapped(e.value)}
    return names.pop() if len(names) == 1 and None not in names else None


def _enclosing_mesh(call: cst.Call, ctx: Context) -> Optional[Tuple[str, cst.With]]:
    """The mesh variable of the innermost enclosing single-item ``with``, and the ``with``."""
    for ancestor in ctx.ancestors(call):
        if isinstance(ancestor, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            return None
        if isinstance(ancestor, cst.With):
            if len(ancestor.items) != 1:
                return None
            item = ancestor.items[0]
            if item.asname is not None and isinstance(item.asname.name, cst.Name):
                return item.asname.name.value, ancestor
            if isinstance(item.item, cst.Name):
                return item.item.value, ancestor
            return None
    return None


MESH_MAKERS = (
    "jax.sharding.Mesh",
    "jax.make_mesh",
    "jax.experimental.maps.Mesh",
    "jax.interpreters.pxla.Mesh",
)


def _is_mesh(name: str, with_node: cst.With, ctx: Context) -> bool:
    """The ``with`` enters a Mesh: ``with Mesh(...) as name`` or ``name = Mesh(...)`` (bound
    once)."""
    scope = ctx.scope_of(with_node)
    item = with_node.items[0]
    if item.asname is not None:
        return (
            isinstance(item.item, cst.Call) and ctx.qualname(item.item.func, scope) in MESH_MAKERS
        )
    bindings = scope.lookup(name)
    if not bindings or len(bindings) != 1:
        return False
    found = [
        node
        for node in ctx.nodes(cst.Assign)  # the analysis index: every assignment, in order
        if any(isinstance(t.target, cst.Name) and t.target.value == name for t in node.targets)
    ]
    return any(
        isinstance(node.value, cst.Call)
        and ctx.qualname(node.value.func, ctx.scope_of(node)) in MESH_MAKERS
        and (ctx.scope_of(node).lookup(name) or (None,))[0] is bindings[0]
        for node in found
    )


def _non_collective_use(body: cst.CSTNode, name: str) -> Optional[str]:
    """Why the axis name is used other than as a collective's axis, or None."""

    class _AxisNameUses(cst.CSTVisitor):
        """The strings spelling the axis ``name`` outside a collective's arguments."""

        def __init__(self, name: str) -> None:
            super().__init__()
            self.name = name
            self.allowed: set = set()
            self.problems: List[str] = []

        def visit_Call(self, node: cst.Call) -> None:
            func = node.func
            attr = (
                func.attr.value
                if isinstance(func, cst.Attribute)
                else func.value
                if isinstance(func, cst.Name)
                else ""
            )
            if attr in COLLECTIVES:
                for arg in node.args:
                    for string in nodes_under(arg.value, cst.SimpleString):
                        self.allowed.add(id(string))

        def visit_SimpleString(self, node: cst.SimpleString) -> None:
            if node.evaluated_value == self.name and id(node) not in self.allowed:
                self.problems.append(node.value)

    check = _AxisNameUses(name)
    fast_visit(body, check)
    if check.problems:
        return (
            f"the axis name {check.problems[0]} is used outside collectives "
            "(named-axis reductions have no vmap equivalent)"
        )
    return None
