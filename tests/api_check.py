"""Which JAX names does code still use that the installed JAX no longer has, and did jaxmigrate
say anything about them?  Test-only measurement for "Nothing removed goes silent".

For every ``.py`` file under the given directories this finds, statically (``ast``), every
reference to a name under ``jax`` or ``jaxlib``:

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

Each qualified name is checked on the *installed* JAX: the longest importable module prefix
is imported (``importlib``), the rest is reached with ``getattr``, warnings recorded.  A
reference is

* **missing** when that fails (ImportError/AttributeError); a chain reports only its first
  missing prefix (``jax.lib.xla_extension.Device`` -> ``jax.lib.xla_extension``);
* **deprecated** when it works but emits a ``DeprecationWarning`` (on the ``getattr``, or on
  the module's first import: a module that warns at import time is seen as deprecated only
  if nothing imported it before this checker asked for it);
* **unavailable** when a module needs a third-party package that is not installed
  (``jax.experimental.jax2tf`` without TensorFlow): not counted as missing;
* **private** when a component starts with ``_`` (``jax._src.x``; dunders such as
  ``__version__`` are public): checked the same way but counted apart from the public ones.

With ``--findings REPORT.json`` (from ``jaxmigrate DIR --format json [--check]``), a
reference is *flagged* when a finding or a fix of that report touches its lines (its own
lines; an import's whole statement) or, for a chain, the lines of the import that binds its
head when the chain fails inside that import (``serialization.f`` after ``from
jax.experimental.gda_serialization import serialization``) or the import binds a private
name (``core.f`` after ``from jax._src import core``).  A missing public reference that is
not flagged is **silent**.  Without a report nothing is flagged.  Files are matched by
resolved path, so give jaxmigrate and this checker the same directory (absolute paths are
safest).

Usage::

    python -m tests.api_check DIR [DIR ...] [--findings REPORT.json] [--list] [--top 40]
                              [--list-private] [--json OUT.json]

The summary has one row per package directory (the first path component below each DIR)
and a total.  Columns: files, lines, refs (every reference), then the public references by
status (ok, deprec, missing, silent = missing and not flagged, unavail), then the private
ones: private, priv-miss (missing), priv-flag / priv-unflag (flagged or not, any status).
``--list`` prints every silent reference as ``path:line: qualname`` (the first missing
prefix), and a top-N of the most frequent silent names follows the table.  The corpus this
was written for is built by ``bench/legacy_corpus.py`` (its docstring has the whole
measurement).  Importing JAX here is fine: this is a test helper; the tool itself never
imports JAX.
"""

from __future__ import annotations

import argparse
import ast
import collections
import dataclasses
import importlib
import json
import os
import sys
import warnings
from pathlib import Path
from typing import Dict, Iterable, Iterator, List, Optional, Sequence, Set, Tuple

ROOTS = ("jax", "jaxlib")
_GUARD_EXCEPTIONS = frozenset({"ImportError", "ModuleNotFoundError", "AttributeError"})

OK, DEPRECATED, MISSING, UNAVAILABLE = "ok", "deprecated", "missing", "unavailable"


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


# -- checking names on the installed JAX ------------------------------------------------------
class InstalledApi:
    """Answers, with a cache, whether a qualified name exists on the installed JAX."""

    def __init__(self) -> None:
        os.environ.setdefault("JAX_PLATFORMS", "cpu")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for root in ROOTS:
                try:
                    importlib.import_module(root)
                except ImportError:
                    pass
        # module name -> (module or None, deprecation message of its first import or "",
        #                  the third-party module it needs or "")
        self._modules: Dict[str, Tuple[object, str, str]] = {}
        self._answers: Dict[str, Tuple[str, str]] = {}

    def _import(self, name: str) -> Tuple[object, str, str]:
        cached = self._modules.get(name)
        if cached is not None:
            return cached
        fresh = name not in sys.modules
        module, message, needs = None, "", ""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                module = importlib.import_module(name)
            except ModuleNotFoundError as error:
                # Not the module asked for (or a parent of it) but one it imports, outside
                # jax/jaxlib: a third-party package this environment lacks.
                missing = error.name or ""
                if (
                    missing
                    and not (name == missing or name.startswith(missing + "."))
                    and missing.split(".", 1)[0] not in ROOTS
                ):
                    needs = missing
            except ImportError:
                pass
            except Exception as error:  # noqa: BLE001 (a module that fails to initialise)
                needs = f"{type(error).__name__} on import"
        if fresh and module is not None:
            for warning in caught:
                if issubclass(warning.category, DeprecationWarning):
                    message = str(warning.message)
                    break
        self._modules[name] = (module, message, needs)
        return self._modules[name]

    def check(self, qualname: str) -> Tuple[str, str]:
        """(status, where): where is the first missing prefix, the first deprecated one, or
        the package a module needs."""
        answer = self._answers.get(qualname)
        if answer is None:
            answer = self._answers[qualname] = self._check(qualname)
        return answer

    def _check(self, qualname: str) -> Tuple[str, str]:
        parts = qualname.split(".")
        obj: object = None
        deprecated = ""
        start = 0
        for end in range(len(parts), 0, -1):
            module, message, needs = self._import(".".join(parts[:end]))
            if needs:
                return UNAVAILABLE, needs
            if module is not None:
                obj, start = module, end
                if message:
                    deprecated = ".".join(parts[:end])
                break
        if obj is None:
            return MISSING, parts[0]
        for index in range(start, len(parts)):
            prefix = ".".join(parts[: index + 1])
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    obj = getattr(obj, parts[index])
                except AttributeError:
                    return MISSING, prefix
                except Exception:  # noqa: BLE001 (a property that fails on the class)
                    return MISSING, prefix
            if not deprecated and any(issubclass(w.category, DeprecationWarning) for w in caught):
                deprecated = prefix
        return (DEPRECATED, deprecated) if deprecated else (OK, qualname)


