"""pjit built before its mesh: ``jax.jit`` with bare specs, called under ``jax.set_mesh``.

JAX202's first choice pins the mesh (``NamedSharding(mesh, p)``), which needs the mesh where
the function is built.  When the mesh only exists later (a module-level pjit entered under
``with maps.mesh(devices, names):`` inside a function, a pjit made in ``__init__`` before
``self.mesh``, ``@partial(pjit, ...)`` decorators whose mesh is made in ``__main__``), the
other spelling JAX accepts is the one its own deprecation message of ``with mesh:`` names:
``jax.jit`` keeps the bare ``PartitionSpec``s and every call runs under ``with
jax.set_mesh(mesh):``, which resolves them against that mesh at call time, as pjit did against
the ``with mesh:`` resource env.  (Measured: ``jax.jit(f, in_shardings=P('x'))`` fails on 0.4.13,
0.4.30 and 0.6.2 under ``with mesh:``; works on 0.6.2 under ``jax.sharding.use_mesh`` and on
0.10.2 under ``jax.set_mesh``; ``jax.set_mesh`` exists from 0.7.1.)

Not a drop-in: under ``jax.set_mesh`` every array an eager JAX operation creates is committed
to the mesh, replicated, and a committed replicated array given to a partitioned
``in_shardings`` makes jax.jit raise.  So this is an unsafe fix, and only for blocks whose
code visibly creates no array eagerly: calls of compiled functions, builtins, NumPy and
host-side JAX queries (``jax.process_index()``, the multihost_utils converters, which pin
their own shardings), same-file helpers that do the same, and methods of host values.
"""

from __future__ import annotations

import builtins
from typing import List, Optional, Set, Tuple

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.migrator.context import Context
from jaxmigrate.migrator.scope import Scope
from jaxmigrate.migrator.traversal import fast_visit
from jaxmigrate.rules._array_names import is_foreign_library
from jaxmigrate.rules._flow import local_function, single_value
from jaxmigrate.rules._pjit import (
    PARTIAL_NAMES,
    PJIT_NAMES,
    Compiled,
    is_pjit_call,
    module_facts,
    qualname_of,
)
from jaxmigrate.rules._pjit_mesh import innermost_mesh_with

SET_MESH = "jax.set_mesh"
# Context managers that already set the mesh jax.jit resolves bare specs against.
MESH_SETTERS = frozenset({"jax.set_mesh", "jax.sharding.set_mesh", "jax.sharding.use_mesh"})
COMPILERS = PJIT_NAMES | {"jax.jit"}
# JAX functions that create no array on the mesh (host queries; converters given the mesh).
HOST_SIDE = frozenset(
    {
        "jax.process_index",
        "jax.process_count",
        "jax.device_count",
        "jax.local_device_count",
        "jax.devices",
        "jax.local_devices",
        "jax.device_get",
        "jax.block_until_ready",
        "jax.sharding.PartitionSpec",
        "jax.P",
        "jax.sharding.NamedSharding",
        "jax.NamedSharding",
        "jax.experimental.multihost_utils.host_local_array_to_global_array",
        "jax.experimental.multihost_utils.global_array_to_host_local_array",
        "jax.experimental.multihost_utils.process_allgather",
        "jax.experimental.multihost_utils.sync_global_devices",
        "jax.debug.visualize_array_sharding",
    }
)
HOST_METHODS = frozenset(
    {"append", "extend", "tolist", "item", "block_until_ready", "format", "join"}
)
BUILTINS = frozenset(dir(builtins))
# Array properties that compute a new array eagerly (``x.T``).
ARRAY_PROPERTIES = frozenset({"T", "mT", "real", "imag"})


