"""Build a real legacy corpus: JAX-ecosystem source distributions released in 2021-2023.

Measurement tooling for "Nothing removed goes silent": the code people actually wrote against
JAX 0.2-0.4, as the packages shipped it, to run jaxmigrate on and then check what is left
with ``tests/api_check.py`` against the newest installed JAX.

Each pinned sdist below is fetched with pip alone (``pip download --no-deps --no-binary
NAME NAME==VERSION``; old ``setup.py`` files that cannot prepare their metadata with today's
setuptools are retried with pip's ``--build-constraint`` pinning an older setuptools, then
with ``--no-build-isolation``), cached, and only its ``.py`` and ``.ipynb`` files are
extracted to ``OUT/<name>-<version>/...``.  A ``.py`` file that is not valid Python 3 on this
interpreter (Python 2 leftovers, templates) is skipped and counted; so is a notebook that is
not JSON.  The summary prints files, lines, skipped files, the archive's size and the date of
its newest member (to show the release really is from 2021-2023).

Usage::

    python bench/legacy_corpus.py [--out DIR] [--cache DIR] [--only NAME ...] [--keep]

The whole measurement (run from the repository root; about 10 minutes on 2 cores)::

    python bench/legacy_corpus.py
    C=/tmp/jaxmigrate-legacy-corpus M=/tmp/legacy-migrated
    jaxmigrate $C --format json --check -j 2 > /tmp/before.json
    python -m tests.api_check $C --findings /tmp/before.json
    rm -rf $M && cp -r $C $M && jaxmigrate $M --unsafe-fixes -j 2
    jaxmigrate $M --format json --check -j 2 > /tmp/after.json
    python -m tests.api_check $M --findings /tmp/after.json --list --top 40

Defaults: ``--out /tmp/jaxmigrate-legacy-corpus``, ``--cache
~/.cache/jaxmigrate/legacy-sdists`` (``$XDG_CACHE_HOME`` respected).  The whole set downloads
about 6 MB (2,192 files, 621 k lines).
"""

from __future__ import annotations

import argparse
import ast
import datetime
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.request
import warnings
import zipfile
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Tuple

# (PyPI name, version, month the sdist was built: its newest member, as the summary prints it).
# One or two releases per package from 2021-2023.  jraph 0.0.2.dev0 (2021) is not here: its
# setup.py requirement ``python_version>="3.6"`` is rejected by every pip since 24.1.  The jax
# sdists hold the ``jax/`` package only (no tests/ or examples/).
PINS: List[Tuple[str, str, str]] = [
    ("flax", "0.3.6", "2021-10"),
    ("flax", "0.6.4", "2023-01"),
    ("dm-haiku", "0.0.5", "2021-11"),
    ("dm-haiku", "0.0.9", "2022-11"),
    ("distrax", "0.1.0", "2021-11"),
    ("distrax", "0.1.3", "2023-02"),
    ("rlax", "0.1.1", "2021-11"),
    ("rlax", "0.1.5", "2023-01"),
    ("jraph", "0.0.5.dev0", "2022-06"),
    ("jraph", "0.0.6.dev0", "2022-08"),
    ("objax", "1.4.0", "2021-03"),
    ("objax", "1.6.0", "2022-01"),
    ("trax", "1.3.9", "2021-05"),
    ("trax", "1.4.1", "2021-10"),
    ("elegy", "0.8.1", "2021-11"),
    ("elegy", "0.8.6", "2022-03"),
    ("evojax", "0.2.6", "2022-06"),
    ("evojax", "0.2.16", "2023-08"),
    ("optax", "0.1.0", "2021-11"),
    ("optax", "0.1.4", "2022-11"),
    ("chex", "0.1.0", "2021-11"),
    ("chex", "0.1.6", "2023-02"),
    ("jax", "0.3.25", "2022-11"),
    ("jax", "0.4.13", "2023-06"),
]

DEFAULT_OUT = Path("/tmp/jaxmigrate-legacy-corpus")
DEFAULT_CACHE = (
    Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    / "jaxmigrate"
    / "legacy-sdists"
)
MARKER = ".legacy-corpus"  # in OUT: the script may delete and rebuild this directory
SIZE_LIMIT = 300 * 1024 * 1024  # bytes downloaded, all archives together
_ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar.bz2", ".zip")

# Each try is the pip arguments before the requirement.  Old sdists whose setup.py imports
# their own package (or numpy) fail in an isolated build; the current environment may have
# what they need.
_PIP = [sys.executable, "-m", "pip", "download", "--no-deps", "--ignore-requires-python",
        "--disable-pip-version-check", "--quiet"]  # fmt: skip
# Build dependencies must stay wheels (``--no-binary :all:`` would build poetry, maturin and
# Rust crates from source), so only the package itself is ``--no-binary``.  Old setup.py
# files need pkg_resources (gone from setuptools 81) or accept requirement spellings newer
# setuptools rejects: pip's build constraints pin an older setuptools for those.
_ATTEMPTS: List[Tuple[str, List[str]]] = [
    ("", []),
    ("setuptools<81", ["--build-constraint", "{constraints}"]),
    ("setuptools<66", ["--build-constraint", "{constraints}"]),
    ("", ["--no-build-isolation"]),
]


