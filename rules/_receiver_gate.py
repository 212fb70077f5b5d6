"""The receiver question asked of CPython's ``ast`` for the engine's gate 2: could this
expression be a JAX array at all?  Cheaper and coarser than :mod:`rules._receivers` (it may
say yes where the LibCST analysis then says no, never the reverse), so that files with no
possible receiver are never parsed by LibCST.
"""

from __future__ import annotations

import ast
import dataclasses
from typing import Dict, Iterable, List, Optional, Set, Tuple

from jaxmigrate.migrator.astfacts import AstScope, Facts, dotted
from jaxmigrate.migrator.binding import Binding
from jaxmigrate.rules._array_names import (
    ARRAY_PROPERTIES,
    ARRAY_TYPES,
    GDA_CLASS_NAMES,
    GDA_CONSTRUCTORS,
    GDA_MODULES,
    JIT_WRAPPERS,
    MAYBE_ARRAY_PREFIXES,
    NOT_ARRAY_METHODS,
    NOT_ARRAY_PREFIXES,
    PARTIALS,
    is_foreign_library,
    is_jax_name,
    under,
)
from jaxmigrate.rules._flow import ARRAY_NAMES, BUFFER_LISTS, SHARD_LISTS
from jaxmigrate.rules._loose_facts import LooseFacts
from jaxmigrate.rules._receivers import array_producer_name

# -- the same question asked of CPython's ast, for the engine's gate 2 ----------------------------
ARRAY_TYPE_TAILS = frozenset(name.rsplit(".", 1)[-1] for name in ARRAY_TYPES | GDA_CLASS_NAMES)


def ast_may_tie(
    facts: Facts, expr: ast.AST, scope: Optional[AstScope], seen: Optional[Set[str]] = None
) -> bool:
    """Could :func:`receiver_tie` find ``expr`` (read in ``scope``) tied?  An
    over-approximation on ``ast`` facts (*some* binding of a name instead of every one, any
    resolution of an import): False only when no reading of the module ties it.  Call
    ``facts.scopes()`` first and answer True yourself when it is None.  ``seen``: the names,
    functions and calls read already, here or by an earlier question that found no tie
    (:func:`any_may_tie`); each is read once (a set of the path read them again on every path:
    exponential in a module full of ``sharding.mesh``), since one read either led to a tie,
    which goes back up at once, or reached none, or is being read above."""
    if seen is None:
        seen = set()
    if type(expr) is ast.Call:
        func = expr.func
        qualnames = facts.qualnames(func)
        for qualname in qualnames:
            if qualname in GDA_CONSTRUCTORS:
                return True
            if (
                is_jax_name(qualname)
                and not under(qualname, MAYBE_ARRAY_PREFIXES)
                and not under(qualname, NOT_ARRAY_PREFIXES)
                and array_producer_name(qualname)
            ):
                return True
        if qualnames:
            head = dotted(func)[0]  # type: ignore[index]
            if not any(b.kind != "other" for b in facts.bindings(head, scope)):
                return False  # only an import: receiver_tie stops at its qualified name
        if type(func) is ast.Attribute and func.attr not in NOT_ARRAY_METHODS:
            return ast_may_tie(facts, func.value, scope, seen)
        if type(func) is ast.Call:  # jax.jit(f)(x)
            return _ast_wrapper(facts, func)
        if type(func) is ast.Name:  # a jitted function of this module, or a helper
            for binding in facts.bindings(func.id, scope):
                # (a jitted function ties its calls only at module level: module_facts)
                top = binding.scope is None or binding.scope.kind == "module"
                if (
                    top
                    and binding.kind == "def"
                    and any(
                        _ast_wrapper(facts, d) for d in getattr(binding.value, "decorator_list", ())
                    )
                ):
                    return True
                if binding.kind == "def" and _returns_may_tie(facts, binding.value, seen):
                    return True  # (rules._flow.helper_return_tie)
                if (
                    top
                    and binding.kind == "value"
                    and binding.value is not None
                    and _ast_wrapper(facts, binding.value)
                ):
                    return True
        return False
    if type(expr) is ast.Subscript:
        return ast_may_tie(facts, expr.value, scope, seen)
    if type(expr) is ast.Name:
        ident = expr.id
        key = f"{ident}@{id(scope)}"  # (a name of another scope is another variable)
        if key in seen:
            return False  # (read already, or being read: see above)
        seen.add(key)
        for binding in facts.bindings(ident, scope):
            if binding.annotation is not None and _ast_annotation_may_tie(binding.annotation):
                return True
            if (
                binding.kind == "value"
                and binding.value is not None
                and ast_may_tie(facts, binding.value, binding.scope, seen)
            ):
                return True
        return _flow_may_tie(facts, expr, scope, seen)
    if type(expr) is ast.NamedExpr:
        return ast_may_tie(facts, expr.value, scope, seen)
    if type(expr) is ast.BinOp:
        return ast_may_tie(facts, expr.left, scope, seen) or ast_may_tie(
            facts, expr.right, scope, seen
        )
    if type(expr) is ast.UnaryOp:
        return ast_may_tie(facts, expr.operand, scope, seen)
    if type(expr) is ast.Attribute:
        inner = expr.value
        if expr.attr in ARRAY_PROPERTIES:
            return ast_may_tie(facts, inner, scope, seen)
        if type(inner) is ast.Name and _ast_attribute_may_tie(facts, expr.attr, seen):
            return True  # self.table, assigned an array in a method (see _flow.attribute_tie)
        if (
            expr.attr == "data"
            and type(inner) is ast.Subscript
            and type(inner.value) is ast.Attribute
            and inner.value.attr in SHARD_LISTS
        ):
            return ast_may_tie(facts, inner.value.value, scope, seen)
        if expr.attr == "data" and type(inner) is ast.Name:  # for s in x.addressable_shards
            return _shard_variable(facts, inner.id, scope)
    return False


