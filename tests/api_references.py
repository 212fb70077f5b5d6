"""The JAX references of a Python module, found statically (``ast``), for
:mod:`tests.api_check`.

In a module's source it finds every reference to a name under ``jax`` or ``jaxlib``:

* ``import jax.x.y`` / ``import jax.x as a`` (the module), ``from jax.x import y [as z]``
  (``jax.x.y``), ``from jax.x import *`` (``jax.x``); relative imports are not followed;
* a dotted chain ``a.b.c`` whose head is bound by such an import, resolved through the alias
  (``jnp.DeviceArray`` -> ``jax.numpy.DeviceArray``).  The chain stops at the first call or
  subscript (``jax.devices()[0].x`` is ``jax.devices``).  A bare use of a from-imported name
  is not a reference of its own: its import is.

A name is resolved with Python's scoping rules; a name that any assignment, parameter,
``def``/``class`` or non-JAX import also binds in the scope that resolves it (or that two
different JAX imports bind) is not followed.  Code inside ``try: ... except ImportError /
ModuleNotFoundError / AttributeError`` (the ``try`` body and its handlers) and inside an
``if`` (or ``x if c else y``) whose test calls ``hasattr`` or mentions a name containing
``version`` is a deliberate compatibility shim: its references are skipped.
"""

from __future__ import annotations

import ast
import dataclasses
import warnings
from typing import Dict, Iterable, List, Optional, Sequence, Set, Tuple

ROOTS = ("jax", "jaxlib")
_GUARD_EXCEPTIONS = frozenset({"ImportError", "ModuleNotFoundError", "AttributeError"})


# -- finding references ----------------------------------------------------------------------
@dataclasses.dataclass
class Reference:
    path: str
    line: int
    end_line: int
    qualname: str  # the whole reference as written, resolved
    kind: str  # "import" | "chain"
    status: str = ""  # filled by check_references
    where: str = ""  # the first missing prefix, or the deprecated one, or the module needed
    covered: bool = False  # a finding or fix of the report touches its lines
    # a chain: what its head is bound to, and the lines of the import that binds it
    head: str = ""
    import_lines: Tuple[int, int] = (0, 0)

    @property
    def private(self) -> bool:
        return is_private(self.qualname)


def is_private(qualname: str) -> bool:
    return any(
        part.startswith("_") and not (part.startswith("__") and part.endswith("__"))
        for part in qualname.split(".")
    )


def _is_jax(qualname: str) -> bool:
    return qualname.split(".", 1)[0] in ROOTS


class _Scope:
    __slots__ = ("kind", "parent", "imports", "others", "declared_global")

    def __init__(self, kind: str, parent: Optional["_Scope"]) -> None:
        self.kind = kind  # "module" | "function" | "class" | "comprehension"
        self.parent = parent
        # name -> {qualname: the lines of the first import statement binding it so}
        self.imports: Dict[str, Dict[str, Tuple[int, int]]] = {}
        self.others: Set[str] = set()
        self.declared_global: Set[str] = set()

    @property
    def module(self) -> "_Scope":
        scope = self
        while scope.parent is not None:
            scope = scope.parent
        return scope

    def target(self, name: str) -> "_Scope":
        return self.module if name in self.declared_global else self

    def resolve(self, name: str) -> Optional[Tuple[str, Tuple[int, int]]]:
        """The JAX qualified name ``name`` refers to here, when every binding says so, and
        the lines of the import statement that binds it."""
        scope: Optional[_Scope] = self.target(name)
        first = True
        while scope is not None:
            if (first or scope.kind != "class") and (name in scope.imports or name in scope.others):
                if name in scope.others:
                    return None
                qualnames = scope.imports[name]
                return next(iter(qualnames.items())) if len(qualnames) == 1 else None
            first = False
            scope = scope.parent
        return None


def _catches_guard(handler: ast.ExceptHandler) -> bool:
    kind = handler.type
    names = kind.elts if isinstance(kind, ast.Tuple) else [kind] if kind is not None else []
    for name in names:
        if isinstance(name, ast.Name) and name.id in _GUARD_EXCEPTIONS:
            return True
        if isinstance(name, ast.Attribute) and name.attr in _GUARD_EXCEPTIONS:
            return True
    return False


