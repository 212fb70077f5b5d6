"""JAX907 on ``try``/``except AttributeError`` shims: which ones it reads, on both layers.

netket 3.5's ``utils/types.py`` tries ``jaxlib.xla_extension.DeviceArray`` and falls back to
``jax.interpreters.xla._DeviceArray``: compatibility code, left alone by every rule, yet
neither name is in today's JAX, so the module (and every module that imports it) stops at
import.  The rule reads a ``try`` with one handler, ``except AttributeError:`` (or a tuple
holding it), no ``else``/``finally``, no ``as`` name; where the fallback names a JAX name the
newest JAX of the target lacks and the ``try`` body surely does too, the fallback is what
runs there and takes the shim's place; where the ``try`` body names something JAX's API
history does not know (a jaxlib name), it is reported.
"""

from __future__ import annotations

import ast
from typing import FrozenSet, List, Optional

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.migrator.astfacts import Facts
from jaxmigrate.migrator.context import Context
from jaxmigrate.migrator.scope import dotted_parts

_CAUGHT = "AttributeError"


def dead_fallback(node: "cst.Try", ctx: Context) -> Optional["cst.ExceptHandler"]:
    """The handler of a ``try`` shim this reads (see the module's docstring), else None."""
    if node.orelse is not None or node.finalbody is not None or len(node.handlers) != 1:
        return None
    if not isinstance(ctx.parent(node), (cst.IndentedBlock, cst.Module)):
        return None
    handler = node.handlers[0]
    if handler.name is not None or handler.type is None:
        return None
    caught = handler.type
    names = [e.value for e in caught.elements] if isinstance(caught, cst.Tuple) else [caught]
    for value in names:
        if isinstance(value, cst.Name) and value.value == _CAUGHT:
            if ctx.scope_of(node).lookup(_CAUGHT) is None:  # Python's own
                return handler
    return None


def surely_reached(body: "cst.BaseSuite", gone: str, ctx: Context) -> bool:
    """Is ``body`` (a ``try``'s, or its handler's) one assignment whose value (or the callee
    or subscripted value it is) is a chain naming ``gone``: evaluated, and failing there,
    whatever else it holds?"""
    if not isinstance(body, cst.IndentedBlock) or len(body.body) != 1:
        return False
    line = body.body[0]
    if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
        return False
    small = line.body[0]
    if not isinstance(small, cst.Assign):
        return False
    value: cst.BaseExpression = small.value
    while isinstance(value, (cst.Call, cst.Subscript)):
        value = value.func if isinstance(value, cst.Call) else value.value
    if dotted_parts(value) is None:
        return False
    qualname = ctx.qualname(value, ctx.scope_of(value)) or ""
    return qualname == gone or qualname.startswith(gone + ".")


def fallback_may_be_dead(facts: Facts, absent: FrozenSet[str]) -> bool:
    """Over-approximates, on ``ast``, where :func:`dead_fallback` may find a shim whose
    fallback names something ``absent`` (the names the newest JAX lacks): a ``try`` with one
    ``except AttributeError:`` and no ``else``/``finally``, whose handler is one assignment of
    a chain with an attribute in ``absent`` or a head a ``from`` import or an alias binds."""
    if _CAUGHT not in facts.heads:
        return False
    if facts.tree is None:
        return True
    stack: List[ast.AST] = list(facts.tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Try) and _may_be_dead(node, facts, absent):
            return True
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            stack.extend(getattr(node, field, ()))
    return False


def _may_be_dead(node: ast.Try, facts: Facts, absent: FrozenSet[str]) -> bool:
    if len(node.handlers) != 1 or node.orelse or node.finalbody:
        return False
    handler = node.handlers[0]
    caught = handler.type
    names = caught.elts if isinstance(caught, ast.Tuple) else [caught]
    if handler.name or not any(isinstance(n, ast.Name) and n.id == _CAUGHT for n in names):
        return False
    if len(handler.body) != 1 or not isinstance(handler.body[0], ast.Assign):
        return False
    value = handler.body[0].value
    while isinstance(value, (ast.Call, ast.Subscript)):
        value = value.func if isinstance(value, ast.Call) else value.value
    while isinstance(value, ast.Attribute):
        if value.attr in absent:
            return True
        value = value.value
    return isinstance(value, ast.Name) and any(
        "." in qualname for qualname in facts.aliases.get(value.id, ())
    )
