"""Legacy pjit in a multi-process program: what JAX203 needs beyond a single call site.

Before jax.Array (0.4.1) a pjit-compiled function called in a multi-process program treated
every argument that was not a GlobalDeviceArray as this process's share of the global value,
and returned this process's share of each output (unless the ``parallel_functions_output_gda``
flag was set).  These helpers find the argument positions a call's ``in_axis_resources`` cover
(static arguments excluded), the outputs a program then uses as per-process data, and build the
``multihost_utils`` conversions.
"""

from __future__ import annotations

from typing import List, Optional, Sequence, Set, Tuple

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.migrator.context import Context
from jaxmigrate.migrator.scope import Scope
from jaxmigrate.rules._flow import single_assignment
from jaxmigrate.rules._pjit import call_qualname, get_keyword, module_facts
from jaxmigrate.rules._pjit_mesh import line

MULTIHOST = "jax.experimental.multihost_utils"
RECIPE = (
    "in a multi-process program pjit/jit inputs must be global arrays (pjit no longer "
    "concatenates per-process inputs): `x = multihost_utils.host_local_array_to_global_array(x, "
    "mesh, spec)` before the call, and `multihost_utils.global_array_to_host_local_array(out, "
    "mesh, out_spec)` for outputs used as per-process data"
)
TO_GLOBAL = "host_local_array_to_global_array"  # what a message names as the fix


def listed(names: Sequence[str], room: int = 24, noun: str = "input") -> str:
    """``input a`` / ``inputs a, b`` for a message; ``input`` / ``2 inputs`` when the names
    would take more than ``room``."""
    text = ", ".join(names)
    plural = f"{noun}s" if len(names) > 1 else noun
    if len(text) <= room:
        return f"{plural} {text}"
    return f"{len(names)} {plural}" if len(names) > 1 else noun


CONVERTERS = frozenset(
    {
        "jax.experimental.multihost_utils.global_array_to_host_local_array",
        "jax.experimental.multihost_utils.host_local_array_to_global_array",
    }
)


def evidence(ctx: Context, calls: Sequence[cst.Call], names: frozenset) -> Optional[str]:
    """``the module calls jax.distributed.initialize (line 12)``: the first multi-process call."""
    for call in calls:
        name = call_qualname(ctx, call, ctx.scope_of(call))
        if name in names:
            return f"the module calls {name} (line {line(ctx, call)})"
    return None


def static_positions(call: cst.Call) -> Optional[Set[int]]:
    """The ``static_argnums`` of a pjit/jit call as a set (empty without one); None when they
    are not integer literals."""
    arg = get_keyword(call.args, "static_argnums")
    if arg is None:
        return set()
    values = arg.value.elements if isinstance(arg.value, (cst.Tuple, cst.List)) else [arg.value]
    found = set()
    for value in values:
        node = getattr(value, "value", value)
        if not isinstance(node, cst.Integer):
            return None
        found.add(int(node.value))
    return found


def dynamic_arguments(site: cst.Call, static: Set[int]) -> List[Tuple[int, int, cst.Arg]]:
    """(position among the dynamic arguments, position in the call, argument) for the
    positional arguments that are not static: in_axis_resources describe those only."""
    found, dynamic = [], 0
    for index, arg in enumerate(site.args):
        if index in static:
            continue
        found.append((dynamic, index, arg))
        dynamic += 1
    return found


def output_targets(statement: cst.SimpleStatementLine, site: cst.Call) -> List[str]:
    """``out = site`` -> ["out"]; ``a, b = site`` -> ["a", "b"]; else []."""
    if len(statement.body) != 1 or not isinstance(statement.body[0], cst.Assign):
        return []
    assign = statement.body[0]
    if assign.value is not site or len(assign.targets) != 1:
        return []
    target = assign.targets[0].target
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        names = [e.value for e in target.elements]
        if all(isinstance(n, cst.Name) for n in names):
            return [n.value for n in names]  # type: ignore[attr-defined]
    return []


def used_on_host(ctx: Context, name: str, statement: cst.CSTNode, compiled: frozenset) -> bool:
    """Is ``name`` read after ``statement`` in its scope other than as an argument of a
    compiled function (printing, NumPy, indexing, attributes, other functions)?"""
    scope = ctx.scope_of(statement)
    after = line(ctx, statement)
    uses = [
        u
        for u in module_facts(ctx).name_loads.get(name, [])
        if ctx.scope_of(u) is scope
        and line(ctx, u) > after
        and not isinstance(ctx.parent(u), (cst.AssignTarget, cst.Param))
    ]
    for number, use in enumerate(sorted(uses, key=lambda u: line(ctx, u))):
        parent = ctx.parent(use)
        if number == 0 and isinstance(parent, cst.Arg):
            call = ctx.parent(parent)
            if call_qualname(ctx, call, scope) in CONVERTERS:
                return False  # converted already (a second run)
        if isinstance(parent, cst.Arg) and parent.keyword is None:
            call = ctx.parent(parent)
            func = call.func if isinstance(call, cst.Call) else None
            if isinstance(func, cst.Name) and func.value in compiled:
                continue
        return True
    return False


