"""Finding the files to migrate under the paths the user gave."""

from __future__ import annotations

import errno
import fnmatch
import os
from pathlib import Path
from typing import Iterable, List, Sequence, Tuple

# Directories never walked into (a virtualenv is also recognised by its pyvenv.cfg).
DEFAULT_EXCLUDES = (
    ".git", ".hg", ".svn", ".bzr", ".jj", ".tox", ".nox", ".venv", "venv", ".direnv",
    ".mypy_cache", ".pytest_cache", ".ruff_cache", "__pycache__", "__pypackages__",
    "build", "dist", "node_modules", "site-packages", ".eggs", "*.egg-info",
    ".ipynb_checkpoints",
)  # fmt: skip

SOURCE_SUFFIXES = (".py", ".pyi", ".ipynb")
DOC_SUFFIXES = (".md", ".markdown", ".rst")  # walked into only with --docs


def _matches(relative: str, name: str, patterns: Iterable[str]) -> bool:
    for pattern in patterns:
        pattern = pattern.rstrip("/")
        if fnmatch.fnmatchcase(name, pattern) or fnmatch.fnmatchcase(relative, pattern):
            return True
        if fnmatch.fnmatchcase(relative, pattern + "/*"):
            return True
    return False


def discover(
    paths: Sequence[str], excludes: Sequence[str], suffixes: Sequence[str] = SOURCE_SUFFIXES
) -> Tuple[List[Path], List[Tuple[str, str]]]:
    """Files to process, in a stable order, and (path, reason) for paths that do not exist."""
    found: List[Path] = []
    seen = set()
    missing: List[Tuple[str, str]] = []

    def add(path: Path) -> None:
        key = os.path.realpath(path)
        if key not in seen:
            seen.add(key)
            found.append(path)

    for given in paths:
        path = Path(given)
        if path.is_dir() and not path.is_symlink():
            for file in _walk(path, excludes, suffixes):
                add(file)
        elif path.is_symlink() and not path.exists():
            missing.append((given, _broken_link_reason(path)))
        elif path.exists() or path.is_symlink():
            if path.is_dir():
                for file in _walk(path, excludes, suffixes):
                    add(file)
            elif not _matches(path.as_posix(), path.name, excludes):
                add(path)
        else:
            missing.append((given, "no such file or directory"))
    return found, missing


def _broken_link_reason(path: Path) -> str:
    try:
        os.stat(path)
    except OSError as error:
        if error.errno == errno.ELOOP:
            return "symbolic link loop"
    return "dangling symbolic link"


def _walk(root: Path, excludes: Sequence[str], suffixes: Sequence[str]) -> List[Path]:
    result: List[Path] = []
    for directory, dirnames, filenames in os.walk(root, followlinks=False):
        base = Path(directory)
        kept = []
        for name in sorted(dirnames):
            child = base / name
            relative = child.relative_to(root).as_posix()
            if child.is_symlink() or _matches(relative, name, DEFAULT_EXCLUDES):
                continue
            if _matches(relative, name, excludes) or (child / "pyvenv.cfg").exists():
                continue
            if _is_jax_itself(child, name):
                continue
            kept.append(name)
        dirnames[:] = kept
        for name in sorted(filenames):
            child = base / name
            if not name.endswith(tuple(suffixes)) or child.is_symlink():
                continue
            if not _matches(child.relative_to(root).as_posix(), name, excludes):
                result.append(child)
    return result


def _is_jax_itself(directory: Path, name: str) -> bool:
    """JAX's own package (a ``jax/`` holding ``_src/``, a ``jaxlib/`` with its ``version.py``),
    vendored or unpacked: it defines the APIs the migration moves to, and is never user code
    to migrate.  Walks skip it; a file inside it that is named on the command line is kept."""
    if name == "jax":
        return (directory / "__init__.py").is_file() and (directory / "_src" / "__init__.py").is_file()
    if name == "jaxlib":
        return (directory / "__init__.py").is_file() and (directory / "version.py").is_file()
    return False
