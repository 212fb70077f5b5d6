"""JAX913 primitive-params: a primitive bound with a list, dict or set parameter, which JAX
rejects from 0.7.0 wherever it builds a jaxpr of the call.

Unsafe.  ``Primitive.bind(*args, **params)`` puts ``params`` on the jaxpr equation that
``jit``, ``grad`` and the other transformations record.  From JAX 0.7 the equation's
parameters must hash (``jax/_src/interpreters/partial_eval.py``: "As of JAX v0.7, parameters to
jaxpr equations must have __hash__ and __eq__ methods"), so a list parameter raises
``TypeError`` under ``jit`` where JAX 0.6 took it (observed: a primitive bound with
``sizes=[1, 2]`` runs under ``jit`` on jax 0.4.13, 0.4.30 and 0.6.2, and raises on 0.10.2;
called eagerly, it still runs).  A tuple holds the same values and hashes; but the primitive's
own rules then receive a tuple, which a rule that appends to the value, adds a list to it or
compares it with a list tells apart: hence unsafe.  kfac-jax 0.0.3's loss tags
(``tag_cls.bind(*args, args_names=args_names)``, a list built up in the function) and
equinox 0.9.2's batching primitives stop there.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, List, Optional, Set

from jaxmigrate.migrator import lazycst as cst, references as refs
from jaxmigrate.migrator.astfacts import Facts
from jaxmigrate.migrator.astview import AstView
from jaxmigrate.migrator.context import Context
from jaxmigrate.migrator.diagnostics import MESSAGE_LIMIT, Diagnostic
from jaxmigrate.migrator.rule import Example, Lifecycle, Rule, Safety
from jaxmigrate.migrator.scope import Scope
from jaxmigrate.migrator.version import parse_version
from jaxmigrate.rules._flow_bindings import bound_values
from jaxmigrate.rules._text_gates import PrimitiveParamsGate

if TYPE_CHECKING:  # pragma: no cover
    from jaxmigrate.migrator.astfacts import AstScope
    from jaxmigrate.migrator.binding import Binding
    from jaxmigrate.migrator.source import SourceRange

CHANGE = "0.7.0"
_CHANGE = parse_version(CHANGE)
# What a keyword's value may be for the value to be a list, dict or set (read on ``ast``):
# displays, comprehensions, calls of the builtins that make one, ``+`` of a list, and names
# (their bindings are followed on LibCST's tree).
_AST_CANDIDATES = (
    ast.List,
    ast.Dict,
    ast.Set,
    ast.ListComp,
    ast.DictComp,
    ast.SetComp,
    ast.Name,
    ast.Call,
    ast.BinOp,
)
_MAKERS = {"list": "list", "sorted": "list", "dict": "dict", "set": "set"}
_HASHABLE = {"list": "tuple", "set": "frozenset"}  # (a dict has no hashable builtin twin)
_WHY = "primitive parameters must hash (JAX 0.7)"
_SELF = "self"  # a name met again while its own bindings are read (``x = x + [...]``)


class PrimitiveParams(PrimitiveParamsGate, Rule, code="JAX913", safety=Safety.UNSAFE):
    """prim.bind(x, sizes=[1, 2]) -> prim.bind(x, sizes=(1, 2)) in code written before 0.7
    (primitive parameters must hash from JAX 0.7)

    **What it does.** In code written for a JAX before 0.7, where the target reaches 0.7, a
    `.bind(...)` keyword whose value is surely a list, a set or a dict is reported: a list or
    set display or comprehension, `list(...)`, `sorted(...)`, `set(...)`, `dict(...)`, a list
    added to something, the `**kwargs` of the enclosing function, a local name every
    binding of which is one of these (`names = ["x"]`, then `names = names + ["y"]`), or a
    parameter of a module-level function every call of which in the module passes one
    (`def branched_error_if(x, msgs): ... bind(..., msgs=msgs)` called as
    `branched_error_if(x, [msg])`: equinox 0.9.2's error_if).  With
    `--unsafe-fixes` a list becomes a tuple (`[1, 2]` -> `(1, 2)`, `names` ->
    `tuple(names)`) and a set a `frozenset`; a dict stays a finding.

    **Why.** JAX 0.7 requires the parameters of a jaxpr equation to hash: binding a primitive
    with a list parameter raises `TypeError` ("As of JAX v0.7, parameters to jaxpr equations
    must have __hash__ and __eq__ methods") under `jit`, `grad` and every transformation
    that records the call, where older JAX took it.  Called eagerly, it still runs, so tests
    that never jit the primitive pass.

    **Safety.** The primitive's impl, abstract-eval, JVP, batching and lowering rules then
    receive a tuple (or frozenset): where one appends to it, adds a list to it or compares it
    with a list, behaviour changes.  Read them before applying the fix.

    **Use instead.** A tuple (or another hashable value) for every parameter, read as such
    in the primitive's rules; a dict as a tuple of its items.
    """

    lifecycle = Lifecycle(removed=CHANGE)  # (list, dict and set parameters, under a transform)
    references = (
        refs.source_at(
            CHANGE, "jax/_src/interpreters/partial_eval.py", "equation parameters must hash"
        ),
    )
    attributes = frozenset({"bind"})
    unsafe_fixes_only = True
    whole_module = False  # hooks read the call and the bindings of its keywords' names
    examples = (
        Example(
            title="a loss tag's argument names (kfac-jax 0.0.3)",
            before="""
            from jax import core

            tag_p = core.Primitive("loss_tag")

            def loss_tag(logits, targets):
                names = ["logits"]
                names = names + ["targets"]
                return tag_p.bind(logits, targets, args_names=names)
            """,
            after="""
            from jax import core

            tag_p = core.Primitive("loss_tag")

            def loss_tag(logits, targets):
                names = ["logits"]
                names = names + ["targets"]
                return tag_p.bind(logits, targets, args_names=tuple(names))
            """,
            source_version="0.4.13",
            unsafe_fixes=True,
        ),
    )

    def runs_for(self, source: "SourceRange") -> bool:
        return source.written_before(_CHANGE) is not False

    def ast_gate(self, facts: Facts) -> bool:
        """A ``.bind(...)`` call with a keyword whose value may be a list, dict or set."""
        return any(_ast_candidate(call) for call in facts.calls)

    def ast_findings(self, view: AstView) -> Optional[List[Diagnostic]]:
        """Nothing where the target stops before 0.7 or the code is not known to be older;
        None elsewhere (LibCST follows the names)."""
        if view.upper is not None and view.upper < _CHANGE:
            return []
        if view.written_before(_CHANGE) is not True:
            return []
        facts = view.facts
        for call in facts.calls:
            if _ast_candidate(call) and (facts.scopes() is None or _may_reach(facts, call)):
                return None
        return []

    def visit_attribute(self, node: cst.Attribute, ctx: Context) -> None:
        call = ctx.parent(node)
        if not isinstance(call, cst.Call) or call.func is not node or not ctx.reaches(_CHANGE):
            return
        older, why = ctx.written_before(_CHANGE)
        if older is not True:
            return
        scope = ctx.scope_of(call)
        for arg in call.args:
            if arg.keyword is None or arg.star:
                continue
            kind = _unhashable(ctx, arg.value, scope, set())
            if kind in ("list", "set", "dict"):
                _fix_or_report(ctx, arg, kind, scope, why)


def _ast_candidate(call: ast.Call) -> bool:
    func = call.func
    return (
        type(func) is ast.Attribute
        and func.attr == "bind"
        and any(k.arg is not None and isinstance(k.value, _AST_CANDIDATES) for k in call.keywords)
    )


def _may_reach(facts: Facts, call: ast.Call) -> bool:
    """May a keyword of ``call`` be a list, dict or set as :func:`_unhashable` reads it on
    LibCST's tree?  False only where it surely is not (a name bound by a loop, an import,
    another value, or a parameter of a function this module never calls), read on CPython's
    scopes."""
    scope = facts.scope_of(call)
    return scope is None or any(
        k.arg is not None and _may_be(k.value, scope, set(), facts) for k in call.keywords
    )


def _called_here(facts: Facts, bindings: List["Binding"], name: str, seen: Set[str]) -> bool:
    """Is ``name`` (its ``bindings``) a parameter of a module-level function, without a
    default or a decorator, to which a call of it by name in this module may pass a list,
    dict or set (what :func:`_passed_kind` follows on LibCST's tree)?"""
    home = bindings[0].scope
    function = home.node if home is not None else None
    if (
        len(bindings) != 1
        or bindings[0].kind != "param"
        or type(function) is not ast.FunctionDef
        or function.decorator_list
        or home.parent is None
        or home.parent.kind != "module"
    ):
        return False
    args = function.args
    positional = [a.arg for a in (*args.posonlyargs, *args.args)]
    keyword_only = [a.arg for a in args.kwonlyargs]
    if name in positional:
        index: Optional[int] = positional.index(name)
        if index >= len(positional) - len(args.defaults):  # type: ignore[operator]
            return False  # (a default: not followed)
    elif name in keyword_only:
        index = None
        if args.kw_defaults[keyword_only.index(name)] is not None:
            return False
    else:
        return False
    found = False
    for call in facts.calls:
        if type(call.func) is not ast.Name or call.func.id != function.name:
            continue
        if any(type(a) is ast.Starred for a in call.args) or any(
            k.arg is None for k in call.keywords
        ):
            return False  # (what it passes cannot be told: nothing is said)
        value = next((k.value for k in call.keywords if k.arg == name), None)
        if value is None and index is not None and index < len(call.args):
            value = call.args[index]
        scope = facts.scope_of(call)
        found = found or (
            value is not None and (scope is None or _may_be(value, scope, seen | {name}, facts))
        )
    return found


def _may_be(value: ast.AST, scope: "AstScope", seen: Set[str], facts: Facts) -> bool:
    """:func:`_may_reach` of one expression, looked up from ``scope``."""
    kind = type(value)
    if kind in (ast.List, ast.ListComp, ast.Dict, ast.DictComp, ast.Set, ast.SetComp):
        return True
    if kind is ast.Call:
        func = value.func  # type: ignore[attr-defined]
        return type(func) is ast.Name and func.id in _MAKERS
    if kind is ast.BinOp:
        return type(value.op) is ast.Add and (  # type: ignore[attr-defined]
            _may_be(value.left, scope, seen, facts) or _may_be(value.right, scope, seen, facts)  # type: ignore[attr-defined]
        )
    if kind is not ast.Name:
        return False
    name = value.id  # type: ignore[attr-defined]
    if name in seen:
        return False  # (what LibCST reads as the name's own bindings, set aside there)
    bindings = scope.lookup(name)
    if bindings is None:
        return True  # (global or nonlocal: not followed here)
    if not bindings:
        return False
    home = bindings[0].scope
    function = home.node if home is not None else None
    star = getattr(getattr(function, "args", None), "kwarg", None)
    if star is not None and star.arg == name:
        return True  # (``**params``: a dict)
    if _called_here(facts, bindings, name, seen):
        return True  # (what its calls pass: read on LibCST's tree)
    if home is None or any(b.kind != "value" or b.value is None for b in bindings):
        return False
    return any(_may_be(b.value, home, seen | {name}, facts) for b in bindings)


def _unhashable(
    ctx: Context, value: cst.BaseExpression, scope: Scope, seen: Set[str]
) -> Optional[str]:
    """``"list"``, ``"dict"`` or ``"set"`` where ``value`` surely is one (:data:`_SELF` for a
    name whose bindings are being read); None where it may be anything else."""
    if isinstance(value, (cst.List, cst.ListComp)):
        return "list"
    if isinstance(value, (cst.Dict, cst.DictComp)):
        return "dict"
    if isinstance(value, (cst.Set, cst.SetComp)):
        return "set"
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Name):
        made = _MAKERS.get(value.func.value)
        return made if made and scope.lookup(value.func.value) is None else None
    if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Add):
        sides = (
            _unhashable(ctx, value.left, scope, seen),
            _unhashable(ctx, value.right, scope, seen),
        )
        return "list" if "list" in sides else None  # (``x + [...]`` is a list, or raises)
    if isinstance(value, cst.Name):
        return _name_kind(ctx, value.value, scope, seen)
    return None


