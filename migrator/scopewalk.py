"""The scoping half of the analysis, :class:`ScopeWalker`: Python's scoping rules.

One traversal of a LibCST module records its scopes (module, function, class, lambda and
comprehension), every name each scope binds (assignment, ``for``/``with``/``except``/``del``
targets, parameters, ``def``/``class`` names, walrus targets, ``match`` captures, honouring
``global``/``nonlocal``) and the scope of every load, and keeps the parent of each visited node.
:class:`migrator.analysis.Analysis` builds on it: imports, compatibility guards and the sites
the rules asked for.  Kept apart so the scoping rules can be read (and fixed) on their own.
"""

from __future__ import annotations

from typing import (
    Any,
    Callable,
    ClassVar,
    Dict,
    List,
    Optional,
    Sequence,
    Tuple,
    Type,
    TypeVar,
    Union,
    cast,
)

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.migrator.binding import Binding
from jaxmigrate.migrator.scope import (
    Scope,
    all_params,
    deleted_names,
    string_elements,
)
from jaxmigrate.migrator.traversal import (
    structural_children,
)

N = TypeVar("N", bound=cst.CSTNode)


# Node types this traversal visits wherever they occur in a module (the exceptions its
# ``nodes`` lists are other types: names, parameters, import internals, operators, trivia),
# so a tree holds such a node exactly when the traversal recorded its parent
# (tests/test_engine_index.py checks it on every fixture).  An ``Attribute`` is visited
# everywhere but inside import statements.
ALWAYS_VISITED = frozenset(
    {
        cst.Call,
        cst.Subscript,
        cst.BinaryOperation,
        cst.BooleanOperation,
        cst.UnaryOperation,
        cst.Comparison,
        cst.IfExp,
        cst.Lambda,
        cst.Tuple,
        cst.List,
        cst.Set,
        cst.Dict,
        cst.SimpleString,
        cst.Integer,
        cst.Float,
        cst.Expr,
        cst.Assign,
        cst.Return,
        cst.Import,
        cst.ImportFrom,
        cst.SimpleStatementLine,
        cst.If,
        cst.With,
        cst.FunctionDef,
        cst.ClassDef,
    }
)


