"""The layering of the package, read from the source with ``ast`` (nothing is imported).

Module-level imports (including those inside a module-level ``try``/``if`` or class body)
run when a module is imported: among project modules they must form no cycle.  An import
under ``if TYPE_CHECKING:`` never runs and is left out.  A function-level import runs on the
first call: a cycle through one cannot fail at import time, but it is still a knot in the
layers, so those cycles are checked as well against a list that may only shrink.

The same reading of the source keeps every file of the package within 500 lines.
"""

from __future__ import annotations

import ast
import pathlib
from typing import Dict, List, Set, Tuple

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGES = {
    "jaxmigrate": ROOT / "jaxmigrate",
    "jaxmigrate.migrator": ROOT / "migrator",
    "jaxmigrate.rules": ROOT / "rules",
}
# Function-level import cycles that predate this test; remove an entry when its cycle goes.
KNOWN_DEFERRED_CYCLES: Set[frozenset] = set()
REPORTERS = ("report", "markdown_report")
MAX_LINES = 500  # no file of the package is longer (docs/development.md, "Code health")


def _modules() -> Dict[str, pathlib.Path]:
    found = {}
    for package, folder in PACKAGES.items():
        for path in sorted(folder.glob("*.py")):
            found[package if path.stem == "__init__" else f"{package}.{path.stem}"] = path
    return found


MODULES = _modules()


