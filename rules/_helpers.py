"""Small matchers several rules share (no rule logic here)."""

from __future__ import annotations

import re
from typing import Callable, Dict, List, Optional, Sequence, Tuple, Type, TypeVar, cast

from jaxmigrate.migrator import diagnostics, lazycst as cst
from jaxmigrate.migrator.context import Context, NameSite
from jaxmigrate.migrator.scope import Scope, guards_imports, is_feature_test
from jaxmigrate.migrator.traversal import structural_children
from jaxmigrate.migrator.version import parse_version

N = TypeVar("N", bound="cst.CSTNode")
MESSAGE_LIMIT = diagnostics.MESSAGE_LIMIT  # a finding's message: one line of at most this


def is_builtin(name: str, scope: Scope) -> bool:
    """True when ``name`` at ``scope`` is the builtin (no local or imported shadow)."""
    return scope.lookup(name) is None


def isinstance_position(site: NameSite) -> Optional[Tuple[cst.Call, Optional[cst.Tuple]]]:
    """If the site is the class argument of isinstance/issubclass (alone or in a tuple)."""
    ancestors = site.ancestors
    tuple_node: Optional[cst.Tuple] = None
    index = len(ancestors) - 1
    outer = ancestors[index - 1]
    if isinstance(ancestors[index], cst.Element) and isinstance(outer, cst.Tuple):
        tuple_node = outer
        index -= 2
    if index < 1 or not isinstance(ancestors[index], cst.Arg):
        return None
    arg, call = ancestors[index], ancestors[index - 1]
    if not isinstance(call, cst.Call) or not isinstance(call.func, cst.Name):
        return None
    if call.func.value not in ("isinstance", "issubclass") or not is_builtin(
        call.func.value, site.scope
    ):
        return None
    if len(call.args) != 2 or call.args[1] is not arg or arg.keyword is not None:
        return None
    return call, tuple_node


def is_type_identity_check(site: NameSite) -> bool:
    """``type(x) is Name`` / ``type(x) == Name`` / ``x.__class__ is Name`` (either side), and
    ``type(x) in (Name, ...)`` (``not in``; a tuple, list or set written there): each asks for
    the class itself, which no jax.Array is (its class is an implementation class)."""
    parent = site.parent
    if isinstance(parent, cst.Element):
        return _is_type_membership(site)
    if isinstance(parent, cst.ComparisonTarget):
        comparison = site.ancestors[-2]
    elif isinstance(parent, cst.Comparison):
        comparison = parent
    else:
        return False
    if not isinstance(comparison, cst.Comparison):
        return False
    operands = [comparison.left, *(t.comparator for t in comparison.comparisons)]
    identity = (cst.Is, cst.IsNot, cst.Equal, cst.NotEqual)
    if not all(isinstance(t.operator, identity) for t in comparison.comparisons):
        return False
    return any(_is_type_of(o) for o in operands)


def _is_type_of(node: cst.BaseExpression) -> bool:
    """``type(x)`` or ``x.__class__``."""
    return (
        isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "type"
    ) or (isinstance(node, cst.Attribute) and node.attr.value == "__class__")


def _is_type_membership(site: NameSite) -> bool:
    """``type(x) in (Name, ...)``: the site an element of the collection a single ``in`` or
    ``not in`` compares ``type(x)`` with."""
    ancestors = site.ancestors
    if len(ancestors) < 4 or not isinstance(ancestors[-2], (cst.Tuple, cst.List, cst.Set)):
        return False
    target, comparison = ancestors[-3], ancestors[-4]
    return (
        isinstance(target, cst.ComparisonTarget)
        and isinstance(target.operator, (cst.In, cst.NotIn))
        and isinstance(comparison, cst.Comparison)
        and len(comparison.comparisons) == 1
        and comparison.comparisons[0] is target
        and _is_type_of(comparison.left)
    )


def is_dispatch_key(site: NameSite, ctx: Context) -> bool:
    """A class used as a key: ``{Name: f}``, ``table[Name] = f`` or ``table[Name]`` on
    something that is not a typing form.  A table looked up by ``type(x)`` never sees an
    abstract class such as jax.Array, so such a key is a person's call."""
    parent = site.parent
    if isinstance(parent, cst.DictElement) and parent.key is site.node:
        return True
    if isinstance(parent, cst.Index) and len(site.ancestors) >= 3:
        subscript = site.ancestors[-3]
        if isinstance(subscript, cst.Subscript) and not in_type_expression(site, ctx):
            return True
    return False