class ScopeWalker(cst.CSTVisitor):
    """Walks a module once; afterwards holds its scopes, their bindings and its loads."""

    # Node type -> the method that visits it; the subclass sets the table once all its
    # handlers are defined (``Analysis.HANDLERS``).  A type without one is walked generically.
    HANDLERS: ClassVar[Dict[type, Callable[[Any, Any], bool]]] = {}

    def __init__(self) -> None:
        super().__init__()
        self.stack: List[cst.CSTNode] = []
        self.parents: Dict[int, cst.CSTNode] = {}  # id(node) -> parent, for visited nodes
        self.scope: Scope = None  # type: ignore[assignment]  # set in visit_Module
        self.scopes: Dict[int, Scope] = {}  # id(scope-creating node) -> Scope
        self.loads: Dict[str, int] = {}
        self.load_scopes: Dict[str, List[Scope]] = {}  # the scope of every load, by name
        # ``del name`` by name: (its scope, the ``Del``, the ``Name``); not a load (see _del)
        self.deletions: Dict[str, List[Tuple[Scope, cst.Del, cst.Name]]] = {}
        self.top_index: Optional[Dict[int, int]] = None  # id(top-level statement) -> index
        self.load_tops: Dict[str, List[Optional[int]]] = {}  # of the module scope's loads
        self.exported: set = set()  # names listed in a module-level __all__
        # Every visited node, by type, in traversal order (see :meth:`nodes`).
        self.by_type: Dict[type, List[cst.CSTNode]] = {}

    def release(self) -> None:
        """Break the cycles of the scopes (a scope holds its bindings, each binding its scope),
        so that the tree they reach is freed with the last reference to it, not at the next
        collection of the cyclic garbage collector (rarely, with the command's thresholds)."""
        for scope in self.scopes.values():
            scope.bindings = {}

    def nodes(self, kind: Type[N]) -> List[N]:
        """The nodes of exactly type ``kind`` this traversal visited, in source order (except
        that a comprehension's first iterable comes before its element).

        Every node is visited except: what is inside ``import`` statements, the names a
        statement binds (assignment/``for``/``with``/``except``/``del`` targets that are plain
        names, parameter names, ``def``/``class`` names, ``global``/``nonlocal`` names),
        ``Param`` nodes themselves, an ``Attribute``'s ``attr`` name, an ``Arg``'s keyword,
        and whitespace, comments and punctuation (:func:`migrator.traversal.trivia`).  So
        ``Name`` nodes here are references (loads, and the heads of dotted names).
        """
        return cast(List[N], self.by_type.get(kind, []))  # the index is keyed by exact type

    # -- generic bookkeeping ---------------------------------------------------------------
    def on_visit(self, node: cst.CSTNode) -> bool:
        kind = type(node)
        handler = self.HANDLERS.get(kind)
        found = self.by_type.get(kind)
        if found is None:
            self.by_type[kind] = [node]
        else:
            found.append(node)
        if self.stack:
            self.parents[id(node)] = self.stack[-1]
        self.stack.append(node)
        if handler is None:
            return True
        return handler(self, node)

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self.stack.pop()

    def _walk(self, node: cst.CSTNode) -> None:
        """``node.visit(self)`` without LibCST's visitor machinery (same calls, same order)."""
        if self.on_visit(node):
            for child in structural_children(node):
                self._walk(child)
        self.stack.pop()

    def _push_scope(self, kind: str, node: cst.CSTNode) -> Scope:
        scope = Scope(kind, self.scope, node)
        self.scopes[id(node)] = scope
        self.scope = scope
        return scope

    def _pop_scope(self) -> None:
        self.scope = self.scope.parent  # type: ignore[assignment]

    def _bind(self, name: str, binding: Optional[Binding] = None) -> None:
        target = self.scope.target_for(name)
        if binding is None:
            binding = Binding(name, target)
        else:
            binding.scope = target
        if target is self.scope and target.kind == "module":
            binding.top = self._direct_top()
        target.bindings.setdefault(name, []).append(binding)

    def _direct_top(self) -> Optional[int]:
        """The index of the top-level statement being walked when it binds unconditionally:
        a simple statement line, or a ``def``/``class`` binding its own name."""
        stack = self.stack
        if len(stack) < 2:
            return None
        top = stack[1]
        if not isinstance(top, cst.SimpleStatementLine) and not (
            len(stack) == 2 and isinstance(top, (cst.FunctionDef, cst.ClassDef))
        ):
            return None
        return self._top()

    def _bind_target(self, target: cst.CSTNode, kind: Optional[str] = None) -> None:
        if isinstance(target, cst.Name):
            binding = None if kind is None else Binding(target.value, node=target, kind=kind)
            self._bind(target.value, binding)
        elif isinstance(target, (cst.Tuple, cst.List)):
            self._enter(target)
            for element in target.elements:
                self._enter(element)
                self._bind_target(element.value, kind)
                self._exit(1)
            self._exit(1)
        elif isinstance(target, cst.StarredElement):
            self._enter(target)
            self._bind_target(target.value, kind)
            self._exit(1)
        else:  # Attribute / Subscript targets load their base
            self._walk(target)

    def _visit_all(self, nodes: Sequence[Optional[cst.CSTNode]]) -> None:
        for node in nodes:
            if node is not None:
                self._walk(node)

    def _enter(self, *intermediates: cst.CSTNode) -> None:
        """Put nodes a manual traversal steps over on the stack, so parents stay exact."""
        for node in intermediates:
            self.parents[id(node)] = self.stack[-1]
            self.stack.append(node)

    def _exit(self, count: int) -> None:
        del self.stack[len(self.stack) - count :]

    # -- scopes ----------------------------------------------------------------------------
    def _module(self, node: cst.Module) -> bool:
        self._push_scope("module", node)
        return True

    def _function(self, node: cst.FunctionDef) -> bool:
        self._visit_all(node.decorators)
        self._visit_params_outside(node.params)
        self._visit_all([node.returns])
        self._bind(node.name.value)
        return self._function_scope(node)

    def _lambda(self, node: cst.Lambda) -> bool:
        self._visit_params_outside(node.params)
        return self._function_scope(node)

    def _function_scope(self, node: Union[cst.FunctionDef, cst.Lambda]) -> bool:
        """The parameters and body of a ``def`` or ``lambda``, in their own scope (what stands
        outside it, decorators, defaults and annotations, is visited by the caller)."""
        self._push_scope("function", node)
        self._bind_params(node.params)
        self._walk(node.body)
        self._pop_scope()
        return False

    def _visit_params_outside(self, params: cst.Parameters) -> None:
        self._enter(params)
        for param in all_params(params):
            self._enter(param)
            self._visit_all([param.default, param.annotation])
            self._exit(1)
        self._exit(1)

    def _bind_params(self, params: cst.Parameters) -> None:
        for param in all_params(params):
            self._bind(param.name.value)

    def _class(self, node: cst.ClassDef) -> bool:
        self._visit_all(node.decorators)
        self._visit_all(node.bases)
        self._visit_all(node.keywords)
        self._bind(node.name.value)
        self._push_scope("class", node)
        self._walk(node.body)
        self._pop_scope()
        return False

    def _comprehension(
        self, node: Union[cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp]
    ) -> bool:
        self._enter(node.for_in)
        self._walk(node.for_in.iter)  # the first iterable is evaluated outside
        self._exit(1)
        self._push_scope("comprehension", node)
        comp_for: Optional[cst.CompFor] = node.for_in
        first = True
        depth = 0
        while comp_for is not None:
            self._enter(comp_for)
            depth += 1
            self._bind_target(comp_for.target)
            if not first:
                self._walk(comp_for.iter)
            self._visit_all(comp_for.ifs)
            first = False
            comp_for = comp_for.inner_for_in
        self._exit(depth)
        if isinstance(node, cst.DictComp):
            self._visit_all([node.key, node.value])
        else:
            self._walk(node.elt)
        self._pop_scope()
        return False

    # -- bindings --------------------------------------------------------------------------
    def _assign(self, node: cst.Assign) -> bool:
        for target in node.targets:
            self._enter(target)
            self._bind_target(target.target)
            self._exit(1)
            if (
                self.scope.kind == "module"
                and isinstance(target.target, cst.Name)
                and target.target.value == "__all__"
            ):
                self.exported.update(string_elements(node.value))
        self._walk(node.value)
        return False

    def _ann_assign(self, node: cst.AnnAssign) -> bool:
        self._bind_target(node.target)
        self._visit_all([node.annotation, node.value])
        return False

    def _aug_assign(self, node: cst.AugAssign) -> bool:
        if isinstance(node.target, cst.Name):
            self._load(node.target)
        self._bind_target(node.target)
        self._walk(node.value)
        return False

    def _for(self, node: cst.For) -> bool:
        self._bind_target(node.target)
        self._visit_all([node.iter, node.body, node.orelse])
        return False

    def _with_item(self, node: cst.WithItem) -> bool:
        self._walk(node.item)
        if node.asname is not None:
            self._enter(node.asname)
            self._bind_target(node.asname.name)
            self._exit(1)
        return False

    def _except(self, node: Union[cst.ExceptHandler, cst.ExceptStarHandler]) -> bool:
        self._visit_all([node.type])
        if node.name is not None:
            self._bind_target(node.name.name)
        self._walk(node.body)
        return False

    def _named_expr(self, node: cst.NamedExpr) -> bool:
        scope = self.scope
        while scope.kind == "comprehension" and scope.parent is not None:
            scope = scope.parent
        if isinstance(node.target, cst.Name):
            name = node.target.value
            scope.target_for(name).bindings.setdefault(name, []).append(Binding(name, scope))
        self._walk(node.value)
        return False

    def _del(self, node: cst.Del) -> bool:
        # ``del x`` gives ``x`` no value: a read of ``x`` sees another binding or fails, so
        # the binding it makes (``kind="del"``: the name is local to a function that deletes
        # it) resolves to nothing (Scope.resolve_name).  Nor is it a use: an import that only
        # ``del`` reads is unused, and where the cleanup drops one it drops the ``del`` too
        # (``from jax.config import config`` ... ``del config``: migrator.cleanup).
        for name in deleted_names(node.target):
            self.loads[name.value] = self.loads.get(name.value, 0) + 1
            self.deletions.setdefault(name.value, []).append((self.scope, node, name))
        self._bind_target(node.target, "del")
        return False

    def _global(self, node: cst.Global) -> bool:
        self.scope.globals.update(item.name.value for item in node.names)
        return False

    def _nonlocal(self, node: cst.Nonlocal) -> bool:
        self.scope.nonlocals.update(item.name.value for item in node.names)
        return False

    def _match_as(self, node: cst.MatchAs) -> bool:
        if node.name is not None:
            self._bind(node.name.value)
        self._visit_all([node.pattern])
        return False

    def _match_star(self, node: cst.MatchStar) -> bool:
        if node.name is not None:
            self._bind(node.name.value)
        return False

    def _match_mapping(self, node: cst.MatchMapping) -> bool:
        self._visit_all(node.elements)
        if node.rest is not None:
            self._bind(node.rest.value)
        return False

    def _match_keyword(self, node: cst.MatchKeywordElement) -> bool:
        self._walk(node.pattern)
        return False

    # -- loads ------------------------------------------------------------------------------
    def _load(self, node: cst.Name) -> None:
        self.loads[node.value] = self.loads.get(node.value, 0) + 1
        self.load_scopes.setdefault(node.value, []).append(self.scope)
        if self.scope.kind == "module":  # (the top-level statement that reads it)
            self.load_tops.setdefault(node.value, []).append(self._top())

    def _top(self) -> Optional[int]:
        if self.top_index is None:
            self.top_index = {id(s): i for i, s in enumerate(self.stack[0].body)}  # type: ignore[attr-defined]
        return self.top_index.get(id(self.stack[1])) if len(self.stack) > 1 else None

    def is_used(self, binding: Binding) -> bool:
        """True if some load of the binding's name can see this binding (a ``del`` is not one:
        :meth:`deleted_by`); a top-level statement's load sees the binding made last before it
        where each binding is its own statement's (:meth:`Scope.seen_at`)."""
        name = binding.name
        tops = iter(self.load_tops.get(name, ()))
        for scope in self.load_scopes.get(name, ()):
            top = next(tops) if scope.kind == "module" else None
            visible = scope.lookup(name)
            if not visible or not any(b is binding for b in visible):
                continue
            if top is not None and sum(b.kind != "del" for b in visible) > 1:
                # (the order matters only between values: a read before a name's one
                # binding fails whatever it reads, and counts as a use, as it always has)
                known, seen = scope.seen_at(name, top)
                if known and seen is not binding:
                    continue
            return True
        return False

    def deleted_by(self, binding: Binding) -> List[Tuple[List[Binding], cst.Del, cst.Name]]:
        """The ``del`` statements that may delete ``binding``: for each, the other bindings
        of the name it may delete instead (``del`` bindings left out), the ``Del`` and the
        deleted ``Name``."""
        found = []
        for scope, node, name in self.deletions.get(binding.name, ()):
            visible = scope.lookup(binding.name) or []
            if any(b is binding for b in visible):
                others = [b for b in visible if b is not binding and b.kind != "del"]
                if others and _deletes(binding, visible, name):
                    others = []
                found.append((others, node, name))
        return found


def _deletes(binding: Binding, visible: List[Binding], name: cst.Name) -> bool:
    """Does the ``del`` of ``name`` surely delete ``binding``: both made unconditionally by
    top-level statements, ``binding`` first, and no other binding of the name made between
    them or anywhere else (every one of them unconditional too)?"""
    deleting = [b for b in visible if b.kind == "del" and b.top is not None]
    if binding.top is None or any(b.top is None for b in visible):
        return False
    at = [b.top for b in deleting if b.top is not None and b.top > binding.top]
    if not at:
        return False
    first = min(at)  # the first ``del`` after the binding is the one that deletes it
    return not any(
        b is not binding and b.top is not None and binding.top <= b.top <= first
        for b in visible
        if b.kind != "del"
    ) and _on_line(name, first, visible)


def _on_line(name: cst.Name, top: int, visible: List[Binding]) -> bool:
    """Is ``name`` deleted by the ``del`` binding at top-level statement ``top``?"""
    return any(b.kind == "del" and b.top == top and b.node is name for b in visible)