# -- the flows of rules._flow, read across the whole module ------------------------------------
@dataclasses.dataclass
class _Flows:
    narrowed: Dict[str, List[ast.If]]  # name -> each ``if isinstance(name, <array type>):``
    iterated: Dict[str, List[ast.AST]]  # loop and comprehension variable -> what it iterates
    parameters: Dict[str, List[Tuple[str, Optional[int]]]]  # -> (function, position or None)
    calls: Dict[str, List[ast.Call]]  # function name -> its direct calls ``name(...)``


def _flow_index(facts: Facts) -> _Flows:
    """What :func:`_flow_may_tie` reads, once per module (the facts' calls and loops, and the
    parameters of every ``def``)."""
    flows = facts.derived.get("receivers: flows")
    if flows is None:
        flows = facts.derived["receivers: flows"] = _Flows({}, {}, {}, {})
        for call in facts.calls:
            func = call.func
            if type(func) is not ast.Name:
                continue
            flows.calls.setdefault(func.id, []).append(call)
        for statement in facts.ifs:
            test = statement.test
            if (
                type(test) is ast.Call
                and type(test.func) is ast.Name
                and test.func.id == "isinstance"
                and len(test.args) == 2
                and type(test.args[0]) is ast.Name
            ):
                checked = test.args[1]
                kinds = checked.elts if type(checked) is ast.Tuple else [checked]
                if any((dotted(k) or [""])[-1] in ARRAY_NAMES for k in kinds):
                    flows.narrowed.setdefault(test.args[0].id, []).append(statement)
        for loop in facts.loops:
            target = loop.target  # type: ignore[attr-defined]
            if type(target) is ast.Name:
                flows.iterated.setdefault(target.id, []).append(loop.iter)  # type: ignore[attr-defined]
        for node in facts.binders:  # (every ``def`` is one, with no walk of the statements)
            if type(node) in _DEFS:
                args = node.args  # type: ignore[attr-defined]
                positional = [*args.posonlyargs, *args.args]
                for position, arg in enumerate(positional):
                    flows.parameters.setdefault(arg.arg, []).append((node.name, position))  # type: ignore[attr-defined]
                for arg in args.kwonlyargs:
                    flows.parameters.setdefault(arg.arg, []).append((node.name, None))  # type: ignore[attr-defined]
    return flows