def dedupe_elements(
    ctx: Context, elements: Sequence[cst.BaseExpression]
) -> List[cst.BaseExpression]:
    """Drop repeated class expressions (by their source text), keeping the first."""
    seen = set()
    result = []
    for element in elements:
        text = ctx.code(element) if element is not None else ""
        if text not in seen:
            seen.add(text)
            result.append(element)
    return result


def class_tuple(elements: Sequence[cst.BaseExpression], like: cst.Tuple) -> cst.BaseExpression:
    """A tuple of ``elements`` formatted like ``like`` (a single element stays a tuple)."""
    comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    new_elements = [cst.Element(value=e, comma=comma) for e in elements[:-1]]
    last_comma = comma if len(elements) == 1 else cst.MaybeSentinel.DEFAULT
    new_elements.append(cst.Element(value=elements[-1], comma=last_comma))
    if len(elements) == 1:
        new_elements[-1] = new_elements[-1].with_changes(comma=cst.Comma())
    return like.with_changes(elements=new_elements)


def nodes_under(node: cst.CSTNode, kind: Type[N]) -> List[N]:
    """Every node of type ``kind`` in ``node`` (itself included), in source order."""
    found: List[N] = []
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, kind):
            found.append(current)
        stack.extend(reversed(structural_children(current)))
    return found


def called(site: NameSite) -> Optional[cst.Call]:
    """The call ``site(...)`` when the site is what is called; None for any other use."""
    parent = site.parent
    if isinstance(parent, cst.Call) and parent.func is site.node:
        return parent
    return None


def called_or_report(
    site: NameSite, ctx: Context, message: str, detail: str = ""
) -> Optional[cst.Call]:
    """The call ``site(...)``, for a rule that rewrites calls.  None for an import (it goes once
    nothing uses it) and for any other use (``f = legacy``), which is reported with
    ``message`` (and ``detail``): there is no call to rewrite."""
    if site.is_import:
        return None
    call = called(site)
    if call is None:
        ctx.report(site.node, message, detail)
    return call


# What an unsafe fix's message may take: held back, it ends in " [unsafe fix]".
UNSAFE_ROOM = MESSAGE_LIMIT - len(" [unsafe fix]")


def call_messages(qualname: str, shown: str, room: int = MESSAGE_LIMIT) -> Tuple[str, str]:
    """(``qualname is gone; use shown``, ``qualname(...) -> shown``) for a removed function whose
    replacement is ``shown``; where one does not fit in ``room``, the replacement is named by
    its head (``jax.debug.callback(...)``) and the function by its last part."""
    head = _CALL_HEAD.match(shown)
    brief = f"{head.group(1)}(...)" if head else shown
    short = qualname.rpartition(".")[2]
    gone = fitting(
        f"{qualname} is gone; use {shown}",
        f"{qualname} is gone; use {brief}",
        f"{short} is gone; use {brief}",
        room=room,
    )
    fixed = fitting(
        f"{qualname}(...) -> {shown}",
        f"{qualname}(...) -> {brief}",
        f"{short}(...) -> {brief}",
        room=room,
    )
    return gone, fixed


_CALL_HEAD = re.compile(r"([A-Za-z_][\w.]*)\(")


def fitting(*candidates: str, room: int = MESSAGE_LIMIT) -> str:
    """The first of ``candidates`` (messages, most informative first) that fits in a finding's
    one line (``room``: :data:`MESSAGE_LIMIT`, :data:`UNSAFE_ROOM` for an unsafe fix); the
    last one when none does."""
    return next((c for c in candidates if len(c) <= room), candidates[-1])


