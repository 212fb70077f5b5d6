"""Reading the public API of one ``jax`` release from its source distribution, for
``scripts/build_api_history.py`` (whose docstring says what is recorded and why).

Everything is read statically with CPython's ``ast``: nothing of the release is imported.
:func:`read_release` gives, for each public module of the sdist, its public names, the names
its deprecation table marks deprecated or removed (with their messages) and whether the
module makes names at run time; :func:`read_module` reads one module, following
``from m import *`` within the release.
"""

from __future__ import annotations

import ast
import tarfile
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Set, Tuple

from scripts.api_history_classes import ClassReader
from scripts.api_history_flags import Flags, config_flags
from scripts.api_history_signatures import Signature, signatures

# What one release offers: module -> (names, deprecated name -> message, removed name ->
# message, open?).  A module's submodules are among its names.
ModuleInfo = Tuple[Set[str], Dict[str, str], Dict[str, str], bool]


# -- reading one release ------------------------------------------------------------------------
class _Release:
    """The ``jax/`` sources of one sdist, parsed on demand."""

    def __init__(self, files: Dict[str, str], packages: Set[str]) -> None:
        self.files = files  # module name -> source text (every module, private ones too)
        self.packages = packages  # the modules that are packages (an __init__.py)
        self._names: Dict[str, Set[str]] = {}
        self._busy: Set[str] = set()
        self._trees: Dict[str, ast.Module] = {}

    def tree(self, module: str) -> ast.Module:
        """The parsed module (parsed once: three readers walk it)."""
        found = self._trees.get(module)
        if found is None:
            found = self._trees[module] = parse(module, self.files[module])
        return found

    def star_names(self, module: str) -> Set[str]:
        """What ``from module import *`` binds (its ``__all__``, else its public names)."""
        if module in self._names:
            return self._names[module]
        if module in self._busy or module not in self.files:
            return set()
        self._busy.add(module)
        info = read_module(module, self.files[module], self)
        self._busy.discard(module)
        exported = info[0] if info[4] is None else set(info[4])
        self._names[module] = {n for n in exported if not n.startswith("_")}
        return self._names[module]


class SourceError(Exception):
    """A module this Python cannot parse: newer JAX uses newer syntax (PEP 695 in 0.11), so the
    generator must run on a Python at least as new as the newest release needs."""


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _message(node: ast.expr) -> str:
    try:
        value = ast.literal_eval(node)
        if isinstance(value, str):
            return " ".join(value.split())
    except (ValueError, SyntaxError, TypeError):
        pass
    if isinstance(node, ast.JoinedStr):
        parts = []
        for piece in node.values:
            if isinstance(piece, ast.Constant):
                parts.append(str(piece.value))
            else:
                parts.append("{" + ast.unparse(piece.value) + "}")  # type: ignore[attr-defined]
        return " ".join("".join(parts).split())
    return " ".join(ast.unparse(node).split())


def _resolve_relative(module: str, is_package: bool, level: int, name: Optional[str]) -> str:
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join(base + ([name] if name else []))


def parse(module: str, source: str) -> ast.Module:
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError) as error:
        raise SourceError(f"{module}: {error}") from None


