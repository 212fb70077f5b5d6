"""Do a migrated legacy library's own tests pass on the newest JAX?

For each package named (from the legacy corpus of ``bench/legacy_corpus.py``), run its own test
files with pytest twice, on the interpreter given by ``--python`` (the newest JAX and the
package's other dependencies at versions of today, plus pytest): once on the package as
released, once on a copy migrated by ``jaxmigrate --unsafe-fixes`` (no other flag: the
project's own requirement is the source).  Prints, per package, the tests passed / failed /
errored / skipped before and after, and the collection errors (a test module that does not even
import).  The package's own folder comes first on ``sys.path``, ahead of any installed release
of it.

Usage::

    python bench/legacy_corpus.py --out /tmp/lc
    python bench/package_tests.py --python /path/to/venv/bin/python --corpus /tmp/lc \\
        chex-0.1.0 optax-0.1.4
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, Optional

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.import_smoke import migrate_copy  # noqa: E402
from bench.legacy_corpus import DEFAULT_OUT  # noqa: E402

_COUNT = re.compile(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed)")
DEFAULT_PACKAGES = ("chex-0.1.0", "chex-0.1.6", "optax-0.1.0", "optax-0.1.4")


def test_files(package_dir: Path) -> List[str]:
    """The package's test modules (``*_test.py``/``test_*.py`` inside its import packages)."""
    found: List[str] = []
    for top in sorted(p for p in package_dir.iterdir() if (p / "__init__.py").is_file()):
        for path in sorted(top.rglob("*.py")):
            if path.name.endswith("_test.py") or path.name.startswith("test_"):
                found.append(str(path.relative_to(package_dir)))
    return found


def run_tests(python: str, package_dir: Path, timeout: int) -> Dict[str, int]:
    """pytest's counts over the package's test files (``timeout``: the whole run)."""
    files = test_files(package_dir)
    env = dict(os.environ, PYTHONPATH=str(package_dir), JAX_PLATFORMS="cpu")
    command = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=",
               "--continue-on-collection-errors", *files]  # fmt: skip
    try:
        run = subprocess.run(
            command, capture_output=True, text=True, cwd=package_dir, env=env, timeout=timeout
        )
        tail = run.stdout.strip().splitlines()[-1:] if run.stdout.strip() else [""]
        counts = {"timeout": 0}
    except subprocess.TimeoutExpired:
        return {"timeout": 1}
    for number, kind in _COUNT.findall(tail[0]):
        key = "errors" if kind.startswith("error") else kind
        counts[key] = counts.get(key, 0) + int(number)
    return counts


def _cell(counts: Dict[str, int]) -> str:
    if counts.get("timeout"):
        return "timed out"
    return (
        f"{counts.get('passed', 0)} passed, {counts.get('failed', 0)} failed, "
        f"{counts.get('errors', 0)} errors, {counts.get('skipped', 0)} skipped"
    )


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("packages", nargs="*", default=list(DEFAULT_PACKAGES))
    parser.add_argument("--python", required=True, help="interpreter with the newest JAX")
    parser.add_argument("--corpus", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--timeout", type=int, default=1200, help="seconds per pytest run")
    args = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory(prefix="jaxmigrate-tests-") as tmp:
        for name in args.packages:
            source = args.corpus / name
            before_dir = Path(tmp) / "before" / name
            shutil.copytree(source, before_dir)
            before = run_tests(args.python, before_dir, args.timeout)
            (Path(tmp) / "after").mkdir(exist_ok=True)
            after_dir, _findings = migrate_copy(source, Path(tmp) / "after")
            after = run_tests(args.python, after_dir, args.timeout)
            rows.append((name, len(test_files(source)), before, after))
            print(f"{name}: before {_cell(before)}; after {_cell(after)}", flush=True)
    print()
    print(f"{'package':16} {'test files':>10}  before -> after (passed)")
    for name, files, before, after in rows:
        print(f"{name:16} {files:>10}  {before.get('passed', 0):>6} -> {after.get('passed', 0)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
