"""Matchers shared by the pjit family (JAX201-JAX204, JAX206); no rule logic here.

* what a pjit call looks like (direct call, ``functools.partial(pjit, ...)`` decorator), its
  keyword normalisation (legacy keywords, positional shardings, literal ``**kwargs`` dicts);
* the compiled function a pjit call builds and the places it is called;
* which mesh those places run under (``with mesh:`` blocks, a module-level ``Mesh``, a
  ``mesh`` parameter or attribute): the mesh pjit read its bare specs against.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

import libcst as cst

from jaxmigrate.migrator.context import Context
from jaxmigrate.migrator.scope import Scope, dotted_parts
from jaxmigrate.rules._mesh import hoist_point

RENAMES = {"in_axis_resources": "in_shardings", "out_axis_resources": "out_shardings"}
# pjit's legacy positional parameters after ``fun``, in order.
POSITIONAL = ("in_shardings", "out_shardings", "static_argnums", "donate_argnums")
SHARDING_KEYWORDS = ("in_shardings", "out_shardings")

PJIT_NAMES = frozenset({"jax.experimental.pjit.pjit"})
PARTIAL_NAMES = ("functools.partial",)
PARTITION_SPEC_NAMES = frozenset(
    {
        "jax.sharding.PartitionSpec",
        "jax.P",
        "jax.experimental.PartitionSpec",
        "jax.experimental.pjit.PartitionSpec",
        "jax.interpreters.pxla.PartitionSpec",
        "jax.experimental.global_device_array.PartitionSpec",
    }
)
NAMED_SHARDING_NAMES = frozenset(
    {"jax.sharding.NamedSharding", "jax.NamedSharding", "jax.experimental.pjit.NamedSharding"}
)
MESH_CTORS = frozenset(
    {
        "jax.sharding.Mesh",
        "jax.experimental.maps.Mesh",
        "jax.interpreters.pxla.Mesh",
        "jax.make_mesh",
    }
)
FROM_GDA = "jax.experimental.pjit.FROM_GDA"


def no_space_equal() -> cst.AssignEqual:
    return cst.AssignEqual(
        whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")
    )


def keyword_arg(name: str, value: cst.BaseExpression, comma: object = cst.MaybeSentinel.DEFAULT) -> cst.Arg:
    return cst.Arg(keyword=cst.Name(name), value=value, equal=no_space_equal(), comma=comma)  # type: ignore[arg-type]


def qualname_of(ctx: Context, node: cst.CSTNode, scope: Scope) -> Optional[str]:
    return ctx.qualname(node, scope) if dotted_parts(node) else None


def call_qualname(ctx: Context, node: cst.CSTNode, scope: Scope) -> Optional[str]:
    if isinstance(node, cst.Call):
        return qualname_of(ctx, node.func, scope)
    return None


# -- pjit calls ------------------------------------------------------------------------------
def pjit_call_of(ctx: Context, ref: cst.CSTNode, scope: Scope) -> Optional[Tuple[cst.Call, bool]]:
    """``pjit(...)`` -> (call, False); ``partial(pjit, ...)`` -> (call, True)."""
    parent = ctx.parent(ref)
    if isinstance(parent, cst.Call) and parent.func is ref:
        return parent, False
    if isinstance(parent, cst.Arg) and parent.keyword is None and not parent.star:
        call = ctx.parent(parent)
        if isinstance(call, cst.Call) and call.args and call.args[0] is parent:
            if qualname_of(ctx, call.func, scope) in PARTIAL_NAMES:
                return call, True
    return None


def is_pjit_call(ctx: Context, call: cst.CSTNode, scope: Scope) -> Optional[bool]:
    """None if not a pjit call; else whether it goes through ``functools.partial``."""
    if not isinstance(call, cst.Call):
        return None
    if qualname_of(ctx, call.func, scope) in PJIT_NAMES:
        return False
    if (
        qualname_of(ctx, call.func, scope) in PARTIAL_NAMES
        and call.args
        and call.args[0].keyword is None
        and not call.args[0].star
        and qualname_of(ctx, call.args[0].value, scope) in PJIT_NAMES
    ):
        return True
    return None


def literal_kwargs(ctx: Context, value: cst.BaseExpression) -> Optional[List[Tuple[str, cst.BaseExpression]]]:
    """``dict(a=1)`` or ``{"a": 1}`` as (keyword, value) pairs; None for anything else."""
    scope = ctx.scope_of(value)
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "dict":
        if scope.lookup("dict") is not None:
            return None
        pairs = []
        for arg in value.args:
            if arg.keyword is None or arg.star:
                return None
            pairs.append((arg.keyword.value, arg.value))
        return pairs
    if isinstance(value, cst.Dict):
        pairs = []
        for element in value.elements:
            if not isinstance(element, cst.DictElement) or not isinstance(element.key, cst.SimpleString):
                return None
            key = element.key.evaluated_value
            if not isinstance(key, str) or not key.isidentifier():
                return None
            pairs.append((key, element.value))
        return pairs
    return None


def kwargs_variable(ctx: Context, arg: cst.Arg, scope: Scope) -> Optional[Tuple[cst.Assign, List[Tuple[str, cst.BaseExpression]]]]:
    """``**kw`` where ``kw = dict(...)``/``{...}`` is assigned once in the same scope and used
    nowhere but as ``**kw`` in pjit calls: (the assignment, its pairs)."""
    if arg.star != "**" or not isinstance(arg.value, cst.Name):
        return None
    name = arg.value.value
    bindings = scope.lookup(name)
    if not bindings or len(bindings) != 1 or bindings[0].scope is not scope or bindings[0].is_import:
        return None
    facts = module_facts(ctx)
    assigns = facts.assigns.get((id(scope), name), [])
    if len(assigns) != 1:
        return None
    assign = assigns[0]
    if len(assign.targets) != 1:
        return None
    pairs = literal_kwargs(ctx, assign.value)
    if pairs is None:
        return None
    for use in facts.name_loads.get(name, []):
        if ctx.scope_of(use).lookup(name) is not bindings:
            continue
        use_parent = ctx.parent(use)
        if isinstance(use_parent, cst.AssignTarget) and use_parent.target is use:
            continue
        if not (isinstance(use_parent, cst.Arg) and use_parent.star == "**" and use_parent.value is use):
            return None
        if is_pjit_call(ctx, ctx.parent(use_parent), ctx.scope_of(use)) is None:
            return None
    return assign, pairs


def normalized_args(
    ctx: Context, call: cst.Call, through_partial: bool, scope: Scope, names: Dict[str, str] = RENAMES
) -> Tuple[Optional[List[cst.Arg]], bool]:
    """The call's arguments with legacy keywords renamed, positional shardings as keywords and
    literal ``**{...}``/``**dict(...)`` spread out.  (new args or None if unchanged, ok);
    ok is False when the call cannot be normalised (both spellings, unknown ``**kw``)."""
    keywords = [a.keyword.value for a in call.args if a.keyword is not None]
    for old, new in names.items():
        if old in keywords and new in keywords:
            return None, False
    changed = False
    new_args: List[cst.Arg] = []
    positional_index = -1
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value in names:
            arg = arg.with_changes(keyword=cst.Name(names[arg.keyword.value]))
            changed = True
        elif arg.star == "**":
            pairs = literal_kwargs(ctx, arg.value)
            if pairs is None:  # a variable: see kwargs_variable
                new_args.append(arg)
                continue
            space = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
            for index, (key, value) in enumerate(pairs):
                comma = arg.comma if index == len(pairs) - 1 else space
                new_args.append(keyword_arg(names.get(key, key), value, comma))
            changed = True
            continue
        elif arg.keyword is None and not arg.star and not through_partial:
            positional_index += 1
            if 1 <= positional_index <= len(POSITIONAL):
                arg = arg.with_changes(keyword=cst.Name(POSITIONAL[positional_index - 1]), equal=no_space_equal())
                changed = True
        new_args.append(arg)
    return (new_args if changed else None), True


def get_keyword(args: Sequence[cst.Arg], name: str) -> Optional[cst.Arg]:
    for arg in args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    return None


# -- module facts (computed once per round) -----------------------------------------------------
class ModuleFacts:
    def __init__(self) -> None:
        self.assigns: Dict[Tuple[int, str], List[cst.Assign]] = {}
        self.attr_assigns: Dict[str, List[cst.Assign]] = {}  # self.<attr> = ...
        self.name_loads: Dict[str, List[cst.Name]] = {}
        self.calls: List[cst.Call] = []
        self.withs: List[cst.With] = []


class _Collector:
    def __init__(self, ctx: Context, facts: ModuleFacts) -> None:
        self.ctx = ctx
        self.facts = facts

    def visit_Assign(self, node: cst.Assign) -> None:
        scope = self.ctx.scope_of(node)
        for target in node.targets:
            t = target.target
            if isinstance(t, cst.Name):
                self.facts.assigns.setdefault((id(scope.target_for(t.value)), t.value), []).append(node)
            elif isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name) and t.value.value == "self":
                self.facts.attr_assigns.setdefault(t.attr.value, []).append(node)


def module_facts(ctx: Context) -> ModuleFacts:
    facts = getattr(ctx, "_pjit_facts", None)
    if facts is None:
        facts = ModuleFacts()
        # What a full visit with _Collector's hooks would gather, from the round's node lists.
        collector = _Collector(ctx, facts)
        for assign in ctx.all_nodes(cst.Assign):
            collector.visit_Assign(assign)  # type: ignore[arg-type]
        for name in ctx.all_nodes(cst.Name):
            facts.name_loads.setdefault(name.value, []).append(name)  # type: ignore[attr-defined]
        facts.calls.extend(ctx.all_nodes(cst.Call))  # type: ignore[arg-type]
        facts.withs.extend(ctx.all_nodes(cst.With))  # type: ignore[arg-type]
        ctx._pjit_facts = facts  # type: ignore[attr-defined]
    return facts


def single_assignment(ctx: Context, name: str, scope: Scope) -> Optional[cst.Assign]:
    """The one ``name = value`` statement ``name`` at ``scope`` refers to, if it is bound once."""
    bindings = scope.lookup(name)
    if not bindings or len(bindings) != 1 or bindings[0].is_import:
        return None
    assigns = module_facts(ctx).assigns.get((id(bindings[0].scope), name), [])
    if len(assigns) != 1 or len(assigns[0].targets) != 1:
        return None
    return assigns[0]


# -- the compiled function and its call sites -----------------------------------------------------
class Compiled:
    """What a pjit call builds: the node that holds it and how it is called."""

    def __init__(self, holder: cst.CSTNode, scope: Scope, calls: List[cst.Call], complete: bool) -> None:
        self.holder = holder  # the statement/def/call that defines the compiled function
        self.scope = scope  # where the pjit call is evaluated
        self.calls = calls  # call sites found
        self.complete = complete  # False when the function escapes (passed around, returned)


def statement_of(ctx: Context, node: cst.CSTNode) -> cst.CSTNode:
    current = node
    while True:
        parent = ctx.parent(current)
        if parent is None or isinstance(parent, (cst.Module, cst.IndentedBlock, cst.SimpleStatementSuite)):
            return current
        if isinstance(current, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            return current
        current = parent


def compiled_of(ctx: Context, call: cst.Call, through_partial: bool) -> Compiled:
    scope = ctx.scope_of(call)
    facts = module_facts(ctx)
    parent = ctx.parent(call)
    if through_partial:
        if isinstance(parent, cst.Decorator):
            func = ctx.parent(parent)
            if isinstance(func, cst.FunctionDef):
                if getattr(scope, "node", None) is func and scope.parent is not None:
                    scope = scope.parent  # decorators are evaluated where the def binds its name
                return _calls_of_name(ctx, func.name.value, scope, func, facts)
        return Compiled(statement_of(ctx, call), scope, [], False)
    if isinstance(parent, cst.Call) and parent.func is call:
        return Compiled(statement_of(ctx, call), scope, [parent], True)
    if isinstance(parent, cst.Assign) and len(parent.targets) == 1:
        target = parent.targets[0].target
        if isinstance(target, cst.Name):
            return _calls_of_name(ctx, target.value, scope, parent, facts)
        if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == "self":
            klass = enclosing_class(ctx, call)
            calls = []
            complete = klass is not None and len(facts.attr_assigns.get(target.attr.value, [])) == 1
            for other in facts.calls:
                func = other.func
                if (
                    isinstance(func, cst.Attribute)
                    and func.attr.value == target.attr.value
                    and isinstance(func.value, cst.Name)
                    and func.value.value == "self"
                ):
                    if enclosing_class(ctx, other) is klass:
                        calls.append(other)
            return Compiled(parent, scope, calls, complete)
    return Compiled(statement_of(ctx, call), scope, [], False)


def _calls_of_name(ctx: Context, name: str, scope: Scope, holder: cst.CSTNode, facts: ModuleFacts) -> Compiled:
    owner = scope.target_for(name)
    bindings = owner.bindings.get(name)
    complete = bool(bindings) and len(bindings) == 1
    calls = []
    for use in facts.name_loads.get(name, []):
        if use is getattr(holder, "name", None):
            continue
        parent = ctx.parent(use)
        if isinstance(parent, cst.Assign) or (isinstance(parent, cst.AssignTarget) and parent.target is use):
            continue
        if ctx.scope_of(use).lookup(name) is not bindings:
            continue
        if isinstance(parent, cst.Call) and parent.func is use:
            calls.append(parent)
        else:
            complete = False
    return Compiled(holder, scope, calls, complete)


def enclosing_class(ctx: Context, node: cst.CSTNode) -> Optional[cst.ClassDef]:
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, cst.ClassDef):
            return ancestor
    return None


# -- meshes ---------------------------------------------------------------------------------------
class MeshRef:
    """A mesh expression usable where the compiled function is built."""

    def __init__(self, expr: cst.BaseExpression, how: str, unsafe: bool = False, bind: Optional[cst.With] = None, bind_name: str = "") -> None:
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
        if assign is not None and call_qualname(ctx, assign.value, ctx.scope_of(assign)) in MESH_CTORS:
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
    while scope.lookup(candidate) is not None or candidate in module_bindings or candidate in module_facts(ctx).name_loads:
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
            same = [a for a in module_facts(ctx).attr_assigns.get(parts[1], []) if _enclosing_function(ctx, a) is function]
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


def find_mesh(ctx: Context, compiled: Compiled, definition: cst.CSTNode) -> Tuple[Optional[MeshRef], str]:
    """(mesh, "") or (None, why not)."""
    # 1. the with blocks around the call sites
    if compiled.calls:
        refs = []
        for site in compiled.calls:
            ref = innermost_mesh_with(ctx, site)
            refs.append((ref, site))
        found = [r for r in refs if r[0] is not None]
        if found:
            keys = {r.key(ctx) for r, _ in found}
            if len(keys) > 1:
                return None, "it is called under different meshes (" + ", ".join(sorted(keys)) + "); jax.jit pins one mesh per compiled function"
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
                return None, f"the mesh of its call sites (`{ctx.code(ref.expr) if ref.bind is None else ctx.code(ref.bind.items[0].item)}`) is not visible where the function is built"
    chosen, why = _fallback_mesh(ctx, definition)
    if chosen is not None:
        # a call site under an explicit, different mesh contradicts the fallback
        for site in compiled.calls:
            ref = innermost_mesh_with(ctx, site)
            if ref is not None and ref.key(ctx) != chosen.key(ctx):
                return None, f"one of its calls runs under `{ref.key(ctx)}`, not `{chosen.key(ctx)}`"
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
        return None, "the module builds several meshes (" + ", ".join(sorted(n for n, _ in meshes)) + ")"
    # 4. (unsafe) a mesh parameter or self attribute where the function is built
    scope = ctx.scope_of(definition)
    while scope is not None and scope.kind != "module":
        for name in sorted(scope.bindings):
            if (name == "mesh" or name.endswith("_mesh")) and _is_param(scope, name):
                ref = MeshRef(cst.Name(name), f"the `{name}` parameter", unsafe=True)
                if usable_at(ctx, ref, definition, definition):
                    return ref, ""
        scope = scope.parent
    klass = enclosing_class(ctx, definition)
    if klass is not None:
        attrs = sorted(a for a in module_facts(ctx).attr_assigns if a == "mesh" or a.endswith("_mesh"))
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


def module_ref(ctx: Context, qualname: str, scope: Scope) -> cst.BaseExpression:
    """``from package import module`` style reference to a (sub)module or name: a submodule is
    not reliably reachable as an attribute of its package, so never ``jax.x.y`` from ``import
    jax`` alone."""
    for binding in ctx.analysis.imports:
        if binding.qualname == qualname and not binding.guarded and scope.resolve_name(binding.name) == qualname:
            return cst.Name(binding.name)
    package, _, name = qualname.rpartition(".")
    planned = ctx.planned_imports.get(qualname)
    if planned is not None and scope.lookup(name) is None:
        return cst.Name(name)
    module_bindings = ctx.analysis.scopes[id(ctx.module)].bindings
    if scope.lookup(name) is None and name not in module_bindings and all(b != name for _m, b in ctx.planned_imports.values()):
        ctx.planned_imports[qualname] = (package, name)
        return cst.Name(name)
    return ctx.ref(qualname, scope)


def local_name_for(ctx: Context, qualnames: frozenset, modern: str, scope: Scope) -> cst.BaseExpression:
    """A local name already bound to one of ``qualnames`` (legacy spellings are moved by other
    rules, keeping the local name); else a reference to ``modern`` with an import."""
    best = None
    for binding in ctx.analysis.imports:
        if binding.qualname in qualnames and not binding.guarded:
            if scope.resolve_name(binding.name) == binding.qualname:
                if best is None or binding.qualname == modern:
                    best = binding.name
    if best is not None:
        return cst.Name(best)
    module, _, name = modern.rpartition(".")
    if _from_imports(ctx, module) and _free(ctx, name, scope, modern):
        # the file already imports from ``module``: add the name there, not ``jax.x.y``
        ctx.planned_imports[modern] = (module, name)
        return cst.Name(name)
    return ctx.ref(modern, scope, prefer_from=True)


def _from_imports(ctx: Context, module: str) -> bool:
    return any(
        b.qualname == f"{module}.{b.node.name.value if isinstance(b.node.name, cst.Name) else ''}"
        and isinstance(b.statement, cst.ImportFrom)
        and not b.guarded
        for b in ctx.analysis.imports
        if b.node is not None
    )


def _free(ctx: Context, name: str, scope: Scope, qualname: str) -> bool:
    if scope.lookup(name) is not None or name in ctx.analysis.scopes[id(ctx.module)].bindings:
        return False
    planned = ctx.planned_imports.get(qualname)
    if planned is not None:
        return True
    return all(bound != name for _m, bound in ctx.planned_imports.values())
