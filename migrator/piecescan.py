"""What each top-level statement of a module reads and binds at module level, from ``ast``.

The piecewise path of the engine (:mod:`migrator.piecewise`) gives LibCST only some of a big
module's top-level statements.  Name resolution stays exact only if no statement left out
shares a module-level name with one kept: LibCST's scope analysis would otherwise see a name
unbound, or an assignment without its other uses.  So every top-level statement is scanned
once for the names it reads from the module's scope and the names it binds there.

Both sets over-approximate, which only keeps more: a name read inside a function counts
unless that function (or an enclosing one) binds it; a read in a class body always counts;
``global``, ``nonlocal`` and ``:=`` names count as read and bound; every identifier-like
word of a string constant counts as read (LibCST resolves names in string annotations).
"""

from __future__ import annotations

import ast
import re
import unicodedata
from typing import Callable, Dict, Iterable, List, Set, Tuple

# Identifier-like words, Unicode included (Python's own identifiers).
WORD = re.compile(r"[^\W\d]\w*")

Chain = Tuple[Set[str], ...]  # the locals of the enclosing function-like scopes

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)
_SKIP_FIELDS = frozenset({"ctx", "op", "ops", "type_comment", "kind"})
_MATCH_NAMED = tuple(getattr(ast, k) for k in ("MatchAs", "MatchStar") if hasattr(ast, k))
_MATCH_MAPPING = getattr(ast, "MatchMapping", None)


class Unsure(Exception):
    """A construct the scan does not model (type parameters, ``type`` aliases): the caller
    parses the whole module."""


def words(text: str) -> Set[str]:
    """The identifier-like words of ``text``, also in NFKC form where not ASCII (Python
    normalises identifiers: the ``ast`` spells them that way)."""
    found = set(WORD.findall(text))
    if not text.isascii():
        found.update([unicodedata.normalize("NFKC", w) for w in found if not w.isascii()])
    return found