def _cached_archive(directory: Path) -> Optional[Path]:
    if not directory.is_dir():
        return None
    found = [p for p in directory.iterdir() if p.name.endswith(_ARCHIVE_SUFFIXES)]
    return found[0] if len(found) == 1 else None


def fetch(name: str, version: str, cache: Path) -> Tuple[Optional[Path], str]:
    """The sdist of ``name==version``, from the cache or downloaded into it; (None, why) if
    no attempt worked."""
    directory = cache / f"{name}-{version}"
    cached = _cached_archive(directory)
    if cached is not None:
        return cached, "cached"
    errors = []
    for constraint, extra in _ATTEMPTS:
        with tempfile.TemporaryDirectory(prefix="jaxmigrate-sdist-") as scratch:
            constraints = Path(scratch) / "build-constraints.txt"
            constraints.write_text(constraint + "\n")
            dest = Path(scratch) / "dest"
            command = [*_PIP, "--no-binary", name, "--dest", str(dest),
                       *(arg.format(constraints=constraints) for arg in extra),
                       f"{name}=={version}"]  # fmt: skip
            done = subprocess.run(command, capture_output=True, text=True, check=False)
            archives = [
                p for p in (dest.iterdir() if dest.is_dir() else ())
                if p.name.endswith(_ARCHIVE_SUFFIXES)
            ]  # fmt: skip
            how = " ".join(constraint.split() or extra) or "default"
            if done.returncode == 0 and len(archives) == 1:
                directory.mkdir(parents=True, exist_ok=True)
                target = directory / archives[0].name
                shutil.move(str(archives[0]), target)
                return target, "downloaded" + ("" if how == "default" else f" (build with {how})")
            lines = [line for line in (done.stderr or done.stdout).splitlines() if "ERROR" in line]
            errors.append(f"{how}: {(lines or ['no archive'])[-1].strip()}")
    try:  # a setup.py no setuptools can run (objax reads its own package): the registry's file
        target = _from_registry(name, version, directory)
    except (OSError, ValueError, KeyError) as error:
        errors.append(f"the index's simple API: {error}")
    else:
        if target is not None:
            return target, "downloaded (the index's simple API)"
        errors.append("the index's simple API: no sdist")
    return None, "; ".join(errors)


