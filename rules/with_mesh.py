"""JAX607 with-mesh: ``with mesh:`` (a Mesh as a context manager) is deprecated in JAX 0.10.1.

The jax 0.10.1 release notes deprecate the ``with mesh:`` context manager in favour of ``with
jax.set_mesh(mesh):`` (it warns on jax 0.10.2).  It is not a drop-in: the block sets the legacy
resource env read by pjit, by ``with_sharding_constraint`` with a bare PartitionSpec and by
xmap, while ``jax.set_mesh`` sets the mesh read by ``jax.jit``, ``jax.shard_map(mesh=None)`` and
sharding-in-types (and commits eagerly created arrays). So the rule reports (first pin shardings
explicitly, as JAX202 does, then drop the block), and only removes the ``with`` when everything
inside is visibly independent of the resource env.
"""

from __future__ import annotations

import ast
import builtins
from typing import List, Optional, Set

import libcst as cst

from jaxmigrate.migrator import references as refs
from jaxmigrate.migrator.astfacts import Facts
from jaxmigrate.migrator.context import Context, NameSite
from jaxmigrate.migrator.rule import Example, Rule, Safety
from jaxmigrate.migrator.scope import Scope, dotted_parts, fast_visit
from jaxmigrate.migrator.version import parse_version
from jaxmigrate.rules._flow import single_value
from jaxmigrate.rules._helpers import ScopeBodyVisitor, call_target
from jaxmigrate.rules._mesh import function_named
from jaxmigrate.rules._receivers import is_foreign_library

MESH_MAKERS = frozenset({"jax.sharding.Mesh", "jax.make_mesh"})
DEPRECATED_FROM = parse_version("0.10.1")

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
# Functions given the mesh and PartitionSpec as arguments (they never read the context).
MESH_ARGUMENT = frozenset({
    "jax.sharding.NamedSharding", "jax.NamedSharding",
    "jax.experimental.multihost_utils.host_local_array_to_global_array",
    "jax.experimental.multihost_utils.global_array_to_host_local_array",
})
# Modules whose functions never read it (their shardings come in as NamedShardings).
INDEPENDENT_PREFIXES = ("jax.numpy.", "jax.nn.", "jax.random.", "jax.lax.", "numpy.", "math.")
INDEPENDENT = frozenset(
    {"jax.jit", "jax.vmap", "jax.grad", "jax.value_and_grad", "jax.device_put", "jax.device_get",
     "jax.block_until_ready", "jax.sharding.NamedSharding", "jax.NamedSharding", "jax.devices",
     "jax.local_devices", "jax.debug.visualize_array_sharding", "jax.tree_util.tree_map",
     "jax.tree.map", "jax.tree.leaves", "jax.tree.flatten", "jax.process_index", "jax.process_count",
     "jax.device_count", "jax.local_device_count", *MESH_ARGUMENT}
)
ARRAY_METHODS = frozenset(
    {"sum", "mean", "max", "min", "reshape", "astype", "block_until_ready", "transpose", "dot",
     "item", "tolist", "copy", "squeeze", "ravel", "flatten", "at", "set", "add", "get"}
)
BUILTINS = frozenset(dir(builtins))
# Function transforms: the function they receive runs inside the block.
TRANSFORMS = frozenset({"jax.jit", "jax.vmap", "jax.grad", "jax.value_and_grad"})

ORDER = (
    "recommended order: 1. pjit -> jax.jit with NamedShardings; 2. bare-PartitionSpec "
    "with_sharding_constraint -> NamedSharding; 3. delete the `with mesh:` when nothing else "
    "uses it; 4. only then consider `with jax.set_mesh(mesh):` (it is not a drop-in: it sets the "
    "mesh jax.jit and sharding-in-types read, and commits eagerly created arrays)"
)


