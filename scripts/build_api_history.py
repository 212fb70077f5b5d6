"""Build ``rules/data/jax_api_history.json.gz``: every public JAX name, release by release.

Development-time only.  It reads the source distribution of every ``jax`` release from 0.2.0
to the newest **statically** (CPython's ``ast``; nothing is imported, so no jaxlib is needed)
and records, per public module, the names it offers at run time:

* definitions, assignments and imports (``from x import y [as z]``, ``import x as y``) at
  module level, including those under ``if``/``try`` (every branch counts), minus ``del``-ed
  ones, plus what a ``from m import *`` brings from a module of the same release (loop
  variables and ``with`` targets are left out);
* submodules (a package's ``.py`` files and sub-packages);
* the configuration flags each release lets code read as attributes, as members of
  ``jax.config`` (``jax.config.jax_enable_x64``), with the members of its ``Config`` class;
  and apart (``"flags"``), the releases that define each flag by name, where they differ
  (``jax_platform_name`` is no attribute on 0.4.13..0.10.2: see ``api_history_flags``);
* the members of the public classes of public modules, read through the class
  (``jax.core.Primitive.bind``): see ``api_history_classes`` (a class it cannot fully read
  is open in that release, and has there every member it ever had);
* JAX's own deprecation tables (a ``_deprecations`` dict served by ``deprecation_getattr``):
  a key whose value carries an object is present and deprecated; a key whose value is
  ``None`` is gone, and its message (which usually names the replacement) is kept;
* names bound only under ``if typing.TYPE_CHECKING:`` are not present at run time.

Private modules and names (``jax._src``, ``_x``) are left out: the rules report them as
private whatever the release.  A module whose names are made at run time (its own
``__getattr__``, ``globals()[...] =``) is marked *open*: a name it once had counts as present
in every release where the open module exists.

It must run on a Python that parses every release's syntax (3.13 for JAX 0.11 and newer): a
module it cannot parse stops it, rather than making names look removed.

Usage::

    python3.13 scripts/build_api_history.py --download      # fetch missing sdists, then build
    python scripts/build_api_history.py --sdists DIR    # build from sdists already in DIR

Downloads use ``pip download --no-deps --no-binary :all: jax==V`` (asking pip for a newer
Python where a release needs one; ``--download-jobs`` at a time, 6 by default) into
``--sdists`` (default ``~/.cache/jaxmigrate/sdists``).
"""

from __future__ import annotations

import argparse
import ast
import concurrent.futures
import gzip
import json
import multiprocessing
import re
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Set, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent))
from api_history_classes import ClassReader  # noqa: E402
from api_history_flags import Flags, config_flags  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / "rules" / "data" / "jax_api_history.json.gz"
FIRST_RELEASE = (0, 2, 0)
FORMAT = 2
_VERSION = re.compile(r"^\d+(\.\d+)*$")

# What one release offers: module -> (names, deprecated name -> message, removed name ->
# message, open?).  A module's submodules are among its names.
ModuleInfo = Tuple[Set[str], Dict[str, str], Dict[str, str], bool]


def version_key(version: str) -> Tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


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
                    open_module = True
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
    names.discard("__getattr__")
    return names, deprecated, removed, open_module, exported


def read_release(sdist: Path) -> Tuple[Dict[str, ModuleInfo], Dict[str, frozenset], Flags]:
    """Module -> (public names, deprecated, removed, open) for one sdist; the members of its
    public classes that are not open (qualified class name -> members); its flags."""
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
    for module in sorted(files):
        if any(part.startswith("_") for part in module.split(".")):
            continue
        names, deprecated, removed, open_module, _all = read_module(module, files[module], release)
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
    return result, class_members(release, result), flags


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


def _read(args: Tuple[str, str]) -> Tuple[str, Dict[str, ModuleInfo]]:
    version, path = args
    return version, read_release(Path(path))


# -- all releases -------------------------------------------------------------------------------
def build(sdists: Dict[str, Path], jobs: int) -> dict:
    versions = sorted(sdists, key=version_key)
    work = [(v, str(sdists[v])) for v in versions]
    if jobs > 1:
        with multiprocessing.Pool(jobs) as pool:
            per_release = dict(pool.map(_read, work))
    else:
        per_release = dict(map(_read, work))
    present: Dict[str, Set[int]] = {}
    deprecated_at: Dict[str, int] = {}
    messages: Dict[str, str] = {}
    modules: Set[str] = set()
    open_at: Dict[str, Set[int]] = {}
    for index, version in enumerate(versions):
        for module, (names, deprecated, removed, open_module) in per_release[version][0].items():
            modules.add(module)
            present.setdefault(module, set()).add(index)
            if open_module:
                open_at.setdefault(module, set()).add(index)
            for name in names:
                present.setdefault(f"{module}.{name}", set()).add(index)
            for name, message in {**deprecated, **removed}.items():
                qualname = f"{module}.{name}"
                if name in deprecated:
                    deprecated_at.setdefault(qualname, index)
                if message:
                    messages[qualname] = message
                present.setdefault(qualname, set())
    # A name of an open module is present wherever that module is open.
    for qualname, indices in present.items():
        parent = qualname.rpartition(".")[0]
        if parent in open_at and qualname not in modules:
            indices.update(open_at[parent] & present.get(parent, set()))
    _add_class_members(present, [per_release[v][1] for v in versions])
    by_name: Dict[str, Set[int]] = {}
    for index, version in enumerate(versions):
        for flag in per_release[version][2].defined:
            by_name.setdefault(flag, set()).add(index)
    for flag in by_name:  # a flag that is never an attribute has no release there
        present.setdefault(f"jax.config.{flag}", set())
    text_ids: Dict[str, int] = {}
    table: Dict[str, Dict[str, list]] = {}
    for qualname in sorted(present):
        if qualname == "jax":
            continue
        parent, _, name = qualname.rpartition(".")
        entry: list = [_intervals(sorted(present[qualname]))]
        flags = ("m" if qualname in modules else "") + ("o" if qualname in open_at else "")
        message = messages.get(qualname)
        extra = [
            deprecated_at.get(qualname, -1),
            text_ids.setdefault(message, len(text_ids)) if message else -1,
            flags,
        ]
        while extra and extra[-1] in (-1, ""):
            extra.pop()
        entry.extend(extra)
        table.setdefault(parent, {})[name] = entry
    return {
        "format": FORMAT,
        # Flags whose releases by name differ from those where they are attributes of
        # ``jax.config`` (the ``jax.config`` entries of "modules").
        "flags": {
            flag: _intervals(sorted(indices))
            for flag, indices in sorted(by_name.items())
            if indices != present.get(f"jax.config.{flag}", set())
        },
        "generator": "scripts/build_api_history.py",
        "releases": versions,
        "messages": [m for m, _ in sorted(text_ids.items(), key=lambda item: item[1])],
        "modules": table,
    }


