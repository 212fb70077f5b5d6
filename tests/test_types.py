"""The whole package (the engine ``jaxmigrate.migrator`` and the rules ``jaxmigrate.rules``)
passes mypy with the configuration in pyproject.toml (``warn_unused_ignores``: an ignore the
code no longer needs fails too).

The repository keeps ``migrator/`` and ``rules/`` at the top level and maps them into the
``jaxmigrate`` package at install time (``package-dir``), which an editable install does with
an import hook that mypy cannot follow.  The test lays the package out as it is installed, with
symbolic links, in a temporary directory, and checks it there.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _package_tree(tmp: Path) -> Path:
    package = tmp / "jaxmigrate"
    package.mkdir()
    for source in (ROOT / "jaxmigrate").glob("*.py"):
        (package / source.name).symlink_to(source)
    (package / "migrator").symlink_to(ROOT / "migrator", target_is_directory=True)
    (package / "rules").symlink_to(ROOT / "rules", target_is_directory=True)
    return tmp


def test_package_type_checks(tmp_path):
    pytest.importorskip("mypy", reason="mypy is not installed (pip install -e '.[test]')")
    tree = _package_tree(tmp_path)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--cache-dir",
            str(tmp_path / ".mypy_cache"),
            "-p",
            "jaxmigrate",
        ],
        cwd=tree,
        capture_output=True,
        text=True,
        timeout=600,
        env=dict(os.environ, MYPYPATH=str(tree)),
    )
    assert done.returncode == 0, done.stdout + done.stderr
