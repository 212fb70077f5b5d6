"""Finding the files to migrate under the paths the user gave."""

from __future__ import annotations

import dataclasses
import errno
import fnmatch
import functools
import os
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Tuple, Union

# Directories never walked into (a virtualenv is also recognised by its pyvenv.cfg).
DEFAULT_EXCLUDES = (
    ".git", ".hg", ".svn", ".bzr", ".jj", ".tox", ".nox", ".venv", "venv", ".direnv",
    ".mypy_cache", ".pytest_cache", ".ruff_cache", "__pycache__", "__pypackages__",
    "build", "dist", "node_modules", "site-packages", ".eggs", "*.egg-info",
    ".ipynb_checkpoints",
)  # fmt: skip

NOTEBOOK_SUFFIX = ".ipynb"
SOURCE_SUFFIXES = (".py", ".pyi", NOTEBOOK_SUFFIX)
DOC_SUFFIXES = (".md", ".markdown", ".rst")  # walked into only with --docs


def _matches(relative: str, name: str, patterns: Iterable[str]) -> bool:
    for pattern in patterns:
        pattern = pattern.rstrip("/")
        if fnmatch.fnmatchcase(name, pattern) or fnmatch.fnmatchcase(relative, pattern):
            return True
        if fnmatch.fnmatchcase(relative, pattern + "/*"):
            return True
    return False


@dataclasses.dataclass(frozen=True)
class Exclude:
    """An exclude pattern anchored at a directory: ``[tool.jaxmigrate]``'s patterns are read
    relative to the directory holding the configuration file, whatever paths the run is
    given (``jaxmigrate src/``, ``jaxmigrate .`` and the file lists pre-commit hands over
    skip the same files).  A pattern without ``/`` matches any file or directory name below
    that directory; one with ``/`` matches a path from it (``third_party/*``, ``src/gen``),
    and excludes everything under a directory it matches."""

    pattern: str
    base: Path

    def covers(self, path: Path) -> Optional[bool]:
        """Whether the pattern excludes ``path``; None if ``path`` is not below the base."""
        relative = _below(path, self.base)
        if relative is None:
            return None
        parts = relative.split("/")
        return any(
            _matches("/".join(parts[:count]), parts[count - 1], (self.pattern,))
            for count in range(1, len(parts) + 1)
        )


def _below(path: Path, base: Path) -> Optional[str]:
    """``path`` relative to ``base`` (posix), as written or with symbolic links resolved."""
    root = os.path.abspath(base)
    target = os.path.abspath(path)
    if not _inside(target, root):  # (the links only when needed)
        root, target = _real_folder(root), _realpath(path)
        if not _inside(target, root):
            return None
    return Path(os.path.relpath(target, root)).as_posix()


def _inside(target: str, root: str) -> bool:
    """Is the absolute path ``target`` below the folder ``root`` (not ``root`` itself)?"""
    return target.startswith(root.rstrip(os.sep) + os.sep)


def _realpath(path: Union[str, Path]) -> str:
    """``os.path.realpath(path)``, its folder's resolved once for all the files a walk asks
    about (each would resolve every folder above it again)."""
    path = os.fspath(path)
    if os.pardir in Path(path).parts or os.path.islink(path):
        return os.path.realpath(path)  # (a ``..`` after a link is read past the link)
    folder, name = os.path.split(os.path.abspath(path))
    return os.path.join(_real_folder(folder), name) if name else _real_folder(folder)


@functools.lru_cache(maxsize=4096)  # (a folder each: the run's tree)
def _real_folder(folder: str) -> str:
    return os.path.realpath(folder)


Pattern = Union[str, "Exclude"]


def _excluded(path: Path, relative: str, patterns: Sequence[Pattern]) -> bool:
    """``relative`` is ``path`` from the root of the walk (or as given): plain patterns (the
    command line's) match it or its name; anchored ones match from their base."""
    plain = [p for p in patterns if isinstance(p, str)]
    if plain and _matches(relative, path.name, plain):
        return True
    for pattern in patterns:
        if isinstance(pattern, Exclude):
            covered = pattern.covers(path)
            if covered is None:  # outside the project: the name and the path as given
                covered = _matches(relative, path.name, (pattern.pattern,))
            if covered:
                return True
    return False


def discover(
    paths: Sequence[str], excludes: Sequence[Pattern], suffixes: Sequence[str] = SOURCE_SUFFIXES
) -> Tuple[List[Path], List[Tuple[str, str]]]:
    """Files to process, in a stable order, and (path, reason) for paths that do not exist.
    ``excludes`` are glob patterns: strings match paths from each directory given (and
    names), :class:`Exclude` patterns paths from their own base."""
    _real_folder.cache_clear()  # (links may have changed since an earlier run in this process)
    found: List[Path] = []
    seen = set()
    missing: List[Tuple[str, str]] = []

    real_directories: Dict[str, str] = {}

    def add(path: Path, walked: bool = False) -> None:
        if walked:  # (not a symbolic link: its directory's real path, read once, and its name)
            directory, name = os.path.split(path)
            real = real_directories.get(directory)
            if real is None:
                real = real_directories[directory] = os.path.realpath(directory)
            key = os.path.join(real, name)
        else:
            key = os.path.realpath(path)
        if key not in seen:
            seen.add(key)
            found.append(path)

    anchored = [p for p in excludes if isinstance(p, Exclude)]
    for given in paths:
        path = Path(given)
        if path.is_dir() and not path.is_symlink():
            if not any(p.covers(path) for p in anchored):  # (a directory the project excludes)
                for file in _walk(path, excludes, suffixes):
                    add(file, walked=True)
        elif path.is_symlink() and not path.exists():
            missing.append((given, _broken_link_reason(path)))
        elif path.exists() or path.is_symlink():
            if path.is_dir():
                if not any(p.covers(path) for p in anchored):
                    for file in _walk(path, excludes, suffixes):
                        add(file, walked=True)
            elif not _excluded(path, path.as_posix(), excludes):
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


def _walk(root: Path, excludes: Sequence[Pattern], suffixes: Sequence[str]) -> List[Path]:
    result: List[Path] = []
    for directory, dirnames, filenames in os.walk(root, followlinks=False):
        base = Path(directory)
        kept = []
        for name in sorted(dirnames):
            child = base / name
            relative = child.relative_to(root).as_posix()
            if child.is_symlink() or _matches(relative, name, DEFAULT_EXCLUDES):
                continue
            if _excluded(child, relative, excludes) or (child / "pyvenv.cfg").exists():
                continue
            if _is_jax_itself(child, name):
                continue
            kept.append(name)
        dirnames[:] = kept
        for name in sorted(filenames):
            child = base / name
            if not name.endswith(tuple(suffixes)) or child.is_symlink():
                continue
            if not _excluded(child, child.relative_to(root).as_posix(), excludes):
                result.append(child)
    return result


def _is_jax_itself(directory: Path, name: str) -> bool:
    """JAX's own package (a ``jax/`` holding ``_src/``, a ``jaxlib/`` with its ``version.py``),
    vendored or unpacked: it defines the APIs the migration moves to, and is never user code
    to migrate.  Walks skip it; a file inside it that is named on the command line is kept."""
    if name == "jax":
        return (directory / "__init__.py").is_file() and (
            directory / "_src" / "__init__.py"
        ).is_file()
    if name == "jaxlib":
        return (directory / "__init__.py").is_file() and (directory / "version.py").is_file()
    return False
