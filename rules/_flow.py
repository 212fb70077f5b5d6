"""Intra-module data flow for receiver ties: what a local helper returns, what a loop or
comprehension variable iterates over, what narrowing an ``isinstance`` check gives.

Used by :mod:`rules._receivers` (``receiver_tie``) so every rule asking "is this a JAX array?"
gets the same answers.  Each function returns the ``Tie`` of the value, with a reason that
names the evidence (``"returned by make(), the result of jax.device_put(...)"``), or None
when this kind of flow does not apply.  Ties found here are *proven* when each step is (a
helper all of whose returns are tied); a step that is only likely (an element of
``x.device_buffers`` whose ``x`` is unknown) gives kind ``"likely"``.

What a name is bound to: :func:`single_value` (the one plain or annotated assignment),
:func:`assignments`/:func:`single_assignment` (``name = value`` statements of a scope),
:func:`bound_values` (every binding of a name in a scope) and :func:`bound_only_to` (a test
that holds for each), from :mod:`rules._flow_bindings`,
:func:`local_function`, :func:`iterated`.  Indexes are built once per round via ``ctx.memo``.
"""

from __future__ import annotations

from typing import Callable, Dict, List, Optional, Tuple, Union

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.migrator.context import Context
from jaxmigrate.migrator.scope import Scope
from jaxmigrate.migrator.traversal import fast_visit
from jaxmigrate.rules._array_names import Tie
from jaxmigrate.rules._definitions import is_method, scope_definitions
from jaxmigrate.rules._flow_bindings import (  # re-exported
    Bound as Bound,
    bound_only_to as bound_only_to,
    bound_values as bound_values,
)
from jaxmigrate.rules._helpers import is_store

# Lists whose elements are arrays (after JAX403 ``[s.data for s in x.addressable_shards]`` too)
BUFFER_LISTS = frozenset({"device_buffers"})
SHARD_LISTS = frozenset({"addressable_shards", "global_shards", "local_shards"})
ARRAY_NAMES = frozenset(
    {"Array", "ndarray", "DeviceArray", "ShardedDeviceArray", "GlobalDeviceArray", "ArrayImpl"}
)


def local_function(ctx: Context, name: cst.Name, scope: Scope) -> Optional[cst.FunctionDef]:
    """The one ``def`` of this module that ``name`` (its only binding) refers to."""
    binding = scope.sole_binding(name.value)
    if binding is None:
        return None
    found = [
        f
        for f in ctx.nodes(cst.FunctionDef)
        if f.name.value == name.value and ctx.scope_of(f) is binding.scope
    ]
    return found[0] if len(found) == 1 else None


def helper_return_tie(ctx: Context, function: cst.FunctionDef, tie_of: Callable, depth: int):  # noqa: ANN201
    """The tie of what ``function`` returns: every ``return`` tied (the weakest kind wins)."""
    from jaxmigrate.rules._scope_body import ScopeBodyVisitor  # (LibCST's visitor: loaded here)

    class _Returns(ScopeBodyVisitor):
        def __init__(self) -> None:
            self.values: List[Optional[cst.BaseExpression]] = []

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return False

        def visit_ClassDef(self, node: cst.ClassDef) -> bool:
            return False

        def visit_Return(self, node: cst.Return) -> bool:
            self.values.append(node.value)
            return False

    collector = _Returns()
    fast_visit(function.body, collector)
    if not collector.values or any(v is None for v in collector.values):
        return None
    body_scope = ctx.analysis.scopes.get(id(function))
    if body_scope is None:
        return None
    ties = [tie_of(ctx, value, body_scope, depth + 1) for value in collector.values]
    if not all(t.tied for t in ties):
        return None
    first = ties[0]
    kind = (
        "likely"
        if any(t.kind == "likely" for t in ties)
        else ("gda" if all(t.kind == "gda" for t in ties) else "array")
    )
    return first.__class__(
        kind, f"returned by {function.name.value}(), {first.reason}", pmap=any(t.pmap for t in ties)
    )