class Scan:
    """What one top-level statement reads from and binds in the module's scope."""

    __slots__ = ("reads", "binds", "imports", "imported", "defines")

    def __init__(self) -> None:
        self.reads: Set[str] = set()
        self.binds: Set[str] = set()
        self.imports = False  # an import statement anywhere inside
        self.imported: Set[str] = set()  # the names imports inside bind, in any scope
        self.defines = False  # a top-level def or class (where imports stop: migrator.imports)

    @classmethod
    def of(cls, statement: ast.stmt) -> "Scan":
        scan = cls()
        scan.defines = isinstance(statement, (*_FUNCTIONS, ast.ClassDef))
        scan.visit(statement, (), True)
        return scan

    # -- the walk -------------------------------------------------------------------------
    def visit_all(self, nodes: Iterable[object], chain: Chain, top: bool) -> None:
        for node in nodes:
            if isinstance(node, ast.AST):
                self.visit(node, chain, top)

    def visit(self, node: ast.AST, chain: Chain, top: bool) -> None:
        """``top``: ``node`` runs in the module's own scope (its bindings are module-level)."""
        kind = type(node)
        if kind is ast.Name:
            self._name(node.id, node.ctx, chain, top)  # type: ignore[attr-defined]
            return
        if kind is ast.Attribute:
            self.visit(node.value, chain, top)  # type: ignore[attr-defined]
            return
        if kind is ast.Constant:
            if type(node.value) is str:  # type: ignore[attr-defined]
                self.reads.update(words(node.value))  # type: ignore[attr-defined]
            return
        special = _SPECIAL.get(kind)
        if special is not None:
            if special(self, node, chain, top):
                return
        elif kind in _UNSURE:
            raise Unsure(kind.__name__)
        fields = _FIELDS.get(kind)
        if fields is None:
            fields = _FIELDS[kind] = tuple(f for f in kind._fields if f not in _SKIP_FIELDS)
        visit = self.visit
        for field in fields:
            value = getattr(node, field, None)
            if type(value) is list:
                for item in value:
                    if isinstance(item, ast.AST):
                        visit(item, chain, top)
            elif isinstance(value, ast.AST):
                visit(value, chain, top)

    # The kinds :meth:`visit` does not merely walk into: each returns True when it walked the
    # node's children itself.
    def _class(self, node: ast.AST, chain: Chain, top: bool) -> bool:
        if getattr(node, "type_params", None):
            raise Unsure("type parameters")
        if top:
            self.binds.add(node.name)  # type: ignore[attr-defined]
        self.visit_all(node.decorator_list, chain, top)  # type: ignore[attr-defined]
        self.visit_all(node.bases, chain, top)  # type: ignore[attr-defined]
        self.visit_all(node.keywords, chain, top)  # type: ignore[attr-defined]
        self.visit_all(node.body, chain, False)  # type: ignore[attr-defined]
        return True

    def _named_expr(self, node: ast.AST, chain: Chain, top: bool) -> bool:
        target = node.target.id  # type: ignore[attr-defined]
        self.reads.add(target)
        self.binds.add(target)
        self.visit(node.value, chain, top)  # type: ignore[attr-defined]
        return True

    def _declaration(self, node: ast.AST, chain: Chain, top: bool) -> bool:
        self.reads.update(node.names)  # type: ignore[attr-defined]
        self.binds.update(node.names)  # type: ignore[attr-defined]
        return True

    def _import(self, node: ast.AST, chain: Chain, top: bool) -> bool:
        self.imports = True
        for alias in node.names:  # type: ignore[attr-defined]
            bound = alias.asname or alias.name.split(".", 1)[0]
            self.imported.add(bound)
            if top:
                self.binds.add(bound)
        return True

    def _aug_assign(self, node: ast.AST, chain: Chain, top: bool) -> bool:
        if type(node.target) is ast.Name:  # type: ignore[attr-defined]
            self._name(node.target.id, ast.Load(), chain, top)  # type: ignore[attr-defined]
        return False

    def _handler(self, node: ast.AST, chain: Chain, top: bool) -> bool:
        if node.name and top:  # type: ignore[attr-defined]
            self.binds.add(node.name)  # type: ignore[attr-defined]
        return False

    def _match_named(self, node: ast.AST, chain: Chain, top: bool) -> bool:
        if node.name and top:  # type: ignore[attr-defined]
            self.binds.add(node.name)  # type: ignore[attr-defined]
        return False

    def _match_mapping(self, node: ast.AST, chain: Chain, top: bool) -> bool:
        if node.rest and top:  # type: ignore[attr-defined]
            self.binds.add(node.rest)  # type: ignore[attr-defined]
        return False

    def _name(self, ident: str, ctx: ast.expr_context, chain: Chain, top: bool) -> None:
        if type(ctx) is ast.Load:
            for local in chain:
                if ident in local:
                    return
            self.reads.add(ident)
        elif top:
            self.binds.add(ident)

    def _function(self, node: ast.AST, chain: Chain, top: bool) -> bool:
        if getattr(node, "type_params", None):
            raise Unsure("type parameters")
        args: ast.arguments = node.args  # type: ignore[attr-defined]
        self.visit_all(args.defaults, chain, top)
        self.visit_all(args.kw_defaults, chain, top)
        params = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
        params.update(a.arg for a in (args.vararg, args.kwarg) if a is not None)
        if type(node) is ast.Lambda:
            self.visit(node.body, (*chain, params), False)
            return True
        if top:
            self.binds.add(node.name)  # type: ignore[attr-defined]
        self.visit_all(node.decorator_list, chain, top)  # type: ignore[attr-defined]
        for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg):
            if arg is not None and arg.annotation is not None:
                self.visit(arg.annotation, chain, top)
        if node.returns is not None:  # type: ignore[attr-defined]
            self.visit(node.returns, chain, top)  # type: ignore[attr-defined]
        body: List[ast.stmt] = node.body  # type: ignore[attr-defined]
        self.visit_all(body, (*chain, params | local_names(body)), False)
        return True

    def _comprehension(self, node: ast.AST, chain: Chain, top: bool) -> bool:
        generators: List[ast.comprehension] = node.generators  # type: ignore[attr-defined]
        self.visit(generators[0].iter, chain, top)  # evaluated in the enclosing scope
        targets: Set[str] = set()
        for generator in generators:
            targets.update(n.id for n in ast.walk(generator.target) if type(n) is ast.Name)
        inner = (*chain, targets)
        for index, generator in enumerate(generators):
            if index:
                self.visit(generator.iter, inner, False)
            self.visit_all(generator.ifs, inner, False)
        for field in ("elt", "key", "value"):
            value = getattr(node, field, None)
            if value is not None:
                self.visit(value, inner, False)
        return True