def _name_kind(ctx: Context, name: str, scope: Scope, seen: Set[str]) -> Optional[str]:
    if name in seen:
        return _SELF
    bindings = scope.lookup(name)
    if not bindings or any(b.is_import for b in bindings):
        return None
    home = bindings[0].scope
    function = home.node if isinstance(home.node, cst.FunctionDef) else None
    star = function.params.star_kwarg if function is not None else None
    if star is not None and star.name.value == name:
        return "dict"  # (a parameter: ``**params`` is a dict)
    if function is not None and _parameter_of(function, name) is not None:
        return _passed_kind(ctx, name, home, seen)
    definitions = bound_values(ctx, name, home)
    if not definitions or any(kind != "value" for kind, _ in definitions):
        return None
    kinds = {_unhashable(ctx, value, home, seen | {name}) for _, value in definitions}
    kinds.discard(_SELF)
    return kinds.pop() if len(kinds) == 1 else None


def _parameter_of(function: cst.FunctionDef, name: str) -> Optional[cst.Param]:
    """The parameter ``name`` of ``function`` (not ``*args`` or ``**kwargs``)."""
    params = function.params
    return next(
        (
            param
            for param in (*params.posonly_params, *params.params, *params.kwonly_params)
            if param.name.value == name
        ),
        None,
    )