def iterated(ctx: Context, name: cst.Name, scope: Scope) -> Optional[cst.BaseExpression]:
    """What the loop or comprehension that binds ``name`` (its only binding) iterates over."""
    binding = scope.sole_binding(name.value)
    if binding is None:
        return None
    home = binding.scope
    node = home.node
    if isinstance(node, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
        comp: Optional[cst.CompFor] = node.for_in
        while comp is not None:
            if isinstance(comp.target, cst.Name) and comp.target.value == name.value:
                return comp.iter
            comp = comp.inner_for_in
        return None
    loops = [
        loop
        for loop in ctx.nodes(cst.For)
        if isinstance(loop.target, cst.Name)
        and loop.target.value == name.value
        and ctx.scope_of(loop) is home
    ]
    return loops[0].iter if len(loops) == 1 else None


def element_tie(
    ctx: Context, iterable: cst.BaseExpression, scope: Scope, tie_of: Callable, depth: int
):  # noqa: ANN201
    """The tie of one element of ``iterable``: ``x.device_buffers`` (arrays), a list display or
    comprehension of tied values; shards are handled by :func:`shard_tie`."""
    cls = Tie
    if isinstance(iterable, cst.Attribute) and iterable.attr.value in BUFFER_LISTS:
        inner = tie_of(ctx, iterable.value, scope, depth + 1)
        kind = "array" if inner.tied and inner.kind != "likely" else "likely"
        return cls(kind, f"an element of {ctx.code(iterable)}", pmap=inner.pmap)
    if isinstance(iterable, (cst.ListComp, cst.GeneratorExp)):
        comp_scope = ctx.analysis.scopes.get(id(iterable))
        if comp_scope is not None:
            tie = tie_of(ctx, iterable.elt, comp_scope, depth + 1)
            if tie.tied:
                return cls(tie.kind, f"an element of a list of {tie.reason}", pmap=tie.pmap)
    if isinstance(iterable, (cst.List, cst.Tuple)) and iterable.elements:
        ties = [tie_of(ctx, e.value, scope, depth + 1) for e in iterable.elements]
        if all(t.tied for t in ties):
            kind = "likely" if any(t.kind == "likely" for t in ties) else "array"
            return cls(kind, f"an element of a list of {ties[0].reason}")
    if isinstance(iterable, cst.Name):
        value = single_value(ctx, iterable, scope)
        if isinstance(value, (cst.ListComp, cst.List, cst.Tuple)):
            return element_tie(ctx, value, ctx.scope_of(value), tie_of, depth + 1)
    return None


def shard_tie(ctx: Context, expr: cst.Attribute, scope: Scope, tie_of: Callable, depth: int):  # noqa: ANN201
    """``s.data`` where ``s`` iterates over ``x.addressable_shards``/``local_shards``: an array."""
    if expr.attr.value != "data" or not isinstance(expr.value, cst.Name):
        return None
    iterable = iterated(ctx, expr.value, ctx.scope_of(expr))
    if isinstance(iterable, cst.Attribute) and iterable.attr.value in SHARD_LISTS:
        inner = tie_of(ctx, iterable.value, ctx.scope_of(iterable), depth + 1)
        kind = "array" if inner.tied and inner.kind != "likely" else "likely"
        return Tie(kind, f"the data of a shard of {ctx.code(iterable)}", pmap=inner.pmap)
    return None


def call_site_tie(ctx: Context, name: cst.Name, scope: Scope, tie_of: Callable, depth: int):  # noqa: ANN201
    """A parameter of a plain function of this module (not a method) whose every use is a
    direct call passing, at that parameter's place, a tied value: *likely* (a caller in another
    module may pass anything), reason ``"arr, every call of describe() passes y, ..."``.  None
    when :func:`call_site_arguments` finds no complete set of call sites."""
    found = call_site_arguments(ctx, name, scope)
    if found is None:
        return None
    function, arguments = found
    ties = [tie_of(ctx, argument, where, depth + 1) for argument, where in arguments]
    if not all(t.tied for t in ties):
        return None
    return Tie(
        "likely",
        f"{name.value}, every call of {function.name.value}() passes {ties[0].reason}",
        pmap=any(t.pmap for t in ties),
        named=all(t.named for t in ties),
    )


def call_site_arguments(
    ctx: Context, name: cst.Name, scope: Scope
) -> Optional[Tuple[cst.FunctionDef, List[Tuple[cst.BaseExpression, Scope]]]]:
    """The function whose parameter ``name`` is, and what each of its call sites in this
    module passes there (with the caller's scope): the evidence a parameter's callers give.

    Only for a plain function (not a method, undecorated, not async, no ``*args``/``**kw``)
    whose parameter has no default and is not rebound in the body, every use of which is a
    direct call that passes the parameter by position or keyword; None otherwise (the function
    escapes: it is passed, returned or stored, so someone else may call it), and None when it
    is never called."""
    binding = scope.sole_binding(name.value)
    if binding is None:
        return None
    function = binding.scope.node
    if not isinstance(function, cst.FunctionDef) or function.decorators or function.asynchronous:
        return None
    if (
        is_method(ctx, function)
        or len(scope_definitions(ctx, binding.scope).get(name.value, [])) != 1
    ):
        return None
    params = function.params
    if params.star_arg is not cst.MaybeSentinel.DEFAULT or params.star_kwarg is not None:
        return None
    positional = [*params.posonly_params, *params.params]
    param = next(
        (p for p in [*positional, *params.kwonly_params] if p.name.value == name.value), None
    )
    if param is None or param.default is not None:
        return None
    position = positional.index(param) if param in positional else None
    defined_in = ctx.scope_of(function)
    def_binding = (defined_in.lookup(function.name.value) or (None,))[0]
    arguments = []
    for use in name_loads(ctx).get(function.name.value, ()):
        if (ctx.scope_of(use).lookup(function.name.value) or (None,))[0] is not def_binding:
            continue
        call = ctx.parent(use)
        if not isinstance(call, cst.Call) or call.func is not use:
            return None  # the function escapes: someone else may call it
        argument = _argument(call, name.value, position)
        if argument is None:
            return None
        arguments.append((argument, ctx.scope_of(call)))
    return (function, arguments) if arguments else None


def name_loads(ctx: Context) -> dict:
    """identifier -> the ``Name`` references to it (one index per round)."""

    def build() -> dict:
        index: dict = {}
        for use in ctx.nodes(cst.Name):
            index.setdefault(use.value, []).append(use)
        return index

    return ctx.memo(("flow", "name_loads"), build)


def _attributes_named(ctx: Context) -> dict:
    """attribute name -> the ``Attribute`` nodes ending with it (one index per round)."""

    def build() -> dict:
        index: dict = {}
        for node in ctx.nodes(cst.Attribute):
            index.setdefault(node.attr.value, []).append(node)
        return index

    return ctx.memo(("flow", "attributes_named"), build)


def _argument(
    call: cst.Call, keyword: str, position: Optional[int]
) -> Optional[cst.BaseExpression]:
    """What ``call`` passes for the parameter ``keyword`` at ``position`` (None: unknown)."""
    index = 0
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is None:
            if position is not None and index == position:
                return arg.value
            index += 1
        elif arg.keyword.value == keyword:
            return arg.value
    return None


def attribute_tie(ctx: Context, expr: cst.Attribute, scope: Scope, tie_of: Callable, depth: int):  # noqa: ANN201
    """``self.x`` read in a method of class ``C``, where every assignment to ``.x`` in the module
    is ``self.x = <value>`` in a method of ``C`` and every such value is tied: *likely* (a
    subclass elsewhere, ``setattr`` or an outside caller may still store something else), with
    a reason naming the assignment (``"self.table, assigned a GlobalDeviceArray in
    ShardedTable.__init__()"``).  None when any assignment is elsewhere, not a plain ``=``
    (a tuple target, ``+=``), to another object, or not tied; or when the class body itself
    binds ``x``.  ``self.x`` of an unrelated class of the module (neither names the other among
    its bases) is another attribute and does not count."""
    owner = _self_class(ctx, expr.value, scope)
    if owner is None:
        return None
    attr = expr.attr.value
    for statement in owner.body.body:  # a class attribute of that name: read before assignment
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                targets = (
                    [t.target for t in small.targets]
                    if isinstance(small, cst.Assign)
                    else (
                        [small.target] if isinstance(small, (cst.AnnAssign, cst.AugAssign)) else []
                    )
                )
                if any(isinstance(t, cst.Name) and t.value == attr for t in targets):
                    return None
    values = []
    for node in _attributes_named(ctx).get(attr, ()):
        if not is_store(ctx, node, binding_forms=True):
            continue
        parent = ctx.parent(node)
        holder = ctx.parent(parent) if isinstance(parent, cst.AssignTarget) else parent
        value = holder.value if isinstance(holder, (cst.Assign, cst.AnnAssign)) else None
        other = _self_class(ctx, node.value, ctx.scope_of(node))
        if other is not None and other is not owner and not _related(owner, other):
            continue  # another class's own attribute of the same name
        if value is None or other is not owner:
            return None
        values.append((value, ctx.scope_of(value), _enclosing_def(ctx, node)))
    if not values:
        return None
    ties = [tie_of(ctx, value, value_scope, depth + 1) for value, value_scope, _ in values]
    if not all(t.tied for t in ties):
        return None
    method = values[0][2]
    where = f"{owner.name.value}.{method.name.value}()" if method is not None else owner.name.value
    return Tie(
        "likely",
        f"self.{attr}, assigned {ties[0].reason} in {where}",
        pmap=any(t.pmap for t in ties),
        named=all(t.named for t in ties),
    )


def _related(first: cst.ClassDef, second: cst.ClassDef) -> bool:
    """One class names the other among its bases (a subclass may store the attribute too)."""

    def bases(cls: cst.ClassDef) -> set:
        return {part for arg in cls.bases for part in _base_names(arg.value)}

    return first.name.value in bases(second) or second.name.value in bases(first)


def _base_names(expr: cst.BaseExpression) -> List[str]:
    """The identifiers written in ``expr`` (``mod.Base`` -> ``mod``, ``Base``)."""
    if isinstance(expr, cst.Name):
        return [expr.value]
    if isinstance(expr, cst.Attribute):
        return [*_base_names(expr.value), expr.attr.value]
    return []


def _enclosing_def(ctx: Context, node: cst.CSTNode) -> Optional[cst.FunctionDef]:
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, cst.FunctionDef):
            return ancestor
    return None


