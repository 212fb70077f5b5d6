"""A fast read-only traversal of LibCST trees, and the per-file caches of children and
subtrees that make repeated read-only passes cheap.

Kept apart from the scope model and the analysis visitor because every layer walks trees
(the analysis, ``Context``'s parent and position indexes, rule collectors), and none of
them needs the others to do so.
"""

from __future__ import annotations

import contextlib
import dataclasses
import operator
import re
import weakref
from typing import Callable, Dict, FrozenSet, Iterator, List, Optional, Tuple

from jaxmigrate.migrator import lazycst as cst

# -- fast read-only traversal ---------------------------------------------------------------
# A LibCST visitor rebuilds every node it passes (``_visit_and_replace_children``) and calls
# two attribute hooks per field; a read-only pass only needs the children, in LibCST's order.


# children() per file: nodes are immutable, and applying a round's edits keeps every unchanged
# subtree, so the read-only passes of a round (analysis, parents, rule collectors) and the later
# rounds find most lists here.  The cache holds the nodes, so an id is never reused while cached.
_CHILDREN_CACHE: Optional[Dict[int, Tuple[cst.CSTNode, List[cst.CSTNode]]]] = None


# Per file, the same for whole top-level statements: one dict per purpose ("walk" for
# migrator.walk.walk_module, "positions" for its position pass), each
# id -> (statement, what was found).
_SUBTREE_CACHE: Optional[Dict[str, Dict[int, Tuple[cst.CSTNode, object]]]] = None


# The same for structural_children().
_STRUCTURAL_CACHE: Optional[Dict[int, Tuple[cst.CSTNode, List[cst.CSTNode]]]] = None

# Whitespace, comments and punctuation: two thirds of a typical tree's nodes.  They hold no
# names, and no rule looks them up by type, so the per-round indexes (the analysis, and
# migrator.walk.walk_module) leave them out; Context.parent still finds their parents.
# (Built by :func:`trivia` on first use: reading a class of LibCST imports it.)
_TRIVIA: Optional[FrozenSet[type]] = None


def trivia() -> FrozenSet[type]:
    """The classes of whitespace, comment and punctuation nodes (see above)."""
    global _TRIVIA
    if _TRIVIA is None:
        _TRIVIA = frozenset(
            {
                cst.SimpleWhitespace,
                cst.ParenthesizedWhitespace,
                cst.TrailingWhitespace,
                cst.Newline,
                cst.EmptyLine,
                cst.Comment,
                cst.Comma,
                cst.Dot,
                cst.Colon,
                cst.Semicolon,
                cst.AssignEqual,
                cst.LeftParen,
                cst.RightParen,
                cst.LeftSquareBracket,
                cst.RightSquareBracket,
                cst.LeftCurlyBrace,
                cst.RightCurlyBrace,
            }
        )
    return _TRIVIA


Caches = Tuple[
    Dict[int, Tuple["cst.CSTNode", List["cst.CSTNode"]]],
    Dict[str, Dict[int, Tuple["cst.CSTNode", object]]],
    Dict[int, Tuple["cst.CSTNode", List["cst.CSTNode"]]],
]


@contextlib.contextmanager
def cached_children(caches: Optional[Caches] = None) -> Iterator[Caches]:
    """Within this block, :func:`children`, :func:`structural_children` and
    :func:`subtree_cache` remember what they found (one file at a time), in ``caches`` when
    given (what an earlier block on the same tree found); yields the caches."""
    global _CHILDREN_CACHE, _SUBTREE_CACHE, _STRUCTURAL_CACHE
    previous = _CHILDREN_CACHE, _SUBTREE_CACHE, _STRUCTURAL_CACHE
    caches = caches or ({}, {}, {})
    _CHILDREN_CACHE, _SUBTREE_CACHE, _STRUCTURAL_CACHE = caches
    try:
        yield caches
    finally:
        _CHILDREN_CACHE, _SUBTREE_CACHE, _STRUCTURAL_CACHE = previous


