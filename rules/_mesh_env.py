"""What code inside a ``with mesh:`` block needs from the legacy resource env.

Shared by JAX607 (a ``with mesh:`` is removed only when nothing inside reads the env), JAX202
and JAX606 (a block becomes ``with jax.set_mesh(mesh):`` only when nothing in it depends on the
old env or makes arrays eagerly).  ``needs_env`` / ``call_needs_env`` answer with the reason a
block (or one call in it) cannot be shown independent, or None; functions of the module called
or passed along in the block are followed a few levels deep.
"""

from __future__ import annotations

import builtins
from typing import Dict, List, Optional, Set

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.migrator.context import Context
from jaxmigrate.migrator.scope import Scope, dotted_parts
from jaxmigrate.migrator.traversal import fast_visit
from jaxmigrate.rules._array_names import is_foreign_library
from jaxmigrate.rules._flow import local_function, single_value

# Calls that read the legacy resource env (or may, depending on their arguments).
NEEDS_ENV = frozenset(
    {
        "jax.experimental.pjit.pjit",
        "jax.experimental.maps.xmap",
        "jax.experimental.shard_map.shard_map",
        "jax.lax.with_sharding_constraint",
        "jax.shard_map",
        "jax.sharding.PartitionSpec",
        "jax.P",
    }
)
# The legacy resource env itself (``jax.experimental.maps.thread_resources``, renamed
# ``jax.interpreters.pxla.thread_resources`` by JAX903): any name spelled so counts as a read.
READS_ENV = "thread_resources"
# Functions given the mesh and PartitionSpec as arguments (they never read the context).
MESH_ARGUMENT = frozenset(
    {
        "jax.sharding.NamedSharding",
        "jax.NamedSharding",
        "jax.experimental.multihost_utils.host_local_array_to_global_array",
        "jax.experimental.multihost_utils.global_array_to_host_local_array",
    }
)
# Modules whose functions never read it (their shardings come in as NamedShardings).
INDEPENDENT_PREFIXES = ("jax.numpy.", "jax.nn.", "jax.random.", "jax.lax.", "numpy.", "math.")
INDEPENDENT = frozenset(
    {
        "jax.jit",
        "jax.vmap",
        "jax.grad",
        "jax.value_and_grad",
        "jax.device_put",
        "jax.device_get",
        "jax.block_until_ready",
        "jax.sharding.NamedSharding",
        "jax.NamedSharding",
        "jax.devices",
        "jax.local_devices",
        "jax.debug.visualize_array_sharding",
        "jax.tree_util.tree_map",
        "jax.tree.map",
        "jax.tree.leaves",
        "jax.tree.flatten",
        "jax.process_index",
        "jax.process_count",
        "jax.device_count",
        "jax.local_device_count",
        *MESH_ARGUMENT,
    }
)
ARRAY_METHODS = frozenset(
    {
        "sum",
        "mean",
        "max",
        "min",
        "reshape",
        "astype",
        "block_until_ready",
        "transpose",
        "dot",
        "item",
        "tolist",
        "copy",
        "squeeze",
        "ravel",
        "flatten",
        "at",
        "set",
        "add",
        "get",
    }
)
BUILTINS = frozenset(dir(builtins))
# Function transforms: the function they receive runs inside the block.
TRANSFORMS = frozenset({"jax.jit", "jax.vmap", "jax.grad", "jax.value_and_grad"})


def needs_env(
    body: cst.CSTNode, scope: Scope, ctx: Context, depth: int, seen: Set[int]
) -> Optional[str]:
    """Why something in ``body`` may read the legacy resource env, or None when nothing does."""

    class _CallsAndNames(cst.CSTVisitor):
        def __init__(self) -> None:
            super().__init__()
            self.found: List[cst.CSTNode] = []

        def visit_Call(self, node: cst.Call) -> None:
            self.found.append(node)

        def visit_Name(self, node: cst.Name) -> None:
            self.found.append(node)

    if id(body) in seen:
        return None
    seen.add(id(body))
    collect = _CallsAndNames()
    fast_visit(body, collect)
    nodes = collect.found
    calls_funcs = {id(n.func) for n in nodes if isinstance(n, cst.Call)}
    transformed = _transformed_names(body, scope, ctx)
    for node in nodes:
        if isinstance(node, cst.Name):
            if node.value == READS_ENV:  # ``maps.thread_resources.env``: the env itself
                return f"it reads {READS_ENV}"
            if id(node) in calls_funcs:
                continue
            # a function passed along (jax.jit(f), jax.vmap(f)) runs inside the block too
            function = local_function(ctx, node, ctx.scope_of(node))
            if function is not None:
                if depth <= 0:
                    return f"{node.value} is too deep to check"
                why = needs_env(function, scope, ctx, depth - 1, seen)
                if why:
                    return why
            continue
        call: cst.Call = node  # type: ignore[assignment]
        if isinstance(call.func, cst.Name) and call.func.value in transformed:
            continue  # calls the result of a jax.jit/vmap checked in this block
        why = call_needs_env(call, scope, ctx, depth, seen)
        if why:
            return why
    return None


def _transformed_names(body: cst.CSTNode, scope: Scope, ctx: Context) -> Set[str]:
    """Names assigned (only) the result of a jax.jit/jax.vmap/... call inside ``body``."""

    class _Transformed(cst.CSTVisitor):
        """Each name an assignment binds: whether every assignment of it is a transform's result."""

        def __init__(self, scope: Scope, ctx: Context) -> None:
            super().__init__()
            self.scope, self.ctx = scope, ctx
            self.assigned: Dict[str, bool] = {}

        def visit_Assign(self, node: cst.Assign) -> None:
            for target in node.targets:
                if isinstance(target.target, cst.Name):
                    ok = (
                        isinstance(node.value, cst.Call)
                        and self.ctx.qualname(node.value.func, self.scope) in TRANSFORMS
                    )
                    name = target.target.value
                    self.assigned[name] = self.assigned.get(name, True) and ok

    collect = _Transformed(scope, ctx)
    fast_visit(body, collect)
    assigned = collect.assigned
    return {name for name, ok in assigned.items() if ok and len(scope.lookup(name) or ()) <= 1}


