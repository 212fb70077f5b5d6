"""Every after-file and noop fixture imports only what the installed JAX has.

A migrated file that still says ``import jax.experimental.maps`` fails with
ModuleNotFoundError before any of its rewritten code runs, so exact-output tests alone do not
catch it.  This test reads every ``fixtures/*/*.after.py`` and ``fixtures/*/*.noop.py`` with
``ast`` and checks each import statement of a ``jax``/``jaxlib`` module against the installed
JAX (one subprocess with ``JAX_PLATFORMS=cpu``; each module is imported once):

* ``import a.b.c`` / ``import a.b.c as x``: ``a.b.c`` must import;
* ``from M import N``: ``M`` must import and ``N`` must be an attribute of it or a submodule
  ``M.N`` that imports; ``from M import *``: ``M`` must import.

Other packages (numpy, the fixtures' invented user modules) are not checked.  An import that
does not resolve is allowed only when one of these says the tool knows about it:

1. **Reported or suppressed on the line.** A line of the statement carries an
   ``# expect: CODE`` marker (the tool reports it: the import is deliberately kept and a person
   must act) or a ``# jaxmigrate: ignore`` comment (the user told the tool to leave it).
2. **Reported in the file.** The file's findings (the tool is run on the fixture input with the
   fixture's settings) include one whose message names the imported module
   (``jax.lib.xla_bridge`` ...) or, for ``from M import N``, the imported name ``N`` as a word:
   the tool told the user that this is gone.  Or a finding sits on a line that uses what the
   import binds (``config.update(...)`` after ``from jax.config import config``): the tool
   reported the use, and the import goes with it.
3. **Older target.** The fixture says ``# fixture: target-version=X`` with X older than 0.10,
   and the module is not one JAX806 (``rules/removed_modules.py``) knows was removed at or
   before X: the file only has to work on X, which this environment cannot import.
4. **Compatibility code.** The import sits anywhere in a ``try`` statement (body or handler)
   whose handlers catch ImportError, ModuleNotFoundError or AttributeError: the code expects
   one side to fail, and the tool never touches it.
5. **Suppressed.** A ``# jaxmigrate: ignore`` comment sits on a line that uses what the import
   binds: the user told the tool to keep the legacy use, so its import stays.
6. **Partial run.** The fixture restricts the rules (``# fixture: select=...``/``ignore=...``):
   its output is not a full migration.

``KNOWN_DEFECTS`` lists fixtures in which this test found a real problem the test's author
could not fix (another rule's domain), with the reason.

Anything else is a defect: either a rule left a removed import behind without saying so, or
the fixture's expected output is wrong.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import pytest

from jaxmigrate.migrator import migrate_source
from jaxmigrate.migrator.source import feature_test
from jaxmigrate.migrator.version import parse_version
from tests.fixture_support import FIXTURES, fixture_settings

ROOTS = ("jax", "jaxlib")
# A finding marker, or a suppression comment (the user chose to keep the line as it is).
_MARKER_RE = re.compile(r"#\s*(expect:|jaxmigrate:\s*ignore)")
_SUPPRESS_RE = re.compile(r"#\s*jaxmigrate:\s*ignore")
GUARDS = frozenset({"ImportError", "ModuleNotFoundError", "AttributeError"})

# One query: (module, name or None).  The worker answers "ok" or the error text.
_WORKER = r"""
import importlib, json, sys
queries = json.load(sys.stdin)
modules = {}
def load(name):
    if name not in modules:
        try:
            modules[name] = (importlib.import_module(name), None)
        except Exception as error:  # noqa: BLE001
            modules[name] = (None, f"{type(error).__name__}: {error}")
    return modules[name]
answers = []
for module, name in queries:
    found, error = load(module)
    if found is not None and name is not None and name != "*" and not hasattr(found, name):
        sub, sub_error = load(module + "." + name)
        error = None if sub is not None else f"{module} has no {name}"
    answers.append(error or "ok")