def _from_registry(name: str, version: str, directory: Path) -> Optional[Path]:
    """The sdist of ``name==version`` listed by the package index's simple API (PEP 691 JSON),
    checked against the sha256 digest it lists; pip cannot download an sdist whose build
    metadata fails to prepare."""
    request = urllib.request.Request(
        f"https://pypi.org/simple/{name}/",
        headers={"Accept": "application/vnd.pypi.simple.v1+json"},
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        files = json.load(response)["files"]
    prefix = f"{name.replace('-', '_')}-{version}.", f"{name}-{version}."
    for entry in files:
        filename = entry["filename"]
        if not filename.startswith(prefix) or not filename.endswith(_ARCHIVE_SUFFIXES):
            continue
        with urllib.request.urlopen(entry["url"], timeout=120) as response:
            data = response.read()
        if hashlib.sha256(data).hexdigest() != entry["hashes"]["sha256"]:
            raise ValueError(f"sha256 mismatch for {filename}")
        directory.mkdir(parents=True, exist_ok=True)
        target = directory / filename
        target.write_bytes(data)
        return target
    return None


def _members(archive: Path) -> Iterator[Tuple[str, float, Optional[bytes]]]:
    """(path inside the archive, mtime, content or None when not wanted) of every file."""
    wanted = (".py", ".ipynb", ".txt", ".cfg", ".toml")
    if archive.name.endswith(".zip"):
        with zipfile.ZipFile(archive) as zipped:
            for info in zipped.infolist():
                if info.is_dir():
                    continue
                mtime = datetime.datetime(*info.date_time).timestamp()
                data = zipped.read(info) if info.filename.endswith(wanted) else None
                yield info.filename, mtime, data
        return
    with tarfile.open(archive) as tarred:
        for info in tarred:
            if not info.isfile():
                continue
            data = None
            if info.name.endswith(wanted):
                handle = tarred.extractfile(info)
                data = handle.read() if handle is not None else None
            yield info.name, float(info.mtime), data


def _safe_relative(member: str) -> Optional[Path]:
    """The member's path without the archive's top directory; None if it would escape."""
    parts = [p for p in member.replace("\\", "/").split("/") if p not in ("", ".")]
    if len(parts) < 2 or ".." in parts:
        return None
    return Path(*parts[1:])


def valid_python3(data: bytes) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SyntaxWarning: invalid escape sequences and such
        try:
            ast.parse(data)
        except (SyntaxError, ValueError, UnicodeDecodeError, MemoryError, RecursionError):
            return False
    return True


def valid_notebook(data: bytes) -> bool:
    try:
        return isinstance(json.loads(data), dict)
    except (ValueError, UnicodeDecodeError):
        return False


def _is_packaging(relative: Path) -> bool:
    """A file that may state the package's ``jax`` requirement (besides ``setup.py``)."""
    name = relative.name
    return name in ("setup.cfg", "pyproject.toml") or (
        name.startswith("requirements") and name.endswith(".txt")
    )


def extract(archive: Path, target: Path) -> Dict[str, object]:
    """Write the archive's Python files and notebooks under ``target``, with its packaging
    files (``setup.cfg``, ``pyproject.toml``, ``requirements*.txt``: the requirement the tool
    reads as the code's source); counts for the summary."""
    if target.exists():
        shutil.rmtree(target)
    stats: Dict[str, object] = {"py": 0, "ipynb": 0, "lines": 0, "skipped": 0, "newest": 0.0}
    skipped: List[str] = []
    for member, mtime, data in _members(archive):
        stats["newest"] = max(stats["newest"], mtime)  # type: ignore[type-var]
        if data is None:
            continue
        relative = _safe_relative(member)
        if relative is None:
            continue
        if not member.endswith((".py", ".ipynb")):  # the requirement, kept beside the code
            if not _is_packaging(relative):
                continue
            destination = target / relative
            destination.parent.mkdir(parents=True, exist_ok=True)
            destination.write_bytes(data)
            stats["packaging"] = int(stats.get("packaging", 0)) + 1  # type: ignore[call-overload]
            continue
        notebook = member.endswith(".ipynb")
        if not (valid_notebook(data) if notebook else valid_python3(data)):
            stats["skipped"] += 1  # type: ignore[operator]
            skipped.append(str(relative))
            continue
        destination = target / relative
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_bytes(data)
        if notebook:
            stats["ipynb"] += 1  # type: ignore[operator]
        else:
            stats["py"] += 1  # type: ignore[operator]
            stats["lines"] += data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)  # type: ignore[operator]
    stats["skipped_files"] = skipped
    return stats


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument(
        "--only",
        nargs="*",
        default=None,
        metavar="NAME",
        help="build only these packages (PyPI names)",
    )
    parser.add_argument(
        "--keep",
        action="store_true",
        help="keep OUT's other package directories (default: OUT is rebuilt)",
    )
    parser.add_argument("--show-skipped", action="store_true", help="list the skipped files")
    args = parser.parse_args(argv)
    pins = [pin for pin in PINS if args.only is None or pin[0] in args.only]
    marker = args.out / MARKER
    if args.out.exists() and any(args.out.iterdir()) and not marker.exists():
        raise SystemExit(f"{args.out} is not empty and was not built by this script; pick --out")
    if not args.keep and args.out.exists():
        shutil.rmtree(args.out)
    args.out.mkdir(parents=True, exist_ok=True)
    marker.write_text("built by bench/legacy_corpus.py; it deletes this directory on rebuild\n")
    header = (
        f"{'package':<22} {'py':>5} {'ipynb':>5} {'lines':>9} {'skipped':>7} {'sdist':>8}"
        "  built       source"
    )
    print(header)
    print("-" * len(header))
    totals = {"py": 0, "ipynb": 0, "lines": 0, "skipped": 0, "bytes": 0}
    failed = []
    for name, version, _released in pins:
        archive, how = fetch(name, version, args.cache)
        if archive is None:
            failed.append(f"{name}=={version}: {how}")
            print(f"{name + '-' + version:<22} FAILED: {how}")
            continue
        size = archive.stat().st_size
        totals["bytes"] += size
        if totals["bytes"] > SIZE_LIMIT:
            raise SystemExit(f"downloads exceed {SIZE_LIMIT >> 20} MB; shorten PINS")
        stats = extract(archive, args.out / f"{name}-{version}")
        for key in ("py", "ipynb", "lines", "skipped"):
            totals[key] += stats[key]  # type: ignore[operator]
        built = datetime.datetime.fromtimestamp(
            stats["newest"],  # type: ignore[arg-type]
            datetime.timezone.utc,
        )
        print(
            f"{name + '-' + version:<22} {stats['py']:>5,} {stats['ipynb']:>5,}"
            f" {stats['lines']:>9,} {stats['skipped']:>7} {size / 1e6:>6.2f}MB"
            f"  {built:%Y-%m-%d}  {how}"
        )
        if args.show_skipped:
            for path in stats["skipped_files"]:  # type: ignore[union-attr]
                print(f"    skipped (not Python 3): {path}")
    print("-" * len(header))
    print(
        f"{'total':<22} {totals['py']:>5,} {totals['ipynb']:>5,} {totals['lines']:>9,}"
        f" {totals['skipped']:>7} {totals['bytes'] / 1e6:>6.2f}MB  -> {args.out}"
    )
    for line in failed:
        print(f"failed: {line}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