def check_references(references: Iterable[Reference], api: Optional[InstalledApi] = None) -> None:
    api = api or InstalledApi()
    for reference in references:
        reference.status, reference.where = api.check(reference.qualname)


# -- the findings report ----------------------------------------------------------------------
def load_findings(report: Path) -> Dict[str, List[Tuple[int, int]]]:
    """Resolved path -> the line ranges of every finding and fix the JSON report has."""
    data = json.loads(report.read_text())
    ranges: Dict[str, List[Tuple[int, int]]] = {}
    for entry in data.get("files", []):
        path = str(Path(entry["path"]).resolve())
        spans = ranges.setdefault(path, [])
        for item in [*(entry.get("findings") or []), *(entry.get("fixes") or [])]:
            if item.get("where"):  # a notebook cell: its lines are not the file's
                continue
            line = item.get("line")
            if isinstance(line, int):
                spans.append((line, item.get("end_line") or line))
    return ranges


def mark_covered(references: Iterable[Reference], ranges: Dict[str, List[Tuple[int, int]]]) -> None:
    """A reference is covered when a finding or fix touches its lines, or, for a chain that
    fails inside the import binding its head (``serialization.f`` after ``from
    jax.experimental.gda_serialization import serialization``) or whose head is bound to a
    private module (``core.Primitive`` after ``from jax._src import core``), that import's
    lines."""
    for reference in references:
        spans = ranges.get(str(Path(reference.path).resolve()), ())
        covered = _touches(spans, reference.line, reference.end_line)
        if not covered and reference.head:
            head, where = reference.head, reference.where
            missing_import = reference.status == MISSING and (
                head == where or head.startswith(where + ".")
            )
            if missing_import or is_private(head):
                covered = _touches(spans, *reference.import_lines)
        reference.covered = covered


def _touches(spans: Iterable[Tuple[int, int]], line: int, end_line: int) -> bool:
    return any(start <= end_line and line <= end for start, end in spans)


# -- scanning directories and reporting -------------------------------------------------------
@dataclasses.dataclass
class Tally:
    files: int = 0
    lines: int = 0
    unparsable: int = 0
    refs: int = 0
    ok: int = 0
    deprecated: int = 0
    missing: int = 0
    silent: int = 0
    unavailable: int = 0
    private: int = 0
    private_missing: int = 0
    private_flagged: int = 0
    private_unflagged: int = 0

    def add(self, other: "Tally") -> None:
        for field in dataclasses.fields(self):
            setattr(self, field.name, getattr(self, field.name) + getattr(other, field.name))

    def count(self, reference: Reference) -> None:
        self.refs += 1
        if reference.private:
            self.private += 1
            self.private_missing += reference.status == MISSING
            if reference.covered:
                self.private_flagged += 1
            else:
                self.private_unflagged += 1
            return
        if reference.status == OK:
            self.ok += 1
        elif reference.status == DEPRECATED:
            self.deprecated += 1
        elif reference.status == UNAVAILABLE:
            self.unavailable += 1
        elif reference.status == MISSING:
            self.missing += 1
            self.silent += not reference.covered


