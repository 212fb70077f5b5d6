"""The analysis visitor, :class:`Analysis`: one traversal of a LibCST module that finds its
scopes, import bindings and the sites rules asked for.

LibCST's own ``QualifiedNameProvider`` costs about five times the parse itself (measured on
300 files of the installed ``jax`` package: 132 s against a 27 s parse), so jaxmigrate keeps
an import table of its own.  It follows Python's scoping rules (function, class, lambda and
comprehension scopes, ``global``/``nonlocal``), and treats a name as referring to an import
only when *every* binding of that name in the resolved scope is an import of the same thing:
a local class or variable named like a legacy API, or a ``try/except ImportError`` pair of
imports, makes the name unresolvable, so it is never rewritten.

The scoping rules themselves (scopes, bindings, loads) are followed by the base class,
:class:`migrator.scopewalk.ScopeWalker`; this module adds imports, compatibility guards and
the sites.  The data it builds (scopes, sites, what the rules are interested in) is defined in
:mod:`migrator.scope`.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence, Union

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.migrator.binding import Binding
from jaxmigrate.migrator.scope import (
    ImportNode,
    Interest,
    Site,
    dotted_name,
    dotted_parts,
    guards_imports,
    is_feature_test,
)
from jaxmigrate.migrator.scopewalk import ScopeWalker


class Analysis(ScopeWalker):
    """Walks a module once; afterwards holds scopes, import bindings, loads and sites."""

    def __init__(self, interest: Interest) -> None:
        super().__init__()
        self.interest = interest
        # Local names that may refer to an interesting name (``from m import pjit as pj``).
        self.local_names = set(interest.last_components)
        self.guard_depth = 0
        self.imports: List[Binding] = []
        self.name_sites: List[Site] = []  # Name/Attribute references, ImportAliases
        self.attribute_sites: List[Site] = []
        self.keyword_sites: List[Site] = []
        self.string_sites: List[Site] = []
        self.module: Optional[cst.Module] = None
        self.annotation_strings: List[cst.SimpleString] = []  # strings inside annotations
        self._annotation_depth = 0

    def _site(self, node: cst.CSTNode, parts: Optional[Sequence[str]] = None) -> Site:
        # The stack ends with the node itself; ancestors stop at its parent.
        return Site(node, self.scope, tuple(self.stack[:-1]), self.guard_depth > 0, parts)

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
        guarded = guards_imports(node)
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
            value: Union[str, bytes, None] = _verbatim_value(node.value)
            if value is None:
                try:
                    value = node.evaluated_value
                except Exception:  # noqa: BLE001 (odd escapes: never a string we look for)
                    return False
            if value in self.interest.strings:
                self.string_sites.append(self._site(node))
        return False


def _verbatim_value(literal: str) -> Optional[str]:
    """The value of a string literal that spells it character for character (no prefix but
    ``r`` or ``u``, no backslash, no carriage return), without ``ast.literal_eval``'s parse;
    None for any other literal."""
    start = literal.find(literal[-1])  # the opening quote: the closing one's character
    if start > 1 or (start == 1 and literal[0] not in "rRuU"):
        return None
    quotes = 3 if literal.startswith(literal[-1] * 3, start) and len(literal) - start >= 6 else 1
    value = literal[start + quotes : len(literal) - quotes]
    if "\\" in value or "\r" in value:
        return None
    return value


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
Analysis.HANDLERS = _HANDLERS


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
