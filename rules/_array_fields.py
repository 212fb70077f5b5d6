"""What JAX106 (array-field-default) reads, on CPython's ``ast`` (gate 2) and for its hooks:
which classes are dataclasses, which functions make a field, which calls make a JAX array.
Light: no LibCST."""

from __future__ import annotations

import ast
import re
from typing import Dict, Iterator, Optional, Set

from jaxmigrate.migrator.astfacts import Facts
from jaxmigrate.rules._array_field_gate import (
    ARRAY_MAKERS,
    DATACLASS_BASES,
    DATACLASS_DECORATORS,
    KEY_MAKERS,
)

MAKER_NAMES = frozenset(f"jax.numpy.{maker}" for maker in ARRAY_MAKERS) | frozenset(
    f"jax.random.{maker}" for maker in KEY_MAKERS
)
# The functions that make a field, with its ``default=``.
FIELD_FUNCTIONS = frozenset(
    {"dataclasses.field", "flax.struct.field", "equinox.field", "chex.field"}
)

_CLASS_VAR = re.compile(r"""^["']?\s*(?:[\w.]*\.)?(?:ClassVar|InitVar)\b""")


def class_var(annotation: str) -> bool:
    """Is the annotation (its source) ``ClassVar[...]`` or ``InitVar[...]``, however qualified
    or quoted: no field, so no default check (and no ``default_factory``)?"""
    return _CLASS_VAR.match(annotation) is not None


def ast_array_defaults(facts: Facts) -> bool:
    """Gate 2 of JAX106: a field (``name: T = value`` in a dataclass's body, not a ClassVar or
    InitVar) whose value calls an array maker, or a field function with ``default=`` one.
    Over-approximates the rule's hooks: a class is a dataclass where a decorator or a base may
    resolve to one (a base may be a class of the module with such a base)."""
    classes = [node for node in facts.binders if type(node) is ast.ClassDef]
    if not classes:
        return False
    by_name: Dict[str, ast.ClassDef] = {}
    for node in classes:
        by_name.setdefault(node.name, node)
    for node in classes:
        defaults = list(_defaults(node))
        if defaults and _is_dataclass(node, facts, by_name, set()):
            if any(_makes_array(value, facts) for value in defaults):
                return True
    return False


def _defaults(node: ast.ClassDef) -> Iterator[ast.expr]:
    for statement in node.body:
        if (
            type(statement) is ast.AnnAssign
            and statement.value is not None
            and type(statement.target) is ast.Name
            and not class_var(ast.unparse(statement.annotation))
        ):
            yield statement.value


def _makes_array(value: ast.expr, facts: Facts) -> bool:
    if type(value) is not ast.Call:
        return False
    names = facts.qualnames(value.func)
    if names & MAKER_NAMES:
        return True
    if names & FIELD_FUNCTIONS:
        return any(
            k.arg == "default"
            and type(k.value) is ast.Call
            and facts.qualnames(k.value.func) & MAKER_NAMES
            for k in value.keywords
        )
    return False


def _is_dataclass(
    node: ast.ClassDef, facts: Facts, by_name: Dict[str, ast.ClassDef], seen: Set[str]
) -> bool:
    for decorator in node.decorator_list:
        expr = decorator.func if type(decorator) is ast.Call else decorator
        if facts.qualnames(expr) & DATACLASS_DECORATORS:
            return True
    return _has_dataclass_base(node, facts, by_name, seen)


def _has_dataclass_base(
    node: ast.ClassDef, facts: Facts, by_name: Dict[str, ast.ClassDef], seen: Set[str]
) -> bool:
    for base in node.bases:
        if facts.qualnames(base) & DATACLASS_BASES:
            return True
        parent: Optional[ast.ClassDef] = (
            by_name.get(base.id) if type(base) is ast.Name and base.id not in seen else None
        )
        if parent is not None:
            seen.add(base.id)  # type: ignore[attr-defined]
            if _has_dataclass_base(parent, facts, by_name, seen):
                return True
    return False
