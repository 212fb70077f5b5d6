"""The line length a project asks for, so that a line a rewrite made longer can be wrapped.

Read from the nearest directory (walking up from the file) that holds a configuration file
setting one, in the order the tools themselves are usually consulted:

* ``pyproject.toml``: ``[tool.ruff] line-length``, ``[tool.black] line-length``,
  ``[tool.pyink] line-length`` (Google's fork of black), ``[tool.yapf] column_limit`` (or its
  ``based_on_style``), ``[tool.flake8] max-line-length`` (flake8 plugins read it there),
  ``[tool.pylint.format] max-line-length``;
* ``setup.cfg``, ``tox.ini``, ``.flake8``: ``[flake8]``/``[pycodestyle]``/``[pep8]``
  ``max-line-length``, and ``setup.cfg``'s ``[yapf]``;
* ``.style.yapf``: ``[style] column_limit`` or ``based_on_style``;
* ``.pylintrc``/``pylintrc``: ``[FORMAT] max-line-length``.

The walk stops at the first directory that looks like a project root (it has a
``pyproject.toml``, ``setup.cfg``, ``setup.py`` or ``.git``) even when that sets nothing, so a
project without a setting is not given its parent's.  Without a setting the length is 88:
black's default, which is what most JAX-ecosystem projects format with (PEP 8's 79 would wrap
lines that projects never held to it); but a file indented by two spaces is written in
Google's style (yapf's and pyink's as Google's projects configure them: JAX, Flax, Haiku,
Optax, jaxline), whose lines end at column 80 (:func:`styled`).  Only lines a rewrite made
longer than this are wrapped; a line that was already longer is the user's and stays as it is.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from jaxmigrate.migrator import tomlfile

if TYPE_CHECKING:  # pragma: no cover
    from jaxmigrate.migrator.settings import Settings

DEFAULT_LINE_LENGTH = 88
GOOGLE_LINE_LENGTH = 80  # Google's Python style guide; yapf's "google" and "yapf" styles
_YAPF_STYLES = {"pep8": 79, "google": 80, "yapf": 80, "facebook": 80}  # their column_limit
_ROOT_MARKERS = ("pyproject.toml", "setup.cfg", "setup.py", ".git")
_INI_SECTIONS = {
    "setup.cfg": ("flake8", "pycodestyle", "pep8"),
    "tox.ini": ("flake8", "pycodestyle", "pep8"),
    ".flake8": ("flake8",),
    ".pylintrc": ("FORMAT", "format"),
    "pylintrc": ("FORMAT", "format"),
}


def line_length_for(path: Path, text: Optional[str] = None) -> int:
    """The line length configured for the project ``path`` (a file or folder) is in; where it
    configures none, what the file's ``text`` (if given) asks for by its style."""
    found = configured_for(folder_of(path))
    if found is None and text is not None:
        found = styled(text)
    return DEFAULT_LINE_LENGTH if found is None else found


def line_length_in(folder: str) -> int:
    """The line length configured for the project the resolved ``folder`` is in."""
    found = configured_for(folder)
    return DEFAULT_LINE_LENGTH if found is None else found


def configured_for(folder: str) -> Optional[int]:
    """The line length the project the resolved ``folder`` is in configures; None: none."""
    return _for_directory(folder)


# A statement that opens a block (``def``, ``if``, ...: not a docstring's ``Args:``, whose
# entries docstring styles indent by two in any code), and the first line of code below it:
# the step between their indents is the file's indent.
_BLOCK = re.compile(
    r"^([ ]*)(?:async[ \t]+)?(?:def|class|if|elif|else|for|while|with|try|except|finally)\b"
    r"[^\n]*:[ \t]*(?:#[^\n]*)?\n(?:[ \t]*(?:#[^\n]*)?\n)*([ ]*)\S",
    re.M,
)
_SAMPLES = 20  # blocks read: the first lines of a file tell its indent


def styled(text: str) -> Optional[int]:
    """The line length ``text``'s own style implies, for a project that configures none:
    :data:`GOOGLE_LINE_LENGTH` when its blocks are indented by two spaces (most of the first
    :data:`_SAMPLES`), else None (black's 88 then)."""
    steps = []
    for match in _BLOCK.finditer(text):
        step = len(match.group(2)) - len(match.group(1))
        if step > 0:
            steps.append(step)
            if len(steps) == _SAMPLES:
                break
    return GOOGLE_LINE_LENGTH if steps and steps.count(2) * 2 > len(steps) else None


def for_style(settings: "Settings", text: str) -> "Settings":
    """``settings`` with the line length ``text``'s own style asks for (:func:`styled`), where
    the project configures none (``line_length_from_style``).  Only what a fix writes is laid
    out by it: the engine and the docstrings ask once a file has passed their gates, where most
    files stop without it."""
    return _styled(settings, styled(text)) if settings.line_length_from_style else settings


@functools.lru_cache(maxsize=64)  # (a few settings in a run, each styled two ways at most)
def _styled(settings: "Settings", length: Optional[int]) -> "Settings":
    """``settings`` for a file whose own style asks for ``length`` (None: the default)."""
    if length is None:
        return settings
    return dataclasses.replace(settings, line_length=length, line_length_from_style=False)


def folder_of(path: Path) -> str:
    """The real path of ``path``'s folder (``path`` itself if it is one), resolved once per
    folder: its files share it.  (Made absolute first: a relative path means another folder
    once the working directory changes.)"""
    folder = path if path.is_dir() else path.parent
    return resolved_folder(os.path.abspath(folder))


@functools.lru_cache(maxsize=4096)  # (a folder each: a big tree has thousands)
def resolved_folder(folder: str) -> str:
    """The real path of the absolute path ``folder``, resolved once per folder (the run's
    projects and the files' settings read them alike)."""
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
    for name, section in (("setup.cfg", "yapf"), (".style.yapf", "style")):
        path = directory / name
        if path.is_file():
            found = _from_ini(path, (section,), yapf=True)
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
        (tool.get("pyink", {}), "line-length"),
        (tool.get("yapf", {}), "column_limit"),
        (tool.get("flake8", {}), "max-line-length"),
        (pylint.get("format", {}) if isinstance(pylint, dict) else {}, "max-line-length"),
    ):
        value = table.get(key) if isinstance(table, dict) else None
        found = _number(value)
        if found is not None:
            return found
    yapf = tool.get("yapf", {})
    return _yapf_style(yapf.get("based_on_style")) if isinstance(yapf, dict) else None


def _yapf_style(value: object) -> Optional[int]:
    """The column limit of a yapf ``based_on_style`` (None: not one yapf names)."""
    return _YAPF_STYLES.get(value.strip().lower()) if isinstance(value, str) else None


def _from_ini(path: Path, sections: tuple, yapf: bool = False) -> Optional[int]:
    """The length the ``sections`` of the INI file ``path`` set (``yapf``: yapf's keys)."""
    import configparser

    parser = configparser.ConfigParser(strict=False, interpolation=None)
    try:
        parser.read_string(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, configparser.Error):
        return None
    keys = ("column_limit", "column-limit") if yapf else ("max-line-length", "max_line_length")
    for section in sections:
        for key in keys:
            if parser.has_option(section, key):
                found = _number(parser.get(section, key))
                if found is not None:
                    return found
        if yapf and parser.has_option(section, "based_on_style"):
            return _yapf_style(parser.get(section, "based_on_style"))
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
