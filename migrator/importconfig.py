"""The names a project imports as its own (isort's "first party"), so that an import a fix adds
goes into the right group (:mod:`migrator.importplace`).

isort and ruff call a module first party when it is found in the project's source folders
(the project root and ``src/``) or is listed in their ``known-first-party`` setting.  This reads
both from the nearest directory (walking up from the file) that looks like a project root
(it has a ``pyproject.toml``, ``setup.cfg``, ``setup.py``, ``tox.ini``, ``.isort.cfg`` or
``.git``):

* the packages (folders with an ``__init__.py``) and modules (``*.py`` but ``setup.py``) in
  the root and in its ``src/``;
* ``known-first-party``/``known_first_party`` in ``pyproject.toml`` (``[tool.isort]``,
  ``[tool.ruff.isort]``, ``[tool.ruff.lint.isort]``), ``setup.cfg`` (``[isort]``,
  ``[tool:isort]``), ``tox.ini`` and ``.isort.cfg`` (``[isort]``, ``[settings]``).

Everything else that is not the standard library is third party, as both tools default to.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Iterable, Set, Tuple

from jaxmigrate.migrator import tomlfile
from jaxmigrate.migrator.linelength import folder_of

_ROOT_MARKERS = ("pyproject.toml", "setup.cfg", "setup.py", "tox.ini", ".isort.cfg", ".git")
_INI = {
    "setup.cfg": ("isort", "tool:isort"),
    "tox.ini": ("isort", "tool:isort"),
    ".isort.cfg": ("isort", "settings"),
}


def first_party_for(path: Path) -> Tuple[str, ...]:
    """The first-party top-level names of the project ``path`` (a file or folder) is in."""
    return first_party_in(folder_of(path))


def first_party_in(folder: str) -> Tuple[str, ...]:
    """The first-party top-level names of the project the resolved ``folder`` is in."""
    return _for_directory(folder)


@functools.lru_cache(maxsize=4096)  # (a folder each: a big tree has thousands)
def _for_directory(directory: str) -> Tuple[str, ...]:
    here = Path(directory)
    if any((here / marker).exists() for marker in _ROOT_MARKERS):
        return _for_root(str(here))
    if here.parent == here:
        return ()
    return _for_directory(str(here.parent))  # (the parent's answer, read once for its folders)


@functools.lru_cache(maxsize=256)
def _for_root(root: str) -> Tuple[str, ...]:
    """The names of one project root (read once per root, not once per folder under it: a
    project's folders are many, its roots few)."""
    here = Path(root)
    names = _own_modules(here) | _own_modules(here / "src") | _configured(here)
    return tuple(sorted(names))


def _own_modules(folder: Path) -> Set[str]:
    found: Set[str] = set()
    try:
        children = list(folder.iterdir())
    except OSError:
        return found
    for child in children:
        if child.suffix == ".py" and child.stem not in ("setup", "conftest"):
            if child.stem.isidentifier():
                found.add(child.stem)
        elif child.name.isidentifier() and (child / "__init__.py").is_file():
            found.add(child.name)
    return found


def _configured(root: Path) -> Set[str]:
    found: Set[str] = set()
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        try:
            tool = tomlfile.loads(pyproject.read_text(encoding="utf-8", errors="replace"))
        except (OSError, ValueError):
            tool = {}
        tool = tool.get("tool", {}) if isinstance(tool, dict) else {}
        ruff = tool.get("ruff", {}) if isinstance(tool, dict) else {}
        ruff = ruff if isinstance(ruff, dict) else {}
        lint = ruff.get("lint", {}) if isinstance(ruff.get("lint", {}), dict) else {}
        for table in (tool.get("isort", {}), ruff.get("isort", {}), lint.get("isort", {})):
            if isinstance(table, dict):
                for key in ("known-first-party", "known_first_party"):
                    found |= _names(table.get(key, ()))
    for name, sections in _INI.items():
        path = root / name
        if not path.is_file():
            continue
        import configparser

        parser = configparser.ConfigParser(strict=False, interpolation=None)
        try:
            parser.read_string(path.read_text(encoding="utf-8", errors="replace"))
        except (OSError, configparser.Error):
            continue
        for section in sections:
            for key in ("known_first_party", "known-first-party"):
                if parser.has_option(section, key):
                    found |= _names(parser.get(section, key).replace("\n", ",").split(","))
    return found


def _names(values: object) -> Set[str]:
    if isinstance(values, str):
        values = values.split(",")
    if not isinstance(values, Iterable):
        return set()
    return {v.strip() for v in values if isinstance(v, str) and v.strip().isidentifier()}