def _is_version_test(test: ast.AST) -> bool:
    for node in ast.walk(test):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "hasattr"
        ):
            return True
        if isinstance(node, ast.Name) and "version" in node.id.lower():
            return True
        if isinstance(node, ast.Attribute) and "version" in node.attr.lower():
            return True
    return False


def _dotted(node: ast.AST) -> Optional[List[str]]:
    parts: List[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    parts.reverse()
    return parts


class _Collector:
    """One walk: builds the scopes and bindings, and records candidate references (chains
    are resolved after the walk, when every binding of every scope is known)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.scope = _Scope("module", None)
        self.guard = 0
        self.references: List[Reference] = []
        self.chains: List[Tuple[ast.Attribute, List[str], _Scope]] = []

    # bindings
    def bind_other(self, name: str) -> None:
        self.scope.target(name).others.add(name)

    def bind_import(self, name: str, qualname: str, statement: ast.stmt) -> None:
        lines = (statement.lineno, statement.end_lineno or statement.lineno)
        self.scope.target(name).imports.setdefault(name, {}).setdefault(qualname, lines)

    def walk_all(self, nodes: Iterable[Optional[ast.AST]]) -> None:
        for node in nodes:
            if node is not None:
                self.walk(node)

    def in_scope(self, kind: str, body: Sequence[ast.AST], bind: Sequence[str] = ()) -> None:
        outer = self.scope
        self.scope = _Scope(kind, outer)
        for name in bind:
            self.bind_other(name)
        self.walk_all(body)
        self.scope = outer

    def guarded(self, nodes: Iterable[Optional[ast.AST]]) -> None:
        self.guard += 1
        self.walk_all(nodes)
        self.guard -= 1

    def walk(self, node: ast.AST) -> None:
        kind = type(node)
        if kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda):
            args = node.args  # type: ignore[attr-defined]
            self.walk_all(args.defaults)
            self.walk_all(args.kw_defaults)
            params = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
            params = [p for p in params if p is not None]
            self.walk_all(p.annotation for p in params)
            if kind is ast.Lambda:
                self.in_scope("function", [node.body], [p.arg for p in params])  # type: ignore[attr-defined]
                return
            self.walk_all(node.decorator_list)  # type: ignore[attr-defined]
            self.walk_all([node.returns])  # type: ignore[attr-defined]
            self.bind_other(node.name)  # type: ignore[attr-defined]
            self.in_scope("function", node.body, [p.arg for p in params])  # type: ignore[attr-defined]
            return
        if kind is ast.ClassDef:
            self.walk_all(node.decorator_list)  # type: ignore[attr-defined]
            self.walk_all(node.bases)  # type: ignore[attr-defined]
            self.walk_all(node.keywords)  # type: ignore[attr-defined]
            self.bind_other(node.name)  # type: ignore[attr-defined]
            self.in_scope("class", node.body)  # type: ignore[attr-defined]
            return
        if kind in (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp):
            generators = node.generators  # type: ignore[attr-defined]
            self.walk(generators[0].iter)  # evaluated in the enclosing scope
            outer = self.scope
            self.scope = _Scope("comprehension", outer)
            for index, generator in enumerate(generators):
                self.walk(generator.target)
                if index:
                    self.walk(generator.iter)
                self.walk_all(generator.ifs)
            if kind is ast.DictComp:
                self.walk_all([node.key, node.value])  # type: ignore[attr-defined]
            else:
                self.walk(node.elt)  # type: ignore[attr-defined]
            self.scope = outer
            return
        if kind in (ast.Global, ast.Nonlocal):
            if kind is ast.Global:
                self.scope.declared_global.update(node.names)  # type: ignore[attr-defined]
            return
        if kind is ast.Import:
            self.import_(node)  # type: ignore[arg-type]
            return
        if kind is ast.ImportFrom:
            self.import_from(node)  # type: ignore[arg-type]
            return
        if kind is ast.Try or kind.__name__ == "TryStar":
            if any(_catches_guard(h) for h in node.handlers):  # type: ignore[attr-defined]
                self.guarded([*node.body, *node.handlers])  # type: ignore[attr-defined]
            else:
                self.walk_all([*node.body, *node.handlers])  # type: ignore[attr-defined]
            self.walk_all([*node.orelse, *node.finalbody])  # type: ignore[attr-defined]
            return
        if kind is ast.ExceptHandler:
            self.walk_all([node.type])  # type: ignore[attr-defined]
            if node.name:  # type: ignore[attr-defined]
                self.bind_other(node.name)  # type: ignore[attr-defined]
            self.walk_all(node.body)  # type: ignore[attr-defined]
            return
        if (kind is ast.If or kind is ast.IfExp) and _is_version_test(node.test):  # type: ignore[attr-defined]
            self.guarded([node.test, *_as_list(node.body), *_as_list(node.orelse)])  # type: ignore[attr-defined]
            return
        if kind is ast.Name:
            if not isinstance(node.ctx, ast.Load):  # type: ignore[attr-defined]
                self.bind_other(node.id)  # type: ignore[attr-defined]
            return
        if kind is ast.Attribute:
            parts = _dotted(node)
            if parts is None:  # a call or subscript below: the chain starts further in
                self.walk(node.value)  # type: ignore[attr-defined]
                return
            if not isinstance(node.ctx, ast.Load):  # type: ignore[attr-defined]
                parts = parts[:-1]  # ``jax.config.x = 1`` reads jax.config
            if len(parts) > 1 and not self.guard:
                self.chains.append((node, parts, self.scope))  # type: ignore[arg-type]
            return
        if kind in (ast.MatchAs, ast.MatchStar):
            if node.name:  # type: ignore[attr-defined]
                self.bind_other(node.name)  # type: ignore[attr-defined]
        elif kind is ast.MatchMapping and node.rest:  # type: ignore[attr-defined]
            self.bind_other(node.rest)  # type: ignore[attr-defined]
        elif kind is ast.Constant:
            return
        for child in ast.iter_child_nodes(node):
            self.walk(child)

    def add(self, node: ast.AST, qualname: str, kind: str) -> Optional[Reference]:
        if self.guard or not _is_jax(qualname):
            return None
        line = node.lineno  # type: ignore[attr-defined]
        end = getattr(node, "end_lineno", None) or line
        reference = Reference(self.path, line, end, qualname, kind)
        self.references.append(reference)
        return reference

    def import_(self, node: ast.Import) -> None:
        for alias in node.names:
            if _is_jax(alias.name):
                self.add(node, alias.name, "import")
                if alias.asname:
                    self.bind_import(alias.asname, alias.name, node)
                else:
                    head = alias.name.split(".", 1)[0]
                    self.bind_import(head, head, node)
            else:
                self.bind_other(alias.asname or alias.name.split(".", 1)[0])

    def import_from(self, node: ast.ImportFrom) -> None:
        jax_module = not node.level and node.module is not None and _is_jax(node.module)
        for alias in node.names:
            if alias.name == "*":
                if jax_module:
                    self.add(node, node.module, "import")  # type: ignore[arg-type]
                continue
            bound = alias.asname or alias.name
            if jax_module:
                qualname = f"{node.module}.{alias.name}"
                self.add(node, qualname, "import")
                self.bind_import(bound, qualname, node)
            else:
                self.bind_other(bound)

    def resolve_chains(self) -> None:
        for node, parts, scope in self.chains:
            resolved = scope.resolve(parts[0])
            if resolved is not None:
                head, lines = resolved
                reference = self.add(node, ".".join([head, *parts[1:]]), "chain")
                if reference is not None:
                    reference.head, reference.import_lines = head, lines


def _as_list(value: object) -> List[ast.AST]:
    return list(value) if isinstance(value, list) else [value]  # type: ignore[list-item]


def find_references(source: str, path: str = "<string>") -> List[Reference]:
    """Every JAX reference of one module, in source order; raises SyntaxError."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tree = ast.parse(source, filename=path)
    collector = _Collector(path)
    collector.walk_all(tree.body)
    collector.resolve_chains()
    return sorted(collector.references, key=lambda r: (r.line, r.qualname))
