"""Does a migrated legacy library import on the newest JAX?  The test of "done" for a module.

For each package of the legacy corpus (``bench/legacy_corpus.py``), and for every module of its
top-level import packages (directories with an ``__init__.py`` at the root of the sdist):

1. import it, unmigrated, with the newest JAX installed (the interpreter given by ``--python``,
   which must have ``jax`` and the package's other dependencies at versions of today);
2. copy the package, run ``jaxmigrate --unsafe-fixes`` on the copy (no other flag: the project's
   own requirement is the source), and import every module again.

A module that fails is attributed to the first line that stops it: the innermost frame of the
traceback inside the package's own files.  An import stopped by a missing third-party module
(``No module named 'tensorflow'``) is a *dependency* failure, not counted against the tool.
Every other stop is a *blocking line*: *reported* when the migration left a finding on that
line (the finding says what to write), *silent* otherwise.

Prints one row per package (modules; importing before/after; blocked by dependencies;
blocking lines reported/silent) and the totals.  ``--list`` prints each silent blocking line
with its error.  The acceptance: 0 silent blockers, at least 90% of the modules that are not
blocked by a dependency importing.

Usage::

    python bench/legacy_corpus.py
    python bench/import_smoke.py --python /path/to/venv/bin/python [--only NAME ...] [--list]
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
from typing import Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.legacy_corpus import DEFAULT_OUT  # noqa: E402

# Run in the target interpreter: import each module, report how it went, as JSON lines.
_IMPORTER = r"""
import importlib, json, os, sys, traceback, warnings
warnings.simplefilter("ignore")
root = os.path.realpath(sys.argv[1])
for name in sys.argv[2:]:
    try:
        importlib.import_module(name)
        print(json.dumps({"module": name, "ok": True}), flush=True)
    except BaseException as error:  # noqa: BLE001 (SystemExit from argparse at import, ...)
        frames = [
            f for f in traceback.extract_tb(error.__traceback__)
            if os.path.realpath(f.filename).startswith(root + os.sep)
        ]
        where = frames[-1] if frames else None
        missing = getattr(error, "name", None) if isinstance(error, ModuleNotFoundError) else None
        print(json.dumps({
            "module": name, "ok": False, "error": f"{type(error).__name__}: {error}"[:300],
            "missing": missing,
            "file": os.path.relpath(where.filename, root) if where else None,
            "line": where.lineno if where else None,
        }), flush=True)
"""


def modules_of(package_dir: Path) -> List[str]:
    """Every module of the sdist's top-level import packages, as dotted names."""
    names: List[str] = []
    for top in sorted(p for p in package_dir.iterdir() if (p / "__init__.py").is_file()):
        for path in sorted(top.rglob("*.py")):
            relative = path.relative_to(package_dir).with_suffix("")
            parts = list(relative.parts)
            if not all(part.isidentifier() for part in parts):
                continue
            if parts[-1] == "__init__":
                parts = parts[:-1]
            names.append(".".join(parts))  # folders without __init__.py: namespace packages
    return names


def import_all(python: str, package_dir: Path, modules: List[str], timeout: int) -> List[dict]:
    env = dict(os.environ, PYTHONPATH=str(package_dir), JAX_PLATFORMS="cpu")
    env.pop("PYTHONSTARTUP", None)
    done: List[dict] = []
    pending = list(modules)
    while pending:  # a crash (segfault, hang) costs the module it happened on, not the rest
        try:
            run = subprocess.run(
                [python, "-c", _IMPORTER, str(package_dir), *pending],
                capture_output=True, text=True, env=env, cwd=tempfile.gettempdir(),
                timeout=timeout,
            )  # fmt: skip
            out = run.stdout
        except subprocess.TimeoutExpired as expired:
            out = (
                expired.stdout.decode()
                if isinstance(expired.stdout, bytes)
                else (expired.stdout or "")
            )
        got = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
        done += got
        pending = pending[len(got) :]
        if pending:  # the next module took the interpreter down
            done.append({"module": pending[0], "ok": False, "error": "crashed or timed out",
                         "missing": None, "file": None, "line": None})  # fmt: skip
            pending = pending[1:]
    return done


