"""What the ``ast`` view (:mod:`migrator.astview`) reads of a module's statements besides its
chains: what guards a chain (an ``except ImportError`` handler, a feature or version test, as
:mod:`migrator.scope` reads them on LibCST), and which names a top-level compound statement
binds (where LibCST's analysis follows no order: :meth:`migrator.scope.Scope.seen_at`)."""

from __future__ import annotations

import ast
from typing import FrozenSet, List, Sequence, Set

from jaxmigrate.migrator.astfacts import child_fields, dotted
from jaxmigrate.migrator.feature_tests import (
    OWN_HASATTR,
    own_hasattr,
    reads_feature_or_jax_version,
)

_GUARD_EXCEPTIONS = frozenset({"ImportError", "ModuleNotFoundError", "AttributeError"})
# Top-level statements that bind in order, as LibCST's analysis follows them (Binding.top).
_SIMPLE_OR_DEFINING = frozenset(
    {ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete, ast.Pass, ast.Import}
    | {ast.ImportFrom, ast.Assert, ast.Raise, ast.Global, ast.Nonlocal, ast.FunctionDef}
    | {ast.AsyncFunctionDef, ast.ClassDef}
)
# Below these a binding is another scope's (or, a walrus, one this does not read).
_OWN_SCOPES = frozenset(
    {ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.ListComp}
    | {ast.SetComp, ast.GeneratorExp, ast.DictComp}
)


def bound_in_blocks(tree: ast.Module) -> FrozenSet[str]:
    """The module-level names some top-level compound statement of ``tree`` binds (an ``if``,
    ``try``, ``for``, ``with`` ...).  A name bound there only in a way this does not read
    (a walrus in a comprehension) is left out: read as bound in order, not sure."""
    found: Set[str] = set()
    for statement in tree.body:
        if type(statement) in _SIMPLE_OR_DEFINING:
            continue
        stack: List[ast.AST] = [statement]
        while stack:
            node = stack.pop()
            kind = type(node)
            if kind is ast.Name:
                if type(node.ctx) is not ast.Load:  # type: ignore[attr-defined]
                    found.add(node.id)  # type: ignore[attr-defined]
                continue
            if kind in _OWN_SCOPES or kind is ast.Import or kind is ast.ImportFrom:
                found.update(_names_bound_by(node))
                continue
            if kind is ast.ExceptHandler and node.name:  # type: ignore[attr-defined]
                found.add(node.name)  # type: ignore[attr-defined]
            stack.extend(ast.iter_child_nodes(node))
    return frozenset(found)


def _names_bound_by(node: ast.AST) -> List[str]:
    """The names an import, a ``def`` or a ``class`` binds where it stands."""
    if type(node) in (ast.Import, ast.ImportFrom):
        return [
            alias.asname or alias.name.split(".", 1)[0]
            for alias in node.names  # type: ignore[attr-defined]
        ]
    name = getattr(node, "name", None)
    return [name] if isinstance(name, str) else []


def _children(node: ast.AST) -> List[ast.AST]:
    """The child nodes of ``node`` in source order, but for contexts and operators (the
    fields :func:`migrator.astfacts.child_fields` keeps)."""
    found: List[ast.AST] = []
    for field in child_fields(type(node)):
        value = getattr(node, field, None)
        if type(value) is list:
            found.extend(item for item in value if isinstance(item, ast.AST))
        elif isinstance(value, ast.AST):
            found.append(value)
    return found


def catches(handler: ast.ExceptHandler) -> bool:
    """``except ImportError`` (or ``ModuleNotFoundError``/``AttributeError``, dotted or in a
    tuple): :func:`migrator.scope.catches_import_error` on ``ast``."""
    kind = handler.type
    if kind is None:
        return False
    for candidate in kind.elts if type(kind) is ast.Tuple else [kind]:
        parts = dotted(candidate)
        if parts and parts[-1] in _GUARD_EXCEPTIONS:
            return True
    return False


def feature_test(test: ast.AST) -> bool:
    """:func:`migrator.scope.is_feature_test` on ``ast``: the dotted chains the test reads, and
    the names LibCST holds as nodes where ``ast`` holds strings (an attribute of a call's
    result, a keyword, a lambda's parameters)."""
    chains: List[Sequence[str]] = []
    stack = [test]
    while stack:
        node = stack.pop()
        parts = dotted(node) if type(node) in (ast.Name, ast.Attribute) else None
        if parts:
            chains.append(parts)
            continue
        if type(node) is ast.Call and own_hasattr(node):
            chains.append(OWN_HASATTR)
            stack.extend(node.args[1:])
            stack.extend(node.keywords)
            continue
        if type(node) is ast.Attribute:
            chains.append([node.attr])
        elif type(node) is ast.keyword and node.arg:
            chains.append([node.arg])
        elif type(node) is ast.arg:
            chains.append([node.arg])
        stack.extend(_children(node))
    return reads_feature_or_jax_version(chains)