def convert(
    utils: cst.BaseExpression,
    function: str,
    value: cst.BaseExpression,
    mesh: cst.BaseExpression,
    spec: cst.BaseExpression,
    ctx: Context,
) -> cst.Call:
    comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    return cst.Call(
        func=cst.Attribute(value=ctx.copy(utils), attr=cst.Name(function)),
        args=[
            cst.Arg(value, comma=comma),
            cst.Arg(ctx.copy(mesh), comma=comma),
            cst.Arg(ctx.copy(spec)),
        ],
    )


class LegacySite:
    """A call of a pjit-compiled function in a multi-process program."""

    def __init__(
        self,
        site: cst.Call,
        leaves: list,
        out_value: Optional[cst.BaseExpression],
        static: Set[int],
        from_gda: bool,
    ) -> None:
        self.site, self.leaves, self.out_value = site, leaves, out_value
        self.static, self.from_gda = static, from_gda
        self.statement: Optional[cst.SimpleStatementLine] = None
        self.outputs: List[Tuple[str, cst.BaseExpression, cst.BaseExpression]] = []


def _visible(ctx: Context, mesh: Optional[cst.BaseExpression], at: cst.CSTNode) -> bool:
    return mesh is not None and not (
        isinstance(mesh, cst.Name) and not ctx.scope_of(at).lookup(mesh.value)
    )


def _default_mesh(ctx: Context, site: cst.Call) -> Optional[cst.BaseExpression]:
    from jaxmigrate.rules._pjit_mesh import innermost_mesh_with

    with_mesh = innermost_mesh_with(ctx, site)
    return with_mesh.expr if with_mesh is not None and with_mesh.bind is None else None


def _plan_outputs(rule, ctx: Context, entry: LegacySite, jitted: frozenset) -> None:
    """The partitioned outputs the program reads as per-process data after the call."""
    entry.statement = block_statement(ctx, entry.site)
    if entry.statement is None or entry.out_value is None:
        return
    names = output_targets(entry.statement, entry.site)
    leaves = rule._argument_leaves(entry.out_value)
    if not names or (len(leaves) != 1 and len(leaves) != len(names)):
        return
    for position, name in enumerate(names):
        leaf = leaves[0] if len(leaves) == 1 else leaves[position]
        if leaf is None or not rule._partitioned(ctx, leaf, ctx.scope_of(leaf)):
            continue
        mesh, spec = rule._spec_of(ctx, leaf, ctx.scope_of(leaf))
        mesh = mesh if mesh is not None else _default_mesh(ctx, entry.site)
        if (
            mesh is not None
            and _visible(ctx, mesh, entry.site)
            and used_on_host(ctx, name, entry.statement, jitted)
        ):
            entry.outputs.append((name, mesh, spec))


def fix_legacy_sites(
    rule, ctx: Context, sites: List[LegacySite], jitted: frozenset, why: str
) -> None:
    for entry in sites:
        _plan_outputs(rule, ctx, entry, jitted)
    host_assigns = {id(e.statement.body[0]) for e in sites if e.outputs and e.statement}
    for entry in sites:
        _fix_legacy_site(rule, ctx, entry, jitted, host_assigns, why)


