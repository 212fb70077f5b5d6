"""Which mesh the call sites of a pjit-compiled function run under (``with mesh:`` blocks, a
module-level ``Mesh``, a ``mesh`` parameter or attribute): the mesh pjit read its bare
specs against, whether it is usable where the function is built, and the edit that binds it
to a name there.  Shared by the pjit family (JAX201-JAX204, JAX206) and the mesh rules.
"""

from __future__ import annotations

from typing import Optional, Tuple

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.migrator.context import Context
from jaxmigrate.migrator.scope import Scope, dotted_parts
from jaxmigrate.rules._flow import single_assignment
from jaxmigrate.rules._mesh import hoist_point
from jaxmigrate.rules._pjit import (
    MESH_CTORS,
    Compiled,
    call_qualname,
    enclosing_class,
    module_facts,
)


# -- meshes ---------------------------------------------------------------------------------------
class MeshRef:
    """A mesh expression usable where the compiled function is built."""

    def __init__(
        self,
        expr: cst.BaseExpression,
        how: str,
        unsafe: bool = False,
        bind: Optional[cst.With] = None,
        bind_name: str = "",
    ) -> None:
        self.expr = expr
        self.how = how
        self.unsafe = unsafe
        self.bind = bind  # a ``with Mesh(...):`` statement to rewrite first
        self.bind_name = bind_name
        self.origin: Optional[cst.With] = None  # the with statement it comes from
        # bind the inline mesh before this statement (where the function is built), not
        # right before the with
        self.hoist: Optional[cst.CSTNode] = None

    def key(self, ctx: Context) -> str:
        return ctx.code(self.bind) if self.bind is not None else ctx.code(self.expr)


def is_mesh_expression(ctx: Context, expr: cst.BaseExpression, scope: Scope) -> bool:
    if call_qualname(ctx, expr, scope) in MESH_CTORS:
        return True
    parts = dotted_parts(expr)
    if not parts:
        return False
    if "mesh" in parts[-1].lower():
        return True
    if len(parts) == 1:
        assign = single_assignment(ctx, parts[0], scope)
        if (
            assign is not None
            and call_qualname(ctx, assign.value, ctx.scope_of(assign)) in MESH_CTORS
        ):
            return True
    return False


def mesh_of_with(ctx: Context, node: cst.With) -> Optional[MeshRef]:
    if len(node.items) != 1:
        return None
    item = node.items[0]
    scope = ctx.scope_of(node)
    if not is_mesh_expression(ctx, item.item, scope):
        return None
    ref = None
    if item.asname is not None:
        if isinstance(item.asname.name, cst.Name):
            ref = MeshRef(item.asname.name, "the `with` block")
    elif isinstance(item.item, cst.Call):
        name = free_name(ctx, "mesh", scope)
        ref = MeshRef(cst.Name(name), "the `with` block", bind=node, bind_name=name)
    elif dotted_parts(item.item):
        ref = MeshRef(item.item, "the `with` block")
    if ref is not None:
        ref.origin = node
    return ref


def free_name(ctx: Context, base: str, scope: Scope) -> str:
    module_bindings = ctx.analysis.scopes[id(ctx.module)].bindings
    candidate, n = base, 0
    while (
        scope.lookup(candidate) is not None
        or candidate in module_bindings
        or candidate in module_facts(ctx).name_loads
    ):
        n += 1
        candidate = f"{base}_{n}"
    return candidate


def innermost_mesh_with(ctx: Context, node: cst.CSTNode) -> Optional[MeshRef]:
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, cst.With):
            ref = mesh_of_with(ctx, ancestor)
            if ref is not None:
                return ref
        if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            break
    return None


def line(ctx: Context, node: cst.CSTNode) -> int:
    return ctx.position(node).start.line


def usable_at(ctx: Context, mesh: MeshRef, at: cst.CSTNode, mesh_site: cst.CSTNode) -> bool:
    """Can ``mesh.expr`` (valid at ``mesh_site``) be evaluated where ``at`` is evaluated?"""
    parts = dotted_parts(mesh.expr)
    if not parts:
        return False
    head = parts[0]
    at_scope = ctx.scope_of(at)
    if mesh.bind is not None:
        # the name will be bound right before the with statement, in the with's scope
        with_scope = ctx.scope_of(mesh.bind)
        if with_scope is not at_scope and not _encloses(at_scope, with_scope):
            return False
        return with_scope is not at_scope or line(ctx, mesh.bind) <= line(ctx, at)
    if head == "self":
        klass = enclosing_class(ctx, at)
        if klass is None or klass is not enclosing_class(ctx, mesh_site):
            return False
        if len(parts) > 1:
            # ``self.mesh`` assigned in the same method only after ``at``: not yet there
            function = _enclosing_function(ctx, at)
            same = [
                a
                for a in module_facts(ctx).attr_assigns.get(parts[1], [])
                if _enclosing_function(ctx, a) is function
            ]
            if same and all(line(ctx, a) > line(ctx, at) for a in same):
                return False
        return True
    site_scope = ctx.scope_of(mesh_site)
    bindings = at_scope.lookup(head)
    if bindings is None or bindings is not site_scope.lookup(head):
        return False
    owner = bindings[0].scope
    if mesh.origin is not None and any(a is mesh.origin for a in ctx.ancestors(at)):
        return True
    if owner is at_scope:
        assigns = module_facts(ctx).assigns.get((id(owner), head), [])
        if assigns and all(line(ctx, a) >= line(ctx, at) for a in assigns):
            return False
        if not assigns and not bindings[0].is_import and not _is_param(owner, head):
            # bound by a with/for/def...: require it to appear before
            return False
    return True