def _passed_kind(ctx: Context, name: str, home: Scope, seen: Set[str]) -> Optional[str]:
    """For ``name``, a parameter of the module-level function of ``home`` that nothing in it
    binds again, without a default or a decorator: the kind (:func:`_unhashable`) every call
    of the function by name in this module passes there, where they all pass the same one
    (a list where the others pass tuple displays); None otherwise (no such call, a call with
    ``*`` or ``**``, or one passing anything else; "tuple" where all pass tuples).
    Other modules may call it too: the fix turns what any of them passes into a tuple."""
    function = home.node
    module = home.parent
    if (
        not isinstance(function, cst.FunctionDef)
        or function.decorators
        or module is None
        or module.kind != "module"
        or len(home.bindings.get(name, ())) != 1
        or name in home.globals
        or name in home.nonlocals
    ):
        return None
    param = _parameter_of(function, name)
    if param is None or param.default is not None:
        return None
    called = function.name.value
    defined = module.bindings.get(called)
    if defined is None or len(defined) != 1:
        return None
    ctx.needs_name(called)  # (its calls: where the piecewise path left one out, the whole module)
    params = function.params
    positional = [p.name.value for p in (*params.posonly_params, *params.params)]
    index = positional.index(name) if name in positional else None
    kinds: Set[Optional[str]] = set()
    for call in ctx.nodes(cst.Call):
        if not isinstance(call.func, cst.Name) or call.func.value != called:
            continue
        at = ctx.scope_of(call)
        if at.lookup(called) is not defined:
            continue
        value = _argument(call, name, index)
        if isinstance(value, cst.Tuple):
            kinds.add("tuple")  # (the tuple a list becomes: tuple() of it is itself)
        else:
            kinds.add(None if value is None else _unhashable(ctx, value, at, seen | {name}))
    kinds.discard(_SELF)
    if "tuple" in kinds and "list" in kinds:
        kinds.discard("tuple")
    return kinds.pop() if len(kinds) == 1 else None


