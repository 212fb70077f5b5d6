"""Build ``rules/data/jax_api_history.json.gz``: every public JAX name, release by release.

Development-time only.  It reads the source distribution of every ``jax`` release from 0.2.0
to the newest **statically** (CPython's ``ast``; nothing is imported, so no jaxlib is needed)
and records, per public module, the names it offers at run time:

* definitions, assignments and imports (``from x import y [as z]``, ``import x as y``) at
  module level, including those under ``if``/``try`` (every branch counts), minus ``del``-ed
  ones, plus what a ``from m import *`` brings from a module of the same release (loop
  variables and ``with`` targets are left out);
* submodules (a package's ``.py`` files and sub-packages);
* the configuration flags each release defines, as members of ``jax.config``
  (``jax.config.jax_enable_x64``), with the methods of its ``Config`` class;
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
Python where a release needs one) into ``--sdists`` (default ``~/.cache/jaxmigrate/sdists``).
"""

from __future__ import annotations

import argparse
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
FORMAT = 1
_VERSION = re.compile(r"^\d+(\.\d+)*$")
sys.path.insert(0, str(ROOT))

from scripts.api_release import ModuleInfo, read_release  # noqa: E402


def version_key(version: str) -> Tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


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
        for module, (names, deprecated, removed, open_module) in per_release[version].items():
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
        "generator": "scripts/build_api_history.py",
        "releases": versions,
        "messages": [m for m, _ in sorted(text_ids.items(), key=lambda item: item[1])],
        "modules": table,
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


def download(directory: Path, versions: Iterable[str]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for version in versions:
        if (directory / f"jax-{version}.tar.gz").exists():
            continue
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
    parser.add_argument("-j", "--jobs", type=int, default=multiprocessing.cpu_count())
    args = parser.parse_args(argv)
    if args.download:
        download(args.sdists, released_versions())
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