class WithMesh(Rule):
    code = "JAX607"
    name = "with-mesh"
    summary = "report `with mesh:` (deprecated in 0.10.1); remove it when nothing inside needs it"
    safety = Safety.SAFE
    deprecated_in = "0.10.1"
    references = (
        refs.release_notes("0.10.1", "with mesh: deprecated; use with jax.set_mesh(mesh):"),
        refs.api("jax.set_mesh"),
    )
    names = MESH_MAKERS
    names_are_legacy = False
    doc = """
    **What it does.** For targets from JAX 0.10.1 on, finds `with mesh:` blocks where `mesh`
    is a `Mesh(...)`/`jax.make_mesh(...)` built in the same file (or `with Mesh(...) as
    mesh:`).  When everything in the block is visibly independent of the legacy resource
    environment (only `jax.jit`/`jax.vmap`/`jax.device_put`, `jax.numpy`/`jax.lax` functions
    with `NamedSharding`s, `with_sharding_constraint` given a `NamedSharding`, builtins, array
    methods, and same-file functions that do the same),
    the `with` is removed and its body dedented (`with Mesh(...) as mesh:` keeps `mesh = Mesh(...)`).
    Everything else is reported with the recommended order.

    **Why.** JAX 0.10.1 deprecated the Mesh context manager.  It sets the legacy resource env,
    which `pjit`, `with_sharding_constraint` with a bare `PartitionSpec`, and `xmap` read;
    `jax.set_mesh` sets a different mesh (read by `jax.jit`, `jax.shard_map(mesh=None)` and
    sharding-in-types) and also commits eagerly created arrays, so swapping one for the other
    is not safe.

    **Use instead.** 1. Rewrite pjit to `jax.jit` with explicit `NamedSharding`s;
    2. rewrite bare-P `with_sharding_constraint` to `NamedSharding`; 3. delete the `with
    mesh:` if nothing else uses it; 4. only then consider `with jax.set_mesh(mesh):`.
    `with p:` on a parameter of a local function that every call gives the same Mesh (by
    name, positionally) is judged like a block on that Mesh; on any other mesh the rule cannot
    see being built (an attribute, a parameter given other values) it is not reported.  A block that yields (in a `@contextmanager` or any generator) is never removed:
    the code of whoever resumes the generator runs inside it.
    """
    examples = (
        Example(
            before="""
            import jax
            from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

            mesh = Mesh(jax.devices(), ('x',))
            with mesh:
                y = jax.device_put(x, NamedSharding(mesh, P('x')))
            """,
            after="""
            import jax
            from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

            mesh = Mesh(jax.devices(), ('x',))
            y = jax.device_put(x, NamedSharding(mesh, P('x')))
            """,
        ),
        Example(
            title="something inside reads the resource env: report",
            before="""
            import jax
            from jax.sharding import Mesh, PartitionSpec as P

            mesh = Mesh(jax.devices(), ('x',))
            with mesh:  # expect: JAX607
                y = step(x)
            """,
            after="""
            import jax
            from jax.sharding import Mesh, PartitionSpec as P

            mesh = Mesh(jax.devices(), ('x',))
            with mesh:  # expect: JAX607
                y = step(x)
            """,
        ),
    )

    def ast_gate(self, facts: Facts) -> bool:
        # `with Mesh(...)`, or `with name:` where some binding of `name` is a Mesh call
        if facts.scopes() is None:
            return True
        for item in facts.with_items:
            expr = item.context_expr
            if type(expr) is ast.Call and facts.qualnames(expr.func) & MESH_MAKERS:
                return True
            if type(expr) is ast.Name and any(
                b.kind == "value" and type(b.value) is ast.Call and facts.qualnames(b.value.func) & MESH_MAKERS
                for b in facts.bindings(expr.id)
            ):
                return True
            if type(expr) is ast.Name and facts.names & MESH_MAKERS:
                return True  # maybe a parameter given a Mesh (_parameter_blocks)
        return False

    def visit_name(self, site: NameSite, ctx: Context) -> None:
        if site.is_import or ctx.target < DEPRECATED_FROM:
            return
        target = call_target(site, partial_names=())
        if target is None:
            return
        call = target[0]
        parent = ctx.parent(call)
        if isinstance(parent, cst.WithItem) and parent.item is call:
            with_node = ctx.parent(parent)
            if isinstance(with_node, cst.With):
                self._check(with_node, parent, ctx)
            return
        if isinstance(parent, cst.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0].target, cst.Name):
            name = parent.targets[0].target.value
            scope = ctx.scope_of(parent)
            bindings = scope.lookup(name)
            if not bindings or len(bindings) != 1:
                return
            for with_node, item in _with_blocks(ctx, name):
                found = ctx.scope_of(with_node).lookup(name)
                if found and found[0] is bindings[0]:
                    self._check(with_node, item, ctx)
            for with_node, item in _parameter_blocks(ctx, name, bindings[0]):
                self._check(with_node, item, ctx)

    def _check(self, with_node: cst.With, item: cst.WithItem, ctx: Context) -> None:
        scope = ctx.scope_of(with_node)
        reason = None
        if len(with_node.items) != 1 or with_node.asynchronous is not None:
            reason = "the block enters other context managers too"
        elif isinstance(with_node.body, cst.SimpleStatementSuite):
            reason = "the block is on one line"
        elif _yields(with_node.body):
            # a generator (a @contextmanager's `with mesh: yield`): whoever resumes it runs
            # their code inside the block, which the rule cannot see
            reason = "the block yields, so the caller's code runs inside it"
        else:
            reason = _needs_env(with_node.body, scope, ctx, depth=5, seen=set())
        if reason is not None:
            ctx.report(with_node, f"`with mesh:` is deprecated in JAX 0.10.1 and {reason}; {ORDER}")
            return
        statements: List[cst.BaseStatement] = list(with_node.body.body)  # type: ignore[union-attr]
        if item.asname is not None:
            if not isinstance(item.asname.name, cst.Name):
                ctx.report(with_node, f"`with mesh:` is deprecated in JAX 0.10.1; {ORDER}")
                return
            assign = cst.SimpleStatementLine(
                body=[cst.Assign(targets=[cst.AssignTarget(item.asname.name)], value=item.item)]
            )
            statements.insert(0, assign)
        elif not isinstance(item.item, cst.Name):
            statements.insert(0, cst.SimpleStatementLine(body=[cst.Expr(item.item)]))
        header = with_node.body.header  # type: ignore[union-attr]
        kept = [cst.EmptyLine(comment=header.comment)] if header.comment is not None else []
        statements[0] = statements[0].with_changes(
            leading_lines=[*with_node.leading_lines, *kept, *statements[0].leading_lines]
        )
        ctx.replace(
            with_node,
            cst.FlattenSentinel(statements),
            "`with mesh:` removed: nothing inside reads the legacy resource env (deprecated in 0.10.1)",
        )


