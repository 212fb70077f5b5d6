"""JAX501's unsafe half: the jax_array flag's plumbing in test suites and absl programs.

When jax.Array became the only array (0.4.7), maintainers deleted the ``False`` cases of the
tests parameterized over the flag and the flag's own absl definitions.  Both change what
runs (a test case goes, ``--jax_array=false`` on a command line stops parsing), so both are
unsafe fixes; without ``--unsafe-fixes`` they are reported.
"""

from __future__ import annotations

from typing import List, Optional, Sequence, Set, Tuple

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.migrator.context import Context
from jaxmigrate.migrator.rule import Safety
from jaxmigrate.rules._config import branch_in_place, literal_bool
from jaxmigrate.rules._helpers import UNSAFE_ROOM, fitting

FLAG = "jax_array"
PARAMETERIZED = "absl.testing.parameterized"
CASE_DECORATORS = frozenset(
    f"{PARAMETERIZED}.{n}" for n in ("parameters", "named_parameters", "product")
)
ABSL_DEFINES = frozenset({"absl.flags.DEFINE_bool", "absl.flags.DEFINE_boolean"})
_Case = Optional["cst.BaseExpression"]  # None: the case is dropped


def flag_definition(ctx: Context, call: cst.Call, anchor: cst.CSTNode) -> None:
    """``flags.DEFINE_bool('jax_array', ...)``: a flag nothing can switch since JAX 0.4.7."""
    parent = ctx.parent(call)
    statement = ctx.parent(parent) if isinstance(parent, cst.Expr) else None
    detail = (
        "Deleted the absl definition of the jax_array flag: jax.Array is on in every JAX since "
        "0.4.7 and the flag was removed in 0.4.14 (a command line that still passes "
        "--jax_array no longer parses)."
    )
    if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1:
        message = "deleted the absl definition of the removed jax_array flag"
        ctx.replace(statement, cst.RemovalSentinel.REMOVE, message, Safety.UNSAFE, detail=detail)
        return
    ctx.report(
        anchor,
        "the jax_array flag is always on since JAX 0.4.7: delete this definition and its reads",
    )


def parameterized_tests(ctx: Context) -> None:
    """Every test method parameterized over a ``jax_array`` argument in the module."""
    for function in _functions(ctx.module):
        _parameterized(ctx, function)


def _functions(node: cst.CSTNode) -> List[cst.FunctionDef]:
    found: List[cst.FunctionDef] = []
    for child in node.children:
        if isinstance(child, cst.FunctionDef) and any(
            p.name.value == FLAG for p in child.params.params
        ):
            found.append(child)
        if isinstance(child, (cst.Module, cst.ClassDef, cst.IndentedBlock, cst.FunctionDef)):
            found += _functions(child)
    return found