def statement_caches(caches: Caches, module: cst.Module) -> Caches:
    """What ``caches`` found of ``module``'s own top-level statements (their code, spans and
    walks), for a later block on the same tree; what later rounds' trees made is left out."""
    body = {id(statement) for statement in module.body}
    kept = {
        purpose: {key: entry for key, entry in found.items() if key in body}
        for purpose, found in caches[1].items()
    }
    return {}, kept, {}


def structural_children(node: cst.CSTNode) -> List[cst.CSTNode]:
    """:func:`children` without :func:`trivia`.  The list is shared: do not change it."""
    cache = _STRUCTURAL_CACHE
    if cache is not None:
        hit = cache.get(id(node))
        if hit is not None and hit[0] is node:
            return hit[1]
    kinds = _TRIVIA or trivia()
    found = [child for child in children(node) if type(child) not in kinds]
    if cache is not None:
        cache[id(node)] = (node, found)
    return found


def subtree_cache(purpose: str) -> Optional[Dict[int, Tuple[cst.CSTNode, object]]]:
    """The per-file cache of what ``purpose`` found in whole statements, inside
    :func:`cached_children` (else None)."""
    caches = _SUBTREE_CACHE
    if caches is None:
        return None
    found = caches.get(purpose)
    if found is None:
        found = caches[purpose] = {}
    return found


def children(node: cst.CSTNode) -> List[cst.CSTNode]:
    """The child nodes of ``node`` in the order a LibCST visitor visits them (source order).
    The list is shared: do not change it."""
    cache = _CHILDREN_CACHE
    if cache is not None:
        hit = cache.get(id(node))
        if hit is not None and hit[0] is node:
            return hit[1]
        found = _children(node)
        cache[id(node)] = (node, found)
        return found
    return _children(node)


def _children(node: cst.CSTNode) -> List[cst.CSTNode]:
    entry = _FIELDS.get(type(node))
    if entry is None or (entry[2] and any(_present(getattr(node, name)) for name in entry[2])):
        entry = _learn_fields(node)
    values = entry[0](node)
    if entry[3]:
        values = (values,)
    found: List[cst.CSTNode] = []
    node_types = _NODE_TYPES
    for value in values:
        kind = type(value)
        if kind is tuple or kind is list:
            for item in value:
                if item.__class__ in node_types or _is_node(item):
                    found.append(item)
        elif kind in node_types or _is_node(value):
            found.append(value)
    return found


def fast_visit(node: cst.CSTNode, visitor: cst.CSTVisitor) -> None:
    """``node.visit(visitor)`` for a read-only :class:`libcst.CSTVisitor`: the same
    ``on_visit``/``on_leave`` calls in the same order, several times cheaper.  A visitor
    with field hooks (``visit_<Node>_<field>``) or its own attribute hooks runs through
    LibCST instead, so the result is always the same."""
    kind = type(visitor)
    if not _plain_visitor(kind) or any(
        name.startswith(("visit_", "leave_")) for name in getattr(visitor, "__dict__", ())
    ):
        node.visit(visitor)
        return
    if kind.on_visit is cst.CSTVisitor.on_visit and kind.on_leave is cst.CSTVisitor.on_leave:
        # LibCST's dispatch looks ``visit_<Node>`` up by name for every node: cache it.
        hooks = _HOOKS.get(kind)
        if hooks is None:
            hooks = _HOOKS[kind] = {}
        _dispatch_visit(node, visitor, hooks)
    else:
        _fast_visit(node, visitor.on_visit, visitor.on_leave)


def _fast_visit(node: cst.CSTNode, on_visit: Callable, on_leave: Callable) -> None:
    if on_visit(node):
        for child in children(node):
            _fast_visit(child, on_visit, on_leave)
    on_leave(node)


_HOOKS: (
    "weakref.WeakKeyDictionary[type, Dict[type, Tuple[Optional[Callable], Optional[Callable]]]]"
) = weakref.WeakKeyDictionary()  # fmt: skip


