"""The analysis visitor, :class:`Analysis`: one traversal of a LibCST module that finds its
scopes, import bindings and the sites rules asked for.

LibCST's own ``QualifiedNameProvider`` costs about five times the parse itself (measured on
300 files of the installed ``jax`` package: 132 s against a 27 s parse), so jaxmigrate keeps
an import table of its own.  It follows Python's scoping rules (function, class, lambda and
comprehension scopes, ``global``/``nonlocal``), and treats a name as referring to an import
only when *every* binding of that name in the resolved scope is an import of the same thing:
a local class or variable named like a legacy API, or a ``try/except ImportError`` pair of
imports, makes the name unresolvable, so it is never rewritten.

The data it builds (scopes, sites, what the rules are interested in) is defined in
:mod:`migrator.scope`; the traversal helpers in :mod:`migrator.traversal`.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence, Union

import libcst as cst

from jaxmigrate.migrator.binding import Binding
from jaxmigrate.migrator.scope import (
    ImportNode,
    Interest,
    Scope,
    Site,
    all_params,
    catches_import_error,
    deleted_names,
    dotted_name,
    dotted_parts,
    is_feature_test,
    string_elements,
)
from jaxmigrate.migrator.traversal import (
    structural_children,
)


class Analysis(cst.CSTVisitor):
    """Walks a module once; afterwards holds scopes, import bindings, loads and sites."""

    def __init__(self, interest: Interest) -> None:
        super().__init__()
        self.interest = interest
        # Local names that may refer to an interesting name (``from m import pjit as pj``).
        self.local_names = set(interest.last_components)
        self.stack: List[cst.CSTNode] = []
        self.parents: Dict[int, cst.CSTNode] = {}  # id(node) -> parent, for visited nodes
        self.scope: Scope = None  # type: ignore[assignment]  # set in visit_Module
        self.scopes: Dict[int, Scope] = {}  # id(scope-creating node) -> Scope
        self.guard_depth = 0
        self.loads: Dict[str, int] = {}
        self.load_scopes: Dict[str, List[Scope]] = {}  # the scope of every load, by name
        self.imports: List[Binding] = []
        self.exported: set = set()  # names listed in a module-level __all__
        self.name_sites: List[Site] = []  # Name/Attribute references, ImportAliases
        self.attribute_sites: List[Site] = []
        self.keyword_sites: List[Site] = []
        self.string_sites: List[Site] = []
        self.module: Optional[cst.Module] = None
        # Every visited node, by type, in traversal order (see :meth:`nodes`).
        self.by_type: Dict[type, List[cst.CSTNode]] = {}
        self.annotation_strings: List[cst.SimpleString] = []  # strings inside annotations
        self._annotation_depth = 0

    def nodes(self, kind: type) -> List[cst.CSTNode]:
        """The nodes of exactly type ``kind`` this traversal visited, in source order (except
        that a comprehension's first iterable comes before its element).

        Every node is visited except: what is inside ``import`` statements, the names a
        statement binds (assignment/``for``/``with``/``except``/``del`` targets that are plain
        names, parameter names, ``def``/``class`` names, ``global``/``nonlocal`` names),
        ``Param`` nodes themselves, an ``Attribute``'s ``attr`` name, an ``Arg``'s keyword,
        and whitespace, comments and punctuation (:data:`TRIVIA`).  So ``Name`` nodes here
        are references (loads, and the heads of dotted names).
        """
        return self.by_type.get(kind, [])

    # -- generic bookkeeping ---------------------------------------------------------------
    def on_visit(self, node: cst.CSTNode) -> bool:
        kind = type(node)
        handler = _HANDLERS.get(kind)
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

    def _site(self, node: cst.CSTNode, parts: Optional[Sequence[str]] = None) -> Site:
        # The stack ends with the node itself; ancestors stop at its parent.
        return Site(node, self.scope, tuple(self.stack[:-1]), self.guard_depth > 0, parts)

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
        target.bindings.setdefault(name, []).append(binding)

    def _bind_target(self, target: cst.CSTNode) -> None:
        if isinstance(target, cst.Name):
            self._bind(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            self._enter(target)
            for element in target.elements:
                self._enter(element)
                self._bind_target(element.value)
                self._exit(1)
            self._exit(1)
        elif isinstance(target, cst.StarredElement):
            self._enter(target)
            self._bind_target(target.value)
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
        # ``del x`` reads the binding it removes (NameError without one): a use of it, so an
        # import it deletes is never "unused" (``from m import a, b`` ... ``del a, b``).
        for name in deleted_names(node.target):
            self._load(name)
        self._bind_target(node.target)
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

    # -- imports ---------------------------------------------------------------------------
    def _import(self, node: cst.Import) -> bool:
        for alias in node.names:
            module = dotted_name(alias.name) or ""
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                bound, qualname = alias.asname.name.value, module
            else:
                bound = qualname = module.split(".", 1)[0]
            self._add_import(bound, qualname, alias, node)
            self._maybe_import_site(module, alias)
        return False

    def _import_from(self, node: cst.ImportFrom) -> bool:
        if isinstance(node.names, cst.ImportStar):
            return False
        module = "." * len(node.relative) + (dotted_name(node.module) or "" if node.module else "")
        for alias in node.names:
            name = dotted_name(alias.name) or ""
            qualname = f"{module}.{name}" if not module.endswith(".") else module + name
            bound = name
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                bound = alias.asname.name.value
            self._add_import(bound, qualname, alias, node)
            self._maybe_import_site(qualname, alias)
        return False

    def _add_import(
        self, bound: str, qualname: str, alias: cst.ImportAlias, statement: ImportNode
    ) -> None:
        binding = Binding(bound, self.scope, qualname, alias, statement, self.guard_depth > 0)
        self._bind(bound, binding)
        self.imports.append(binding)

    def _maybe_import_site(self, qualname: str, alias: cst.ImportAlias) -> None:
        if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
            if qualname in self.interest.names:
                self.local_names.add(alias.asname.name.value)
        if qualname in self.interest.names:
            self.stack.append(alias)
            self.name_sites.append(self._site(alias, qualname.split(".")))
            self.stack.pop()

    def _try(self, node: Union[cst.Try, cst.TryStar]) -> bool:
        guarded = any(catches_import_error(handler) for handler in node.handlers)
        self.guard_depth += guarded
        try:
            self._visit_all([node.body, *node.handlers, node.orelse, node.finalbody])
        finally:
            self.guard_depth -= guarded
        return False

    def _if(self, node: Union[cst.If, cst.IfExp]) -> bool:
        """Both branches of a test for a feature or a version are a compatibility shim too."""
        guarded = is_feature_test(node.test)
        self.guard_depth += guarded
        try:
            fields = [node.test, node.body, node.orelse]
            self._visit_all([f for f in fields if f is not None])
        finally:
            self.guard_depth -= guarded
        return False

    def _boolean(self, node: cst.BooleanOperation) -> bool:
        """``hasattr(jax, "pxla") and isinstance(x, jax.pxla.ShardedDeviceArray)``: what comes
        after a feature or version test in ``and``/``or`` runs only where the test allows it, a
        compatibility shim like the branches of such an ``if``."""
        guarded = is_feature_test(node.left)
        self.guard_depth += guarded
        try:
            self._visit_all([node.left, node.right])
        finally:
            self.guard_depth -= guarded
        return False

    # -- references ------------------------------------------------------------------------
    def _load(self, node: cst.Name) -> None:
        self.loads[node.value] = self.loads.get(node.value, 0) + 1
        self.load_scopes.setdefault(node.value, []).append(self.scope)

    def is_used(self, binding: Binding) -> bool:
        """True if some load of the binding's name can see this binding."""
        for scope in self.load_scopes.get(binding.name, ()):
            visible = scope.lookup(binding.name)
            if visible and any(b is binding for b in visible):
                return True
        return False

    def _name(self, node: cst.Name) -> bool:
        self._load(node)
        if node.value in self.local_names:
            self.name_sites.append(self._site(node, [node.value]))
        return False

    def _attribute(self, node: cst.Attribute) -> bool:
        attr = node.attr.value
        if attr in self.interest.last_components or attr in self.local_names:
            parts = dotted_parts(node)
            if parts is not None:
                self.name_sites.append(self._site(node, parts))
        if attr in self.interest.attributes:
            self.attribute_sites.append(self._site(node))
        self._walk(node.value)
        return False

    def _arg(self, node: cst.Arg) -> bool:
        if node.keyword is not None and node.keyword.value in self.interest.keywords:
            self.keyword_sites.append(self._site(node))
        self._walk(node.value)
        return False

    def _annotation(self, node: cst.Annotation) -> bool:
        self._annotation_depth += 1
        try:
            self._walk(node.annotation)
        finally:
            self._annotation_depth -= 1
        return False

    def _simple_string(self, node: cst.SimpleString) -> bool:
        if self._annotation_depth:
            self.annotation_strings.append(node)
        if self.interest.strings:
            try:
                value = node.evaluated_value
            except Exception:  # noqa: BLE001 (odd escapes: never a string we look for)
                return False
            if value in self.interest.strings:
                self.string_sites.append(self._site(node))
        return False


_HANDLERS: Dict[type, Callable[[Analysis, Any], bool]] = {
    cst.Module: Analysis._module,
    cst.FunctionDef: Analysis._function,
    cst.Lambda: Analysis._lambda,
    cst.ClassDef: Analysis._class,
    cst.ListComp: Analysis._comprehension,
    cst.SetComp: Analysis._comprehension,
    cst.GeneratorExp: Analysis._comprehension,
    cst.DictComp: Analysis._comprehension,
    cst.Assign: Analysis._assign,
    cst.AnnAssign: Analysis._ann_assign,
    cst.AugAssign: Analysis._aug_assign,
    cst.For: Analysis._for,
    cst.WithItem: Analysis._with_item,
    cst.ExceptHandler: Analysis._except,
    cst.NamedExpr: Analysis._named_expr,
    cst.Del: Analysis._del,
    cst.Global: Analysis._global,
    cst.Nonlocal: Analysis._nonlocal,
    cst.MatchAs: Analysis._match_as,
    cst.MatchStar: Analysis._match_star,
    cst.MatchMapping: Analysis._match_mapping,
    cst.MatchKeywordElement: Analysis._match_keyword,
    cst.Import: Analysis._import,
    cst.ImportFrom: Analysis._import_from,
    cst.Try: Analysis._try,
    cst.If: Analysis._if,
    cst.IfExp: Analysis._if,
    cst.BooleanOperation: Analysis._boolean,
    cst.Name: Analysis._name,
    cst.Attribute: Analysis._attribute,
    cst.Arg: Analysis._arg,
    cst.SimpleString: Analysis._simple_string,
    cst.Annotation: Analysis._annotation,
}
for _name in ("ExceptStarHandler", "TryStar"):
    if hasattr(cst, _name):
        _HANDLERS[getattr(cst, _name)] = (
            Analysis._except if _name == "ExceptStarHandler" else Analysis._try
        )


def analyze(module: cst.Module, interest: Interest) -> Analysis:
    analysis = Analysis(interest)
    analysis.module = module
    # Aliases imported at the top level are known before any reference is visited.
    for statement in module.body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, (cst.Import, cst.ImportFrom)):
                    _prescan_aliases(analysis, small)
    analysis._walk(module)
    return analysis


def _prescan_aliases(analysis: Analysis, node: ImportNode) -> None:
    if isinstance(node.names, cst.ImportStar) or (
        isinstance(node, cst.ImportFrom) and node.relative
    ):
        return
    prefix = ""
    if isinstance(node, cst.ImportFrom):
        prefix = (dotted_name(node.module) or "") + "." if node.module else ""
    for alias in node.names:
        if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
            qualname = prefix + (dotted_name(alias.name) or "")
            if qualname in analysis.interest.names:
                analysis.local_names.add(alias.asname.name.value)