def call_target(
    site: NameSite, partial_names: Sequence[str] = ("functools.partial",)
) -> Optional[Tuple[cst.Call, bool]]:
    """The call a function reference is used in: ``f(...)`` -> (call, False);
    ``functools.partial(f, ...)`` -> (call, True); anything else -> None."""
    parent = site.parent
    if isinstance(parent, cst.Call) and parent.func is site.node:
        return parent, False
    if isinstance(parent, cst.Arg) and len(site.ancestors) >= 2:
        call = site.ancestors[-2]
        if (
            isinstance(call, cst.Call)
            and call.args
            and call.args[0] is parent
            and parent.keyword is None
            and not parent.star
        ):
            head = call.func
            from jaxmigrate.migrator.scope import dotted_parts

            parts = dotted_parts(head)
            if parts:
                resolved = site.scope.resolve_name(parts[0])
                if resolved and ".".join([resolved, *parts[1:]]) in partial_names:
                    return call, True
    return None


def target_names(target: cst.CSTNode) -> List[str]:
    """The names an assignment target binds (``a``, ``(a, *b)``, ``[a, b]``); attribute and
    subscript targets bind none."""
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [name for element in target.elements for name in target_names(element.value)]
    if isinstance(target, cst.StarredElement):
        return target_names(target.value)
    return []


def is_store(ctx: Context, node: cst.CSTNode, binding_forms: bool = False) -> bool:
    """Is ``node`` written to: an assignment, ``del``, annotated or augmented assignment target,
    also inside a tuple or list target.  With ``binding_forms``, also a ``for`` /
    comprehension target, an ``as`` name and a walrus target (every way a name gets bound)."""
    parent = ctx.parent(node)
    if isinstance(parent, (cst.AssignTarget, cst.Del)):
        return True
    if isinstance(parent, (cst.AnnAssign, cst.AugAssign)) and parent.target is node:
        return True
    if isinstance(parent, (cst.Element, cst.StarredElement)):
        return is_store(ctx, ctx.parent(parent), binding_forms)  # type: ignore[arg-type]
    if isinstance(parent, (cst.Tuple, cst.List)):
        return is_store(ctx, parent, binding_forms)
    if not binding_forms:
        return False
    if isinstance(parent, (cst.For, cst.CompFor)) and parent.target is node:
        return True
    return isinstance(parent, (cst.AsName, cst.NamedExpr))


def up_to(
    ctx: Context,
    node: Optional[cst.CSTNode],
    stops: Callable[[cst.CSTNode], bool],
    cache: Dict[int, bool],
) -> bool:
    """True when ``node`` or one of its ancestors satisfies ``stops``.  ``cache``, one per
    ``stops`` for a walk over many nodes of one module, keeps the answer of every node passed
    on the way, so that the walk visits each node once."""
    chain: List[cst.CSTNode] = []
    result = False
    while node is not None:
        known = cache.get(id(node))
        if known is not None:
            result = known
            break
        if stops(node):
            result = True
            break
        chain.append(node)
        node = ctx.parent(node)
    for seen in chain:
        cache[id(seen)] = result
    if node is not None:
        cache[id(node)] = result
    return result


# typing constructs whose subscript is a type expression (a type alias, not a value).
_TYPING_FORMS = frozenset(
    {
        "typing.Union",
        "typing.Optional",
        "typing.List",
        "typing.Tuple",
        "typing.Sequence",
        "typing.Dict",
        "typing.Mapping",
        "typing.Type",
        "typing.Iterable",
        "typing.Callable",
        "typing_extensions.Annotated",
        "typing.Annotated",
    }
)
_BUILTIN_GENERICS = frozenset({"list", "tuple", "dict", "type", "set", "frozenset"})


def is_called(site: NameSite) -> bool:
    parent = site.parent
    return isinstance(parent, cst.Call) and parent.func is site.node


def is_attribute_value(site: NameSite) -> bool:
    parent = site.parent
    return isinstance(parent, cst.Attribute) and parent.value is site.node


def in_annotation(site: NameSite) -> bool:
    return any(isinstance(a, cst.Annotation) for a in site.ancestors)


