"""Removed JAX names that were the very same object as a name the newest release still has:
rename candidates that no deprecation message names.

JAX removed many re-exports whose object lives on under another public name, often without a
deprecation message: ``jax.experimental.maps`` went in 0.4.31, and its ``thread_resources``
was, in every release that had both, ``jax.interpreters.pxla.thread_resources``.  For each
module-level name ``X`` of the API history that the newest release lacks, the last of the
given installations that has ``X`` is asked which names ``Y`` are the same object; ``Y`` must
be a module-level name the history lists both in that installation's release and in the
newest.  "The same object" is ``is``, or the same function under JAX's ``functools.wraps``
wrappers, or a function whose whole body forwards to the other (the checks of
``scripts/verify_renames.py``, which then confirms each pair in every installation).

The replacement must be one the newest release exports on purpose, as its source (the sdist)
shows: JAX's public modules export a name with ``import x as x`` (PEP 484's re-export form, see
jax-ml/jax#7570), ``__all__``, their deprecation table, a ``def``/``class``, or as a submodule.
A name a module only uses (``jax.experimental.ode`` binds ``zip = safe_zip``) is no home.

Only objects JAX defines count (a class or function whose ``__module__``, or another object
whose type's module, starts with ``jax``): builtins, ``typing`` constructs, numpy objects,
numbers and strings are shared by too many names to mean a rename.  A module counts only as
itself: ``X`` bound to a module becomes that module's own name.

When several ``Y`` qualify, the preferred one is not deprecated on the newest release, then
not under ``jax.interpreters`` or ``jax.lib``, then in the module the object names as its own
(``__module__``: JAX sets ``jax.numpy`` on ``jnp`` functions), then spelled like ``X``
(``float32``, not its alias ``single``), then has the fewest parts, the fewest characters, and
comes first alphabetically.
"""

from __future__ import annotations

import ast
import json
import subprocess
import tarfile
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Set, Tuple

from jaxmigrate.rules._api_history import ApiHistory, release_key

_LOOKUP = r"""
import importlib, json, sys, types, warnings
warnings.simplefilter("ignore")
import jax

_imported = {}

def module(name):
    if name not in _imported:
        try:
            _imported[name] = importlib.import_module(name)
        except BaseException:
            _imported[name] = None
    return _imported[name]

def get(qualname):
    parts = qualname.split(".")
    for cut in range(len(parts), 0, -1):
        value = module(".".join(parts[:cut]))
        if value is None:
            continue
        try:
            for part in parts[cut:]:
                value = getattr(value, part)
        except BaseException:
            return None
        return value
    return None

def root(value):
    for _ in range(10):
        inner = getattr(value, "__wrapped__", None)
        if inner is None or not callable(value):
            return value
        value = inner
    return value

def target(value):
    # The function a function forwards to: ``def f(x, y): return g(x, y)`` (a docstring and a
    # deprecation warning before the return allowed), else None.
    import ast, inspect, textwrap
    fn = root(value)
    if not isinstance(fn, types.FunctionType):
        return None
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except BaseException:
        return None
    node = tree.body[0] if tree.body else None
    if not isinstance(node, ast.FunctionDef):
        return None
    body = [
        s for s in node.body
        if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
        and not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)
                 and "warn" in ast.dump(s.value.func))
    ]
    if len(body) != 1 or not isinstance(body[0], ast.Return):
        return None
    call = body[0].value
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name) or call.keywords:
        return None
    args = node.args
    if args.vararg or args.kwarg or args.kwonlyargs:
        return None
    params = [a.arg for a in args.posonlyargs + args.args]
    if [getattr(a, "id", None) for a in call.args] != params:
        return None
    return fn.__globals__.get(call.func.id)

def jax_defined(value):
    if isinstance(value, (type, types.FunctionType, types.BuiltinFunctionType)):
        where = getattr(value, "__module__", None) or ""
    else:
        where = type(value).__module__ or ""
    return where.split(".")[0] in ("jax", "jaxlib")

removed, kept = json.load(sys.stdin)
alive = []  # keep every value looked at alive: ids must not be reused
same, forwards, modules = {}, {}, {}
for name in kept:
    value = get(name)
    if value is None:
        continue
    alive.append(value)
    if isinstance(value, types.ModuleType):
        if value.__name__ == name:
            modules.setdefault(id(value), []).append(name)
        continue
    if not jax_defined(value):
        continue
    same.setdefault(id(root(value)), []).append(name)
    inner = target(value)
    if inner is not None:
        alive.append(inner)
        forwards.setdefault(id(root(inner)), []).append(name)
found = {}
for name in removed:
    value = get(name)
    if value is None:
        continue
    alive.append(value)
    if isinstance(value, types.ModuleType):
        found[name] = [None] + modules.get(id(value), [])
        continue
    if not jax_defined(value):
        found[name] = [None]  # there, but nothing a rename can rest on
        continue
    names = same.get(id(root(value)), []) + forwards.get(id(root(value)), [])
    inner = target(value)
    if inner is not None:
        alive.append(inner)
        names += same.get(id(root(inner)), [])
    home = getattr(value, "__module__", None) if callable(value) else None
    found[name] = [home if isinstance(home, str) else None] + sorted(set(names) - {name})
print(json.dumps({"version": jax.__version__, "found": found}))
"""


