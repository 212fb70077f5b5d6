"""Where a function built without a visible mesh is called: the ``with mesh:`` blocks around it.

xmap with ``axis_resources`` read the mesh of the legacy ``with mesh:`` block it was *called*
in, not the one it was built in.  A rewrite to ``jax.jit`` with bare ``PartitionSpec``
shardings keeps that late binding only under ``with jax.set_mesh(mesh):`` (checked: jax 0.4.13,
0.4.30 and 0.6.2 reject a bare PartitionSpec in ``jax.jit`` shardings even inside ``with
mesh:``; jax 0.10.2 resolves it against ``jax.set_mesh``).  This module follows the built
function to its calls, through a local helper that returns it and a name it is assigned to,
and finds the ``with`` blocks to switch.  Used by JAX606 (rules/xmap.py).
"""

from __future__ import annotations

from typing import List, Optional, Tuple

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.migrator.context import Context
from jaxmigrate.migrator.traversal import fast_visit
from jaxmigrate.rules._flow import name_loads

MESH_MAKERS = frozenset(
    {
        "jax.sharding.Mesh",
        "jax.make_mesh",
        "jax.experimental.maps.Mesh",
        "jax.interpreters.pxla.Mesh",
    }
)


class NotFound(Exception):
    """Why the calls or their blocks cannot all be found; the message says it."""


def calling_blocks(ctx: Context, built: cst.Call) -> Tuple[List[cst.With], List[str]]:
    """The ``with <Mesh>:`` blocks every call of the function ``built`` makes is made in.

    ``built`` is returned by a local function ``make`` (every use of ``make`` is ``f = make()``)
    or assigned to a name ``f``; every use of ``f`` must be a call directly inside a one-item
    ``with`` on ``Mesh(...)``/``make_mesh(...)`` or on a name bound once to one.  Returns the
    blocks and the names the function is called by."""
    parent = ctx.parent(built)
    names: List[Tuple[cst.Name, object]] = []
    if isinstance(parent, cst.Return):
        function = _enclosing_function(ctx, parent)
        if function is None:
            raise NotFound("it is returned from code the rule cannot follow")
        for use in _uses(ctx, function.name, ctx.scope_of(function)):
            call = ctx.parent(use)
            if not isinstance(call, cst.Call) or call.func is not use:
                raise NotFound(f"{function.name.value} is used other than by calls")
            names.append(_assigned_name(ctx, call))
    else:
        names.append(_assigned_name(ctx, built))
    blocks: List[cst.With] = []
    for name, scope in names:
        for use in _uses(ctx, name, scope):
            call = ctx.parent(use)
            if not isinstance(call, cst.Call) or call.func is not use:
                raise NotFound(f"{use.value} is used other than by calls")
            block = _mesh_block(ctx, call)
            if block is None:
                raise NotFound(
                    f"{use.value}(...) is not called directly inside a `with mesh:` block"
                )
            if block not in blocks:
                blocks.append(block)
        if not blocks:
            raise NotFound(f"{name.value} is never called here")
    return blocks, [name.value for name, _ in names]


def set_mesh_item(ctx: Context, block: cst.With) -> Tuple[cst.CSTNode, cst.BaseExpression]:
    """``with m:`` -> the edit that makes it ``with jax.set_mesh(m):``."""
    item = block.items[0]
    scope = ctx.scope_of(block)
    call = cst.Call(func=ctx.ref("jax.set_mesh", scope), args=[cst.Arg(ctx.copy(item.item))])
    return item.item, call


def other_calls(block: cst.With, skip: List[str]) -> List[cst.Call]:
    """The calls in the block's body other than of the names in ``skip``."""

    class _OtherCalls(cst.CSTVisitor):
        # (at module level: a class made in a function is a cycle that would hold what it captured)
        def __init__(self, skip: List[str]) -> None:
            super().__init__()
            self.skip = skip
            self.found: List[cst.Call] = []

        def visit_Call(self, node: cst.Call) -> None:
            if not (isinstance(node.func, cst.Name) and node.func.value in self.skip):
                self.found.append(node)

    collect = _OtherCalls(skip)
    fast_visit(block.body, collect)
    return collect.found


def _enclosing_function(ctx: Context, node: cst.CSTNode) -> Optional[cst.FunctionDef]:
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, cst.Lambda):
            return None
        if isinstance(ancestor, cst.FunctionDef):
            return ancestor if not ancestor.decorators else None
    return None


def _assigned_name(ctx: Context, value: cst.Call) -> Tuple[cst.Name, object]:
    """``f = value`` (``f``'s only binding): the name and its scope."""
    assign = ctx.parent(value)
    if not (
        isinstance(assign, cst.Assign)
        and assign.value is value
        and len(assign.targets) == 1
        and isinstance(assign.targets[0].target, cst.Name)
    ):
        raise NotFound("the built function is not assigned to a name")
    name = assign.targets[0].target
    scope = ctx.scope_of(assign)
    if len(scope.lookup(name.value) or ()) != 1:
        raise NotFound(f"{name.value} is bound more than once")
    return name, scope


def _uses(ctx: Context, name: cst.Name, scope) -> List[cst.Name]:  # noqa: ANN001
    binding = (scope.lookup(name.value) or (None,))[0]
    return [
        use
        for use in name_loads(ctx).get(name.value, ())
        if use is not name and (ctx.scope_of(use).lookup(name.value) or (None,))[0] is binding
    ]


def _mesh_block(ctx: Context, call: cst.Call) -> Optional[cst.With]:
    """The one-item ``with`` on a Mesh whose body holds ``call`` (no function in between)."""
    for ancestor in ctx.ancestors(call):
        if isinstance(ancestor, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            return None
        if isinstance(ancestor, cst.With):
            if len(ancestor.items) != 1 or ancestor.items[0].asname is not None:
                return None
            return (
                ancestor if _is_mesh(ctx, ancestor.items[0].item, ctx.scope_of(ancestor)) else None
            )
    return None


def _is_mesh(ctx: Context, expr: cst.BaseExpression, scope) -> bool:  # noqa: ANN001
    if isinstance(expr, cst.Call):
        return ctx.qualname(expr.func, scope) in MESH_MAKERS
    if isinstance(expr, cst.Name):
        from jaxmigrate.rules._flow import single_value

        value = single_value(ctx, expr, scope)
        return (
            isinstance(value, cst.Call)
            and ctx.qualname(value.func, ctx.scope_of(value)) in MESH_MAKERS
        )
    return False