json.dump(answers, sys.stdout)
"""


def _files() -> List[Path]:
    return sorted(FIXTURES.glob("*/*.after.py")) + sorted(FIXTURES.glob("*/*.noop.py"))


def _guarded(node: ast.Try) -> bool:
    for handler in node.handlers:
        kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        for kind in kinds:
            name = kind.attr if isinstance(kind, ast.Attribute) else getattr(kind, "id", None)
            if name in GUARDS:
                return True
    return False


Query = Tuple[str, Optional[str]]


def _imports(tree: ast.AST) -> List[Tuple[ast.stmt, str, Query]]:
    """(statement, module, query) for every jax/jaxlib import outside compatibility code."""
    return [(statement, module, query) for statement, module, query, _ in _bindings(tree)]


def _bindings(tree: ast.AST) -> List[Tuple[ast.stmt, str, Query, str]]:
    """As :func:`_imports`, plus the text that refers to what the import binds (``x`` for
    ``import a.b as x`` and ``from m import n as x``; ``a.b`` for ``import a.b``)."""
    found: List[Tuple[ast.stmt, str, Query, str]] = []

    def walk(node: ast.AST, guarded: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import) and not guarded:
                for alias in child.names:
                    if alias.name.split(".", 1)[0] in ROOTS:
                        found.append(
                            (child, alias.name, (alias.name, None), alias.asname or alias.name)
                        )
            elif isinstance(child, ast.ImportFrom) and not guarded:
                module = child.module or ""
                if child.level == 0 and module.split(".", 1)[0] in ROOTS:
                    for alias in child.names:
                        found.append(
                            (child, module, (module, alias.name), alias.asname or alias.name)
                        )
            elif isinstance(child, ast.Try):
                walk(child, guarded or _guarded(child))
            elif isinstance(child, ast.If) and feature_test(child.test):
                walk(child, True)  # a version/feature check is a shim, as for the engine
            else:
                walk(child, guarded)

    walk(tree, False)
    return found


def _answers(queries: List[Query]) -> Dict[Query, str]:
    unique = sorted(set(queries), key=lambda q: (q[0], q[1] or ""))
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    done = subprocess.run(
        [sys.executable, "-c", _WORKER],
        input=json.dumps(unique),
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=300,
    )
    return dict(zip(unique, json.loads(done.stdout)))


def _removed_by(module: str, target: str) -> bool:
    """JAX806 knows ``module`` was gone at ``target`` already."""
    from jaxmigrate.rules.removed_modules import REMOVED

    for name, version in REMOVED.items():
        if (module == name or module.startswith(name + ".")) and parse_version(
            version
        ) <= parse_version(target):
            return True
    return False


def _input_of(path: Path) -> Path:
    if path.name.endswith(".after.py"):
        return path.with_name(path.name[: -len(".after.py")] + ".before.py")
    return path


def _findings(path: Path) -> List[Tuple[int, str]]:
    """(output line, message) of every finding the tool reports for the fixture."""
    text = _input_of(path).read_text(encoding="utf-8")
    result = migrate_source(text, fixture_settings(text))
    return [(d.line, d.message) for d in result.findings]


def _uses_on(lines: List[str], numbers, bound: str) -> bool:  # noqa: ANN001
    pattern = re.compile(r"(?<![\w.])" + re.escape(bound) + r"(?!\w)")
    return any(pattern.search(lines[n - 1]) for n in numbers if 0 < n <= len(lines))


def _named(module: str, name: Optional[str], messages: List[str]) -> bool:
    """Some finding names the module (or, for ``from M import N``, ``N``)."""
    words = [module] + ([name] if name and name != "*" else [])
    for word in words:
        pattern = re.compile(r"(?<![\w.])" + re.escape(word) + r"(?![\w])")
        if any(pattern.search(message) for message in messages):
            return True
    return False


def _restricted(text: str) -> bool:
    """The fixture runs a subset of the rules (``select=``/``ignore=``): not a full migration."""
    settings = fixture_settings(text)
    return bool(getattr(settings, "select", None) or getattr(settings, "ignore", None))


def _target(text: str) -> Optional[str]:
    settings = fixture_settings(text)
    return settings.target_version


# Defects this test found in fixtures and rules its author does not own, each named with the
# reason; the owners are told.  Keep this list short and remove entries once fixed.
KNOWN_DEFECTS: Dict[str, str] = {}


def test_after_files_import_only_what_jax_has():
    per_file = []
    queries: List[Query] = []
    for path in _files():
        if str(path.relative_to(FIXTURES)) in KNOWN_DEFECTS:
            continue
        text = path.read_text(encoding="utf-8")
        if _restricted(text):
            continue
        entries = _bindings(ast.parse(text))
        per_file.append((path, text, entries))
        queries.extend(query for _, _, query, _ in entries)
    answers = _answers(queries)
    problems = []
    for path, text, entries in per_file:
        failing = [entry for entry in entries if answers[entry[2]] != "ok"]
        if not failing:
            continue
        lines = text.splitlines()
        target = _target(text)
        old_target = parse_version(target) < parse_version("0.10.0")
        suppressed = [n for n, line in enumerate(lines, start=1) if _SUPPRESS_RE.search(line)]
        findings: Optional[List[Tuple[int, str]]] = None
        for statement, module, query, bound in failing:
            end = getattr(statement, "end_lineno", statement.lineno) or statement.lineno
            if any(_MARKER_RE.search(lines[n - 1]) for n in range(statement.lineno, end + 1)):
                continue
            if old_target and not _removed_by(module, target):
                continue
            if _uses_on(lines, suppressed, bound):
                continue  # the user suppressed the tool where the name is used
            if findings is None:
                findings = _findings(path)
            if _named(module, query[1], [message for _, message in findings]):
                continue
            if _uses_on(lines, [n for n, _ in findings], bound):
                continue
            name = f"from {query[0]} import {query[1]}" if query[1] else f"import {query[0]}"
            problems.append(
                f"{path.relative_to(FIXTURES)}:{statement.lineno}: {name}: {answers[query]}"
            )
    assert not problems, "after-files import what the installed JAX lacks:\n" + "\n".join(problems)


@pytest.mark.parametrize(
    "source,expected",
    [
        ("import jax.experimental.maps\n", [("jax.experimental.maps", None)]),
        (
            "from jax.sharding import Mesh, NamedSharding\n",
            [("jax.sharding", "Mesh"), ("jax.sharding", "NamedSharding")],
        ),
        ("import numpy as np\nfrom mylib.maps import x\n", []),
        ("try:\n    import jax.experimental.maps\nexcept ImportError:\n    pass\n", []),
        ("try:\n    pass\nexcept ImportError:\n    import jax.experimental.maps\n", []),
        (
            "try:\n    pass\nexcept ValueError:\n    import jax.experimental.maps\n",
            [("jax.experimental.maps", None)],
        ),
        ("def f():\n    from jax.experimental import maps\n", [("jax.experimental", "maps")]),
    ],
)
def test_import_collection(source, expected):
    assert [query for _, _, query in _imports(ast.parse(source))] == expected


def test_worker_tells_present_from_gone():
    answers = _answers(
        [("jax.sharding", "Mesh"), ("jax.experimental.maps", None), ("jax.sharding", "NoSuchName")]
    )
    assert answers[("jax.sharding", "Mesh")] == "ok"
    assert answers[("jax.experimental.maps", None)] != "ok"
    assert answers[("jax.sharding", "NoSuchName")] != "ok"
