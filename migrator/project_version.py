"""Finding a project's ``jax`` requirement, from its packaging metadata.

A requirement says what the code was written for: its *source* (:func:`source_of`), not
where the migration goes (:mod:`migrator.target` decides that, and keeps the requirement's
lower bound only where the migrated code still runs there).  Looked at, in this order, in
the nearest directory (walking up from the paths) that has any of them:

* ``pyproject.toml``: ``[project] dependencies``, then Poetry's ``[tool.poetry.dependencies]``;
  where neither names JAX, the extras (``[project.optional-dependencies]``), the PEP 735
  ``[dependency-groups]`` and Poetry's dev-dependencies and groups;
* ``setup.cfg``: ``[options] install_requires``, else ``[options.extras_require]``;
* ``setup.py``: a literal ``install_requires=[...]`` list in a ``setup(...)`` call, read with
  ``ast`` (the file is never executed), else its extras, else a module-level list of
  requirement strings (Hugging Face's ``_deps`` table);
* ``requirements*.txt`` (sorted by name).

Lower bounds come from ``>=``, ``==``, ``~=``, ``===`` and ``>`` clauses (``>X`` gives X:
conservative) and Poetry's ``^X`` / ``~X``; upper bounds from ``<``, ``<=``, ``==``, ``~=``
and Poetry's ``^``/``~`` (``^0.4.13`` allows up to, not including, 0.5.0); ``!=`` gives
neither.  Extras (``jax[cpu]``) and markers are ignored.  A ``jaxlib`` requirement counts
when ``jax``'s gives no bound: since 0.4 the two are released together with one version.  A
requirement without a version (``jax``, ``jax @ git+...``) is found, but gives no bound.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from pathlib import Path
from typing import (
    TYPE_CHECKING,
    Callable,
    Dict,
    Generic,
    Iterable,
    List,
    Optional,
    Sequence,
    Tuple,
    TypeVar,
)

from jaxmigrate.migrator import tomlfile
from jaxmigrate.migrator.version import Version, parse_version

if TYPE_CHECKING:  # pragma: no cover
    from jaxmigrate.migrator.source import SourceRange

T = TypeVar("T")

_REQUIREMENT_RE = re.compile(
    r"^\s*(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(?P<spec>[^;#]*)"
)
_CLAUSE_RE = re.compile(r"^\s*(===|==|~=|>=|>|<=|<|!=|\^|~)?\s*v?([0-9][0-9a-zA-Z.*+!-]*)\s*$")


@dataclasses.dataclass(frozen=True)
class Detected:
    """The ``jax`` (or ``jaxlib``) requirement found, and the bounds it gives."""

    version: Optional[str]  # the lower bound, X.Y.Z; None when the requirement has none
    source: Path
    requirement: str
    upper: Optional[Tuple[Version, bool]] = None  # (version, inclusive) when bounded above


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def lowest_allowed(spec: str) -> Optional[str]:
    """The lowest version a specifier such as ``>=0.4.13,<0.5`` allows, as X.Y.Z."""
    low, _high = allowed_range(spec)
    return None if low is None else ".".join(str(part) for part in low)


def allowed_range(spec: str) -> Tuple[Optional[Version], Optional[Tuple[Version, bool]]]:
    """(lowest version, (highest version, inclusive)) a specifier allows; None for a side it
    does not bound.  ``>=0.4.13,<0.5`` -> ((0, 4, 13), ((0, 5, 0), False))."""
    lows: List[Version] = []
    highs: List[Tuple[Version, bool]] = []
    for clause in spec.split(","):
        match = _CLAUSE_RE.match(clause) if clause.strip() else None
        if not match:
            continue
        operator, version = match.group(1) or "==", match.group(2)
        numbers = re.match(r"(\d+)(?:\.(\d+))?(?:\.(\d+))?", version)
        if not numbers or operator == "!=":
            continue
        given = [int(p) for p in numbers.groups() if p is not None]
        exact = tuple(given + [0] * (3 - len(given)))
        wildcard = version.endswith("*")
        if operator in ("<", "<="):
            highs.append((exact, operator == "<="))  # type: ignore[arg-type]
            continue
        lows.append(exact)  # type: ignore[arg-type]
        if operator in ("==", "===") and not wildcard:
            highs.append((exact, True))  # type: ignore[arg-type]
        elif operator in ("==", "~=", "~") or (operator == "===" and wildcard):
            # ==0.4.* and ~=0.4.20 / ~0.4.20: the last given part may grow, the one before not
            keep = (
                len(given) - 1
                if operator == "~=" or (operator == "==" and not wildcard)
                else len(given)
            )
            if operator == "~" and len(given) > 1:
                keep = 2
            highs.append((_bump(given, max(keep, 1)), False))
        elif operator == "^":
            first = next((i for i, part in enumerate(given) if part), len(given) - 1)
            highs.append((_bump(given, first + 1), False))
    low = max(lows) if lows else None
    high = min(highs) if highs else None
    return low, high


def _bump(parts: Sequence[int], keep: int) -> Version:
    """``(0, 4, 20)`` with 2 parts kept -> ``(0, 5, 0)``: the first version past them."""
    head = list(parts[:keep]) + [0] * (keep - len(parts[:keep]))
    head[-1] += 1
    return tuple((head + [0, 0, 0])[:3])  # type: ignore[return-value]


def from_requirements(lines: Iterable[str]) -> Optional[tuple]:
    """(lower, requirement text, upper) of the project's ``jax`` requirement: the first one
    with a lower bound, else the first with any bound, else the first at all (lower and upper
    None); a ``jaxlib`` requirement stands in when ``jax``'s gives no bound."""
    found: Dict[str, List[tuple]] = {"jax": [], "jaxlib": []}
    for raw in lines:
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith(("#", "-")):
            continue
        match = _REQUIREMENT_RE.match(line)
        name = _canonical(match.group("name")) if match else ""
        if name not in found:
            continue
        spec = "" if "@" in match.group("spec") else match.group("spec")  # type: ignore[union-attr]
        low, high = allowed_range(spec)
        found[name].append((low and ".".join(map(str, low)), line, high))
    for name in ("jax", "jaxlib"):
        for entry in found[name]:
            if entry[0] is not None:
                return entry
    for name in ("jax", "jaxlib"):
        for entry in found[name]:
            if entry[2] is not None:
                return entry
    return found["jax"][0] if found["jax"] else (found["jaxlib"][0] if found["jaxlib"] else None)