def _yields(body: cst.CSTNode) -> bool:
    """``yield`` in ``body`` itself (not in a function, lambda or class defined there)."""
    found: List[bool] = []

    class _Find(ScopeBodyVisitor):  # (a comprehension cannot yield)
        def visit_Yield(self, node: cst.Yield) -> bool:
            found.append(True)
            return False

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return False

        def visit_ClassDef(self, node: cst.ClassDef) -> bool:
            return False

    fast_visit(body, _Find())
    return bool(found)


def _parameter_blocks(ctx: Context, name: str, binding) -> List[tuple]:  # noqa: ANN001
    """``with p:`` in a local function ``g(..., p, ...)`` when every call of ``g`` in the module
    passes this mesh (the name ``name`` bound to a Mesh) positionally as ``p``, and ``g`` is
    used for nothing else."""
    from jaxmigrate.rules._flow import local_function
    from jaxmigrate.rules._pjit import module_facts

    facts = module_facts(ctx)
    found: List[tuple] = []
    for use in facts.name_loads.get(name, []):
        arg = ctx.parent(use)
        call = ctx.parent(arg) if isinstance(arg, cst.Arg) else None
        if not isinstance(call, cst.Call) or not isinstance(call.func, cst.Name) or arg.keyword:
            continue
        if (ctx.scope_of(use).lookup(name) or [None])[0] is not binding:
            continue
        function = local_function(ctx, call.func, ctx.scope_of(call))
        if function is None or function.params.star_arg is not cst.MaybeSentinel.DEFAULT:
            continue
        position = list(call.args).index(arg)
        params = [*function.params.posonly_params, *function.params.params]
        if position >= len(params) or any(a.star for a in call.args[: position + 1]):
            continue
        param = params[position].name.value
        if not _every_call_passes(ctx, function, position, name, binding, facts):
            continue
        for with_node, item in _with_blocks(ctx, param):
            body_scope = ctx.scope_of(with_node)
            if getattr(body_scope, "node", None) is function:
                if len(body_scope.lookup(param) or ()) == 1 and (with_node, item) not in found:
                    found.append((with_node, item))
    return found


def _every_call_passes(ctx: Context, function: cst.FunctionDef, position: int, name: str,
                       binding, facts) -> bool:  # noqa: ANN001
    uses = [u for u in facts.name_loads.get(function.name.value, []) if u is not function.name]
    for use in uses:
        call = ctx.parent(use)
        if not isinstance(call, cst.Call) or call.func is not use or position >= len(call.args):
            return False  # the function escapes, or a call without that argument
        value = call.args[position].value
        if call.args[position].keyword or not isinstance(value, cst.Name) or value.value != name:
            return False
        if (ctx.scope_of(value).lookup(name) or [None])[0] is not binding:
            return False
    return bool(uses)


def _with_blocks(ctx: Context, name: str) -> List[tuple]:
    found: List[tuple] = []
    for node in ctx.nodes(cst.With):  # the analysis traversal's index: every `with`, in order
        for item in node.items:  # type: ignore[attr-defined]
            if isinstance(item.item, cst.Name) and item.item.value == name:
                found.append((node, item))
    return found


