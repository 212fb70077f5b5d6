"""Matchers shared by the pjit family (JAX201-JAX204, JAX206); no rule logic here.

* what a pjit call looks like (direct call, ``functools.partial(pjit, ...)`` decorator), its
  keyword normalisation (legacy keywords, positional shardings, literal ``**kwargs`` dicts);
* the compiled function a pjit call builds and the places it is called.

Which mesh those places run under is :mod:`rules._pjit_mesh`; how a fix spells a JAX name
at a site is :mod:`rules._name_refs`.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.migrator.context import Context
from jaxmigrate.migrator.scope import Scope, dotted_parts

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


def keyword_arg(name: str, value: cst.BaseExpression, comma: object = None) -> cst.Arg:
    """``name=value``; ``comma``: the comma after it (None: LibCST's default, none)."""
    if comma is None:
        comma = cst.MaybeSentinel.DEFAULT
    return cst.Arg(keyword=cst.Name(name), value=value, equal=no_space_equal(), comma=comma)  # type: ignore[arg-type]


def qualname_of(ctx: Context, node: cst.CSTNode, scope: Scope) -> Optional[str]:
    return ctx.qualname(node, scope) if dotted_parts(node) else None


def call_qualname(ctx: Context, node: Optional[cst.CSTNode], scope: Scope) -> Optional[str]:
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


def is_pjit_call(ctx: Context, call: Optional[cst.CSTNode], scope: Scope) -> Optional[bool]:
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


def literal_kwargs(
    ctx: Context, value: cst.BaseExpression
) -> Optional[List[Tuple[str, cst.BaseExpression]]]:
    """``dict(a=1)`` or ``{"a": 1}`` as (keyword, value) pairs; None for anything else."""
    scope = ctx.scope_of(value)
    if (
        isinstance(value, cst.Call)
        and isinstance(value.func, cst.Name)
        and value.func.value == "dict"
    ):
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
            if not isinstance(element, cst.DictElement) or not isinstance(
                element.key, cst.SimpleString
            ):
                return None
            key = element.key.evaluated_value
            if not isinstance(key, str) or not key.isidentifier():
                return None
            pairs.append((key, element.value))
        return pairs
    return None


def kwargs_variable(
    ctx: Context, arg: cst.Arg, scope: Scope
) -> Optional[Tuple[cst.Assign, List[Tuple[str, cst.BaseExpression]]]]:
    """``**kw`` where ``kw = dict(...)``/``{...}`` is assigned once in the same scope and used
    nowhere but as ``**kw`` in pjit calls: (the assignment, its pairs)."""
    if arg.star != "**" or not isinstance(arg.value, cst.Name):
        return None
    name = arg.value.value
    bindings = scope.lookup(name)
    if (
        not bindings
        or len(bindings) != 1
        or bindings[0].scope is not scope
        or bindings[0].is_import
    ):
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
        if not (
            isinstance(use_parent, cst.Arg) and use_parent.star == "**" and use_parent.value is use
        ):
            return None
        if is_pjit_call(ctx, ctx.parent(use_parent), ctx.scope_of(use)) is None:
            return None
    return assign, pairs


def normalized_args(
    ctx: Context,
    call: cst.Call,
    through_partial: bool,
    scope: Scope,
    names: Dict[str, str] = RENAMES,
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
                arg = arg.with_changes(
                    keyword=cst.Name(POSITIONAL[positional_index - 1]), equal=no_space_equal()
                )
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
                self.facts.assigns.setdefault((id(scope.target_for(t.value)), t.value), []).append(
                    node
                )
            elif (
                isinstance(t, cst.Attribute)
                and isinstance(t.value, cst.Name)
                and t.value.value == "self"
            ):
                self.facts.attr_assigns.setdefault(t.attr.value, []).append(node)


def module_facts(ctx: Context) -> ModuleFacts:
    """The module's assignments, name loads, calls and ``with`` statements, once per round."""
    return ctx.memo(("pjit", "module facts"), lambda: _collect_facts(ctx))


def _collect_facts(ctx: Context) -> ModuleFacts:
    facts = ModuleFacts()
    # What a full visit with _Collector's hooks would gather, from the round's node lists.
    collector = _Collector(ctx, facts)
    for assign in ctx.all_nodes(cst.Assign):
        collector.visit_Assign(assign)
    for name in ctx.all_nodes(cst.Name):
        facts.name_loads.setdefault(name.value, []).append(name)
    facts.calls.extend(ctx.all_nodes(cst.Call))
    facts.withs.extend(ctx.all_nodes(cst.With))
    return facts


# -- the compiled function and its call sites -----------------------------------------------------
class Compiled:
    """What a pjit call builds: the node that holds it and how it is called."""

    def __init__(
        self, holder: cst.CSTNode, scope: Scope, calls: List[cst.Call], complete: bool
    ) -> None:
        self.holder = holder  # the statement/def/call that defines the compiled function
        self.scope = scope  # where the pjit call is evaluated
        self.calls = calls  # call sites found
        self.complete = complete  # False when the function escapes (passed around, returned)


def statement_of(ctx: Context, node: cst.CSTNode) -> cst.CSTNode:
    current = node
    while True:
        parent = ctx.parent(current)
        if parent is None or isinstance(
            parent, (cst.Module, cst.IndentedBlock, cst.SimpleStatementSuite)
        ):
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
        if (
            isinstance(target, cst.Attribute)
            and isinstance(target.value, cst.Name)
            and target.value.value == "self"
        ):
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


def _calls_of_name(
    ctx: Context, name: str, scope: Scope, holder: cst.CSTNode, facts: ModuleFacts
) -> Compiled:
    owner = scope.target_for(name)
    bindings = owner.bindings.get(name)
    complete = bindings is not None and len(bindings) == 1
    calls = []
    for use in facts.name_loads.get(name, []):
        if use is getattr(holder, "name", None):
            continue
        parent = ctx.parent(use)
        if isinstance(parent, cst.Assign) or (
            isinstance(parent, cst.AssignTarget) and parent.target is use
        ):
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