def set_mesh_blocks(ctx: Context, compiled: Compiled) -> Tuple[Optional[List[cst.With]], str]:
    """The ``with mesh:`` blocks to turn into ``with jax.set_mesh(mesh):`` so that the compiled
    function may keep bare specs (blocks already under ``jax.set_mesh`` need nothing), or
    (None, why not)."""
    if not ctx.exists_throughout(SET_MESH):
        return (
            None,
            f"jax.jit resolves bare PartitionSpecs only under {SET_MESH}, "
            "which is not in every JAX of the target range",
        )
    if not compiled.calls or not compiled.complete:
        return None, "the compiled function is used other than by calls the rule can see"
    blocks: List[cst.With] = []
    for site in compiled.calls:
        setter = _enclosing_setter(ctx, site)
        if setter is not None:
            continue
        ref = innermost_mesh_with(ctx, site)
        if ref is None or ref.origin is None:
            return (
                None,
                f"a call (line {ctx.position(site).start.line}) runs under no `with mesh:` block",
            )
        node = ref.origin
        if node.items[0].asname is not None or isinstance(node.body, cst.SimpleStatementSuite):
            return (
                None,
                "a `with mesh as name:` or one-line block cannot become "
                "`with jax.set_mesh(mesh):` as is",
            )
        if all(b is not node for b in blocks):
            why = eager_work(ctx, node.body, ctx.scope_of(node), depth=2, seen=set())
            if why is not None:
                return (
                    None,
                    f"the `with` block at line {ctx.position(node).start.line} {why} "
                    "(under jax.set_mesh it would be committed to the mesh, replicated)",
                )
            blocks.append(node)
    return blocks, ""


def set_mesh_edit(ctx: Context, node: cst.With, scope: Scope) -> cst.With:
    """``with mesh:`` -> ``with jax.set_mesh(mesh):``."""
    item = node.items[0]
    call = cst.Call(func=ctx.ref(SET_MESH, scope), args=[cst.Arg(item.item)])
    return node.with_changes(items=[item.with_changes(item=call)])


def _enclosing_setter(ctx: Context, node: cst.CSTNode) -> Optional[cst.With]:
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, cst.With) and len(ancestor.items) == 1:
            item = ancestor.items[0].item
            if (
                isinstance(item, cst.Call)
                and qualname_of(ctx, item.func, ctx.scope_of(ancestor)) in MESH_SETTERS
            ):
                return ancestor
        if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return None
    return None


def eager_work(
    ctx: Context, body: cst.CSTNode, scope: Scope, depth: int, seen: Set[int]
) -> Optional[str]:
    """What in ``body`` may create a JAX array eagerly (None when nothing visibly does).  In a
    same-file helper only its calls are checked (``depth`` levels of helpers)."""
    from jaxmigrate.rules._scope_body import ScopeBodyVisitor  # (LibCST's visitor: loaded here)

    class _EagerWork(ScopeBodyVisitor):
        """What may create an array in one scope's body: its calls, and (unless ``helper``, a
        same-file helper, where only calls are checked) operators, subscripts and array
        properties."""

        def __init__(self, helper: bool) -> None:
            super().__init__()
            self.helper = helper
            self.found: List[cst.CSTNode] = []

        def visit_Call(self, node: cst.Call) -> None:
            self.found.append(node)

        def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
            if not self.helper:
                self.found.append(node)

        def visit_UnaryOperation(self, node: cst.UnaryOperation) -> None:
            if not self.helper:
                self.found.append(node)

        def visit_Subscript(self, node: cst.Subscript) -> None:
            if not self.helper:
                self.found.append(node)

        def visit_Attribute(self, node: cst.Attribute) -> None:
            if not self.helper and node.attr.value in ARRAY_PROPERTIES:
                self.found.append(node)

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return False

        def visit_ClassDef(self, node: cst.ClassDef) -> bool:
            return False

    if id(body) in seen:
        return None
    seen.add(id(body))
    collect = _EagerWork(helper=depth < 2)
    fast_visit(body, collect)
    for node in collect.found:
        if isinstance(node, cst.BinaryOperation):
            if not (_constant(node.left) and _constant(node.right)):
                return f"computes `{ctx.code(node)}`"
        elif isinstance(node, cst.UnaryOperation):
            if not _constant(node.expression):
                return f"computes `{ctx.code(node)}`"
        elif isinstance(node, cst.Attribute):
            if not _host_value(ctx, node.value, ctx.scope_of(node)):
                return f"computes `{ctx.code(node)}`"
        elif isinstance(node, cst.Subscript):
            if not _host_value(ctx, node.value, ctx.scope_of(node)):
                return f"indexes `{ctx.code(node.value)}`"
        else:
            why = _call_work(ctx, node, depth, seen)  # type: ignore[arg-type]
            if why is not None:
                return why
    return None