def _add_class_members(present: Dict[str, Set[int]], classes: List[Dict[str, frozenset]]) -> None:
    """Adds ``Class.member`` to ``present``: in a release where the class is read (not open),
    where the class has the member; in a release where the class exists but is open (or is no
    class), wherever the class exists, whatever the member."""
    read: Dict[str, Dict[int, frozenset]] = {}
    for index, found in enumerate(classes):
        for qualname, members in found.items():
            read.setdefault(qualname, {})[index] = members
    for qualname, by_release in read.items():
        exists = present.get(qualname, set())
        unread = exists - set(by_release)
        for member in set().union(*by_release.values()):
            present[f"{qualname}.{member}"] = unread | {
                index for index, members in by_release.items() if member in members
            }


def _intervals(indices: List[int]) -> List[int]:
    """[0, 1, 2, 5, 6] -> [0, 2, 5, 6]: inclusive (first, last) pairs, flattened."""
    flat: List[int] = []
    for index in indices:
        if flat and flat[-1] == index - 1:
            flat[-1] = index
        else:
            flat.extend([index, index])
    return flat


# -- downloading --------------------------------------------------------------------------------
def released_versions() -> List[str]:
    """Every jax release from 0.2.0 on the package index (asking as a recent Python, so
    releases that need one are listed too)."""
    out = subprocess.run(
        [sys.executable, "-m", "pip", "index", "versions", "jax", "--python-version", "3.14"],
        check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    line = next(line for line in out.splitlines() if line.startswith("Available versions:"))
    versions = [v.strip() for v in line.split(":", 1)[1].split(",")]
    return sorted(
        (v for v in versions if _VERSION.match(v) and version_key(v) >= FIRST_RELEASE),
        key=version_key,
    )


def download(directory: Path, versions: Iterable[str], jobs: int = 6) -> None:
    """Fetches the missing sdists, ``jobs`` pip processes at a time (pip spends most of its
    time preparing each sdist's metadata, so one at a time takes most of an hour)."""
    directory.mkdir(parents=True, exist_ok=True)
    missing = [v for v in versions if not (directory / f"jax-{v}.tar.gz").exists()]
    with concurrent.futures.ThreadPoolExecutor(max(1, jobs)) as pool:
        for _ in pool.map(lambda version: _download_one(directory, version), missing):
            pass


def _download_one(directory: Path, version: str) -> None:
    print(f"downloading jax {version}", file=sys.stderr)
    base = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
            "--no-binary", ":all:", "--dest", str(directory), f"jax=={version}"]  # fmt: skip
    if subprocess.run(base).returncode != 0:
        subprocess.run([*base, "--python-version", "3.14"], check=True)


def find_sdists(directory: Path) -> Dict[str, Path]:
    found = {}
    for path in directory.glob("jax-*.tar.gz"):
        version = path.name[len("jax-") : -len(".tar.gz")]
        if _VERSION.match(version) and version_key(version) >= FIRST_RELEASE:
            found[version] = path
    return found


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sdists", type=Path, default=Path.home() / ".cache" / "jaxmigrate" / "sdists"
    )
    parser.add_argument(
        "--download", action="store_true", help="fetch the releases not yet in --sdists"
    )
    parser.add_argument("--out", type=Path, default=OUTPUT)
    parser.add_argument(
        "-j", "--jobs", type=int, default=multiprocessing.cpu_count(),
        help="processes reading releases",
    )  # fmt: skip
    parser.add_argument(
        "--download-jobs", type=int, default=6, help="pip downloads at a time (with --download)"
    )
    args = parser.parse_args(argv)
    if args.download:
        download(args.sdists, released_versions(), args.download_jobs)
    sdists = find_sdists(args.sdists)
    if not sdists:
        parser.error(f"no jax-*.tar.gz in {args.sdists} (use --download)")
    data = build(sdists, args.jobs)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, separators=(",", ":"), sort_keys=True)
    # mtime=0: the same sources give the same bytes.
    with gzip.GzipFile(args.out, "wb", compresslevel=9, mtime=0) as out:
        out.write(text.encode("utf-8"))
    names = sum(len(v) for v in data["modules"].values())
    print(
        f"{args.out}: {len(data['releases'])} releases ({data['releases'][0]}..{data['releases'][-1]}), "
        f"{names} names, {args.out.stat().st_size // 1024} KB",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
