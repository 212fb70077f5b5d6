"""The code passes ``ruff check`` and ``ruff format --check`` with the configuration in
pyproject.toml."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _ruff() -> str:
    try:
        from ruff.__main__ import find_ruff_bin  # the binary the ruff package installed
    except ImportError:
        found = shutil.which("ruff")
        if found is None:
            pytest.skip("ruff is not installed (pip install -e '.[test]')")
        return found
    return str(find_ruff_bin())


def test_ruff_check_passes():
    done = subprocess.run(
        [_ruff(), "check", "--no-cache", "."], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_ruff_format_check_passes():
    done = subprocess.run(
        [_ruff(), "format", "--check", "--no-cache", "."],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