def _dispatch_visit(
    node: cst.CSTNode,
    visitor: cst.CSTVisitor,
    hooks: Dict[type, Tuple[Optional[Callable], Optional[Callable]]],
) -> None:
    kind = type(node)
    pair = hooks.get(kind)
    if pair is None:
        name = kind.__name__
        pair = hooks[kind] = (
            getattr(type(visitor), f"visit_{name}", None),
            getattr(type(visitor), f"leave_{name}", None),
        )
    visit, leave = pair
    if visit is None or visit(visitor, node) is not False:
        for child in children(node):
            _dispatch_visit(child, visitor, hooks)
    if leave is not None:
        leave(visitor, node)


_FIELD_HOOK = re.compile(r"^(?:visit|leave)_[A-Z][A-Za-z]*_\w+$")
# Keyed weakly: rules define visitor classes inside functions, one class per call.
_PLAIN: "weakref.WeakKeyDictionary[type, bool]" = weakref.WeakKeyDictionary()


def _plain_visitor(kind: type) -> bool:
    plain = _PLAIN.get(kind)
    if plain is None:
        plain = (
            issubclass(kind, cst.CSTVisitor)
            and kind.on_visit_attribute is cst.CSTVisitor.on_visit_attribute
            and kind.on_leave_attribute is cst.CSTVisitor.on_leave_attribute
            and not any(
                _FIELD_HOOK.match(name)
                for base in kind.__mro__
                if not base.__module__.startswith("libcst")  # LibCST declares every hook as a no-op
                for name in vars(base)
            )
        )
        _PLAIN[kind] = plain
    return plain


_NODE_TYPES: set = set()


def _is_node(value: object) -> bool:
    """isinstance(value, CSTNode), remembering node classes (CSTNode is an ABC: slow checks)."""
    if isinstance(value, cst.CSTNode):
        _NODE_TYPES.add(type(value))
        return True
    return False


def _present(value: object) -> bool:
    if isinstance(value, cst.CSTNode):
        return True
    return type(value) in (tuple, list) and any(isinstance(v, cst.CSTNode) for v in value)  # type: ignore[attr-defined]


_FIELD_ORDER: Optional[type] = None


def _field_order() -> type:
    """The visitor :func:`_learn_fields` runs, made on first use (its base is LibCST's)."""
    global _FIELD_ORDER
    if _FIELD_ORDER is None:

        class _FieldOrder(cst.CSTVisitor):
            """Records the order in which LibCST visits one node's fields (its source order)."""

            def __init__(self, top: cst.CSTNode) -> None:
                super().__init__()
                self.top = top
                self.names: List[str] = []

            def on_visit(self, node: cst.CSTNode) -> bool:
                return node is self.top

            def on_leave(self, original_node: cst.CSTNode) -> None:
                pass

            def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
                if node is self.top and attribute not in self.names:
                    self.names.append(attribute)

            def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
                pass

        _FIELD_ORDER = _FieldOrder
    return _FIELD_ORDER


# type -> (getter of the child fields in visiting order, their names, fields that can hold
# nodes but were not visited so far (LibCST skips some when empty), single field?)
_FIELDS: Dict[type, Tuple[Callable, Tuple[str, ...], Tuple[str, ...], bool]] = {}


def _learn_fields(node: cst.CSTNode) -> Tuple[Callable, Tuple[str, ...], Tuple[str, ...], bool]:
    recorder = _field_order()(node)
    node.visit(recorder)
    names = list(recorder.names)
    old = _FIELDS.get(type(node))
    if old is not None:  # keep what an earlier instance showed, near where it was
        for index, name in enumerate(old[1]):
            if name not in names:
                before = old[1][index - 1] if index else None
                names.insert(names.index(before) + 1 if before in names else len(names), name)
    missing = tuple(
        f.name
        for f in dataclasses.fields(node)
        if f.name not in names and "libcst._nodes" in str(f.type)
    )
    getter = operator.attrgetter(*names) if names else (lambda _node: ())
    entry = (getter, tuple(names), missing, len(names) == 1)
    _FIELDS[type(node)] = entry
    return entry