def _needs_env(body: cst.CSTNode, scope: Scope, ctx: Context, depth: int, seen: Set[int]) -> Optional[str]:
    """Why something in ``body`` may read the legacy resource env, or None when nothing does."""
    if id(body) in seen:
        return None
    seen.add(id(body))
    nodes: List[cst.CSTNode] = []

    class _Collect(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            nodes.append(node)

        def visit_Name(self, node: cst.Name) -> None:
            nodes.append(node)

    fast_visit(body, _Collect())
    calls_funcs = {id(n.func) for n in nodes if isinstance(n, cst.Call)}
    transformed = _transformed_names(body, scope, ctx)
    for node in nodes:
        if isinstance(node, cst.Name):
            if id(node) in calls_funcs:
                continue
            # a function passed along (jax.jit(f), jax.vmap(f)) runs inside the block too
            function = function_named(ctx, node, ctx.scope_of(node))
            if function is not None:
                if depth <= 0:
                    return f"{node.value} is too deep to check"
                why = _needs_env(function, scope, ctx, depth - 1, seen)
                if why:
                    return why
            continue
        call: cst.Call = node  # type: ignore[assignment]
        if isinstance(call.func, cst.Name) and call.func.value in transformed:
            continue  # calls the result of a jax.jit/vmap checked in this block
        why = _call_needs_env(call, scope, ctx, depth, seen)
        if why:
            return why
    return None


def _transformed_names(body: cst.CSTNode, scope: Scope, ctx: Context) -> Set[str]:
    """Names assigned (only) the result of a jax.jit/jax.vmap/... call inside ``body``."""
    assigned: dict = {}

    class _Collect(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            for target in node.targets:
                if isinstance(target.target, cst.Name):
                    ok = isinstance(node.value, cst.Call) and ctx.qualname(node.value.func, scope) in TRANSFORMS
                    assigned[target.target.value] = assigned.get(target.target.value, True) and ok

    fast_visit(body, _Collect())
    return {name for name, ok in assigned.items() if ok and len(scope.lookup(name) or ()) <= 1}


def _call_needs_env(call: cst.Call, scope: Scope, ctx: Context, depth: int, seen: Set[int]) -> Optional[str]:
    scope = ctx.scope_of(call)  # the call may sit in a function checked from the block
    func = call.func
    if isinstance(func, cst.Call):
        return None  # calling a result (jax.jit(f)(x)): the inner call is checked on its own
    qualname = ctx.qualname(func, scope)
    if qualname is not None:
        if qualname in ("jax.sharding.PartitionSpec", "jax.P"):
            return None if _inside_named_sharding(call, scope, ctx) else "a bare PartitionSpec is used in it"
        if qualname in ("jax.shard_map",) and any(a.keyword is not None and a.keyword.value == "mesh" for a in call.args):
            return None
        if qualname == "jax.lax.with_sharding_constraint" and _pinned(call, scope, ctx):
            return None
        if qualname in NEEDS_ENV:
            return f"it calls {qualname}"
        if qualname in TRANSFORMS and call.args:
            traced = call.args[0].value
            nested = isinstance(traced, cst.Call) and ctx.qualname(traced.func, scope) in TRANSFORMS
            if not nested and not isinstance(traced, cst.Lambda) and not (
                isinstance(traced, cst.Name) and function_named(ctx, traced, scope) is not None
            ):
                return f"it traces {ctx.code(traced)}, which the rule cannot check"
        if qualname in INDEPENDENT or qualname.startswith(INDEPENDENT_PREFIXES):
            return None
        if qualname == "functools.partial" and call.args and ctx.qualname(call.args[0].value, scope) in TRANSFORMS:
            return None  # @partial(jax.jit, ...): its arguments are checked as calls of their own
        return f"it calls {qualname}, which the rule cannot check"
    if isinstance(func, cst.Name):
        function = function_named(ctx, func, scope)
        if function is not None:
            if depth <= 0:
                return f"{func.value} is too deep to check"
            return _needs_env(function, scope, ctx, depth - 1, seen)
        if func.value in BUILTINS and scope.lookup(func.value) is None:
            return None
        transform = _transform_bound(ctx, func, ctx.scope_of(call))
        if transform is not None:  # step = jax.jit(f, ...) elsewhere in the module
            if depth <= 0:
                return f"{func.value} is too deep to check"
            return _needs_env(transform, scope, ctx, depth - 1, seen)
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
    arg = keyword[0] if keyword else (args[1] if len(args) > 1 and args[1].keyword is None else None)
    return (
        arg is not None and isinstance(arg.value, cst.Call)
        and ctx.qualname(arg.value.func, scope) in ("jax.sharding.NamedSharding", "jax.NamedSharding")
    )


def _inside_named_sharding(call: cst.Call, scope: Scope, ctx: Context) -> bool:
    arg = ctx.parent(call)
    while isinstance(arg, cst.IfExp):  # NamedSharding(mesh, P() if s is None else s)
        arg = ctx.parent(arg)
    outer = ctx.parent(arg) if isinstance(arg, cst.Arg) else None
    return isinstance(outer, cst.Call) and ctx.qualname(outer.func, scope) in MESH_ARGUMENT