def _call_work(ctx: Context, call: cst.Call, depth: int, seen: Set[int]) -> Optional[str]:
    scope = ctx.scope_of(call)
    func = call.func
    if is_compiled(ctx, func, scope):
        return None
    qualname = qualname_of(ctx, func, scope)
    if qualname is not None:
        if (
            qualname in HOST_SIDE
            or is_foreign_library(qualname)
            or qualname.split(".", 1)[0] == "numpy"
        ):
            return None
        if qualname.split(".", 1)[0] in ("jax", "jaxlib"):
            return f"calls {qualname}"
    if isinstance(func, cst.Name):
        if func.value in BUILTINS and scope.lookup(func.value) is None:
            return None
        function = local_function(ctx, func, scope)
        if function is not None and depth > 0:
            return eager_work(ctx, function.body, scope, depth - 1, seen)
        return f"calls {func.value}, which the rule cannot check"
    if isinstance(func, cst.Attribute):
        if func.attr.value in HOST_METHODS or _host_value(ctx, func.value, scope):
            return None
    return f"calls {ctx.code(func)}, which the rule cannot check"


def _constant(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, (cst.Integer, cst.Float, cst.SimpleString, cst.Imaginary))


def _host_value(ctx: Context, expr: cst.BaseExpression, scope: Scope) -> bool:
    """A NumPy (or other host library) value: a chain of methods, attributes and indexing on
    a call of such a library, or a name bound once to one (or to a list/dict display)."""
    while isinstance(expr, (cst.Attribute, cst.Call, cst.Subscript)):
        if isinstance(expr, cst.Call):
            qualname = qualname_of(ctx, expr.func, scope)
            if qualname is not None:
                return qualname.split(".", 1)[0] == "numpy" or is_foreign_library(qualname)
            expr = expr.func
        else:
            expr = expr.value
    if isinstance(expr, cst.Name):
        value = single_value(ctx, expr, scope)
        if isinstance(value, (cst.List, cst.Dict, cst.Set, cst.ListComp, cst.DictComp)):
            return True
        if isinstance(value, cst.Call):
            return _host_value(ctx, value, ctx.scope_of(value))
    return False


def is_compiled(ctx: Context, func: cst.BaseExpression, scope: Scope) -> bool:
    """``func`` is a pjit/jax.jit-compiled function of this file: a name bound once to
    ``pjit(...)``/``jax.jit(...)``, a def decorated with them (or ``partial`` of them), or
    ``self.attr`` assigned such a call once."""
    if isinstance(func, cst.Name):
        value = single_value(ctx, func, scope)
        if value is not None:
            return _compiles(ctx, value, ctx.scope_of(value))
        function = local_function(ctx, func, scope)
        if function is not None:
            return any(
                _compiles(ctx, d.decorator, ctx.scope_of(function)) for d in function.decorators
            )
        return False
    if (
        isinstance(func, cst.Attribute)
        and isinstance(func.value, cst.Name)
        and func.value.value == "self"
    ):
        assigns = module_facts(ctx).attr_assigns.get(func.attr.value, [])
        return len(assigns) == 1 and _compiles(ctx, assigns[0].value, ctx.scope_of(assigns[0]))
    return False


def _compiles(ctx: Context, expr: cst.BaseExpression, scope: Scope) -> bool:
    if not isinstance(expr, cst.Call):
        return qualname_of(ctx, expr, scope) in COMPILERS
    if (
        is_pjit_call(ctx, expr, scope) is not None
        or qualname_of(ctx, expr.func, scope) in COMPILERS
    ):
        return True
    return (
        qualname_of(ctx, expr.func, scope) in PARTIAL_NAMES
        and bool(expr.args)
        and qualname_of(ctx, expr.args[0].value, scope) in COMPILERS
    )