def python_files(root: Path) -> Iterator[Path]:
    if root.is_file():
        yield root
        return
    for path in sorted(root.rglob("*.py")):
        if path.is_file():
            yield path


def group_of(root: Path, path: Path) -> str:
    """The package directory a file belongs to: the first component below ``root``."""
    if root.is_file():
        return root.name
    relative = path.relative_to(root).parts
    return relative[0] if len(relative) > 1 else "."


def scan(
    roots: Sequence[Path], findings: Optional[Dict[str, List[Tuple[int, int]]]] = None,
    api: Optional[InstalledApi] = None,
) -> Tuple[Dict[str, Tally], List[Reference]]:  # fmt: skip
    """Tallies per package directory and every reference (checked, and marked covered)."""
    api = api or InstalledApi()
    tallies: Dict[str, Tally] = collections.OrderedDict()
    everything: List[Reference] = []
    for root in roots:
        for path in python_files(root):
            group = (
                group_of(root, path) if len(roots) == 1 else f"{root.name}/{group_of(root, path)}"
            )
            tally = tallies.setdefault(group, Tally())
            tally.files += 1
            raw = path.read_bytes()
            tally.lines += raw.count(b"\n")
            try:
                references = find_references(raw.decode("utf-8", "surrogateescape"), str(path))
            except (SyntaxError, ValueError, RecursionError):
                tally.unparsable += 1
                continue
            check_references(references, api)
            if findings is not None:
                mark_covered(references, findings)
            for reference in references:
                tally.count(reference)
            everything.extend(references)
    return tallies, everything


_COLUMNS = [
    ("files", "files"), ("lines", "lines"), ("refs", "refs"), ("ok", "ok"),
    ("deprecated", "deprec"), ("missing", "missing"), ("silent", "silent"),
    ("unavailable", "unavail"), ("private", "private"), ("private_missing", "priv-miss"),
    ("private_flagged", "priv-flag"), ("private_unflagged", "priv-unflag"),
]  # fmt: skip


def format_table(tallies: Dict[str, Tally]) -> str:
    width = max([len("package"), len("total"), *map(len, tallies)])
    header = f"{'package':<{width}} " + " ".join(
        f"{title:>{max(len(title), 7)}}" for _, title in _COLUMNS
    )
    rows = [header, "-" * len(header)]
    total = Tally()
    for group, tally in tallies.items():
        total.add(tally)
        rows.append(_row(group, tally, width))
    rows.append("-" * len(header))
    rows.append(_row("total", total, width))
    unparsable = total.unparsable
    if unparsable:
        rows.append(f"({unparsable} files could not be parsed and were skipped)")
    return "\n".join(rows)


def _row(name: str, tally: Tally, width: int) -> str:
    cells = [f"{getattr(tally, field):>{max(len(title), 7)},}" for field, title in _COLUMNS]
    return f"{name:<{width}} " + " ".join(cells)


def silent_references(references: Iterable[Reference], private: bool = False) -> List[Reference]:
    return [
        r for r in references
        if r.status == MISSING and not r.covered and r.private == private
    ]  # fmt: skip


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.api_check",
        description="Count references to JAX names the installed JAX no longer has.",
    )
    parser.add_argument("dirs", nargs="+", type=Path, metavar="DIR")
    parser.add_argument("--findings", type=Path, help="jaxmigrate --format json report")
    parser.add_argument("--list", action="store_true", help="print every silent reference")
    parser.add_argument("--list-private", action="store_true",
                        help="also print every private reference that is missing and unflagged")  # fmt: skip
    parser.add_argument("--top", type=int, default=40, help="most frequent silent names (40)")
    parser.add_argument("--json", type=Path, help="write every reference as JSON here")
    args = parser.parse_args(argv)
    findings = load_findings(args.findings) if args.findings else None
    tallies, references = scan(args.dirs, findings)
    if args.list:
        for reference in silent_references(references):
            print(f"{reference.path}:{reference.line}: {reference.where}")
    if args.list_private:
        for reference in silent_references(references, private=True):
            print(f"{reference.path}:{reference.line}: {reference.where} (private)")
    print(format_table(tallies))
    if findings is None:
        print("(no --findings report: nothing is flagged, every missing reference is silent)")
    counter = collections.Counter(r.where for r in silent_references(references))
    if counter and args.top:
        print(f"\ntop {min(args.top, len(counter))} silent names (of {len(counter)}):")
        for name, count in counter.most_common(args.top):
            print(f"{count:>6}  {name}")
    if args.json:
        records = [{**dataclasses.asdict(r), "private": r.private} for r in references]
        args.json.write_text(json.dumps(records, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