def _parameterized(ctx: Context, function: cst.FunctionDef) -> None:
    class _Substitute(cst.CSTTransformer):
        """The parameter's reads become ``True``; ``if jax_array:`` keeps its body."""

        def __init__(self, reads: Set[int]) -> None:
            self.reads = reads
            self.elifs: Set[int] = set()

        def visit_If(self, node: cst.If) -> None:
            if isinstance(node.orelse, cst.If):
                self.elifs.add(id(node.orelse))

        def leave_If(self, original: cst.If, updated: cst.If):  # noqa: ANN201
            test = original.test
            negated = isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not)
            name = test.expression if negated else test  # type: ignore[attr-defined]
            if id(original) in self.elifs or not (
                isinstance(name, cst.Name) and id(name) in self.reads
            ):
                return updated
            return branch_in_place(updated, not negated)

        def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
            return cst.Name("True") if id(original) in self.reads else updated

        def leave_IfExp(self, original: cst.IfExp, updated: cst.IfExp) -> cst.BaseExpression:
            if isinstance(original.test, cst.Name) and id(original.test) in self.reads:
                return updated.body
            return updated

    scope = ctx.scope_of(function)
    decorators = [
        d
        for d in function.decorators
        if isinstance(d.decorator, cst.Call)
        and ctx.qualname(d.decorator.func, scope) in CASE_DECORATORS
    ]
    if len(decorators) != 1:
        return
    decorator = decorators[0]
    call: cst.Call = decorator.decorator  # type: ignore[assignment]
    params = list(function.params.params)
    names = [p.name.value for p in params]
    positional = names[1:] if isinstance(ctx.parent(ctx.parent(function)), cst.ClassDef) else names
    if FLAG not in positional or function.params.star_arg is not cst.MaybeSentinel.DEFAULT:
        return
    kind = ctx.qualname(call.func, scope).rsplit(".", 1)[-1]  # type: ignore[union-attr]
    new_call = _cases(call, kind, positional.index(FLAG), len(positional))
    uses = _uses(function)
    name = function.name.value
    if new_call is None or uses is None:
        ctx.report(
            call,
            fitting(
                f"jax_array cases of {name}: on since JAX 0.4.7; delete the False ones",
                "test cases over jax_array: on since JAX 0.4.7; delete the False ones",
            ),
            f"The test cases of {name} over jax_array: jax.Array is always on since JAX "
            "0.4.7; delete the False cases and the parameter.",
        )
        return
    kept = [d for d in function.decorators if d is not decorator]
    if new_call is not cst.RemovalSentinel.REMOVE:
        kept.insert(
            function.decorators.index(decorator), decorator.with_changes(decorator=new_call)
        )
    index = names.index(FLAG)
    params.pop(index)
    if params and index == len(params):
        params[-1] = params[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    body = function.body.visit(_Substitute(uses))
    new = function.with_changes(
        decorators=kept, params=function.params.with_changes(params=params), body=body
    )
    ctx.replace(
        function,
        new,
        fitting(
            f"deleted the jax_array=False cases of {name}",
            "deleted the jax_array=False test cases",
            room=UNSAFE_ROOM,
        ),
        Safety.UNSAFE,
        detail=f"Deleted the jax_array=False cases of {name} and its jax_array parameter "
        "(now True): jax.Array is on in every JAX since 0.4.7, the flag removed in 0.4.14; the "
        "False cases no longer run.",
    )


def _cases(call: cst.Call, kind: str, position: int, count: int):  # noqa: ANN202
    """The decorator call without the False cases and the flag's values; REMOVE when no
    parameter is left; None when a case is not a literal that can be read."""
    if kind == "product":
        if any(a.keyword is None for a in call.args):
            return None
        args = [a for a in call.args if a.keyword.value != FLAG]  # type: ignore[union-attr]
        flag = [a for a in call.args if a.keyword.value == FLAG]  # type: ignore[union-attr]
        values = flag[0].value if flag else None
        if not isinstance(values, (cst.List, cst.Tuple)):
            return None
        bools = [literal_bool(e.value, None) for e in values.elements]
        if None in bools or True not in bools:
            return None
        return _with_args(call, args) if args else cst.RemovalSentinel.REMOVE
    kept: List[cst.Arg] = []
    for arg in call.args:
        if arg.keyword is not None or arg.star:
            return None
        case = _case(arg.value, kind == "named_parameters", position, count)
        if case is False:
            return None
        if case is not None:
            kept.append(arg.with_changes(value=case))
    if not kept:
        return None
    if len(kept) == 1 and _empty(kept[0].value, kind == "named_parameters"):
        return cst.RemovalSentinel.REMOVE
    if any(_empty(a.value, kind == "named_parameters") for a in kept):
        return None
    return _with_args(call, kept)


def _with_args(call: cst.Call, args: Sequence[cst.Arg]) -> cst.Call:
    args = list(args)
    last = call.args[-1].comma
    args[-1] = args[-1].with_changes(comma=last)
    return call.with_changes(args=args)


def _case(value: cst.BaseExpression, named: bool, position: int, count: int):  # noqa: ANN202
    """One case: the new case, None (dropped: jax_array=False) or False (cannot tell)."""
    if isinstance(value, cst.Name) and count == 1 and not named:
        flag = literal_bool(value, None)
        return False if flag is None else (cst.Tuple([]) if flag else None)
    if isinstance(value, cst.Tuple):
        elements = list(value.elements)
        index = position + (1 if named else 0)
        if len(elements) != count + (1 if named else 0) or any(
            isinstance(e, cst.StarredElement) for e in elements
        ):
            return False
        flag = literal_bool(elements[index].value, None)
        if flag is None:
            return False
        if not flag:
            return None
        elements.pop(index)
        if (
            len(elements) == 1
            and not named
            and not isinstance(elements[0].value, (cst.Tuple, cst.Dict))
        ):
            return elements[0].value  # one argument left: a plain case
        if elements:
            elements[-1] = elements[-1].with_changes(
                comma=cst.Comma() if len(elements) == 1 else cst.MaybeSentinel.DEFAULT
            )
        return value.with_changes(elements=elements)
    if (
        isinstance(value, cst.Call)
        and isinstance(value.func, cst.Name)
        and value.func.value == "dict"
    ):
        args = list(value.args)
        found = [a for a in args if a.keyword is not None and a.keyword.value == FLAG]
        if len(found) != 1 or any(a.keyword is None for a in args):
            return False
        flag = literal_bool(found[0].value, None)
        if flag is None:
            return False
        if not flag:
            return None
        rest = [a for a in args if a is not found[0]]
        if rest:
            rest[-1] = rest[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return value.with_changes(args=rest)
    return False


def _empty(value: cst.BaseExpression, named: bool) -> bool:
    """A case that passes no argument (a named case: only its name)."""
    if isinstance(value, cst.Tuple):
        return len(value.elements) <= (1 if named else 0)
    if isinstance(value, cst.Call):  # dict(...)
        return all(a.keyword is not None and a.keyword.value == "testcase_name" for a in value.args)
    return False


def _uses(function: cst.FunctionDef) -> Optional[Set[int]]:
    """The ``jax_array`` names the body reads; None if the body also binds the name."""

    class _Collect(cst.CSTVisitor):
        def __init__(self) -> None:
            self.reads: Set[int] = set()
            self.bound = False

        def visit_Attribute(self, node: cst.Attribute) -> bool:
            node.value.visit(self)
            return False  # ``x.jax_array``: an attribute, not the parameter

        def visit_Arg(self, node: cst.Arg) -> bool:
            node.value.visit(self)
            return False  # ``f(jax_array=...)``: a keyword

        def visit_Param(self, node: cst.Param) -> None:
            self.bound = self.bound or node.name.value == FLAG

        def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
            self._target(node.target)

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            self._target(node.target)

        def visit_For(self, node: cst.For) -> None:
            self._target(node.target)

        def visit_AsName(self, node: cst.AsName) -> None:
            self._target(node.name)

        def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
            self._target(node.target)

        def visit_Global(self, node: cst.Global) -> None:
            self.bound = self.bound or any(n.name.value == FLAG for n in node.names)

        def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
            self.bound = self.bound or any(n.name.value == FLAG for n in node.names)

        def visit_ClassDef(self, node: cst.ClassDef) -> None:
            self.bound = self.bound or node.name.value == FLAG

        def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
            self.bound = self.bound or node.name.value == FLAG

        def _target(self, target: cst.CSTNode) -> None:
            names: Tuple[cst.CSTNode, ...] = (target,)
            while names:
                node, names = names[0], names[1:]
                if isinstance(node, cst.Name) and node.value == FLAG:
                    self.bound = True
                elif isinstance(node, (cst.Tuple, cst.List)):
                    names += tuple(e.value for e in node.elements)
                elif isinstance(node, cst.StarredElement):
                    names += (node.value,)

        def visit_Name(self, node: cst.Name) -> None:
            if node.value == FLAG:
                self.reads.add(id(node))

    collector = _Collect()
    function.body.visit(collector)
    return None if collector.bound else collector.reads
