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
import concurrent.futures
import gzip
import json
import multiprocessing
import re
import subprocess
import sys
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Set, Tuple

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / "rules" / "data" / "jax_api_history.json.gz"
FIRST_RELEASE = (0, 2, 0)
FORMAT = 2
_VERSION = re.compile(r"^\d+(\.\d+)*$")
sys.path.insert(0, str(ROOT))

from scripts.api_release import read_release  # noqa: E402


def version_key(version: str) -> Tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def _read(args: Tuple[str, str]) -> Tuple[str, tuple]:
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
    private: Dict[str, Dict[str, list]] = {}
    private_at: Dict[str, Set[int]] = {}
    for index, version in enumerate(versions):
        for module, names in per_release[version][3].items():
            for name in names:
                private_at.setdefault(f"{module}.{name}", set()).add(index)
    for qualname in sorted(private_at):
        parent, _, name = qualname.rpartition(".")
        private.setdefault(parent, {})[name] = _intervals(sorted(private_at[qualname]))
    keywords = _removed_keywords([per_release[v][4] for v in versions])
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
        # The private names (``_x``) of public modules, release by release: not API, but what
        # legacy code's feature tests ask about (``hasattr(xla, "_DeviceArray")``).
        "private": private,
        # Functions some release of which dropped a keyword parameter an earlier one had:
        # qualified name -> {"read": releases whose signature is known, "**": those taking
        # **kwargs, keyword -> releases accepting it} (only the dropped keywords).
        "keywords": keywords,
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


def _removed_keywords(per_release: List[Dict[str, tuple]]) -> Dict[str, Dict[str, List[int]]]:
    """The functions whose signature lost a keyword: where a later release whose signature is
    known accepts neither it nor ``**kwargs``."""
    read: Dict[str, Set[int]] = {}
    var_kw: Dict[str, Set[int]] = {}
    accepts: Dict[str, Dict[str, Set[int]]] = {}
    for index, found in enumerate(per_release):
        for qualname, (keywords, takes_any) in found.items():
            read.setdefault(qualname, set()).add(index)
            if takes_any:
                var_kw.setdefault(qualname, set()).add(index)
            for keyword in keywords:
                accepts.setdefault(qualname, {}).setdefault(keyword, set()).add(index)
    table: Dict[str, Dict[str, List[int]]] = {}
    for qualname, by_keyword in sorted(accepts.items()):
        closed = read[qualname] - var_kw.get(qualname, set())
        dropped = {
            keyword: releases
            for keyword, releases in by_keyword.items()
            if any(index > min(releases) and index not in releases for index in closed)
        }
        if dropped:
            entry = {"read": _intervals(sorted(read[qualname]))}
            if qualname in var_kw:
                entry["**"] = _intervals(sorted(var_kw[qualname]))
            for keyword, releases in sorted(dropped.items()):
                entry[keyword] = _intervals(sorted(releases))
            table[qualname] = entry
    return table


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
        f"{args.out}: {len(data['releases'])} releases "
        f"({data['releases'][0]}..{data['releases'][-1]}), "
        f"{names} names, {args.out.stat().st_size // 1024} KB",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