def _function_taking(value: cst.BaseExpression, scope: Scope) -> Optional[str]:
    """The function ``value`` is a parameter of, where it is a name bound so."""
    if not isinstance(value, cst.Name):
        return None
    bindings = scope.lookup(value.value) or ()
    home = bindings[0].scope if len(bindings) == 1 else None
    function = home.node if home is not None else None
    if isinstance(function, cst.FunctionDef) and _parameter_of(function, value.value):
        return function.name.value
    return None


def _argument(call: cst.Call, name: str, index: Optional[int]) -> Optional[cst.BaseExpression]:
    """What ``call`` passes to the parameter ``name`` (positional at ``index``, if it can be);
    None where it passes it by ``*`` or ``**``, or not at all."""
    position = 0
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is None:
            if position == index:
                return arg.value
            position += 1
        elif arg.keyword.value == name:
            return arg.value
    return None


def _made_by(value: cst.BaseExpression, maker: str) -> bool:
    return (
        isinstance(value, cst.Call)
        and isinstance(value.func, cst.Name)
        and value.func.value == maker
    )


def _fix_or_report(ctx: Context, arg: cst.Arg, kind: str, scope: Scope, why: str) -> None:
    keyword = arg.keyword.value  # type: ignore[union-attr]
    value = arg.value
    detail = (
        f"{why}: {keyword} is a {kind}, and from JAX {CHANGE} a primitive's parameters must "
        'hash wherever a transformation records the call (jit, grad, vmap: "parameters to '
        'jaxpr equations must have __hash__ and __eq__ methods"); called eagerly it still '
        "runs."
    )
    function = _function_taking(value, scope)
    if function is not None:
        said = (
            f" {ctx.code(value)} is a parameter of {function}(), and its calls here pass a {kind}."
        )
        detail += said
    hashable = _HASHABLE.get(kind)
    if hashable is None or scope.lookup(hashable) is not None:
        said = f"{keyword}= is a {kind}: a primitive's parameters must hash from JAX 0.7"
        ctx.report(arg, said, detail + " Pass a tuple of its items, read so in its rules.")
        return
    new: cst.BaseExpression
    if kind == "list" and isinstance(value, cst.List) and not value.elements:
        new = cst.Tuple(
            elements=[], lpar=value.lpar or [cst.LeftParen()], rpar=value.rpar or [cst.RightParen()]
        )
        shown = f"{keyword}=[] -> {keyword}=()"
    elif kind == "list" and isinstance(value, cst.List):
        elements = list(value.elements)
        last = elements[-1]
        if len(elements) == 1 and not isinstance(last.comma, cst.Comma):
            elements[-1] = last.with_changes(comma=cst.Comma())
        new = cst.Tuple(
            elements=elements,
            lpar=[cst.LeftParen(whitespace_after=value.lbracket.whitespace_after)],
            rpar=[cst.RightParen(whitespace_before=value.rbracket.whitespace_before)],
        )
        shown = f"{keyword}=[...] -> {keyword}=(...)"
    elif _made_by(value, "list" if kind == "list" else "set"):
        new = value.with_changes(func=cst.Name(hashable))  # list(xs) -> tuple(xs)
        shown = f"{keyword}={kind}(...) -> {keyword}={hashable}(...)"
    else:
        new = cst.Call(func=cst.Name(hashable), args=[cst.Arg(value)])
        spelled = ctx.code(value) if isinstance(value, cst.Name) else "..."
        shown = f"{keyword}={spelled} -> {keyword}={hashable}({spelled})"
    room = MESSAGE_LIMIT - len(" [unsafe fix]")
    message = next(
        (m for m in (f"{shown}: {_WHY}", f"{shown.split(' -> ', 1)[1]}: {_WHY}") if len(m) <= room),
        f"{keyword}= {kind} -> {hashable}: {_WHY}",
    )
    ctx.replace(
        arg.value,
        new,
        message,
        safety=Safety.UNSAFE,
        builtins=frozenset({hashable}),
        detail=detail + f" The primitive's rules then receive a {hashable}: where one appends "
        "to it, adds a list to it or compares it with a list, behaviour changes.",
    )
