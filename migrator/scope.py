"""The scope model the analysis builds and rules query: :class:`Scope` (Python's scoping
rules for lookups), :class:`Site` (a node some rule asked for, with where it sits),
:class:`Interest` (what the active rules want to see), and the small syntax predicates
shared by the analysis and the rules (dotted names, import guards, feature tests).

Kept apart from the visitor (:mod:`migrator.analysis`) so that rules depend only on the
data model, not on how the traversal fills it.
"""

from __future__ import annotations

from typing import Dict, FrozenSet, List, Optional, Sequence, Tuple, Union

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.migrator.binding import Binding
from jaxmigrate.migrator.feature_tests import OWN, OWN_HASATTR, reads_feature_or_jax_version
from jaxmigrate.migrator.traversal import structural_children

ImportNode = Union["cst.Import", "cst.ImportFrom"]

# Exceptions whose handler marks a ``try`` block as a compatibility shim we must leave alone
# (and so does an ``if`` that tests for a feature or a version: :func:`is_feature_test`).
_GUARD_EXCEPTIONS = frozenset({"ImportError", "ModuleNotFoundError", "AttributeError"})


class Scope:
    __slots__ = ("kind", "parent", "node", "bindings", "globals", "nonlocals")

    def __init__(self, kind: str, parent: Optional["Scope"], node: cst.CSTNode) -> None:
        self.kind = kind  # "module" | "class" | "function" | "comprehension"
        self.parent = parent
        self.node = node
        self.bindings: Dict[str, List[Binding]] = {}
        self.globals: set = set()
        self.nonlocals: set = set()

    @property
    def module(self) -> "Scope":
        scope = self
        while scope.parent is not None:
            scope = scope.parent
        return scope

    def target_for(self, name: str) -> "Scope":
        """The scope a binding of ``name`` made here lands in."""
        if name in self.globals:
            return self.module
        if name in self.nonlocals:
            scope = self.parent
            while scope is not None and scope.kind != "function":
                scope = scope.parent
            return scope or self.module
        return self

    def lookup(self, name: str) -> Optional[List[Binding]]:
        """The bindings a reference to ``name`` from this scope can see (Python's rules)."""
        if name in self.globals:
            return self.module.bindings.get(name)
        scope: Optional[Scope] = self
        first = True
        while scope is not None:
            # Class bodies are visible only to code directly inside them.
            if scope.kind != "class" or first:
                found = scope.bindings.get(name)
                if found:
                    return found
            first = False
            scope = scope.parent
        return None

    def sole_binding(self, name: str) -> Optional[Binding]:
        """The binding a reference to ``name`` from this scope sees, when it is the only one
        and not an import (None otherwise): the name has one meaning a rule can follow."""
        bindings = self.lookup(name)
        if not bindings or len(bindings) != 1 or bindings[0].is_import:
            return None
        return bindings[0]

    def seen_at(self, name: str, top: int) -> Tuple[bool, Optional[Binding]]:
        """(known, binding): the binding of ``name``, a module-level name, that top-level
        statement ``top`` reads as it runs (not a function it calls), where every binding of
        the name is made unconditionally by a top-level statement of its own (Binding.top):
        the last one before it (``from jax.config import config``, ``config.update(...)``,
        ``del config``, ``from .utils import config``); None when nothing binds it by then.
        Not known otherwise."""
        bindings = self.bindings.get(name)
        if not bindings or any(b.top is None or b.top == top for b in bindings):
            return False, None
        before = [b for b in bindings if b.top < top]  # type: ignore[operator]
        if not before:
            return True, None
        last = max(b.top for b in before)  # type: ignore[type-var]
        at_last = [b for b in before if b.top == last]
        if len(at_last) > 1:
            return False, None  # (``import a as x, b as x``: the statement decides)
        return True, at_last[0]

    def flow_qualname(self, name: str, top: int) -> Optional[str]:
        """What ``name`` refers to when top-level statement ``top`` reads it
        (:meth:`seen_at`): the qualified name of an import, else None."""
        known, seen = self.seen_at(name, top)
        if not known or seen is None or seen.kind == "del" or seen.guarded:
            return None
        return seen.qualname

    def resolve_name(self, name: str) -> Optional[str]:
        """The qualified name ``name`` refers to here, if it is unambiguously an import (a
        ``del`` of it gives it no other value)."""
        bindings = self.lookup(name)
        if bindings and any(binding.kind == "del" for binding in bindings):
            bindings = [binding for binding in bindings if binding.kind != "del"]
        if not bindings:
            return None
        qualname = bindings[0].qualname
        if qualname is None:
            return None
        for binding in bindings[1:]:
            if binding.qualname != qualname:
                return None
        return qualname