def _is_type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _imports(path: pathlib.Path) -> List[Tuple[str, bool]]:
    """(project module imported, True if at module level) for each import in ``path``.
    ``from package import name`` counts as importing ``package.name`` when that is a module,
    else ``package`` itself; the implicit import of a parent package is not counted."""
    found: List[Tuple[str, bool]] = []

    def visit(node: ast.AST, top: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if _is_type_checking(child):
                continue
            if isinstance(child, ast.Import):
                found.extend((alias.name, top) for alias in child.names if alias.name in MODULES)
            elif isinstance(child, ast.ImportFrom) and child.module and not child.level:
                for alias in child.names:
                    full = f"{child.module}.{alias.name}"
                    if full in MODULES:
                        found.append((full, top))
                    elif child.module in MODULES:
                        found.append((child.module, top))
            inner = top and not isinstance(
                child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
            )
            visit(child, inner)

    visit(ast.parse(path.read_text(encoding="utf-8")), True)
    return found


def _graph(module_level_only: bool) -> Dict[str, Set[str]]:
    return {
        name: {
            target
            for target, top in _imports(path)
            if (top or not module_level_only) and target != name
        }
        for name, path in MODULES.items()
    }


def _cycles(graph: Dict[str, Set[str]]) -> List[frozenset]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on_stack: Set[str] = set()
    found: List[frozenset] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, targets = work[-1]
            for target in targets:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(frozenset(component))
    return found


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _cycles(graph) == [frozenset({"a", "b", "c"})]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_the_graph_sees_imports() -> None:
    graph = _graph(module_level_only=True)
    assert "jaxmigrate.migrator.diagnostics" in graph["jaxmigrate.migrator.context"]
    assert "jaxmigrate.migrator.rule" in graph["jaxmigrate.rules.device_array"]
    deferred = _graph(module_level_only=False)["jaxmigrate.migrator.rule"]
    assert "jaxmigrate.rules" in deferred  # all_rules() imports the package inside the function


def test_no_import_cycle_at_module_level() -> None:
    cycles = _cycles(_graph(module_level_only=True))
    assert not cycles, [sorted(c) for c in cycles]


def test_no_new_cycle_through_function_level_imports() -> None:
    cycles = set(_cycles(_graph(module_level_only=False)))
    assert cycles <= KNOWN_DEFERRED_CYCLES, [sorted(c) for c in cycles - KNOWN_DEFERRED_CYCLES]


def test_no_file_of_the_package_is_over_500_lines() -> None:
    """docs/development.md's limit, for every ``.py`` file of the package (``rules/data``
    included), with no exceptions: a longer one is split where a responsibility reads on its
    own."""
    counts = {
        str(path.relative_to(ROOT)): len(path.read_text(encoding="utf-8").splitlines())
        for folder in PACKAGES.values()
        for path in sorted(folder.rglob("*.py"))
    }
    assert len(counts) >= len(MODULES)  # (the test reads the files it means to)
    over = {name: count for name, count in counts.items() if count > MAX_LINES}
    assert not over, f"over {MAX_LINES} lines: {over}"


def test_diagnostics_is_a_leaf() -> None:
    assert _imports(MODULES["jaxmigrate.migrator.diagnostics"]) == []


@pytest.mark.parametrize("reporter", REPORTERS)
def test_reporters_do_not_import_the_engine(reporter: str) -> None:
    imported = {target for target, _top in _imports(MODULES[f"jaxmigrate.migrator.{reporter}"])}
    assert "jaxmigrate.migrator.engine" not in imported
    assert "jaxmigrate.migrator.context" not in imported


def test_rules_import_no_other_rule() -> None:
    """A rule shares code through the ``rules/_*.py`` helpers, never through another rule's
    module, and a helper never reaches into a rule."""
    rule_modules = {
        n
        for n in MODULES
        if n.startswith("jaxmigrate.rules.") and not n.rsplit(".", 1)[1].startswith("_")
    }
    offending = {
        (name, target)
        for name in MODULES
        if name.startswith("jaxmigrate.rules.")
        for target, _top in _imports(MODULES[name])
        if target in rule_modules and target != name
    }
    assert not offending, sorted(offending)


def _rule_nodes() -> List[Tuple[str, ast.AST]]:
    """(module name, node) for every ``ast`` node of every rule module."""
    return [
        (name, node)
        for name, path in MODULES.items()
        if name.startswith("jaxmigrate.rules.")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
    ]


def test_rules_never_read_the_registry() -> None:
    """Which rule handles a name comes from ``ctx.owner`` (or ``rule.owners()`` outside a
    file), never from a loop over ``REGISTRY`` inside a rule."""
    readers = [
        name
        for name, node in _rule_nodes()
        if (isinstance(node, ast.Name) and node.id == "REGISTRY")
        or (isinstance(node, ast.alias) and node.name == "REGISTRY")
    ]
    assert readers == []


def test_owners_index() -> None:
    from jaxmigrate.migrator.rule import Owners, all_rules, owners

    rules = all_rules()
    index = owners()
    assert index is owners()  # built once for the same registry
    assert index.owner("jax.numpy.DeviceArray") == "JAX101"
    assert index.owner("jax.numpy.DeviceArray", besides="JAX101") is None
    assert index.owner("jax.numpy.zeros") is None
    assert index.owns_under("jax.numpy") and not index.owns_under("jax.numpy.DeviceArray")
    every = frozenset().union(*(rule.names for rule in rules.values()))
    assert index.names() == every
    assert index.names(besides="JAX101") == frozenset().union(
        *(rule.names for code, rule in rules.items() if code != "JAX101")
    )
    # several rules may declare one name: the lowest code first, the next one besides it
    a, b = (
        type("R", (), {"code": code, "names": frozenset({"m.x"})})() for code in ("JAX2", "JAX1")
    )
    small = Owners([a, b])
    assert small.owner("m.x") == "JAX1" and small.owner("m.x", besides="JAX1") == "JAX2"
    assert small.owns_under("") is False  # nothing is named ".x"
    assert small.owns_under("m", besides="JAX1")  # JAX2 declares m.x too
    assert not Owners([a]).owns_under("m", besides="JAX2")


def test_rules_never_read_the_settings() -> None:
    """Rules get the target range (``ctx.target``, ``ctx.upper``); whether an unsafe fix is
    applied is the engine's decision, so no rule reads ``settings`` or imports ``Settings``."""
    readers = sorted(
        name
        for name, node in _rule_nodes()
        if (isinstance(node, ast.Attribute) and node.attr == "settings")
        or (isinstance(node, ast.alias) and node.name == "Settings")
    )
    assert readers == []
    assert "jaxmigrate.migrator.settings" not in {
        target
        for name in MODULES
        if name.startswith("jaxmigrate.rules.")
        for target, _top in _imports(MODULES[name])
    }


@pytest.mark.parametrize("unsafe_fixes", [False, True])
def test_an_unsafe_fix_not_applied_plans_no_import(unsafe_fixes: bool) -> None:
    """The engine alone decides on unsafe fixes: a rejected one becomes a finding and the
    imports only it planned are forgotten (a safe fix keeps the one it shares)."""
    import libcst as cst

    from jaxmigrate.migrator.analysis import analyze
    from jaxmigrate.migrator.context import Context
    from jaxmigrate.migrator.rule import Safety, all_rules
    from jaxmigrate.migrator.scope import Interest
    from jaxmigrate.migrator.settings import Settings

    module = cst.parse_module("a = 1\nb = 2\n")
    settings = Settings(unsafe_fixes=unsafe_fixes)
    ctx = Context(module, analyze(module, Interest()), settings, settings.target, None)
    ctx.begin(all_rules()["JAX101"])
    first, second = (line.body[0].value for line in module.body)
    scope = ctx.scope_of(first)
    applied = ctx.replace(first, ctx.ref("numpy.asarray", scope), "a", Safety.UNSAFE)
    assert applied is unsafe_fixes
    assert ("numpy" in ctx.planned_imports) is unsafe_fixes
    assert [f[2] for f in ctx.findings] == ([] if unsafe_fixes else ["a [unsafe fix]"])
    ctx.replace(second, ctx.ref("jax.Array", scope), "b", Safety.SAFE)
    ctx.replace(first, ctx.ref("jax.numpy.zeros", scope), "c", Safety.UNSAFE)  # shares `jax`
    assert "jax" in ctx.planned_imports