def _exported(tree: ast.Module) -> Set[str]:
    """The names a module's source exports on purpose (see the module docstring)."""
    found: Set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.update(a.asname for a in node.names if a.asname == a.name.rpartition(".")[2])
        elif isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id in ("__all__", "_deprecations") for t in node.targets
        ):
            if isinstance(node.value, (ast.List, ast.Tuple)):
                found.update(e.value for e in node.value.elts if isinstance(e, ast.Constant))
            elif isinstance(node.value, ast.Dict):
                found.update(k.value for k in node.value.keys if isinstance(k, ast.Constant))
    for statement in tree.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(statement.name)
    return found


def exports(sdist: Path, modules: Iterable[str]) -> Dict[str, Set[str]]:
    """Module -> the names it exports on purpose (submodules included), read from ``sdist``."""
    found: Dict[str, Set[str]] = {}
    with tarfile.open(sdist) as archive:
        files = {m.name.split("/", 1)[1]: m for m in archive.getmembers() if "/" in m.name}
        for module in set(modules):
            path = module.replace(".", "/")
            names = found.setdefault(module, set())
            for candidate in (f"{path}.py", f"{path}/__init__.py"):
                member = files.get(candidate)
                handle = archive.extractfile(member) if member is not None else None
                if handle is None:
                    continue
                try:
                    names |= _exported(ast.parse(handle.read()))
                except SyntaxError:
                    pass
            prefix = path + "/"
            for name in files:
                if name.startswith(prefix) and name.endswith(".py"):
                    rest = name[len(prefix) :].split("/")
                    if len(rest) == 1 or rest[1] == "__init__.py":
                        names.add(rest[0][: -len(".py")] if len(rest) == 1 else rest[0])
    return found


def _module_level(h: ApiHistory, qualname: str) -> bool:
    parent = qualname.rpartition(".")[0]
    known = h.lookup(parent)
    return parent == "jax" or (known is not None and known.is_module)


def _present(h: ApiHistory, qualname: str, index: int) -> bool:
    known = h.lookup(qualname)
    return known is not None and any(a <= index <= b for a, b in known.present)


def names_for(h: ApiHistory, version: str) -> Tuple[List[str], List[str]]:
    """The module-level names of ``version`` the newest release lacks, and those it has."""
    index = h.releases.index(version)
    newest = len(h.releases) - 1
    removed, kept = [], []
    for parent, members in h._modules.items():
        for name in members:
            qualname = f"{parent}.{name}"
            if not _present(h, qualname, index) or not _module_level(h, qualname):
                continue
            (kept if _present(h, qualname, newest) else removed).append(qualname)
    return sorted(removed), sorted(kept)


def preference(
    h: ApiHistory, qualname: str, legacy: str, home: Optional[str]
) -> Tuple[bool, bool, bool, bool, int, int, str]:
    """Sort key: the preferred replacement for ``legacy`` (whose object says it belongs to the
    module ``home``) first."""
    known = h.lookup(qualname)
    parts = qualname.split(".")
    return (
        known is not None and known.deprecated_since is not None,
        parts[1] in ("interpreters", "lib"),
        qualname.rpartition(".")[0] != home,
        parts[-1] != legacy.rpartition(".")[2],
        len(parts),
        len(qualname),
        qualname,
    )


def probe(python: str, removed: List[str], kept: List[str]) -> Tuple[str, Dict[str, List[str]]]:
    out = subprocess.run(
        [python, "-c", _LOOKUP],
        input=json.dumps([removed, kept]),
        capture_output=True,
        text=True,
        check=True,
    )
    report = json.loads(out.stdout.strip().splitlines()[-1])
    return report["version"], report["found"]


def discover(
    h: ApiHistory, pythons: Iterable[str], sdists: Path, exclude: Iterable[str] = ()
) -> List[Tuple[str, str, str]]:
    """``(legacy, modern, release)``: each removed name, besides ``exclude``, with its preferred
    same-object replacement, as the newest installation that has the legacy name shows it."""
    sdist = sdists / f"jax-{h.newest}.tar.gz"
    if not sdist.exists():
        raise SystemExit(f"{sdist} is missing: the newest release's exports are read from it")
    skip = set(exclude)
    last: Dict[str, Tuple[Tuple[int, ...], str, List[Optional[str]]]] = {}
    for python in pythons:
        version = subprocess.run(
            [python, "-c", "import jax; print(jax.__version__)"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        if version not in h.releases:
            continue
        removed, kept = names_for(h, version)
        version, found = probe(python, [n for n in removed if n not in skip], kept)
        for legacy, names in found.items():
            key = release_key(version)
            if legacy not in last or last[legacy][0] < key:
                last[legacy] = (key, version, names)
    homes = (n.rpartition(".")[0] for *_, names in last.values() for n in names[1:])
    public = exports(sdist, homes)
    pairs = []
    for legacy, (_key, version, (home, *names)) in sorted(last.items()):
        names = [n for n in names if n.rpartition(".")[2] in public[n.rpartition(".")[0]]]
        best = min(names, key=lambda n: preference(h, n, legacy, home), default=None)
        if best is not None:
            pairs.append((legacy, best, version))
    return pairs
