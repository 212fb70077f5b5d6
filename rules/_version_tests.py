"""Answering a test of the JAX version for one release, for JAX907 (dead feature tests).

A shim written for JAX 0.2 and 0.3 often tests the version instead of a feature::

    if tuple(map(int, jax.version.__version__.split("."))) >= (0, 3, 1):
        jax.tree_util.register_keypaths(cls, keypaths)

On every release of today's target such a test has one answer, and when the branch it picks
uses a name the newest release lacks, the module dies at import though no rule spoke (the
branches of a version test are compatibility code, left to themselves).  This module answers
the forms such shims take, exactly as Python would evaluate them on that release:

* ``tuple(map(int, V.split(".")))`` and ``jax.__version_info__``, compared with a tuple of
  ints;
* ``version.parse(V)`` / ``packaging.version.parse(V)`` / ``packaging.version.Version(V)``,
  compared with the same call of a string literal;

where ``V`` is ``jax.__version__``, ``jax.version.__version__``, ``jaxlib.__version__`` or
``jaxlib.version.__version__`` (jaxlib's version is taken to be JAX's: they are released
together); a conditional expression both of whose arms read the JAX version that way
(``jax.__version_info__ if hasattr(jax, "__version_info__") else tuple(map(...))``); and a
name bound by one plain assignment of any of these (``jax_version = ...`` above the test, as
kfac-jax 0.0.3 writes it).  Anything else: None, the test is not answered.
"""

from __future__ import annotations

import functools
import operator
from typing import Any, Callable, Dict, Optional, Tuple

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.migrator.context import Context
from jaxmigrate.migrator.scope import Scope

VERSION_STRINGS = frozenset(
    {
        "jax.__version__",
        "jax.version.__version__",
        "jaxlib.__version__",
        "jaxlib.version.__version__",
    }
)
VERSION_TUPLES = frozenset({"jax.__version_info__"})
PARSERS = frozenset({"packaging.version.parse", "packaging.version.Version"})
# the comparisons answered, by the name of their ``ast`` operator (LibCST's in brackets)
OPERATORS: Dict[str, Callable[[Any, Any], Any]] = {
    "Lt": operator.lt,  # (LessThan)
    "LtE": operator.le,  # (LessThanEqual)
    "Gt": operator.gt,  # (GreaterThan)
    "GtE": operator.ge,  # (GreaterThanEqual)
    "Eq": operator.eq,  # (Equal)
    "NotEq": operator.ne,  # (NotEqual)
}


@functools.cache
def _cst_operators() -> Dict[type, str]:
    return {
        cst.LessThan: "Lt",
        cst.LessThanEqual: "LtE",
        cst.GreaterThan: "Gt",
        cst.GreaterThanEqual: "GtE",
        cst.Equal: "Eq",
        cst.NotEqual: "NotEq",
    }


def version_answer(test: cst.BaseExpression, ctx: Context, release: str) -> Optional[bool]:
    """What ``test`` gives on JAX ``release`` (``not`` and one comparison of a JAX version
    with a literal), or None when it is not such a test."""
    negated = False
    while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        negated, test = not negated, test.expression
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return None
    name = _cst_operators().get(type(test.comparisons[0].operator))
    if name is None:
        return None
    scope = ctx.scope_of(test)
    left = _value(test.left, ctx, scope, release)
    right = _value(test.comparisons[0].comparator, ctx, scope, release)
    return compared(name, left, right, negated)


# (kind, reads the JAX version, value): kind "ints" (a tuple of ints) or "parsed" (a Version)
Value = Tuple[str, bool, object]


def compared(
    operator_name: str, left: Optional[Value], right: Optional[Value], negated: bool
) -> Optional[bool]:
    """The comparison's answer (both layers call this): None unless it compares one JAX
    version with a literal of the same kind."""
    if left is None or right is None or left[0] != right[0] or not (left[1] or right[1]):
        return None  # not one JAX version against a literal of the same kind
    return bool(OPERATORS[operator_name](left[2], right[2])) != negated


