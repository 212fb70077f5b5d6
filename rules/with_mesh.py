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
from typing import List, Set

from jaxmigrate.migrator import lazycst as cst, references as refs
from jaxmigrate.migrator.astfacts import Facts
from jaxmigrate.migrator.context import Context, NameSite
from jaxmigrate.migrator.rule import Example, Lifecycle, Rule, Safety
from jaxmigrate.migrator.traversal import fast_visit
from jaxmigrate.migrator.version import parse_version
from jaxmigrate.rules._helpers import called
from jaxmigrate.rules._mesh_env import needs_env
from jaxmigrate.rules._text_gates import WithMeshGate

MESH_MAKERS = frozenset({"jax.sharding.Mesh", "jax.make_mesh"})
DEPRECATED_FROM = parse_version("0.10.1")

ORDER = (
    "recommended order: 1. pjit -> jax.jit with NamedShardings; 2. bare-PartitionSpec "
    "with_sharding_constraint -> NamedSharding; 3. delete the `with mesh:` when nothing else "
    "uses it; 4. only then consider `with jax.set_mesh(mesh):` (it is not a drop-in: it sets the "
    "mesh jax.jit and sharding-in-types read, and commits eagerly created arrays)"
)

BY_HAND = "`with mesh:` is deprecated in JAX 0.10.1; move its contents to NamedShardings first"


class WithMesh(WithMeshGate, Rule, code="JAX607", safety=Safety.SAFE):
    """report `with mesh:` (deprecated in 0.10.1); remove it when nothing inside needs it

    **What it does.** For targets that reach JAX 0.10.1 (the migrated code will run where it
    warns), finds `with mesh:` blocks where `mesh`
    is a `Mesh(...)`/`jax.make_mesh(...)` built in the same file (or `with Mesh(...) as
    mesh:`).  When everything in the block is visibly independent of the legacy resource
    environment (only `jax.jit`/`jax.vmap`/`jax.device_put`, `jax.numpy`/`jax.lax` functions
    with `NamedSharding`s, `with_sharding_constraint` given a `NamedSharding`, builtins, array
    methods, and same-file functions that do the same), the `with` is removed and its body
    dedented (`with Mesh(...) as mesh:` keeps `mesh = Mesh(...)`).  Everything else is
    reported with the recommended order.

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
    see being built (an attribute, a parameter given other values) it is not reported.  A
    block that yields (in a `@contextmanager` or any generator) is never removed: the code of
    whoever resumes the generator runs inside it.
    """

    lifecycle = Lifecycle(
        deprecated=("0.10.1", "with mesh: deprecated; use with jax.set_mesh(mesh):")
    )
    references = (refs.api("jax.set_mesh"),)
    names = MESH_MAKERS
    names_are_legacy = False
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
        Example.reported(
            title="something inside reads the resource env: report",
            code="""
            import jax
            from jax.sharding import Mesh, PartitionSpec as P

            mesh = Mesh(jax.devices(), ('x',))
            with mesh:  # expect: JAX607
                y = step(x)
            """,
        ),
    )

    def ast_gate(self, facts: Facts) -> bool:
        # `with Mesh(...)`, or `with name:` where some binding of `name`, in any scope, is a
        # Mesh call or a parameter (maybe given a Mesh: _parameter_blocks)
        if not facts.with_items or facts.names.isdisjoint(MESH_MAKERS):
            return False  # (each answer below needs both)
        names = set()
        for item in facts.with_items:
            expr = item.context_expr
            if type(expr) is ast.Call and facts.qualnames(expr.func) & MESH_MAKERS:
                return True
            if type(expr) is ast.Name:
                names.add(expr.id)
        return bool(names) and any(_binds_a_mesh(facts, node, names) for node in facts.binders)

    def visit_name(self, site: NameSite, ctx: Context) -> None:
        if site.is_import or not ctx.reaches(DEPRECATED_FROM):
            return
        call = called(site)
        if call is None:
            return
        parent = ctx.parent(call)
        if isinstance(parent, cst.WithItem) and parent.item is call:
            with_node = ctx.parent(parent)
            if isinstance(with_node, cst.With):
                self._check(with_node, parent, ctx)
            return
        if (
            isinstance(parent, cst.Assign)
            and len(parent.targets) == 1
            and isinstance(parent.targets[0].target, cst.Name)
        ):
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
            reason = needs_env(with_node.body, scope, ctx, depth=5, seen=set())
        if reason is not None:
            ctx.report(
                with_node,
                BY_HAND,
                f"`with mesh:` is deprecated in JAX 0.10.1 and {reason}; {ORDER}.",
            )
            return
        if not isinstance(with_node.body, cst.IndentedBlock):
            return  # a one-line body was reported above
        statements: List[cst.BaseStatement] = list(with_node.body.body)
        if item.asname is not None:
            if not isinstance(item.asname.name, cst.Name):
                ctx.report(
                    with_node, BY_HAND, f"`with mesh:` is deprecated in JAX 0.10.1; {ORDER}."
                )
                return
            assign = cst.SimpleStatementLine(
                body=[cst.Assign(targets=[cst.AssignTarget(item.asname.name)], value=item.item)]
            )
            statements.insert(0, assign)
        elif not isinstance(item.item, cst.Name):
            statements.insert(0, cst.SimpleStatementLine(body=[cst.Expr(item.item)]))
        header = with_node.body.header
        kept = [cst.EmptyLine(comment=header.comment)] if header.comment is not None else []
        statements[0] = statements[0].with_changes(
            # LibCST declares leading_lines on each BaseStatement subclass, not on the base
            leading_lines=[*with_node.leading_lines, *kept, *statements[0].leading_lines]  # type: ignore[attr-defined]
        )
        ctx.replace(
            with_node,
            cst.FlattenSentinel(statements),
            "`with mesh:` removed: nothing inside reads the legacy resource env "
            "(deprecated in 0.10.1)",
        )


