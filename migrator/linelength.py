"""The line length a project asks for, so that a line a rewrite made longer can be wrapped.

Read from the nearest directory (walking up from the file) that holds a configuration file
setting one, in the order the tools themselves are usually consulted:

* ``pyproject.toml``: ``[tool.ruff] line-length``, ``[tool.black] line-length``,
  ``[tool.flake8] max-line-length`` (flake8 plugins read it there), ``[tool.pylint.format]
  max-line-length``;
* ``setup.cfg``, ``tox.ini``, ``.flake8``: ``[flake8]``/``[pycodestyle]``/``[pep8]``
  ``max-line-length``;
* ``.pylintrc``/``pylintrc``: ``[FORMAT] max-line-length``.

The walk stops at the first directory that looks like a project root (it has a
``pyproject.toml``, ``setup.cfg``, ``setup.py`` or ``.git``) even when that sets nothing, so a
project without a setting is not given its parent's.  Without a setting the length is 88:
black's default, which is what most JAX-ecosystem projects format with (PEP 8's 79 would wrap
lines that projects never held to it).  Only lines a rewrite made longer than this are
wrapped; a line that was already longer is the user's and stays as it is.
"""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path
from typing import Optional

from jaxmigrate.migrator import tomlfile

DEFAULT_LINE_LENGTH = 88
_ROOT_MARKERS = ("pyproject.toml", "setup.cfg", "setup.py", ".git")
_INI_SECTIONS = {
    "setup.cfg": ("flake8", "pycodestyle", "pep8"),
    "tox.ini": ("flake8", "pycodestyle", "pep8"),
    ".flake8": ("flake8",),
    ".pylintrc": ("FORMAT", "format"),
    "pylintrc": ("FORMAT", "format"),
}


def line_length_for(path: Path) -> int:
    """The line length configured for the project ``path`` (a file or folder) is in."""
    return line_length_in(folder_of(path))


def line_length_in(folder: str) -> int:
    """The line length configured for the project the resolved ``folder`` is in."""
    found = _for_directory(folder)
    return DEFAULT_LINE_LENGTH if found is None else found


def folder_of(path: Path) -> str:
    """The real path of ``path``'s folder (``path`` itself if it is one), resolved once per
    folder: its files share it.  (Made absolute first: a relative path means another folder
    once the working directory changes.)"""
    folder = path if path.is_dir() else path.parent
    return _resolved(os.path.abspath(folder))


@functools.lru_cache(maxsize=4096)  # (a folder each: a big tree has thousands)
def _resolved(folder: str) -> str:
    return str(Path(folder).resolve())


@functools.lru_cache(maxsize=4096)  # (a folder each: a big tree has thousands)
def _for_directory(directory: str) -> Optional[int]:
    here = Path(directory)
    found = configured_in(here)
    if found is not None:
        return found
    if any((here / marker).exists() for marker in _ROOT_MARKERS) or here.parent == here:
        return None
    return _for_directory(str(here.parent))


def configured_in(directory: Path) -> Optional[int]:
    """The line length the configuration files of ``directory`` set, if one does."""
    pyproject = directory / "pyproject.toml"
    if pyproject.is_file():
        found = _from_pyproject(pyproject)
        if found is not None:
            return found
    for name, sections in _INI_SECTIONS.items():
        path = directory / name
        if path.is_file():
            found = _from_ini(path, sections)
            if found is not None:
                return found
    return None


def _from_pyproject(path: Path) -> Optional[int]:
    try:
        tool = tomlfile.loads(path.read_text(encoding="utf-8", errors="replace")).get("tool", {})
    except (OSError, ValueError):
        return None
    pylint = tool.get("pylint", {})
    for table, key in (
        (tool.get("ruff", {}), "line-length"),
        (tool.get("black", {}), "line-length"),
        (tool.get("flake8", {}), "max-line-length"),
        (pylint.get("format", {}) if isinstance(pylint, dict) else {}, "max-line-length"),
    ):
        value = table.get(key) if isinstance(table, dict) else None
        found = _number(value)
        if found is not None:
            return found
    return None


def _from_ini(path: Path, sections: tuple) -> Optional[int]:
    import configparser

    parser = configparser.ConfigParser(strict=False, interpolation=None)
    try:
        parser.read_string(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, configparser.Error):
        return None
    for section in sections:
        for key in ("max-line-length", "max_line_length"):
            if parser.has_option(section, key):
                found = _number(parser.get(section, key))
                if found is not None:
                    return found
    return None


def _number(value: object) -> Optional[int]:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value > 0 else None
    if isinstance(value, str):
        match = re.fullmatch(r"\s*(\d+)\s*(#.*)?", value)
        if match and int(match.group(1)) > 0:
            return int(match.group(1))
    return None