def _self_class(ctx: Context, receiver: cst.BaseExpression, scope: Scope) -> Optional[cst.ClassDef]:
    """The class whose method's own first parameter ``receiver`` is (``self``), else None."""
    if not isinstance(receiver, cst.Name):
        return None
    binding = scope.sole_binding(receiver.value)
    if binding is None:
        return None
    function = binding.scope.node
    if not isinstance(function, cst.FunctionDef) or binding.scope.kind != "function":
        return None
    if any(
        isinstance(d.decorator, cst.Name) and d.decorator.value in ("staticmethod", "classmethod")
        for d in function.decorators
    ):
        return None
    params = [*function.params.posonly_params, *function.params.params]
    if not params or params[0].name.value != receiver.value:
        return None
    block = ctx.parent(function)
    owner = ctx.parent(block) if block is not None else None
    return owner if isinstance(owner, cst.ClassDef) else None


def assignments(ctx: Context, name: str, scope: Scope) -> List[cst.Assign]:
    """The ``name = value`` statements made directly in ``scope``, in source order: one
    target, a plain name (``a = b = v``, tuple targets, ``+=`` and annotated assignments are
    other kinds of binding, not listed).  Rules compare their count with the name's bindings
    (``scope.lookup``) to know whether every binding is a value they can read.  One index of
    the module's assignments per round, through ``ctx.memo``."""

    def build() -> Dict[str, List[cst.Assign]]:
        index: Dict[str, List[cst.Assign]] = {}
        for node in ctx.nodes(cst.Assign):  # the analysis index: every assignment, in order
            targets = node.targets
            if len(targets) == 1 and isinstance(targets[0].target, cst.Name):
                index.setdefault(targets[0].target.value, []).append(node)
        return index

    found = ctx.memo(("flow", "assignments"), build).get(name, ())
    return [node for node in found if ctx.scope_of(node) is scope]