def _flow_may_tie(facts: Facts, name: ast.Name, scope: Optional[AstScope], seen: Set[str]) -> bool:
    """Could :mod:`rules._flow` tie ``name`` (read in ``scope``) where its bindings do not:
    read in the body of ``if isinstance(name, <an array type>):``, a loop or comprehension
    variable over arrays, or a parameter that a direct call of its function passes a value
    that may tie.  Without a scope, every scope merged: more "may" is harmless."""
    ident = name.id
    flows = _flow_index(facts)
    if any(_narrows(facts, check, name, scope) for check in flows.narrowed.get(ident, ())):
        return True
    if scope is None:
        return _merged_flow_may_tie(facts, flows, ident, seen)
    bindings = facts.bindings(ident, scope)
    if len(bindings) == 1 and _says_not_an_array(facts, bindings[0]):
        return False  # (rules._receivers follows no flow from a parameter so annotated)
    for binding in bindings:
        if binding.kind == "other" and binding.value is not None:  # ``for ident in value``
            if _elements_may_tie(facts, binding.value, binding.scope, seen):
                return True
        elif binding.kind == "param":
            function = getattr(binding.scope, "node", None)
            if isinstance(function, _DEFS) and _callers_may_pass(facts, function, ident, seen):
                return True
    return False


_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


def _merged_flow_may_tie(facts: Facts, flows: _Flows, ident: str, seen: Set[str]) -> bool:
    """:func:`_flow_may_tie` with every loop and every ``def`` of the module read as binding
    ``ident`` (:class:`LooseFacts`, which have no scopes)."""
    if any(_elements_may_tie(facts, i, None, seen) for i in flows.iterated.get(ident, ())):
        return True
    for function, position in flows.parameters.get(ident, ()):
        for call in flows.calls.get(function, ()):
            if _passes_tie(facts, call, ident, position, None, seen):
                return True
    return False


def _callers_may_pass(facts: Facts, function: ast.AST, ident: str, seen: Set[str]) -> bool:
    """Does some direct call ``name(...)`` of ``function`` pass, for its parameter ``ident``,
    a value that may tie (read in the call's scope)?"""
    key = f"({id(function)}){ident}"
    if key in seen:
        return False
    seen.add(key)
    args = function.args  # type: ignore[attr-defined]
    positional = [arg.arg for arg in (*args.posonlyargs, *args.args)]
    position = positional.index(ident) if ident in positional else None
    for call in _flow_index(facts).calls.get(function.name, ()):  # type: ignore[attr-defined]
        if _passes_tie(facts, call, ident, position, facts.scope_of(call), seen):
            return True
    return False


def _passes_tie(
    facts: Facts,
    call: ast.Call,
    ident: str,
    position: Optional[int],
    scope: Optional[AstScope],
    seen: Set[str],
) -> bool:
    """May ``call`` pass, for the parameter ``ident`` at ``position`` (None: keyword-only), a
    value that ties?  By its keyword, or at its position; a ``**kwargs``, or a ``*args`` at or
    before the position, may pass anything."""
    for keyword in call.keywords:
        if keyword.arg == ident:  # (then it is passed by no other argument)
            return ast_may_tie(facts, keyword.value, scope, seen)
    if any(keyword.arg is None for keyword in call.keywords):
        return True
    if position is None:
        return False
    for index, argument in enumerate(call.args[: position + 1]):
        if type(argument) is ast.Starred:
            return True
        if index == position:
            return ast_may_tie(facts, argument, scope, seen)
    return False  # not passed: its default