def _yields(body: cst.CSTNode) -> bool:
    """``yield`` in ``body`` itself (not in a function, lambda or class defined there)."""
    from jaxmigrate.rules._scope_body import ScopeBodyVisitor  # (LibCST's visitor: loaded here)

    class _FindYield(ScopeBodyVisitor):  # (a comprehension cannot yield)
        def __init__(self) -> None:
            super().__init__()
            self.found = False

        def visit_Yield(self, node: cst.Yield) -> bool:
            self.found = True
            return False

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return False

        def visit_ClassDef(self, node: cst.ClassDef) -> bool:
            return False

    find = _FindYield()
    fast_visit(body, find)
    return find.found


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
        if (
            not isinstance(arg, cst.Arg)
            or not isinstance(call, cst.Call)
            or not isinstance(call.func, cst.Name)
            or arg.keyword
        ):
            continue
        if (ctx.scope_of(use).lookup(name) or (None,))[0] is not binding:
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


def _every_call_passes(
    ctx: Context, function: cst.FunctionDef, position: int, name: str, binding, facts
) -> bool:  # noqa: ANN001
    uses = [u for u in facts.name_loads.get(function.name.value, []) if u is not function.name]
    for use in uses:
        call = ctx.parent(use)
        if not isinstance(call, cst.Call) or call.func is not use or position >= len(call.args):
            return False  # the function escapes, or a call without that argument
        value = call.args[position].value
        if call.args[position].keyword or not isinstance(value, cst.Name) or value.value != name:
            return False
        if (ctx.scope_of(value).lookup(name) or (None,))[0] is not binding:
            return False
    return bool(uses)


def _with_blocks(ctx: Context, name: str) -> List[tuple]:
    found: List[tuple] = []
    for node in ctx.nodes(cst.With):  # the analysis traversal's index: every `with`, in order
        for item in node.items:
            if isinstance(item.item, cst.Name) and item.item.value == name:
                found.append((node, item))
    return found


def _binds_a_mesh(facts: Facts, node: ast.AST, names: Set[str]) -> bool:
    """Does ``node`` (one of :attr:`Facts.binders`, read without the scopes) bind one of
    ``names`` as a parameter (``*args`` and ``**kwargs`` too), or the value of a Mesh call?"""
    kind = type(node)
    if kind is ast.arg:
        return node.arg in names  # type: ignore[attr-defined]
    if kind is ast.Assign:
        targets = node.targets  # type: ignore[attr-defined]
    elif kind is ast.AnnAssign or kind is ast.NamedExpr:
        targets = [node.target]  # type: ignore[attr-defined]
    else:
        return False
    value = node.value  # type: ignore[attr-defined]
    return (
        type(value) is ast.Call
        and any(type(t) is ast.Name and t.id in names for t in targets)
        and bool(facts.qualnames(value.func) & MESH_MAKERS)
    )
