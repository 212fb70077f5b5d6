"""Gate 2 of the engine: what CPython's ``ast`` says a module contains.

LibCST's parser costs about five times CPython's, and most files that pass the textual
prefilter turn out to need nothing.  :func:`ast_facts` parses with ``ast`` and collects, in one
walk, an *over-approximation* of what each rule could look at: names resolved through the
module's imports (all scopes merged), attribute names, call keywords, short strings, imports,
calls and ``with`` items.  Rules refine the decision with :meth:`migrator.rule.Rule.ast_gate`;
a gate may only answer False when the rule certainly does nothing in the file
(``tests/test_gates.py`` checks every gate against every fixture with the gates bypassed).
"""

from __future__ import annotations

import ast
import dataclasses
import re
from typing import Any, Callable, Dict, Iterator, List, Optional, Set, Tuple

from jaxmigrate.migrator import astparse
from jaxmigrate.migrator.binding import Binding

# Only these fields of a node can hold the nodes the facts are made of (not ``ctx``, not
# operators): one tuple per node type, computed on first sight.
_CHILD_FIELDS: Dict[type, Tuple[str, ...]] = {}
_SKIP_FIELDS = frozenset({"ctx", "op", "ops", "type_comment", "kind"})


def child_fields(kind: type) -> Tuple[str, ...]:
    """The fields of node type ``kind`` that may hold nodes (none for what is not a node)."""
    fields = _CHILD_FIELDS.get(kind)
    if fields is None:
        fields = tuple(f for f in getattr(kind, "_fields", ()) if f not in _SKIP_FIELDS)
        _CHILD_FIELDS[kind] = fields
    return fields