def _elements_may_tie(
    facts: Facts, iterable: ast.AST, scope: Optional[AstScope], seen: Set[str]
) -> bool:
    """Could an element of ``iterable`` (read in ``scope``) tie?  (rules._flow.element_tie)"""
    kind = type(iterable)
    if kind is ast.Attribute:
        return iterable.attr in BUFFER_LISTS  # type: ignore[attr-defined]
    if kind is ast.ListComp or kind is ast.GeneratorExp:
        element = iterable.elt  # type: ignore[attr-defined]
        return ast_may_tie(facts, element, facts.scope_of(element) or scope, seen)
    if kind is ast.List or kind is ast.Tuple:
        return any(ast_may_tie(facts, e, scope, seen) for e in iterable.elts)  # type: ignore[attr-defined]
    if kind is ast.Name:
        key = f"[]{iterable.id}@{id(scope)}"  # type: ignore[attr-defined]
        if key in seen:
            return False
        seen.add(key)
        return any(
            b.kind == "value" and _elements_may_tie(facts, b.value, b.scope, seen)
            for b in facts.bindings(iterable.id, scope)  # type: ignore[attr-defined]
        )
    return False


def _returns_may_tie(facts: Facts, function: ast.AST, seen: Set[str]) -> bool:
    """Could one value ``function`` (a ``def``) returns tie?  Its own returns only, not those
    of the functions and classes it defines."""
    if type(function) not in (ast.FunctionDef, ast.AsyncFunctionDef):
        return False
    key = f"(){id(function)}"
    if key in seen:
        return False
    seen.add(key)
    inner = facts.inner_scope(function)
    stack = list(function.body)  # type: ignore[attr-defined]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is ast.Return:
            value = node.value
            if value is not None and ast_may_tie(facts, value, inner, seen):
                return True
        elif kind not in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            for field in ("body", "orelse", "finalbody", "handlers", "cases"):
                block = getattr(node, field, None)
                if type(block) is list:
                    stack.extend(block)
    return False


def any_may_tie(facts: Facts, reads: Iterable[Tuple[ast.AST, Optional[AstScope]]]) -> bool:
    """Could one of the expressions (each read in its scope) tie?  Each asked in turn, sharing
    what was read (:func:`ast_may_tie`).  With :class:`LooseFacts` and no scopes: False where
    every :func:`ast_cannot_tie`."""
    seen: Set[str] = set()
    return any(ast_may_tie(facts, expr, scope, seen) for expr, scope in reads)


def ast_cannot_tie(loose: LooseFacts, expr: ast.AST) -> bool:
    """True where :func:`ast_may_tie` is False in every scope, without the scopes' walk of the
    whole tree: asked of :class:`LooseFacts` (every binding of a name anywhere), where each
    check on bindings only says "may tie" more often with more of them."""
    return not ast_may_tie(loose, expr, None)


def _attribute_stores(facts: Facts) -> Dict[str, List[ast.AST]]:
    """attr -> the value of each ``<name>.attr = value`` statement of the module."""
    stores = facts.derived.get("receivers: attribute stores")
    if stores is None:
        stores = facts.derived["receivers: attribute stores"] = {}
        for node in facts.binders:  # (every ``=`` and ``x: T = v`` statement is one)
            if type(node) is ast.Assign:
                targets, value = node.targets, node.value
            elif type(node) is ast.AnnAssign and node.value is not None:
                targets, value = [node.target], node.value
            else:
                continue
            for target in targets:
                if type(target) is ast.Attribute and type(target.value) is ast.Name:
                    stores.setdefault(target.attr, []).append(value)
    return stores


def _ast_attribute_may_tie(facts: Facts, attr: str, seen: Set[str]) -> bool:
    """Some ``<name>.attr = value`` in the module whose value may tie."""
    key = "." + attr
    if key in seen:
        return False
    seen.add(key)
    stores = _attribute_stores(facts)
    return any(
        ast_may_tie(facts, value, facts.scope_of(value), seen) for value in stores.get(attr, ())
    )