def _pyproject(path: Path) -> Optional[tuple]:
    try:
        data = tomlfile.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    project = _table(data.get("project"))
    found = from_requirements(_strings(project.get("dependencies")))
    if found and found[0] is not None:
        return found
    poetry = _table(_table(data.get("tool")).get("poetry"))
    found = from_requirements(_poetry_lines(poetry.get("dependencies"))) or found
    if found:
        return found
    # JAX as an extra or a development dependency (treex 0.6.10 lists jax = "^0.3.1" among
    # Poetry's dev-dependencies, for users to pick their jaxlib): still what the code was
    # written for, read where the dependencies name no JAX.
    lines = [
        line
        for extra in _table(project.get("optional-dependencies")).values()
        for line in _strings(extra)
    ]
    lines += [
        line for group in _table(data.get("dependency-groups")).values() for line in _strings(group)
    ]
    lines += _poetry_lines(poetry.get("dev-dependencies"))
    for group in _table(poetry.get("group")).values():
        lines += _poetry_lines(_table(group).get("dependencies"))
    return from_requirements(lines)


def _table(value: object) -> Dict[str, object]:
    return value if isinstance(value, dict) else {}


def _strings(value: object) -> List[str]:
    """The requirement strings of a TOML list (a PEP 735 group's ``{include-group = ...}``
    entries and other non-strings left out)."""
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []


def _poetry_lines(table: object) -> List[str]:
    """Poetry's ``name = "^1.2"`` / ``name = {version = "^1.2", ...}`` as requirement lines."""
    lines = []
    for name, value in _table(table).items():
        spec = value.get("version", "") if isinstance(value, dict) else str(value)
        lines.append(f"{name} {spec}" if spec.strip() not in ("*", "") else name)
    return lines


def _setup_cfg(path: Path) -> Optional[tuple]:
    import configparser

    parser = configparser.ConfigParser()
    try:
        parser.read(path, encoding="utf-8")
    except (configparser.Error, UnicodeDecodeError):
        return None
    found = None
    if parser.has_option("options", "install_requires"):
        found = from_requirements(parser.get("options", "install_requires").splitlines())
    if found or not parser.has_section("options.extras_require"):
        return found
    # JAX as an extra (``[options.extras_require] cpu = jax[cpu]>=0.3``)
    return from_requirements(
        line for _, value in parser.items("options.extras_require") for line in value.splitlines()
    )


def _setup_py(path: Path) -> Optional[tuple]:
    """The requirement in a ``setup.py``'s ``install_requires``, read with ``ast``: a literal
    list (or string), in a ``setup(...)`` call or a dict of keyword arguments
    (``setup(**setup_kwargs)``), or a module-level name bound to such a literal
    (``install_requires = [...]``); strings built from module-level constants count too
    (``f"jax>={JAX_VERSION}"``).  Else one in ``extras_require`` (a dict literal, or a name
    bound to one: JAX as an optional dependency), else in ``setup_requires``, else in a
    module-level list of requirement strings that code builds the extras from.  The file is
    never executed."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return None
    literals: Dict[str, ast.expr] = {}
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target = statement.targets[0]
            if isinstance(target, ast.Name):
                literals[target.id] = statement.value
    values: Dict[str, List[ast.expr]] = {
        "install_requires": [],
        "extras_require": [],
        "setup_requires": [],
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            for keyword in node.keywords:
                if keyword.arg in values:
                    values[keyword.arg].append(keyword.value)
        elif isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values):
                if isinstance(key, ast.Constant) and key.value in values:
                    values[key.value].append(value)
    for expression in values["install_requires"]:
        found = _requirement_in(_static(expression, literals))
        if found:
            return found
    extras: List[str] = []  # JAX as an extra: ``extras_require={"jax": ["jax>=0.2.17"]}``
    for expression in values["extras_require"]:
        while isinstance(expression, ast.Name) and expression.id in literals:
            expression = literals[expression.id]
        if isinstance(expression, ast.Dict):
            for item in expression.values:
                listed = _static(item, literals)
                if isinstance(listed, str):
                    extras += listed.splitlines()
                elif isinstance(listed, list):
                    extras += [v for v in listed if isinstance(v, str)]
    found = _requirement_in(extras)
    for expression in values["setup_requires"] if found is None else ():
        # (jaxns 1.1.0 lists jax there only: a build requirement stating what it ran on)
        found = _requirement_in(_static(expression, literals))
        if found:
            return found
    for expression in literals.values() if found is None else ():
        # a table of every pin the extras are built from by code (transformers 4.25's
        # ``_deps = [..., "jax>=0.2.8,!=0.3.2,<=0.3.6", ...]``, read through ``deps_list``)
        if isinstance(expression, (ast.List, ast.Tuple)):
            found = _requirement_in(_static(expression, literals))
            if found:
                return found
    return found


def _requirement_in(value: object) -> Optional[tuple]:
    """The ``jax`` requirement among the requirement strings ``value`` holds, if any."""
    if isinstance(value, str):
        value = value.splitlines()
    if isinstance(value, (list, tuple)):
        return from_requirements(v for v in value if isinstance(v, str))
    return None


def _static(node: ast.expr, literals: Dict[str, ast.expr], depth: int = 0) -> object:
    """What ``node`` evaluates to when its text alone says so, else None (an item of a list
    that cannot be known is left out): literals, module-level names bound to them, and the
    strings built from those (``f"jax>={JAX}"``, ``"jax>=" + JAX``, ``"jax>={}".format(JAX)``,
    ``"jax>=%s" % JAX``).  Nothing is executed."""
    if depth > 20:
        return None
    again = lambda n: _static(n, literals, depth + 1)  # noqa: E731
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else None
    if isinstance(node, ast.Name):
        bound = literals.get(node.id)
        return None if bound is None else again(bound)
    if isinstance(node, (ast.List, ast.Tuple)):
        return [item for item in map(again, node.elts) if isinstance(item, str)]
    if isinstance(node, ast.JoinedStr):
        pieces = []
        for part in node.values:
            value = again(part.value) if isinstance(part, ast.FormattedValue) else again(part)
            if not isinstance(value, str) or (
                isinstance(part, ast.FormattedValue) and (part.format_spec or part.conversion > 0)
            ):
                return None
            pieces.append(value)
        return "".join(pieces)
    if isinstance(node, ast.BinOp):
        left, right = again(node.left), again(node.right)
        if isinstance(node.op, ast.Add) and isinstance(left, str) and isinstance(right, str):
            return left + right
        if isinstance(node.op, ast.Add) and isinstance(left, list) and isinstance(right, list):
            return left + right
        if isinstance(node.op, ast.Mod) and isinstance(left, str) and isinstance(right, str):
            return left.replace("%s", right, 1) if left.count("%") == 1 else None
        return None
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "format"
        and not node.keywords
    ):
        template, args = again(node.func.value), [again(a) for a in node.args]
        if isinstance(template, str) and all(isinstance(a, str) for a in args):
            try:
                return template.format(*args)
            except (IndexError, KeyError, ValueError):
                return None
    return None


def _requirements(path: Path) -> Optional[tuple]:
    try:
        return from_requirements(path.read_text(encoding="utf-8").splitlines())
    except (OSError, UnicodeDecodeError):
        return None


def _candidates(directory: Path) -> List[Path]:
    names = [directory / "pyproject.toml", directory / "setup.cfg", directory / "setup.py"]
    names += sorted(directory.glob("requirements*.txt"))
    names += sorted((directory / "requirements").glob("*.txt"))  # requirements/requirements.txt
    return [p for p in names if p.is_file()]


def _generated(directory: Path) -> List[Path]:
    """What a build wrote of the requirements: an sdist's ``x.egg-info/requires.txt`` (extras
    under ``[name]`` headers) or ``PKG-INFO``, a wheel's ``x.dist-info/METADATA`` (netket 3.5's
    and alpa 0.2.3's only one), where the folder holds one build (several are installed
    packages, as next to JAX's own sources).  Read last, never edited (not where a requirement
    is raised: :func:`packaging_files`)."""
    builds = list(directory.glob("*.egg-info")) + list(directory.glob("*.dist-info"))
    if len(builds) > 1 or directory.name in ("site-packages", "dist-packages"):
        builds = []
    found = [b / ("requires.txt" if b.suffix == ".egg-info" else "METADATA") for b in builds]
    return [p for p in sorted(found) + [directory / "PKG-INFO"] if p.is_file()]


def _core_metadata(path: Path) -> Optional[tuple]:
    """``Requires-Dist: jax (==0.3.22) ; extra == 'tpu'``, as requirement lines."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    wanted = (line.partition(":")[2] for line in lines if line.startswith("Requires-Dist:"))
    return from_requirements(re.sub(r"\s*\(([^()]*)\)", r"\1", w.split(";")[0]) for w in wanted)


