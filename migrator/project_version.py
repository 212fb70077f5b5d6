"""Finding the oldest JAX a project allows, from its packaging metadata.

With no ``--target-version`` (and none in ``[tool.jaxmigrate]``), the lowest version the
project's ``jax`` requirement allows becomes the target.  Looked at, in this order, in the
nearest directory (walking up from the paths) that has any of them:

* ``pyproject.toml``: ``[project] dependencies``, then Poetry's ``[tool.poetry.dependencies]``;
* ``setup.cfg``: ``[options] install_requires``;
* ``setup.py``: a literal ``install_requires=[...]`` list in a ``setup(...)`` call, read with
  ``ast`` (the file is never executed);
* ``requirements*.txt`` (sorted by name).

The lowest allowed version is taken from ``>=``, ``==``, ``~=``, ``===`` and ``>`` clauses
(``>X`` gives X: conservative) and Poetry's ``^X`` / ``~X``; ``<``, ``<=`` and ``!=`` do not
give a lower bound.  A requirement without one (plain ``jax``) gives no target.
"""

from __future__ import annotations

import ast
import configparser
import dataclasses
import re
import sys
from pathlib import Path
from typing import Iterable, List, Optional, Sequence

from migrator.version import parse_version

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

_REQUIREMENT_RE = re.compile(
    r"^\s*(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(?P<spec>[^;#]*)"
)
_CLAUSE_RE = re.compile(r"^\s*(===|==|~=|>=|>|<=|<|!=|\^|~)?\s*v?([0-9][0-9a-zA-Z.*+!-]*)\s*$")


@dataclasses.dataclass(frozen=True)
class Detected:
    version: str
    source: Path
    requirement: str

    def describe(self) -> str:
        return f"target version {self.version} from {self.source} ({self.requirement})"


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def lowest_allowed(spec: str) -> Optional[str]:
    """The lowest version a specifier such as ``>=0.4.13,<0.5`` allows, as X.Y.Z."""
    lows = []
    for clause in spec.split(","):
        if not clause.strip():
            continue
        match = _CLAUSE_RE.match(clause)
        if not match:
            continue
        operator, version = match.group(1) or "==", match.group(2)
        if operator in ("<", "<=", "!="):
            continue
        numbers = re.match(r"(\d+)(?:\.(\d+))?(?:\.(\d+))?", version)
        if not numbers:
            continue
        try:
            lows.append(parse_version(".".join(p for p in numbers.groups() if p is not None)))
        except ValueError:
            continue
    if not lows:
        return None
    return ".".join(str(part) for part in max(lows))


def from_requirements(lines: Iterable[str]) -> Optional[tuple]:
    """(lowest version, requirement text) of the first ``jax`` requirement with a lower bound."""
    for raw in lines:
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith(("#", "-")):
            continue
        match = _REQUIREMENT_RE.match(line)
        if not match or _canonical(match.group("name")) != "jax":
            continue
        low = lowest_allowed(match.group("spec"))
        if low:
            return low, line
    return None


def _pyproject(path: Path) -> Optional[tuple]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    found = from_requirements(data.get("project", {}).get("dependencies", []) or [])
    if found:
        return found
    poetry = data.get("tool", {}).get("poetry", {}).get("dependencies", {}) or {}
    for name, value in poetry.items():
        if _canonical(name) != "jax":
            continue
        spec = value.get("version", "") if isinstance(value, dict) else str(value)
        low = lowest_allowed(spec)
        if low:
            return low, f"jax = {spec!r}"
    return None


def _setup_cfg(path: Path) -> Optional[tuple]:
    parser = configparser.ConfigParser()
    try:
        parser.read(path, encoding="utf-8")
    except (configparser.Error, UnicodeDecodeError):
        return None
    if not parser.has_option("options", "install_requires"):
        return None
    return from_requirements(parser.get("options", "install_requires").splitlines())


def _setup_py(path: Path) -> Optional[tuple]:
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return None
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        for keyword in node.keywords:
            if keyword.arg != "install_requires":
                continue
            try:
                value = ast.literal_eval(keyword.value)
            except ValueError:
                continue  # not a literal: never execute setup.py to find out
            if isinstance(value, str):
                value = value.splitlines()
            if isinstance(value, (list, tuple)):
                found = from_requirements(str(v) for v in value)
                if found:
                    return found
    return None


def _requirements(path: Path) -> Optional[tuple]:
    try:
        return from_requirements(path.read_text(encoding="utf-8").splitlines())
    except (OSError, UnicodeDecodeError):
        return None


def _candidates(directory: Path) -> List[Path]:
    names = [directory / "pyproject.toml", directory / "setup.cfg", directory / "setup.py"]
    names += sorted(directory.glob("requirements*.txt"))
    return [p for p in names if p.is_file()]


_READERS = {"pyproject.toml": _pyproject, "setup.cfg": _setup_cfg, "setup.py": _setup_py}


def detect(paths: Sequence[Path]) -> Optional[Detected]:
    """The lowest allowed ``jax`` of the nearest project that declares one."""
    import os.path

    starts = [p.resolve() for p in paths if p.exists()] or [Path.cwd().resolve()]
    start = Path(os.path.commonpath([str(p if p.is_dir() else p.parent) for p in starts]))
    for directory in (start, *start.parents):
        candidates = _candidates(directory)
        for candidate in candidates:
            reader = _READERS.get(candidate.name, _requirements)
            found = reader(candidate)
            if found:
                return Detected(found[0], candidate, found[1])
        if candidates and (directory / ".git").exists():
            break
        if (directory / ".git").exists():
            break
    return None