def in_type_expression(site: NameSite, ctx: Context) -> bool:
    """Inside ``Union[...]``/``Optional[...]``/``list[...]``..., or an annotation."""
    if in_annotation(site):
        return True
    for ancestor in reversed(site.ancestors):
        if isinstance(ancestor, cst.Subscript):
            value = ancestor.value
            qualname = ctx.qualname(value, site.scope)
            if qualname in _TYPING_FORMS:
                return True
            if (
                isinstance(value, cst.Name)
                and value.value in _BUILTIN_GENERICS
                and site.scope.lookup(value.value) is None
            ):
                return True
            return False
        if not isinstance(
            ancestor,
            (
                cst.SubscriptElement,
                cst.Index,
                cst.Tuple,
                cst.Element,
                cst.List,
                cst.BinaryOperation,
            ),
        ):
            return False
    return False


def is_class_base(site: NameSite) -> bool:
    return (
        isinstance(site.parent, cst.Arg)
        and len(site.ancestors) >= 2
        and isinstance(site.ancestors[-2], cst.ClassDef)
    )


def report_once(
    ctx: Context, uses: Sequence[cst.CSTNode], message: str, detail: str = "", cover: bool = True
) -> None:
    """One finding for every use of a module (a removed or private one): at the first use a
    suppression comment does not silence, in the file's order, with the count of the uses when
    there are several (``... (3 uses)``).  The uses are reported, not their module, so that a
    reader goes to the first and finds the others by the name."""
    kept = [node for node in uses if not ctx.is_suppressed(node)]
    if not kept:
        return
    where = {id(n): (ctx.position(n).start.line, ctx.position(n).start.column) for n in kept}
    first = min(kept, key=lambda node: where[id(node)])
    count = len(set(where.values()))
    if cover:  # a backstop is silent on the lines this finding counts (not when it is one)
        ctx.covered_lines.update(line for line, _column in where.values())
    ctx.report(first, f"{message} ({count} uses)" if count > 1 else message, detail)


def in_compatibility_code(ctx: Context, node: cst.CSTNode) -> bool:
    """Inside ``try: ... except ImportError/AttributeError`` or a feature or version test:
    code written for several JAX releases, which rules leave alone."""
    for ancestor in ctx.ancestors(node):
        if guards_imports(ancestor):
            return True
        if isinstance(ancestor, (cst.If, cst.IfExp)) and is_feature_test(ancestor.test):
            return True
        if isinstance(ancestor, cst.BooleanOperation) and is_feature_test(ancestor.left):
            return True
    return False


def parse_statement_in(text: str, module: cst.Module) -> cst.BaseStatement:
    """``text`` (a statement written with four-space blocks) parsed for ``module``: a block it
    opens indents as the module's first block does (LibCST's ``default_indent``), unless that
    mixes tabs, spaces or form feeds, which would not match the lines around it: then it keeps
    its four spaces."""
    statement = cst.parse_statement(text)
    indent = module.default_indent
    if not (indent.strip(" ") and indent.strip("\t")):  # (spaces alone, or tabs alone)
        return statement

    class FourSpaces(cst.CSTTransformer):  # (made here: LibCST is imported on first use)
        def leave_IndentedBlock(
            self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock
        ) -> cst.IndentedBlock:
            if updated_node.indent is not None:
                return updated_node
            return updated_node.with_changes(indent="    ")

    return cast(cst.BaseStatement, statement.visit(FourSpaces()))


def needs_to_fix(ctx: Context, since: str) -> Optional[str]:
    """What a fix that writes an API JAX ``since`` added needs beyond the target: "" where
    every release of the target range has it; ``since`` in the survey, whose fixes raise the
    target to what they need; None elsewhere (the caller reports instead of fixing)."""
    if ctx.target >= parse_version(since):
        return ""
    return since if ctx.survey else None


def attribute_test(node: cst.SimpleString, ctx: Context) -> Optional[cst.Call]:
    """The builtin ``hasattr(x, node)`` or ``getattr(x, node, default)`` ``node`` is the name
    of, else None."""
    arg = ctx.parent(node)
    call = ctx.parent(arg) if isinstance(arg, cst.Arg) else None
    if not isinstance(call, cst.Call) or not isinstance(call.func, cst.Name):
        return None
    test = call.func.value
    wanted = 2 if test == "hasattr" else 3 if test == "getattr" else 0
    if len(call.args) != wanted or call.args[1] is not arg:
        return None
    if any(a.keyword is not None or a.star for a in call.args):
        return None
    return call if is_builtin(test, ctx.scope_of(call)) else None