def _dependency(record: dict, tops: List[str]) -> bool:
    missing = record.get("missing") or ""
    head = missing.split(".", 1)[0]
    return bool(missing) and head not in ("jax", "jaxlib") and head not in tops


def migrate_copy(package_dir: Path, work: Path) -> Tuple[Path, Dict[Tuple[str, int], List[str]]]:
    """A migrated copy of the package, and its findings by (file, line) after the rewrite."""
    copy = work / package_dir.name
    shutil.copytree(package_dir, copy)
    (copy / ".git").mkdir()  # the project's root: its requirement is found there, not above
    command = [
        sys.executable, "-c", "from jaxmigrate.migrator.cli import command; command()",
        ".", "--unsafe-fixes", "--format", "json", "--no-cache", "-q", "-j", "2",
    ]  # fmt: skip
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    run = subprocess.run(command, capture_output=True, text=True, cwd=copy, env=env)
    report = json.loads(run.stdout)
    findings: Dict[Tuple[str, int], List[str]] = {}
    for entry in report["files"]:
        for finding in entry["findings"]:
            key = (os.path.normpath(entry["path"]), finding["line"])
            findings.setdefault(key, []).append(finding["code"])
    return copy, findings


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--python", default=sys.executable, help="interpreter with newest JAX")
    parser.add_argument("--only", nargs="*", default=None, metavar="NAME")
    parser.add_argument("--timeout", type=int, default=600)
    parser.add_argument("--list", action="store_true", help="print every blocking line")
    args = parser.parse_args(argv)
    packages = sorted(p for p in args.corpus.iterdir() if p.is_dir())
    if args.only:
        packages = [p for p in packages if any(p.name.startswith(o) for o in args.only)]
    # JAX's own old sources are no user of JAX: they need their own jaxlib, not a migration
    packages = [p for p in packages if not p.name.startswith(("jax-", "jaxlib-"))]
    header = ("package", "modules", "ok before", "ok after", "deps", "reported", "silent")
    rows: List[Tuple[str, ...]] = []
    totals = [0] * 6
    silent_lines: List[str] = []
    reported_lines: List[str] = []
    with tempfile.TemporaryDirectory(prefix="jaxmigrate-smoke-") as tmp:
        for package in packages:
            modules = modules_of(package)
            if not modules:
                continue
            tops = sorted({m.split(".", 1)[0] for m in modules})
            before = import_all(args.python, package, modules, args.timeout)
            copy, findings = migrate_copy(package, Path(tmp))
            after = import_all(args.python, copy, modules, args.timeout)
            deps = [r for r in after if not r["ok"] and _dependency(r, tops)]
            blocked = {
                (os.path.normpath(r["file"] or "?"), r["line"] or 0): r
                for r in after
                if not r["ok"] and not _dependency(r, tops)
            }
            reported = [k for k in blocked if k in findings]
            silent = [k for k in blocked if k not in findings]
            for key in silent:
                silent_lines.append(f"{package.name}/{key[0]}:{key[1]}: {blocked[key]['error']}")
            for key in reported:
                codes = ", ".join(findings[key])
                reported_lines.append(f"{package.name}/{key[0]}:{key[1]}: {codes}")
            counts = [
                len(modules),
                sum(r["ok"] for r in before),
                sum(r["ok"] for r in after),
                len(deps),
                len(reported),
                len(silent),
            ]
            totals = [t + c for t, c in zip(totals, counts)]
            rows.append((package.name, *map(str, counts)))
    rows.append(("total", *map(str, totals)))
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        print("  ".join(cell.rjust(w) if i else cell.ljust(w) for i, (cell, w) in
                        enumerate(zip(row, widths))))  # fmt: skip
    modules, _ok_before, ok_after, deps = totals[:4]
    reachable = modules - deps
    share = ok_after / reachable if reachable else 1.0
    print(
        f"\n{ok_after} of {reachable} modules not blocked by a missing dependency import after "
        f"migration ({share:.1%}); blocking lines: {totals[4]} reported, {totals[5]} silent"
    )
    if args.list:
        for title, lines in (("silent", silent_lines), ("reported", reported_lines)):
            if lines:
                print(f"\n{title} blocking lines:")
                for line in lines:
                    print("  " + line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