def _fix_legacy_site(
    rule, ctx: Context, entry: LegacySite, jitted: frozenset, host_assigns: Set[int], why: str
) -> None:
    class ReplaceNode(cst.CSTTransformer):
        """Swap one node of a subtree (found by identity) for another."""

        def __init__(self, old: cst.CSTNode, new: cst.CSTNode) -> None:
            super().__init__()
            self.old, self.new = old, new

        def on_leave(self, original_node, updated_node):
            return self.new if original_node is self.old else updated_node

    site, scope = entry.site, ctx.scope_of(entry.site)
    if any(a.keyword is not None or a.star for a in site.args):
        if not entry.from_gda:
            ctx.report(
                site,
                "partitioned inputs by keyword or unpacking: check they are global arrays",
                f"Partitioned inputs passed by keyword or unpacking cannot be checked: {RECIPE}.",
            )
        return
    utils = None
    args = list(site.args)
    wrapped: List[str] = []
    for index, position, arg in [] if entry.from_gda else dynamic_arguments(site, entry.static):
        if index >= len(entry.leaves) and len(entry.leaves) != 1:
            break  # more positional arguments than specs: not partitioned
        leaf = entry.leaves[index] if len(entry.leaves) > 1 else entry.leaves[0]
        if leaf is None or not rule._partitioned(ctx, leaf, ctx.scope_of(leaf)):
            continue
        last = rule._last_assignment(ctx, arg.value)
        host_output = last is not None and id(last) in host_assigns
        if not host_output and rule._provably_global(ctx, arg.value, scope, jitted, legacy=True):
            continue
        mesh, spec = rule._spec_of(ctx, leaf, ctx.scope_of(leaf))
        mesh = mesh if mesh is not None else _default_mesh(ctx, site)
        if mesh is None or not _visible(ctx, mesh, site):
            ctx.report(
                site,
                f"per-process {listed([ctx.code(arg.value)], 18)} has no known mesh; "
                f"use {TO_GLOBAL}",
                f"Per-process input {ctx.code(arg.value)} of a multi-process pjit "
                f"({why}), but its mesh is unknown: {RECIPE}.",
            )
            return
        utils = utils or rule_module_ref(ctx, MULTIHOST, scope)
        value = convert(utils, "host_local_array_to_global_array", arg.value, mesh, spec, ctx)
        args[position] = arg.with_changes(value=value)
        wrapped.append(ctx.code(arg.value))
    if not wrapped and not entry.outputs:
        return
    utils = utils or rule_module_ref(ctx, MULTIHOST, scope)
    detail = (
        f"Multi-process program ({why}): before jax.Array, pjit took every input that "
        f"was not a GlobalDeviceArray as this process's share and returned this "
        f"process's share of each output"
    )
    if wrapped:
        detail += (
            f"; {', '.join(wrapped)} -> {TO_GLOBAL} (an already global jax.Array passes unchanged)"
        )
    new_site = site.with_changes(args=args)
    if not entry.outputs:
        message = f"multi-process pjit: {listed(wrapped, 16)} -> {TO_GLOBAL}"
        ctx.replace(site, new_site, message, detail=f"{detail}.")
        return
    names = [n for n, _m, _s in entry.outputs]
    detail += (
        f"; {', '.join(names)} -> global_array_to_host_local_array (read as per-process data)."
    )
    if wrapped:
        message = f"{listed(wrapped, 16)} -> {TO_GLOBAL}, and outputs back"
    else:
        outputs = listed(names, 20, "output")
        message = f"{outputs} -> global_array_to_host_local_array (per-process data)"
    statement = entry.statement
    after = [
        cst.SimpleStatementLine(
            body=[
                cst.Assign(
                    targets=[cst.AssignTarget(cst.Name(name))],
                    value=convert(
                        utils, "global_array_to_host_local_array", cst.Name(name), mesh, spec, ctx
                    ),
                )
            ]
        )
        for name, mesh, spec in entry.outputs
    ]
    assert statement is not None
    body = [statement.visit(ReplaceNode(site, new_site)), *after]
    ctx.replace(statement, cst.FlattenSentinel(body), message, detail=detail)


def rule_module_ref(ctx: Context, qualname: str, scope) -> cst.BaseExpression:
    from jaxmigrate.rules._name_refs import module_ref

    return module_ref(ctx, qualname, scope)


def host_local(ctx: Context, expr: cst.BaseExpression) -> bool:
    """A name bound once, in the call's scope, from a NumPy call (``np.zeros(...) + k`` too)."""
    if not isinstance(expr, cst.Name):
        return False
    scope = ctx.scope_of(expr)
    assign = single_assignment(ctx, expr.value, scope)
    if assign is None or ctx.scope_of(assign) is not scope:
        return False
    return numpy_value(ctx, assign.value, ctx.scope_of(assign))


def numpy_value(ctx: Context, value: cst.BaseExpression, scope: Scope) -> bool:
    """``np.f(...)``, ``np.f(...).reshape(...)``, ``np.f(...) + k`` (either operand)."""
    if isinstance(value, cst.BinaryOperation):
        return numpy_value(ctx, value.left, scope) or numpy_value(ctx, value.right, scope)
    while (
        isinstance(value, cst.Call)
        and isinstance(value.func, cst.Attribute)
        and isinstance(value.func.value, cst.Call)
    ):
        value = value.func.value
    name = call_qualname(ctx, value, scope) or ""
    return name.startswith("numpy.")


def block_statement(ctx: Context, node: cst.CSTNode) -> Optional[cst.SimpleStatementLine]:
    """The simple statement line holding ``node``, when it sits directly in a block (not in a
    lambda, comprehension or compound statement header): where a conversion can go before it."""
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, cst.SimpleStatementLine):
            parent = ctx.parent(ancestor)
            if isinstance(parent, (cst.IndentedBlock, cst.Module)):
                return ancestor
            return None
        if isinstance(ancestor, (cst.Lambda, cst.BaseCompoundStatement, cst.BaseComp)):
            return None
    return None