def _ast_wrapper(facts: Facts, expr: ast.AST) -> bool:
    """``jax.jit``, ``jax.jit(...)``, ``partial(jax.jit, ...)`` (as :func:`wrapper_of`)."""
    if facts.qualnames(expr) & JIT_WRAPPERS:
        return True
    if type(expr) is ast.Call:
        func_names = facts.qualnames(expr.func)
        if func_names & JIT_WRAPPERS:
            return True
        if func_names & PARTIALS and expr.args:
            return bool(facts.qualnames(expr.args[0]) & JIT_WRAPPERS)
    return False


def _ast_annotation_may_tie(annotation: ast.AST) -> bool:
    if type(annotation) is ast.Constant and isinstance(annotation.value, str):
        try:
            annotation = ast.parse(annotation.value.strip(), mode="eval").body
        except (SyntaxError, ValueError):
            return False
    parts = dotted(annotation)
    return bool(parts) and parts[-1] in ARRAY_TYPE_TAILS  # type: ignore[index]


def ast_imports_gda(facts: Facts) -> bool:
    return any(under(name, GDA_MODULES) for name in facts.imports)


def ast_called_without_arguments(facts: Facts, attr: str) -> bool:
    """Does ``<expr>.attr()`` (no arguments at all) occur?"""
    return any(
        type(call.func) is ast.Attribute
        and call.func.attr == attr
        and not call.args
        and not call.keywords
        for call in facts.calls
    )


def ast_called(facts: Facts, attr: str) -> bool:
    """Does ``<expr>.attr(...)`` occur?"""
    return attr in facts.attributes and any(
        type(call.func) is ast.Attribute and call.func.attr == attr for call in facts.calls
    )


def _shard_variable(facts: Facts, ident: str, scope: Optional[AstScope]) -> bool:
    """Is ``ident`` (read in ``scope``) a ``for`` variable over ``x.addressable_shards`` (or
    the other shard lists): ``s.data`` is then an array (:func:`rules._flow.shard_tie`)?"""
    if scope is None:
        iterables = _flow_index(facts).iterated.get(ident, ())
    else:
        iterables = [b.value for b in facts.bindings(ident, scope) if b.kind == "other"]
    return any(type(i) is ast.Attribute and i.attr in SHARD_LISTS for i in iterables)


_BUILTIN_TYPES = frozenset(
    {"int", "float", "str", "bytes", "bool", "list", "dict", "tuple", "set", "complex"}
)


def _says_not_an_array(facts: Facts, binding: Binding) -> bool:
    """Is ``binding`` a parameter whose annotation certainly names a type that is no JAX
    array, as :func:`rules._receivers._annotation_tie` reads it (looked up from the
    function's own scope): another JAX type, another library's, or a builtin?"""
    if binding.kind != "param" or binding.annotation is None:
        return False
    parts = dotted(binding.annotation)
    if parts is None:
        return False
    found = facts.bindings(parts[0], binding.scope)
    if not found:
        return len(parts) == 1 and parts[0] in _BUILTIN_TYPES
    if len(found) != 1 or found[0].qualname is None:
        return False  # a name bound otherwise, or by several imports
    qualname = ".".join((found[0].qualname, *parts[1:]))
    if qualname in ARRAY_TYPES or qualname in GDA_CLASS_NAMES:
        return False
    return is_jax_name(qualname) or is_foreign_library(qualname)


def _narrows(facts: Facts, check: ast.If, name: ast.Name, scope: Optional[AstScope]) -> bool:
    """Is ``name`` (read in ``scope``) in the body of ``check``, in the same function?"""
    if scope is None:
        return True
    first, last = check.body[0], check.body[-1]
    where = (name.lineno, name.col_offset)
    if not (first.lineno, first.col_offset) <= where <= (last.end_lineno, last.end_col_offset):
        return False
    return _home(facts.scope_of(check.test)) is _home(scope)


def _home(scope: Optional[AstScope]) -> Optional[AstScope]:
    """The function, class or module scope around ``scope`` (comprehensions left out): where
    an ``if isinstance(...)`` narrows what its body reads (:func:`rules._flow.narrowed`)."""
    while scope is not None and scope.kind == "comprehension":
        scope = scope.parent
    return scope