def _enclosing_function(ctx: Context, node: cst.CSTNode) -> Optional[cst.FunctionDef]:
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, cst.FunctionDef):
            return ancestor
    return None


def _encloses(inner: Scope, outer: Scope) -> bool:
    scope = inner.parent
    while scope is not None:
        if scope is outer:
            return True
        scope = scope.parent
    return False


def _is_param(scope: Scope, name: str) -> bool:
    node = scope.node
    if isinstance(node, (cst.FunctionDef, cst.Lambda)):
        params = node.params
        all_params = [*params.posonly_params, *params.params, *params.kwonly_params]
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param):
                all_params.append(star)
        return any(p.name.value == name for p in all_params)
    return False


def find_mesh(
    ctx: Context, compiled: Compiled, definition: cst.CSTNode
) -> Tuple[Optional[MeshRef], str]:
    """(mesh, "") or (None, why not)."""
    # 1. the with blocks around the call sites
    if compiled.calls:
        refs = []
        for site in compiled.calls:
            ref = innermost_mesh_with(ctx, site)
            refs.append((ref, site))
        found = [(r, s) for r, s in refs if r is not None]
        if found:
            keys = {r.key(ctx) for r, _ in found}
            if len(keys) > 1:
                return None, "it is called under different meshes (" + ", ".join(
                    sorted(keys)
                ) + "); jax.jit pins one mesh per compiled function"
            if len(found) == len(refs):
                ref, site = found[0]
                # an inline ``with Mesh(...)`` at each site: they must be one statement
                if ref.bind is not None and len({id(r.bind) for r, _ in found}) > 1:
                    return None, "it is called under several `with Mesh(...)` blocks"
                if all(usable_at(ctx, r, definition, s) for r, s in found):
                    return ref, ""
                if ref.bind is not None:
                    ref.hoist = hoist_point(ctx, ref.bind, definition, module_facts(ctx).assigns)
                    if ref.hoist is not None:
                        return ref, ""
                return (
                    None,
                    "the mesh of its call sites (`"
                    f"{ctx.code(ref.expr) if ref.bind is None else ctx.code(ref.bind.items[0].item)}"  # noqa: E501
                    "`) is not visible where the function is built",
                )
    chosen, why = _fallback_mesh(ctx, definition)
    if chosen is not None:
        # a call site under an explicit, different mesh contradicts the fallback
        for site in compiled.calls:
            ref = innermost_mesh_with(ctx, site)
            if ref is not None and ref.key(ctx) != chosen.key(ctx):
                return (
                    None,
                    f"one of its calls runs under `{ref.key(ctx)}`, not `{chosen.key(ctx)}`",
                )
    return chosen, why


def _fallback_mesh(ctx: Context, definition: cst.CSTNode) -> Tuple[Optional[MeshRef], str]:
    # 2. the with block around the definition
    ref = innermost_mesh_with(ctx, definition)
    if ref is not None and usable_at(ctx, ref, definition, definition):
        return ref, ""
    # 3. a unique module-level Mesh
    module_scope = ctx.analysis.scopes[id(ctx.module)]
    meshes = []
    for (scope_id, name), assigns in module_facts(ctx).assigns.items():
        if scope_id != id(module_scope):
            continue
        if any(call_qualname(ctx, a.value, module_scope) in MESH_CTORS for a in assigns):
            meshes.append((name, assigns))
    if len(meshes) == 1:
        name, assigns = meshes[0]
        ref = MeshRef(cst.Name(name), "the module-level Mesh")
        if len(assigns) == 1 and usable_at(ctx, ref, definition, assigns[0]):
            return ref, ""
    elif len(meshes) > 1:
        return None, "the module builds several meshes (" + ", ".join(
            sorted(n for n, _ in meshes)
        ) + ")"
    # 4. (unsafe) a mesh parameter or self attribute where the function is built
    scope: Optional[Scope] = ctx.scope_of(definition)
    while scope is not None and scope.kind != "module":
        for name in sorted(scope.bindings):
            if (name == "mesh" or name.endswith("_mesh")) and _is_param(scope, name):
                ref = MeshRef(cst.Name(name), f"the `{name}` parameter", unsafe=True)
                if usable_at(ctx, ref, definition, definition):
                    return ref, ""
        scope = scope.parent
    klass = enclosing_class(ctx, definition)
    if klass is not None:
        attrs = sorted(
            a for a in module_facts(ctx).attr_assigns if a == "mesh" or a.endswith("_mesh")
        )
        for attr in attrs:
            if any(enclosing_class(ctx, a) is klass for a in module_facts(ctx).attr_assigns[attr]):
                expr = cst.Attribute(value=cst.Name("self"), attr=cst.Name(attr))
                if _is_param(ctx.scope_of(definition), "self"):
                    return MeshRef(expr, f"the `self.{attr}` attribute", unsafe=True), ""
    return None, "no `with mesh:` block, module-level Mesh or mesh parameter identifies its mesh"


def bind_mesh_edit(ctx: Context, mesh: MeshRef) -> cst.FlattenSentinel:
    """``with Mesh(...):`` -> ``mesh = Mesh(...)`` + ``with mesh:``."""
    node = mesh.bind
    assert node is not None
    item = node.items[0]
    assign = cst.SimpleStatementLine(
        body=[cst.Assign(targets=[cst.AssignTarget(cst.Name(mesh.bind_name))], value=item.item)],
        leading_lines=node.leading_lines,
    )
    new_with = node.with_changes(
        items=[item.with_changes(item=cst.Name(mesh.bind_name))], leading_lines=()
    )
    return cst.FlattenSentinel([assign, new_with])
