"""Versions the right way round, measured on real legacy packages with their own requirements.

For each package of the legacy corpus (``bench/legacy_corpus.py``, which keeps each sdist's
``setup.py``, ``setup.cfg``, ``pyproject.toml`` and ``requirements*.txt`` beside its code),
run ``jaxmigrate PACKAGE --check --format json`` twice in the package's directory:

* with no flags: the project's requirement is the source, the target is chosen by the tool;
* with ``--target-version NEWEST`` (the newest JAX the API history knows).

and print, per package, the requirement found, the source and target the first run chose,
the fixes each run applies and their ratio; then the totals.  The acceptance of "versions the
right way round" is a total ratio of at least 95%: with no flags the tool migrates legacy
code (almost) as far as when told to go to the newest JAX.

Usage::

    python bench/legacy_corpus.py            # once: builds /tmp/jaxmigrate-legacy-corpus
    python bench/versions.py [--corpus DIR] [-j N] [--unsafe-fixes]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.legacy_corpus import DEFAULT_OUT  # noqa: E402


def _run(package: Path, extra: List[str], jobs: int) -> dict:
    command = [
        sys.executable, "-c", "from jaxmigrate.migrator.cli import command; command()",
        ".", "--check", "--format", "json", "--no-cache", "-q", "-j", str(jobs), *extra,
    ]  # fmt: skip
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run(command, capture_output=True, text=True, cwd=package, env=env)
    if done.returncode not in (0, 1, 2):
        raise SystemExit(f"{package}: jaxmigrate exited {done.returncode}:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout)


def _fixes(report: dict) -> int:
    return sum(len(f["fixes"]) for f in report["files"])


def _range(facts: Optional[dict]) -> str:
    if not facts or (facts.get("lower") is None and facts.get("upper") is None):
        return "unknown"
    low, high = facts.get("lower") or "", facts.get("upper") or ""
    return low if low == high or not high else f"{low}..{high}"


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_OUT)
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--unsafe-fixes", action="store_true")
    args = parser.parse_args(argv)
    from jaxmigrate.migrator.target import newest_release

    newest = newest_release()
    packages = sorted(p for p in args.corpus.iterdir() if p.is_dir())
    if not packages:
        raise SystemExit(f"no packages in {args.corpus}: run bench/legacy_corpus.py first")
    extra = ["--unsafe-fixes"] if args.unsafe_fixes else []
    rows: List[Tuple[str, ...]] = []
    totals: Dict[str, int] = {"default": 0, "newest": 0}
    for package in packages:
        default = _run(package, extra, args.jobs)
        told = _run(package, [*extra, "--target-version", newest], args.jobs)
        fixes, wanted = _fixes(default), _fixes(told)
        totals["default"] += fixes
        totals["newest"] += wanted
        origin = (default.get("source_range") or {}).get("origin") or "unknown"
        rows.append(
            (
                package.name,
                origin.split(": ", 1)[-1][:28],
                _range(default.get("source_range")),
                _range(default.get("target_range")),
                str(fixes),
                str(wanted),
                f"{fixes / wanted:.0%}" if wanted else "-",
            )
        )
    header = ("package", "requirement", "source", "target", "fixes", f"at {newest}", "ratio")
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)))
    ratio = totals["default"] / totals["newest"] if totals["newest"] else 1.0
    print(
        f"\nall packages: {totals['default']} fixes with no flags, {totals['newest']} with "
        f"--target-version {newest}: {ratio:.1%}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