_SPECIAL: Dict[type, Callable[[Scan, ast.AST, Chain, bool], bool]] = {
    **{kind: Scan._function for kind in (*_FUNCTIONS, ast.Lambda)},
    **{kind: Scan._comprehension for kind in _COMPREHENSIONS},
    ast.ClassDef: Scan._class,
    ast.NamedExpr: Scan._named_expr,
    ast.Global: Scan._declaration,
    ast.Nonlocal: Scan._declaration,
    ast.Import: Scan._import,
    ast.ImportFrom: Scan._import,
    ast.AugAssign: Scan._aug_assign,
    ast.ExceptHandler: Scan._handler,
    **{kind: Scan._match_named for kind in _MATCH_NAMED},
    **({_MATCH_MAPPING: Scan._match_mapping} if _MATCH_MAPPING is not None else {}),
}
# Type parameters and ``type`` aliases (Python 3.12): not modelled.
_UNSURE = frozenset(
    getattr(ast, name)
    for name in ("TypeAlias", "TypeVar", "ParamSpec", "TypeVarTuple")
    if hasattr(ast, name)
)
_FIELDS: Dict[type, Tuple[str, ...]] = {}  # each kind's fields that are walked


def local_names(body: List[ast.stmt]) -> Set[str]:
    """Names a function body certainly binds in its own scope (an under-approximation: a
    name missed here only counts as read from the module).  Nested functions, classes and
    comprehensions are not entered."""
    return _bound(body, False)


def bound_anywhere(statements: Iterable[ast.stmt]) -> Set[str]:
    """Every name ``statements`` bind in any scope (assignment and deletion targets, ``def``
    and ``class`` names, parameters, imports, ``except`` and ``match`` names, ``global`` and
    ``nonlocal`` declarations): where a rule asks whether a name is free anywhere in the
    module (a rename's new name, say)."""
    return _bound(statements, True)


def _bound(nodes: Iterable[ast.AST], nested: bool) -> Set[str]:
    """The names ``nodes`` bind: in every scope within them if ``nested``, else in their own
    (no nested function, class, lambda or comprehension entered; no parameter, ``global``
    or ``nonlocal`` name)."""
    found: Set[str] = set()
    stack: List[ast.AST] = list(nodes)
    pop, push = stack.pop, stack.append
    while stack:
        node = pop()
        kind = type(node)
        if kind is ast.Name:
            if type(node.ctx) is not ast.Load:  # type: ignore[attr-defined]
                found.add(node.id)  # type: ignore[attr-defined]
            continue
        if kind is ast.Constant:
            continue
        if kind in _FUNCTIONS or kind is ast.ClassDef:
            found.add(node.name)  # type: ignore[attr-defined]
            if not nested:
                continue
        elif kind is ast.Lambda or kind in _COMPREHENSIONS:
            if not nested:
                continue
        elif kind is ast.Import or kind is ast.ImportFrom:
            found.update(
                a.asname or a.name.split(".", 1)[0]
                for a in node.names  # type: ignore[attr-defined]
                if a.name != "*"
            )
            continue
        elif kind is ast.ExceptHandler and node.name:  # type: ignore[attr-defined]
            found.add(node.name)  # type: ignore[attr-defined]
        elif _MATCH_NAMED and kind in _MATCH_NAMED and node.name:  # type: ignore[attr-defined]
            found.add(node.name)  # type: ignore[attr-defined]
        elif kind is _MATCH_MAPPING and node.rest:  # type: ignore[attr-defined]
            found.add(node.rest)  # type: ignore[attr-defined]
        elif nested and kind is ast.arg:
            found.add(node.arg)  # type: ignore[attr-defined]
        elif nested and (kind is ast.Global or kind is ast.Nonlocal):
            found.update(node.names)  # type: ignore[attr-defined]
        fields = _FIELDS.get(kind)
        if fields is None:
            fields = _FIELDS[kind] = tuple(f for f in kind._fields if f not in _SKIP_FIELDS)
        for field in fields:
            value = getattr(node, field, None)
            if type(value) is list:
                for item in value:
                    if isinstance(item, ast.AST):
                        push(item)
            elif isinstance(value, ast.AST):
                push(value)
    return found