def shown(path: Path) -> str:
    """``path`` as a message names it: relative to the working directory when below it."""
    try:
        return str(path.relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def packaging_files(directory: Path) -> List[Path]:
    """The files of ``directory`` that may declare the project's ``jax`` requirement."""
    return _candidates(directory)


_READERS = {"pyproject.toml": _pyproject, "setup.cfg": _setup_cfg, "setup.py": _setup_py}
_READERS.update({"METADATA": _core_metadata, "PKG-INFO": _core_metadata})  # (what builds wrote)


def detect(paths: Sequence[Path]) -> Optional[Detected]:
    """The lowest allowed ``jax`` of the nearest project that declares one."""
    import os.path

    starts = [p.resolve() for p in paths if p.exists()] or [Path.cwd().resolve()]
    start = Path(os.path.commonpath([str(p if p.is_dir() else p.parent) for p in starts]))
    return requirements().of(start)


class FolderWalk(Generic[T]):
    """What the nearest folder up from a folder answers (``here``: a folder's own answer, None
    for none), up to a repository's root (a ``.git`` there) or the file system's; each folder
    read once: the folders of a run's files share their parents.  Made for one run (the files
    it reads may change between runs)."""

    def __init__(self, here: Callable[[Path], Optional[T]]) -> None:
        self._here = here
        self._known: Dict[Path, Optional[T]] = {}

    def of(self, folder: Path) -> Optional[T]:
        """The answer of the nearest folder that has one, from ``folder`` (resolved) up."""
        walked: List[Path] = []
        found: Optional[T] = None
        directory = folder
        while True:
            if directory in self._known:
                found = self._known[directory]
                break
            walked.append(directory)
            found = self._here(directory)
            if found is not None or (directory / ".git").exists():
                break
            if directory.parent == directory:
                break
            directory = directory.parent
        for directory in walked:
            self._known[directory] = found
        return found


def requirements() -> "FolderWalk[Detected]":
    """The requirement each folder's files are under (:func:`detect` from the folder), for
    one run."""
    return FolderWalk(_declared_in)


def _declared_in(directory: Path) -> Optional[Detected]:
    """The ``jax`` requirement the packaging files of ``directory`` declare: the first with a
    lower bound, else one without (bounded above, if any is)."""
    weaker: Optional[Detected] = None  # a requirement without a lower bound
    for candidate in _candidates(directory) + _generated(directory):
        reader = _READERS.get(candidate.name, _requirements)
        found = reader(candidate)
        if found and found[0] is not None:
            return Detected(found[0], candidate, found[1], found[2])
        if found and (weaker is None or (weaker.upper is None and found[2] is not None)):
            weaker = Detected(None, candidate, found[1], found[2])
    return weaker


def source_of(detected: Optional[Detected]) -> "SourceRange":
    """What the project's ``jax`` requirement says the code was written for: from its lower
    bound to the newest release it allows (a requirement open above, ``jax>=0.3.4``, states
    the release it was written for: its lower bound).  Unknown without a requirement or a
    bound."""
    from jaxmigrate.migrator.source import SourceRange

    if detected is None:
        return SourceRange(None, None, "")
    origin = f"{detected.source.name}: {detected.requirement}"
    lower = None if detected.version is None else parse_version(detected.version)
    upper = None
    if detected.upper is not None:
        newest = _newest_release(detected.upper)
        upper = parse_version(newest) if newest is not None else None
    if upper is None:
        upper = lower
    if lower is None and upper is None:
        return SourceRange(None, None, "")
    return SourceRange(lower, upper, origin)


def _newest_release(bound: Tuple[Version, bool]) -> Optional[str]:
    """The newest release (X.Y.Z) within ``bound``; None when that is the newest known one."""
    from jaxmigrate.migrator.rule_index import releases as known  # the API history's

    version, inclusive = bound
    releases = [r for r in known() if r.count(".") == 2]
    allowed = [
        r
        for r in releases
        if (parse_version(r) <= version if inclusive else parse_version(r) < version)
    ]
    if not allowed:
        return _oldest_release()
    return None if allowed[-1] == releases[-1] else allowed[-1]


def _oldest_release() -> str:
    from jaxmigrate.migrator.rule_index import releases  # the API history's

    return releases()[0]
