"""Modern code never changes: the newest releases of JAX-ecosystem packages, through jaxmigrate.

Code that runs on today's JAX needs no migration, so ``jaxmigrate --unsafe-fixes`` must leave
every one of these files as it is.  The script builds the corpus (each package's newest
source distribution, fetched with pip and cached like ``bench/legacy_corpus.py`` does; only
``.py`` and ``.ipynb`` files are kept), runs ``jaxmigrate --check --unsafe-fixes`` on it at the
default target (no ``--target-version``; the corpus root holds no project metadata, so the
target is the newest JAX the rules know), and prints the number of files that would change
and which, with the codes of their fixes.  Exit status 1 when any file would change.

JAX's own sdist holds only the ``jax/`` package (no tests/ or examples/).  Discovery skips a
``jax/`` package found inside a walked directory (it is never user code to migrate), so the
script names that directory on the command line, where it is walked like any other: JAX's own
modules are code written for the JAX they ship with (``del ad, pxla, xla`` in its
``__init__``, ``jax.sharding.set_mesh`` inside ``with``), the strictest modern corpus there is.

Usage (from the repository root; about 2 minutes on 2 cores, downloads about 15 MB once)::

    python bench/modern_corpus.py [--out DIR] [--cache DIR] [--only NAME ...] [--latest] [-j N]

``--latest`` asks pip for each package's newest release instead of the pinned versions below
(the newest on 2026-11-24).  ``tests/test_modern_corpus.py`` runs the same check on a sample.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.legacy_corpus import _ARCHIVE_SUFFIXES, _PIP, _cached_archive, extract, fetch  # noqa: E402

# The newest release of each on 2026-11-24 (``pip download --no-deps --no-binary NAME NAME``).
# jraph's newest (0.0.6.dev0) is from 2022: it is in the legacy corpus, not here.
PINS: List[Tuple[str, str]] = [
    ("jax", "0.12.0.1"),
    ("flax", "0.12.12"),
    ("optax", "0.2.8"),
    ("chex", "0.1.92"),
    ("orbax-checkpoint", "0.12.8"),
    ("equinox", "0.13.8"),
    ("diffrax", "0.7.2"),
    ("dm-haiku", "0.0.17"),
    ("distrax", "0.1.9"),
    ("penzai", "0.2.5"),
    ("rlax", "0.1.9"),
    ("jaxtyping", "0.3.11"),
    ("lineax", "0.1.1"),
    ("optimistix", "0.1.0"),
]

DEFAULT_OUT = Path("/tmp/jaxmigrate-modern-corpus")
DEFAULT_CACHE = (
    Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    / "jaxmigrate"
    / "modern-sdists"
)
MARKER = ".modern-corpus"  # in OUT: the script may delete and rebuild this directory


def fetch_latest(name: str, cache: Path) -> Tuple[Optional[Path], str]:
    """The newest sdist of ``name`` (asked of pip every time), cached under its version."""
    with tempfile.TemporaryDirectory(prefix="jaxmigrate-sdist-") as scratch:
        command = [*_PIP, "--no-binary", name, "--dest", scratch, name]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        archives = [p for p in Path(scratch).iterdir() if p.name.endswith(_ARCHIVE_SUFFIXES)]
        if done.returncode != 0 or len(archives) != 1:
            return None, (done.stderr.strip().splitlines() or ["no archive"])[-1]
        version = _version_of(archives[0].name)
        directory = cache / f"{name}-{version}"
        if _cached_archive(directory) is None:
            directory.mkdir(parents=True, exist_ok=True)
            shutil.move(str(archives[0]), directory / archives[0].name)
        return _cached_archive(directory), f"latest: {version}"


def _version_of(archive: str) -> str:
    stem = archive
    for suffix in _ARCHIVE_SUFFIXES:
        if stem.endswith(suffix):
            stem = stem[: -len(suffix)]
    return stem.rsplit("-", 1)[-1]


def build(out: Path, cache: Path, pins: Sequence[Tuple[str, str]], latest: bool) -> Dict[str, Path]:
    """Extract each package under ``out``; the paths to hand to jaxmigrate, by package."""
    marker = out / MARKER
    if out.exists() and any(out.iterdir()) and not marker.exists():
        raise SystemExit(f"{out} is not empty and was not built by this script; pick --out")
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    marker.write_text("built by bench/modern_corpus.py; it deletes this directory on rebuild\n")
    paths: Dict[str, Path] = {}
    for name, version in pins:
        archive, how = fetch_latest(name, cache) if latest else fetch(name, version, cache)
        if archive is None:
            raise SystemExit(f"{name}: cannot download: {how}")
        target = out / archive.name.split(".tar")[0].split(".zip")[0]
        extract(archive, target)
        paths[name] = paths_to_check(name, target)
    return paths


def paths_to_check(name: str, target: Path) -> Path:
    """What jaxmigrate is given for one package: JAX's own package directory by name (a walk
    of its parent would skip it), the unpacked sdist otherwise."""
    return target / "jax" if name == "jax" else target


def _built(out: Path, pins: Sequence[Tuple[str, str]]) -> Dict[str, Path]:
    found = {p.name: p for p in out.iterdir() if p.is_dir()}
    return {
        name: paths_to_check(
            name,
            found[f"{name.replace('-', '_')}-{version}"]
            if f"{name.replace('-', '_')}-{version}" in found
            else found[f"{name}-{version}"],
        )
        for name, version in pins
    }


def changed_files(paths: Sequence[Path], jobs: int) -> Tuple[List[dict], int]:
    """Run ``jaxmigrate --check --unsafe-fixes`` on ``paths``: the JSON records of the files
    that would change (or could not be read), and how many files were checked."""
    command = [
        sys.executable, "-c", "from jaxmigrate.migrator.cli import command; command()",
        *map(str, paths),
        "--check", "--unsafe-fixes", "--format", "json", "--no-cache", "-j", str(jobs),
    ]  # fmt: skip
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run(
        command, capture_output=True, text=True, check=False, env=env, cwd=paths[0].parent
    )
    if done.returncode not in (0, 1, 2):  # 2: a file could not be migrated (listed)
        raise SystemExit(f"jaxmigrate exited {done.returncode}:\n{done.stderr[-4000:]}")
    report = json.loads(done.stdout)
    files = report["files"]
    return [f for f in files if f["changed"] or f["error"]], len(files)


def describe(record: dict) -> str:
    if record["error"]:
        return f"{record['path']}: error: {record['error']['message']}"
    codes = sorted({fix["code"] for fix in record["fixes"]})
    lines = sorted({fix["line"] for fix in record["fixes"]})
    return f"{record['path']}: {', '.join(codes)} (lines {', '.join(map(str, lines[:8]))})"


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--only", nargs="*", default=None, metavar="NAME")
    parser.add_argument("--latest", action="store_true", help="the newest releases, not the pins")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--no-build", action="store_true", help="check OUT as it is (built before)")
    args = parser.parse_args(argv)
    pins = [pin for pin in PINS if args.only is None or pin[0] in args.only]
    paths = (
        build(args.out, args.cache, pins, args.latest)
        if not args.no_build
        else _built(args.out, pins)
    )
    bad, checked = changed_files(list(paths.values()), args.jobs)
    print(f"{checked:,} files of {len(paths)} packages checked; {len(bad)} would change")
    for record in bad:
        print(f"  {describe(record)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