def single_assignment(
    ctx: Context, name: Union[str, cst.Name], scope: Scope
) -> Optional[cst.Assign]:
    """The ``name = value`` statement (see :func:`assignments`) that is the only binding of
    ``name`` seen from ``scope``; None for a parameter, an import, a loop variable, several
    bindings, ``a = b = v``.  Its own scope is ``ctx.scope_of`` the statement."""
    text = name if isinstance(name, str) else name.value
    binding = scope.sole_binding(text)
    if binding is None:
        return None
    found = assignments(ctx, text, binding.scope)
    return found[0] if len(found) == 1 else None


def single_value(ctx: Context, name: cst.Name, scope: Scope) -> Optional[cst.BaseExpression]:
    """The value of the one plain assignment that binds ``name`` (None otherwise)."""
    binding = scope.sole_binding(name.value)
    if binding is None:
        return None
    definitions = scope_definitions(ctx, binding.scope).get(name.value, [])
    if len(definitions) != 1 or definitions[0][0] != "value":
        return None
    return definitions[0][1]


def narrowed(ctx: Context, name: cst.Name) -> Optional[str]:
    """``name`` read inside ``if isinstance(name, jax.Array):`` (an array type): the check."""
    node: Optional[cst.CSTNode] = name
    child: Optional[cst.CSTNode] = None
    while node is not None:
        parent = ctx.parent(node)
        if isinstance(parent, cst.If) and node is parent.body:
            test = parent.test
            if (
                isinstance(test, cst.Call)
                and isinstance(test.func, cst.Name)
                and test.func.value == "isinstance"
                and len(test.args) == 2
                and isinstance(test.args[0].value, cst.Name)
                and test.args[0].value.value == name.value
                and _array_type(ctx, test.args[1].value)
            ):
                return ctx.code(test)
        if isinstance(parent, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return None
        child, node = node, parent
    del child
    return None


def _array_type(ctx: Context, expr: cst.BaseExpression) -> bool:
    """A JAX array class, as the module's imports resolve it (a local ``Array`` is not)."""
    qualname = ctx.qualname(expr, ctx.scope_of(expr)) or ""
    return (
        qualname.split(".", 1)[0] in ("jax", "jaxlib")
        and qualname.rsplit(".", 1)[-1] in ARRAY_NAMES
    )