def call_needs_env(
    call: cst.Call, scope: Scope, ctx: Context, depth: int, seen: Set[int]
) -> Optional[str]:
    scope = ctx.scope_of(call)  # the call may sit in a function checked from the block
    func = call.func
    if isinstance(func, cst.Call):
        return None  # calling a result (jax.jit(f)(x)): the inner call is checked on its own
    qualname = ctx.qualname(func, scope)
    if qualname is not None:
        if qualname in ("jax.sharding.PartitionSpec", "jax.P"):
            return (
                None
                if _inside_named_sharding(call, scope, ctx)
                else "a bare PartitionSpec is used in it"
            )
        if qualname in ("jax.shard_map",) and any(
            a.keyword is not None and a.keyword.value == "mesh" for a in call.args
        ):
            return None
        if qualname == "jax.lax.with_sharding_constraint" and _pinned(call, scope, ctx):
            return None
        if qualname in NEEDS_ENV:
            return f"it calls {qualname}"
        if qualname in TRANSFORMS and call.args:
            traced = call.args[0].value
            nested = isinstance(traced, cst.Call) and ctx.qualname(traced.func, scope) in TRANSFORMS
            if (
                not nested
                and not isinstance(traced, cst.Lambda)
                and not (
                    isinstance(traced, cst.Name) and local_function(ctx, traced, scope) is not None
                )
            ):
                return f"it traces {ctx.code(traced)}, which the rule cannot check"
        if qualname in INDEPENDENT or qualname.startswith(INDEPENDENT_PREFIXES):
            return None
        if (
            qualname == "functools.partial"
            and call.args
            and ctx.qualname(call.args[0].value, scope) in TRANSFORMS
        ):
            return None  # @partial(jax.jit, ...): its arguments are checked as calls of their own
        return f"it calls {qualname}, which the rule cannot check"
    if isinstance(func, cst.Name):
        function = local_function(ctx, func, scope)
        if function is not None:
            if depth <= 0:
                return f"{func.value} is too deep to check"
            return needs_env(function, scope, ctx, depth - 1, seen)
        if func.value in BUILTINS and scope.lookup(func.value) is None:
            return None
        transform = _transform_bound(ctx, func, ctx.scope_of(call))
        if transform is not None:  # step = jax.jit(f, ...) elsewhere in the module
            if depth <= 0:
                return f"{func.value} is too deep to check"
            return needs_env(transform, scope, ctx, depth - 1, seen)
        return f"it calls {func.value}, which the rule cannot check"
    if isinstance(func, cst.Attribute) and func.attr.value in ARRAY_METHODS:
        return None
    if isinstance(func, cst.Attribute) and _foreign_object(ctx, func.value, ctx.scope_of(call)):
        return None  # rng.randn(...) on a NumPy (or other library's) object
    parts = dotted_parts(func)
    return f"it calls {'.'.join(parts) if parts else ctx.code(func)}, which the rule cannot check"


def _transform_bound(ctx: Context, name: cst.Name, scope: Scope) -> Optional[cst.Call]:
    """``name = jax.jit(f, ...)`` (its only binding): that call, whose traced function and
    shardings are then checked like code in the block."""
    value = single_value(ctx, name, scope)
    if isinstance(value, cst.Call) and ctx.qualname(value.func, scope) in TRANSFORMS:
        return value
    return None


def _foreign_object(ctx: Context, expr: cst.BaseExpression, scope: Scope) -> bool:
    """``expr`` is a name bound once to a call of another library (``np.random.RandomState(0)``)
    or to a list, dict or set display."""
    if not isinstance(expr, cst.Name):
        return False
    value = single_value(ctx, expr, scope)
    if isinstance(value, (cst.List, cst.Dict, cst.Set, cst.ListComp, cst.DictComp, cst.SetComp)):
        return True  # history.append(...) on a list made here
    if not isinstance(value, cst.Call):
        return False
    qualname = ctx.qualname(value.func, scope)
    return qualname is not None and is_foreign_library(qualname)


def _pinned(call: cst.Call, scope: Scope, ctx: Context) -> bool:
    """``with_sharding_constraint(x, NamedSharding(mesh, spec))``: the sharding carries its mesh."""
    args = [a for a in call.args if not a.star]
    keyword = [a for a in args if a.keyword is not None and a.keyword.value == "shardings"]
    arg = (
        keyword[0] if keyword else (args[1] if len(args) > 1 and args[1].keyword is None else None)
    )
    return (
        arg is not None
        and isinstance(arg.value, cst.Call)
        and ctx.qualname(arg.value.func, scope)
        in ("jax.sharding.NamedSharding", "jax.NamedSharding")
    )


def _inside_named_sharding(call: cst.Call, scope: Scope, ctx: Context) -> bool:
    arg = ctx.parent(call)
    while isinstance(arg, cst.IfExp):  # NamedSharding(mesh, P() if s is None else s)
        arg = ctx.parent(arg)
    outer = ctx.parent(arg) if isinstance(arg, cst.Arg) else None
    return isinstance(outer, cst.Call) and ctx.qualname(outer.func, scope) in MESH_ARGUMENT