class Site:
    """A node some rule asked for, with where it sits."""

    __slots__ = ("node", "scope", "ancestors", "guarded", "parts")

    def __init__(
        self,
        node: cst.CSTNode,
        scope: Scope,
        ancestors: Tuple[cst.CSTNode, ...],
        guarded: bool,
        parts: Optional[Sequence[str]] = None,
    ) -> None:
        self.node = node
        self.scope = scope
        self.ancestors = ancestors  # from the Module down to the node's parent
        self.guarded = guarded  # inside a try/except ImportError compatibility block
        self.parts = parts

    @property
    def parent(self) -> cst.CSTNode:
        return self.ancestors[-1]


def dotted_parts(node: Optional[cst.CSTNode]) -> Optional[List[str]]:
    """``a.b.c`` as ``["a", "b", "c"]``; None for anything that is not a plain dotted name."""
    parts: List[str] = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if not isinstance(node, cst.Name):
        return None
    parts.append(node.value)
    parts.reverse()
    return parts


def dotted_name(node: Optional[cst.CSTNode]) -> Optional[str]:
    parts = dotted_parts(node)
    return ".".join(parts) if parts else None


def dotted_expr(name: Union[str, Sequence[str]]) -> Union[cst.Name, cst.Attribute]:
    """The inverse of :func:`dotted_parts`: ``"a.b.c"`` (or its parts) as the expression
    ``a.b.c``, a ``Name`` or a chain of ``Attribute`` nodes."""
    parts = name.split(".") if isinstance(name, str) else name
    node: Union[cst.Name, cst.Attribute] = cst.Name(parts[0])
    for part in parts[1:]:
        node = cst.Attribute(value=node, attr=cst.Name(part))
    return node


class Interest:
    """What the active rules want to see, as sets the traversal can test cheaply."""

    def __init__(
        self,
        names: FrozenSet[str] = frozenset(),
        attributes: FrozenSet[str] = frozenset(),
        keywords: FrozenSet[str] = frozenset(),
        strings: FrozenSet[str] = frozenset(),
    ) -> None:
        self.names = names
        self.last_components = frozenset(name.rsplit(".", 1)[-1] for name in names)
        self.attributes = attributes
        self.keywords = keywords
        self.strings = strings


def deleted_names(target: cst.BaseExpression) -> List[cst.Name]:
    """The plain names a ``del`` target deletes (through tuples, lists and parentheses)."""
    if isinstance(target, cst.Name):
        return [target]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [name for element in target.elements for name in deleted_names(element.value)]
    return []


def all_params(params: cst.Parameters) -> List[cst.Param]:
    result = [*params.posonly_params, *params.params, *params.kwonly_params]
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            result.append(star)
    return result


def is_feature_test(test: cst.CSTNode) -> bool:
    """Does an ``if`` test check for a feature or the JAX version (so its branches are a shim)?
    See :mod:`migrator.feature_tests`."""
    chains: List[Sequence[str]] = []
    stack = [test]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.Name, cst.Attribute)):
            parts = dotted_parts(node)
            if parts:
                chains.append(parts)
                continue
        if (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Name)
            and node.func.value == "hasattr"
            and node.args
            and isinstance(node.args[0].value, cst.Name)
            and node.args[0].value.value in OWN
        ):
            chains.append(OWN_HASATTR)
            stack.extend(arg.value for arg in node.args[1:])
            continue
        stack.extend(structural_children(node))
    return reads_feature_or_jax_version(chains)


def catches_import_error(handler: cst.CSTNode) -> bool:
    kind = getattr(handler, "type", None)
    if kind is None:
        return False
    candidates = kind.elements if isinstance(kind, cst.Tuple) else [kind]
    for candidate in candidates:
        value = candidate.value if isinstance(candidate, cst.Element) else candidate
        name = dotted_name(value)
        if name and name.rsplit(".", 1)[-1] in _GUARD_EXCEPTIONS:
            return True
    return False


def guards_imports(node: cst.CSTNode) -> bool:
    """A ``try`` statement with an ``except ImportError`` (or AttributeError) handler: the
    compatibility code that already handles both spellings."""
    return isinstance(node, (cst.Try, cst.TryStar)) and any(
        catches_import_error(handler) for handler in node.handlers
    )


def string_elements(node: cst.BaseExpression) -> List[str]:
    if not isinstance(node, (cst.List, cst.Tuple)):
        return []
    values = []
    for element in node.elements:
        if isinstance(element.value, cst.SimpleString):
            value = element.value.evaluated_value
            if isinstance(value, str):
                values.append(value)
    return values