def read_module(module: str, source: str, release: Optional[_Release]):  # noqa: ANN201
    """(names, deprecated, removed, open, __all__ or None) of one module's source."""
    tree = release.tree(module) if release is not None else parse(module, source)
    is_package = release is not None and module in release.packages
    names: Set[str] = set()
    deprecations: Dict[str, Tuple[str, bool]] = {}  # name -> (message, still present)
    open_module = False
    getattr_from_deprecations = False
    served: Dict[str, Optional[str]] = {}  # what a ``__getattr__`` serves -> its warning
    exported: Optional[List[str]] = None

    def bind_target(target: ast.expr) -> None:
        if isinstance(target, ast.Name):
            names.add(target.id)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                bind_target(element)
        elif isinstance(target, ast.Starred):
            bind_target(target.value)

    def read_deprecations(value: ast.expr) -> None:
        if not isinstance(value, ast.Dict):
            return
        for key, entry in zip(value.keys, value.values):
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                continue
            if isinstance(entry, ast.Tuple) and len(entry.elts) >= 2:
                message = _message(entry.elts[0])
                target = entry.elts[1]
                present = not (isinstance(target, ast.Constant) and target.value is None)
                deprecations[key.value] = (message, present)

    def walk(body: Iterable[ast.stmt]) -> None:
        nonlocal open_module, getattr_from_deprecations, exported
        for stmt in body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(stmt.name)
                if stmt.name == "__getattr__":
                    found = served_by(stmt)
                    if found is None:
                        open_module = True
                    else:
                        served.update(found)
            elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                for target in targets:
                    bind_target(target)
                    if isinstance(target, ast.Name) and stmt.value is not None:
                        if target.id == "_deprecations":
                            read_deprecations(stmt.value)
                        elif target.id == "__all__":
                            try:
                                exported = [str(n) for n in ast.literal_eval(stmt.value)]
                            except (ValueError, SyntaxError, TypeError):
                                pass
                        elif target.id == "__getattr__":
                            call = stmt.value
                            callee = call.func if isinstance(call, ast.Call) else None
                            callee_name = getattr(callee, "id", getattr(callee, "attr", ""))
                            if "deprecation_getattr" in callee_name:
                                getattr_from_deprecations = True
                            else:
                                open_module = True
                    if isinstance(target, ast.Tuple) and any(
                        isinstance(e, ast.Name) and e.id == "__getattr__" for e in target.elts
                    ):
                        open_module = True
                    if (
                        isinstance(target, ast.Subscript)
                        and isinstance(target.value, ast.Call)
                        and getattr(target.value.func, "id", "") in ("globals", "vars")
                    ):
                        open_module = True
            elif isinstance(stmt, ast.Import):
                for alias in stmt.names:
                    if alias.asname:  # ``import numpy as np`` makes ``module.np``
                        names.add(alias.asname)
            elif isinstance(stmt, ast.ImportFrom):
                # Every imported name is an attribute of the module, re-export or helper: JAX
                # often moves a definition to ``jax._src`` and imports it back, and the name
                # must stay present across that move.
                source_module = (
                    _resolve_relative(module, is_package, stmt.level, stmt.module)
                    if stmt.level
                    else (stmt.module or "")
                )
                for alias in stmt.names:
                    if alias.name == "*":
                        if release is not None:
                            names.update(release.star_names(source_module))
                        else:
                            open_module = True
                    else:
                        names.add(alias.asname or alias.name)
            elif isinstance(stmt, ast.Delete):
                for target in stmt.targets:
                    if isinstance(target, ast.Name):
                        names.discard(target.id)
            elif isinstance(stmt, ast.If):
                if not _is_type_checking(stmt.test):
                    walk(stmt.body)
                walk(stmt.orelse)
            elif isinstance(stmt, (ast.Try, getattr(ast, "TryStar", ast.Try))):
                walk(stmt.body)
                for handler in stmt.handlers:
                    walk(handler.body)
                walk(stmt.orelse)
                walk(stmt.finalbody)
            elif isinstance(stmt, (ast.With, ast.For, ast.While)):
                walk(stmt.body)  # loop variables and ``with ... as`` targets are not API
                walk(getattr(stmt, "orelse", []))
            elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
                func = stmt.value.func
                if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call):
                    if getattr(func.value.func, "id", "") in ("globals", "vars"):
                        open_module = True  # globals().update(...)

    walk(tree.body)
    deprecated: Dict[str, str] = {}
    removed: Dict[str, str] = {}
    if getattr_from_deprecations:
        for name, (message, present) in deprecations.items():
            if present:
                names.add(name)
                deprecated[name] = message
            else:
                names.discard(name)
                removed[name] = message
    for name, message in served.items():
        if name not in names:
            names.add(name)
            if message is not None:
                deprecated[name] = message
    names.discard("__getattr__")
    return names, deprecated, removed, open_module, exported


def served_by(function: ast.AST) -> Optional[Dict[str, Optional[str]]]:
    """The names a module's own ``def __getattr__(name)`` serves, each with the message of the
    warning it gives (None: no warning), where every ``return`` of it lies in the branch of an
    ``if name in [literals]`` (or ``== literal``) and every way through it ends in a ``return``
    or a ``raise``: jax.test_util from 0.3.15 served a listed few of its old names that way,
    and raised AttributeError for the rest (``JaxTestCase`` was gone).  None when it may serve
    other names (falling off its end serves None): the module is then open."""
    args = function.args  # type: ignore[attr-defined]
    if len(args.args) != 1 or args.vararg or args.kwarg or args.posonlyargs:
        return None
    param = args.args[0].arg
    served: Dict[str, Optional[str]] = {}

    def listed(test: ast.expr) -> Optional[List[str]]:
        if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
            return None
        if not (isinstance(test.left, ast.Name) and test.left.id == param):
            return None
        op, right = test.ops[0], test.comparators[0]
        if isinstance(op, ast.In) and isinstance(right, (ast.List, ast.Tuple, ast.Set)):
            values = [e.value for e in right.elts if isinstance(e, ast.Constant)]
            if len(values) == len(right.elts) and all(isinstance(v, str) for v in values):
                return values
        if isinstance(op, ast.Eq) and isinstance(right, ast.Constant):
            return [right.value] if isinstance(right.value, str) else None
        return None

    def warning(body: List[ast.stmt]) -> Optional[str]:
        for stmt in body:
            call = stmt.value if isinstance(stmt, ast.Expr) else None
            if isinstance(call, ast.Call) and getattr(call.func, "attr", "") == "warn":
                return _message(call.args[0]) if call.args else None
        return None

    def confined(body: List[ast.stmt], names: Optional[List[str]], message: Optional[str]) -> bool:
        for stmt in body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            if isinstance(stmt, ast.Return):
                if names is None:
                    return False
                for name in names:  # (an f-string's ``{name}`` as the name it serves)
                    served[name] = message and message.replace("{" + param + "}", name)
            elif isinstance(stmt, ast.If):
                inner = listed(stmt.test)
                if inner is not None:
                    if not confined(stmt.body, inner, warning(stmt.body)):
                        return False
                elif not confined(stmt.body, names, message):
                    return False
                if not confined(stmt.orelse, names, message):
                    return False
            else:
                for field in ("body", "orelse", "finalbody"):
                    if not confined(getattr(stmt, field, []), names, message):
                        return False
                for handler in getattr(stmt, "handlers", []):
                    if not confined(handler.body, names, message):
                        return False
        return True

    def ends(body: List[ast.stmt]) -> bool:  # every way through raises or returns
        last = body[-1] if body else None
        if isinstance(last, ast.If):
            return ends(last.body) and ends(last.orelse)
        return isinstance(last, (ast.Raise, ast.Return))

    body = function.body  # type: ignore[attr-defined]
    return served if ends(body) and confined(body, None, None) else None