def either(body: Optional[Value], orelse: Optional[Value]) -> Optional[Value]:
    """A conditional expression's version: the JAX version whichever arm runs (both read it,
    as versions of one kind: on one release they are equal); None otherwise."""
    if body is None or orelse is None or not (body[1] and orelse[1]) or body != orelse:
        return None
    return body


def release_value(kind: str, release: str) -> Optional[Value]:
    """The JAX ``release`` read as a version of ``kind`` ("ints" or "parsed")."""
    ints = _ints(release)
    if ints is None:
        return None
    return kind, True, ints if kind == "ints" else _padded(ints)


def literal_value(text: str) -> Optional[Value]:
    """A version string literal given to a parser (``parse("0.4.1")``)."""
    parsed = _ints(text)
    return None if parsed is None else ("parsed", False, _padded(parsed))


def _value(
    node: cst.BaseExpression, ctx: Context, scope: Scope, release: str, follow: bool = True
) -> Optional[Value]:
    """``node`` read as a version; ``follow``: a name is read through the one plain assignment
    that binds it (``jax_version = tuple(map(...))``), once."""
    if isinstance(node, cst.IfExp):  # ``A if hasattr(jax, "__version_info__") else B``
        return either(
            _value(node.body, ctx, scope, release, follow),
            _value(node.orelse, ctx, scope, release, follow),
        )
    if follow and isinstance(node, cst.Name) and ctx.qualname(node, scope) is None:
        from jaxmigrate.rules._flow import single_assignment

        assigned = single_assignment(ctx, node, scope)
        if assigned is None:
            return None
        return _value(assigned.value, ctx, ctx.scope_of(assigned), release, follow=False)
    if isinstance(node, cst.Tuple):
        items = [e.value for e in node.elements]
        numbers = [i.evaluated_value for i in items if isinstance(i, cst.Integer)]
        if items and len(numbers) == len(items):
            return "ints", False, tuple(numbers)
        return None
    name = ctx.qualname(node, scope) if isinstance(node, (cst.Name, cst.Attribute)) else None
    if name in VERSION_TUPLES:
        return release_value("ints", release)
    if not isinstance(node, cst.Call) or len(node.args) != 1 or node.args[0].keyword:
        return None
    func = ctx.qualname(node.func, scope)
    argument = node.args[0].value
    if func in PARSERS:
        if isinstance(argument, cst.SimpleString):
            text = argument.evaluated_value
            return literal_value(text) if isinstance(text, str) else None
        if ctx.qualname(argument, scope) in VERSION_STRINGS:
            return release_value("parsed", release)
        return None
    if func == "builtins.tuple" or (isinstance(node.func, cst.Name) and node.func.value == "tuple"):
        if scope.lookup("tuple") is not None or scope.lookup("map") is not None:
            return None  # the module's own tuple or map
        if _splits_jax_version(argument, ctx, scope, release):
            return release_value("ints", release)
    return None


def _splits_jax_version(node: cst.BaseExpression, ctx: Context, scope: Scope, release: str) -> bool:
    """``map(int, V.split("."))`` with ``V`` a JAX version string."""
    if not (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Name)
        and node.func.value == "map"
        and len(node.args) == 2
        and isinstance(node.args[0].value, cst.Name)
        and node.args[0].value.value == "int"
        and scope.lookup("int") is None
    ):
        return False
    split = node.args[1].value
    return (
        isinstance(split, cst.Call)
        and isinstance(split.func, cst.Attribute)
        and split.func.attr.value == "split"
        and len(split.args) == 1
        and isinstance(split.args[0].value, cst.SimpleString)
        and split.args[0].value.evaluated_value == "."
        and ctx.qualname(split.func.value, scope) in VERSION_STRINGS
    )


def _ints(release: str) -> Optional[Tuple[int, ...]]:
    try:
        return tuple(int(part) for part in release.split("."))
    except ValueError:
        return None


def _padded(version: Tuple[int, ...]) -> Tuple[int, ...]:
    """A parsed version as packaging compares it: trailing zeros do not count."""
    parts = list(version)
    while parts and parts[-1] == 0:
        parts.pop()
    return tuple(parts)