def iter_nodes(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node under ``tree`` (itself included) except expression contexts and operators,
    in no particular order: about three times cheaper than ``ast.walk``."""
    stack = [tree]
    pop, push = stack.pop, stack.append
    while stack:
        node = pop()
        yield node
        push_children(node, push)


_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")


def iter_statements(tree: ast.AST) -> Iterator[ast.AST]:
    """Every statement under ``tree`` (a module, or a statement: itself included), in no
    particular order, without looking into expressions (only a block holds a statement)."""
    stack = [tree]
    pop, extend = stack.pop, stack.extend
    while stack:
        node = pop()
        yield node
        for field in _BLOCKS:
            block = getattr(node, field, None)
            if type(block) is list:
                for item in block:
                    if type(item) in (ast.ExceptHandler, ast.match_case):
                        extend(item.body)
                    else:
                        extend((item,))


def push_children(node: ast.AST, push: Callable[[ast.AST], None]) -> None:
    """Hand each child node of ``node`` (in the fields :func:`child_fields` keeps) to ``push``."""
    kind = type(node)
    for field in _CHILD_FIELDS.get(kind) or child_fields(kind):
        value = getattr(node, field, None)
        if type(value) is list:
            for item in value:
                if isinstance(item, ast.AST):
                    push(item)
        elif isinstance(value, ast.AST):
            push(value)


@dataclasses.dataclass
class Facts:
    names: Set[str]  # qualified names reachable through the imports (and the imports themselves)
    attributes: Set[str]  # every ``<expr>.attr`` name
    keywords: Set[str]  # every call keyword name
    strings: Set[str]  # every string constant shorter than 100 characters
    imports: Set[str]  # every imported module or ``module.name`` (absolute imports)
    # every identifier-like word in a string (or bytes) constant inside an annotation
    annotation_words: Set[str] = dataclasses.field(default_factory=set)
    aliases: Dict[str, Set[str]] = dataclasses.field(
        default_factory=dict
    )  # bound name -> qualnames
    calls: List[ast.Call] = dataclasses.field(default_factory=list)
    with_items: List[ast.withitem] = dataclasses.field(default_factory=list)
    attribute_nodes: Dict[str, List[ast.Attribute]] = dataclasses.field(default_factory=dict)
    ifs: List[ast.If] = dataclasses.field(default_factory=list)  # every ``if`` statement
    # every ``for`` loop and comprehension ``for`` (each has a ``target`` and an ``iter``)
    loops: List[ast.AST] = dataclasses.field(default_factory=list)
    # every node that binds a name a value, a definition or a parameter: ``=``, ``x: T``,
    # ``:=``, ``def``, ``class``, and each parameter (read without the scopes' walk)
    binders: List[ast.AST] = dataclasses.field(default_factory=list)
    # every name an import statement binds, in any scope, relative imports and ``*`` included
    import_bound: Set[str] = dataclasses.field(default_factory=set)
    heads: Set[str] = dataclasses.field(default_factory=set)  # every ``Name``'s identifier
    # what a gate derives from these facts, once per file (keyed by the gate's own name)
    derived: Dict[str, Any] = dataclasses.field(default_factory=dict)
    # what the engine derives from the tree alone (its nesting, the piecewise scans), kept
    # with the facts when they are handed to the next run on the text (migrator.handoff)
    of_tree: Dict[str, Any] = dataclasses.field(default_factory=dict)
    tree: Optional[ast.Module] = None
    _scopes: Optional["_Scopes"] = None

    def qualnames(self, expr: ast.AST) -> Set[str]:
        """Every qualified name a ``Name``/``Attribute`` chain may resolve to (empty if none)."""
        parts = dotted(expr)
        if not parts:
            return set()
        return {".".join([head, *parts[1:]]) for head in self.aliases.get(parts[0], ())}

    def calls_of(self, qualnames: Set[str]) -> Iterator[ast.Call]:
        """Calls whose callee may resolve to one of ``qualnames``."""
        for call in self.calls:
            if self.qualnames(call.func) & qualnames:
                yield call

    def release(self) -> None:
        """Break the cycles of the scopes (a scope holds its bindings, each binding its scope)
        once the engine is done with them: CPython's tree then goes with the last reference to
        it, not at the next collection of the cyclic garbage collector.  Scopes asked for
        again are built again."""
        scopes, self._scopes = self._scopes, None
        if scopes is not None:
            scopes.module.bindings = {}
            for bindings in scopes.merged.values():
                for binding in bindings:
                    if binding.scope is not None:
                        binding.scope.bindings = {}

    def scopes(self) -> Optional["_Scopes"]:
        """Every scope of the module and the scope of each attribute node, built on first use;
        None when the module is too deeply nested to walk (a gate then answers True)."""
        if self._scopes is None:
            scopes = _Scopes()
            try:
                scopes.visit_all(self.tree.body if self.tree is not None else (), scopes.module)
            except RecursionError:
                scopes.complete = False
            self._scopes = scopes
        return self._scopes if self._scopes.complete else None

    def scope_of(self, node: ast.AST) -> Optional["AstScope"]:
        """The scope an attribute or a call is read in (None for other nodes)."""
        scopes = self.scopes()
        return scopes.scope_of.get(id(node)) if scopes is not None else None

    def inner_scope(self, function: ast.AST) -> Optional["AstScope"]:
        """The scope of a ``def``'s body (None without scopes)."""
        scopes = self.scopes()
        return scopes.inner.get(id(function)) if scopes is not None else None

    def bindings(self, ident: str, scope: Optional["AstScope"] = None) -> List["Binding"]:
        """How ``ident`` is bound as seen from ``scope`` (every scope merged when None).
        Call :meth:`scopes` first: without them there is nothing to answer with."""
        scopes = self.scopes()
        assert scopes is not None, "the module could not be walked: ask scopes() first"
        found = scope.lookup(ident) if scope is not None else None
        return scopes.merged.get(ident, []) if found is None else found


def dotted(expr: ast.AST) -> Optional[List[str]]:
    """``a.b.c`` -> ``["a", "b", "c"]``; None unless a chain of attributes on a name."""
    parts = []
    while type(expr) is ast.Attribute:
        parts.append(expr.attr)
        expr = expr.value
    if type(expr) is not ast.Name:
        return None
    parts.append(expr.id)
    parts.reverse()
    return parts


# The nodes that bind a name (Facts.binders), with the field of the annotation they carry
# (LibCST's ``Annotation`` nodes), if any.
_BINDERS = {
    ast.arg: "annotation",
    ast.FunctionDef: "returns",
    ast.AsyncFunctionDef: "returns",
    ast.AnnAssign: "annotation",
    ast.Assign: "",
    ast.NamedExpr: "",
    ast.ClassDef: "",
}
_LOOPS = frozenset({ast.For, ast.AsyncFor, ast.comprehension})
_WORD = re.compile(r"[^\W\d]\w*")


def _annotation_words(annotation: ast.AST, words: Set[str]) -> None:
    """Adds the words of every string inside ``annotation`` (rules report legacy class names
    in string annotations by word, whether or not the file imports them)."""
    for node in iter_nodes(annotation):
        if type(node) is ast.Constant:
            value = node.value
            if type(value) is bytes:
                value = value.decode("latin-1")
            if type(value) is str:
                words.update(_WORD.findall(value))


def imports_jax(facts: Facts) -> bool:
    """Does the module import anything from ``jax`` or ``jaxlib`` (at any depth)?"""
    return any(name == "jax" or name.startswith(("jax.", "jaxlib")) for name in facts.imports)


def ast_facts(text: str) -> Optional[Facts]:
    """Over-approximate what the rules could see, with ``ast``; None if it cannot parse."""
    try:
        tree = astparse.parse(text)  # (a big text in pieces: see migrator.astparse)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    aliases: Dict[str, Set[str]] = {}
    facts = Facts(set(), set(), set(), set(), set(), aliases=aliases, tree=tree)
    attributes, keywords, strings, imports = (
        facts.attributes,
        facts.keywords,
        facts.strings,
        facts.imports,
    )
    attribute_nodes = facts.attribute_nodes
    calls, with_items, ifs, loops = facts.calls, facts.with_items, facts.ifs, facts.loops
    binders, import_bound = facts.binders, facts.import_bound
    heads = facts.heads
    chains: Set[Tuple[str, ...]] = set()
    annotations: List[ast.AST] = []  # annotations of arguments, returns and ``x: T`` statements
    Attribute, Name, keyword, Constant, Call = (
        ast.Attribute,
        ast.Name,
        ast.keyword,
        ast.Constant,
        ast.Call,
    )
    Import, ImportFrom, With, AsyncWith = ast.Import, ast.ImportFrom, ast.With, ast.AsyncWith
    If = ast.If
    # iter_nodes' loop with its own stack: this walk must skip what is below an import or an
    # attribute chain, which a generator cannot be told.
    # A list field is pushed whole: the names of ``global`` and the missing keys and defaults
    # (None) of dicts and parameters it may hold are popped as nodes of no fields, which every
    # test below passes by (cheaper than testing each item of every list).
    stack: List[ast.AST] = [tree]
    pop, push, extend, fields_of = stack.pop, stack.append, stack.extend, _CHILD_FIELDS.get
    AST = ast.AST
    while stack:
        node = pop()
        kind = type(node)
        if kind is Attribute:  # the whole chain ``a.b.c`` at once, from its outermost node
            parts = []
            current = node
            while type(current) is Attribute:
                attr = current.attr
                attributes.add(attr)
                attribute_nodes.setdefault(attr, []).append(current)
                parts.append(attr)
                current = current.value
            if type(current) is Name:
                heads.add(current.id)
                parts.append(current.id)
                parts.reverse()
                chains.add(tuple(parts))
            else:
                push(current)
            continue
        elif kind is Name:
            heads.add(node.id)  # type: ignore[attr-defined]
            continue
        elif kind is Call:
            calls.append(node)  # type: ignore[arg-type]
        elif kind is keyword:
            if node.arg:  # type: ignore[attr-defined]
                keywords.add(node.arg)  # type: ignore[attr-defined]
        elif kind is Constant:
            value = node.value  # type: ignore[attr-defined]
            if type(value) is str and len(value) < 100:
                strings.add(value)
            continue
        elif kind is With or kind is AsyncWith:
            with_items.extend(node.items)  # type: ignore[attr-defined]
        elif kind is If:
            ifs.append(node)  # type: ignore[arg-type]
        elif kind in _LOOPS:
            loops.append(node)
        elif kind in _BINDERS:
            binders.append(node)
            field = _BINDERS[kind]
            found = getattr(node, field) if field else None
            if found is not None:
                annotations.append(found)
        elif kind is Import:
            for alias in node.names:  # type: ignore[attr-defined]
                bound = alias.asname or alias.name.split(".", 1)[0]
                import_bound.add(bound)
                aliases.setdefault(bound, set()).add(alias.name if alias.asname else bound)
                imports.add(alias.name)
                facts.names.add(alias.name)
            continue
        elif kind is ImportFrom:
            import_bound.update(a.asname or a.name for a in node.names)  # type: ignore[attr-defined]
            if node.module and not node.level:  # type: ignore[attr-defined]
                for alias in node.names:  # type: ignore[attr-defined]
                    qualname = f"{node.module}.{alias.name}"  # type: ignore[attr-defined]
                    aliases.setdefault(alias.asname or alias.name, set()).add(qualname)
                    imports.add(qualname)
                    facts.names.add(qualname)
            continue
        fields = fields_of(kind)
        for field in child_fields(kind) if fields is None else fields:
            value = getattr(node, field, None)
            if type(value) is list:
                extend(value)
            elif isinstance(value, AST):
                push(value)
    for annotation in annotations:
        _annotation_words(annotation, facts.annotation_words)
    names = facts.names
    for head in heads:
        names.update(aliases.get(head, ()))
    for chain in chains:
        for qualname in aliases.get(chain[0], ()):
            for end in range(2, len(chain) + 1):
                names.add(".".join((qualname, *chain[1:end])))
    return facts


# -- scopes and bindings, for gates that follow a name to its values -----------------------------
class AstScope:
    """One function, class, comprehension or module body, with the bindings made in it."""

    __slots__ = ("parent", "kind", "bindings", "declared", "node")

    def __init__(
        self, parent: Optional["AstScope"], kind: str, node: Optional[ast.AST] = None
    ) -> None:
        self.parent = parent
        self.kind = kind  # "module" | "function" | "class" | "comprehension"
        self.node = node  # the ``def`` or ``lambda`` of a function scope
        self.bindings: Dict[str, List[Binding]] = {}
        self.declared: Set[str] = set()  # global / nonlocal names

    def lookup(self, ident: str) -> Optional[List["Binding"]]:
        """The bindings ``ident`` resolves to from here (Python's rules: class bodies are not
        seen from nested functions); None for a ``global``/``nonlocal`` name (ask every scope)."""
        scope: Optional[AstScope] = self
        while scope is not None:
            if ident in scope.declared:
                return None
            if (scope is self or scope.kind != "class") and ident in scope.bindings:
                return scope.bindings[ident]
            scope = scope.parent
        return []


class _Scopes:
    """Builds every scope of a module, and records the scope of every attribute node."""

    def __init__(self) -> None:
        self.module = AstScope(None, "module")
        self.complete = True
        self.merged: Dict[str, List[Binding]] = {}
        self.scope_of: Dict[int, AstScope] = {}  # an attribute's or a call's scope
        self.inner: Dict[int, AstScope] = {}  # a ``def``'s own scope

    def bind(self, scope: AstScope, ident: str, binding: Binding) -> None:
        scope.bindings.setdefault(ident, []).append(binding)
        self.merged.setdefault(ident, []).append(binding)

    def other(self, scope: AstScope, target: ast.AST, iterated: Optional[ast.AST] = None) -> None:
        """Bindings of every name in ``target``; ``iterated``: what a ``for`` whose target is
        one name walks (kept as that binding's ``value``)."""
        if iterated is not None and type(target) is ast.Name:
            self.bind(scope, target.id, Binding(kind="other", value=iterated, scope=scope))
            return
        for node in iter_nodes(target):
            if type(node) is ast.Name:
                self.bind(scope, node.id, Binding(kind="other", scope=scope))

    def visit_all(self, nodes: object, scope: AstScope) -> None:
        for node in nodes:  # type: ignore[attr-defined]
            if node is not None:
                self.visit(node, scope)

    def visit(self, node: ast.AST, scope: AstScope) -> None:
        kind = type(node)
        if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef or kind is ast.Lambda:
            args = node.args  # type: ignore[attr-defined]
            self.visit_all(args.defaults, scope)
            self.visit_all(args.kw_defaults, scope)
            inner = self.inner[id(node)] = AstScope(scope, "function", node)
            for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs):
                self.bind(
                    inner, arg.arg, Binding(kind="param", annotation=arg.annotation, scope=inner)
                )
                if arg.annotation is not None:
                    self.visit(arg.annotation, scope)
            for arg in (args.vararg, args.kwarg):
                if arg is not None:
                    self.bind(inner, arg.arg, Binding(kind="other", scope=inner))
            if kind is ast.Lambda:
                self.visit(node.body, inner)  # type: ignore[attr-defined]
                return
            self.visit_all(node.decorator_list, scope)  # type: ignore[attr-defined]
            if node.returns is not None:  # type: ignore[attr-defined]
                self.visit(node.returns, scope)  # type: ignore[attr-defined]
            self.bind(scope, node.name, Binding(kind="def", value=node, scope=scope))  # type: ignore[attr-defined]
            self.visit_all(node.body, inner)  # type: ignore[attr-defined]
            return
        if kind is ast.ClassDef:
            self.visit_all(node.decorator_list, scope)  # type: ignore[attr-defined]
            self.visit_all(node.bases, scope)  # type: ignore[attr-defined]
            self.visit_all(node.keywords, scope)  # type: ignore[attr-defined]
            self.bind(scope, node.name, Binding(kind="def", value=node, scope=scope))  # type: ignore[attr-defined]
            self.visit_all(node.body, AstScope(scope, "class"))  # type: ignore[attr-defined]
            return
        if kind in _COMPREHENSIONS:
            inner = AstScope(scope, "comprehension")
            for generator in node.generators:  # type: ignore[attr-defined]
                self.other(inner, generator.target, generator.iter)
            for field in child_fields(kind):
                value = getattr(node, field)
                if type(value) is list:
                    self.visit_all(value, inner)
                else:
                    self.visit(value, inner)
            return
        if kind is ast.Attribute or kind is ast.Call:
            self.scope_of[id(node)] = scope
        elif kind is ast.Assign:
            for target in node.targets:  # type: ignore[attr-defined]
                if type(target) is ast.Name:
                    value = node.value  # type: ignore[attr-defined]
                    self.bind(scope, target.id, Binding(kind="value", value=value, scope=scope))
                else:
                    self.other(scope, target)
        elif kind is ast.AnnAssign:
            target = node.target  # type: ignore[attr-defined]
            if type(target) is ast.Name:
                value, annotation = node.value, node.annotation  # type: ignore[attr-defined]
                binding = Binding(kind="value", value=value, annotation=annotation, scope=scope)
                self.bind(scope, target.id, binding)
            else:
                self.other(scope, target)
        elif kind is ast.NamedExpr:
            home = scope
            while home.kind == "comprehension" and home.parent is not None:
                home = home.parent  # PEP 572: binds in the enclosing function
            self.bind(home, node.target.id, Binding(kind="value", value=node.value, scope=scope))  # type: ignore[attr-defined]
        elif kind is ast.AugAssign:
            self.other(scope, node.target)  # type: ignore[attr-defined]
        elif kind in _LOOP_STATEMENTS:
            self.other(scope, node.target, node.iter)  # type: ignore[attr-defined]
        elif kind is ast.withitem and node.optional_vars is not None:  # type: ignore[attr-defined]
            self.other(scope, node.optional_vars)  # type: ignore[attr-defined]
        elif kind is ast.ExceptHandler and node.name:  # type: ignore[attr-defined]
            self.bind(scope, node.name, Binding(kind="other", scope=scope))  # type: ignore[attr-defined]
        elif kind is ast.Import or kind is ast.ImportFrom:
            module = node.module if kind is ast.ImportFrom and not node.level else None  # type: ignore[attr-defined]
            for alias in node.names:  # type: ignore[attr-defined]
                bound = alias.asname or alias.name.split(".", 1)[0]
                if bound == "*":
                    continue
                if kind is ast.Import:  # what the name is bound to (None: a relative import)
                    qualname: Optional[str] = alias.name if alias.asname else bound
                else:
                    qualname = f"{module}.{alias.name}" if module else None
                self.bind(scope, bound, Binding(kind="other", scope=scope, qualname=qualname))
            return
        elif kind is ast.Global or kind is ast.Nonlocal:
            scope.declared.update(node.names)  # type: ignore[attr-defined]
            return
        for field in child_fields(kind):
            value = getattr(node, field, None)
            if type(value) is list:
                for item in value:
                    if isinstance(item, ast.AST):
                        self.visit(item, scope)
            elif isinstance(value, ast.AST):
                self.visit(value, scope)


_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)
_LOOP_STATEMENTS = (ast.For, ast.AsyncFor)