def read_release(
    sdist: Path,
) -> Tuple[
    Dict[str, ModuleInfo], Dict[str, frozenset], Flags, Dict[str, Set[str]], Dict[str, Signature]
]:
    """Module -> (public names, deprecated, removed, open) for one sdist; the members of its
    public classes that are not open (qualified class name -> members); its flags; the
    private names (``_x``, not ``__x__``) of its public modules; the keyword parameters of its
    public functions (``api_history_signatures``)."""
    files: Dict[str, str] = {}
    packages: Set[str] = set()
    with tarfile.open(sdist) as archive:
        for member in archive.getmembers():
            parts = member.name.split("/")
            if len(parts) < 3 or parts[1] != "jax" or not member.isfile():
                continue
            relative = parts[1:]
            if not relative[-1].endswith(".py"):
                continue
            stem = relative[-1][:-3]
            if stem == "__init__":
                module = ".".join(relative[:-1])
                packages.add(module)
            else:
                module = ".".join(relative[:-1] + [stem])
            data = archive.extractfile(member)
            if data is not None:
                files[module] = data.read().decode("utf-8", "replace")
    release = _Release(files, packages)
    result: Dict[str, ModuleInfo] = {}
    private: Dict[str, Set[str]] = {}
    for module in sorted(files):
        if any(part.startswith("_") for part in module.split(".")):
            continue
        names, deprecated, removed, open_module, _all = read_module(module, files[module], release)
        private[module] = {n for n in names if n.startswith("_") and not n.endswith("__")}
        result[module] = (
            {n for n in names if not n.startswith("_")},
            {n: m for n, m in deprecated.items() if not n.startswith("_")},
            {n: m for n, m in removed.items() if not n.startswith("_")},
            open_module,
        )
    # ``jax.config`` is the configuration object: its members are the flags a release lets
    # code read as attributes (``jax.config.jax_enable_x64``) and the members of its class;
    # the flags it defines by name only (``jax.config.update("jax_platform_name", ...)``) are
    # kept apart.
    flags = config_flags(files, release.tree)
    if flags.members:
        result.setdefault("jax.config", (set(), {}, {}, False))[0].update(flags.members)
    # Submodules are names of their parent package (import jax.experimental.pjit).
    for module in list(result):
        parent, _, child = module.rpartition(".")
        if parent in result:
            result[parent][0].add(child)
    trees = {module: release.tree(module) for module in release.files}
    functions = signatures(trees, release.packages, {m: info[0] for m, info in result.items()})
    return result, class_members(release, result), flags, private, functions


def class_members(release: _Release, result: Dict[str, ModuleInfo]) -> Dict[str, frozenset]:
    """Public class of a public module -> its public members, for the classes that are not
    open (see ``api_history_classes``)."""
    trees = {module: release.tree(module) for module in release.files}
    reader = ClassReader(trees, release.packages, release.files)
    found: Dict[str, frozenset] = {}
    for module, (names, _deprecated, _removed, _open) in result.items():
        if module not in trees or module == "jax.config":
            continue
        for name in names:
            if f"{module}.{name}" in result:
                continue  # a submodule
            target = reader.resolve_name(module, name)
            if target is not None and target[0] == "class":
                members = reader.members(target[1], target[2])
                if members is not None:
                    found[f"{module}.{name}"] = members
    return found
