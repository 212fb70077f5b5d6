"""No rule writes a JAX name outside the releases that have it (checked against the API history).

For every fixture pair and every rule documentation example, each JAX name the migrated text
references that the input did not must exist on every release of the case's target range,
unless its line carries a finding (the tool then says what is wrong there).  The names come
from ``ast``, resolved through the module's imports, with function parameters and locals
shadowing them; the facts come from ``rules/data/jax_api_history.json.gz``.
"""

from __future__ import annotations

import ast
import textwrap
from typing import Dict, Iterator, Optional, Set, Tuple

import pytest

from jaxmigrate.migrator.rule import all_rules
from jaxmigrate.migrator.version import LATEST_KNOWN_JAX, parse_version
from jaxmigrate.rules._api_history import history
from tests.fixture_support import expected_findings, fixture_cases, fixture_settings


def _imports(tree: ast.Module) -> Dict[str, str]:
    bound: Dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    bound[alias.asname] = alias.name
                else:
                    head = alias.name.split(".", 1)[0]
                    bound[head] = head
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                if alias.name != "*":
                    bound[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    # a name the module also assigns (netket's ``config``, deleted and bound again) is read
    # as nothing: which binding a read sees depends on where it stands
    stack = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound.pop(node.id, None)
        stack.extend(ast.iter_child_nodes(node))
    return bound


def _locals(function: ast.AST) -> Set[str]:
    args = function.args  # type: ignore[attr-defined]
    names = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
    names |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return names


def _chain(node: ast.expr) -> Optional[Tuple[str, ...]]:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return (node.id, *reversed(parts))
    return None


def references(text: str) -> Iterator[Tuple[str, int]]:
    """(qualified JAX name, line) for every dotted reference and import in ``text``."""
    tree = ast.parse(text)
    bound = _imports(tree)
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                if alias.name != "*":
                    yield f"{node.module}.{alias.name}", node.lineno
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno

    def visit(node: ast.AST, shadowed: Set[str]) -> Iterator[Tuple[str, int]]:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            shadowed = shadowed | _locals(node)
        if isinstance(node, (ast.Attribute, ast.Name)):
            parts = _chain(node)  # type: ignore[arg-type]
            if parts is not None and parts[0] in bound and parts[0] not in shadowed:
                yield ".".join((bound[parts[0]], *parts[1:])), node.lineno  # type: ignore[attr-defined]
                return
        for child in ast.iter_child_nodes(node):
            yield from visit(child, shadowed)

    yield from visit(tree, set())


def _cases():
    for name, before, after in fixture_cases():
        if before != after:
            text = before.read_text(encoding="utf-8")
            settings = fixture_settings(text)
            yield (
                name,
                text,
                after.read_text(encoding="utf-8"),
                settings.target_version,
                settings.target_upper,
            )
    for code, rule in sorted(all_rules().items()):
        for number, example in enumerate(rule.examples, start=1):
            if example.before != example.after:
                target = example.target_version or LATEST_KNOWN_JAX
                yield f"{code}-{number}", example.before, example.after, target, None


CASES = list(_cases())


def problems(before: str, after: str, target: str, upper: Optional[str]) -> list:
    """What ``after`` writes that some release of ``target``..``upper`` lacks."""
    h = history()
    low, high = parse_version(target), parse_version(upper) if upper else None
    old = {q for q, _line in references(textwrap.dedent(before))}
    flagged = {line for line, _code in expected_findings(after)}
    wrong = []
    for qualname, line in references(textwrap.dedent(after)):
        if (
            qualname in old
            or line in flagged
            or not (qualname == "jax" or qualname.startswith("jax."))
        ):
            continue
        known = h.lookup(qualname)
        if known is None:
            parent = h.lookup(qualname.rpartition(".")[0])
            if (
                parent is not None
                and parent.is_module
                and not qualname.rpartition(".")[2].startswith("_")
            ):
                wrong.append(f"line {line}: {qualname} is in no JAX release")
            continue
        absence = h.absence(qualname, low, high)
        if absence is not None:
            wrong.append(f"line {line}: {absence.describe(target)}")
    return wrong


@pytest.mark.parametrize("name,before,after,target,upper", CASES, ids=[c[0] for c in CASES])
def test_written_names_exist_across_the_target_range(name, before, after, target, upper):
    wrong = problems(before, after, target, upper)
    assert not wrong, "\n".join(wrong)


def test_the_check_sees_what_is_wrong():
    before = "import jax\n\ndef f(g):\n    return g\n"
    too_new = "import jax\n\ndef f(g):\n    return jax.shard_map(g)\n"
    assert problems(before, too_new, "0.4.13", None)  # jax.shard_map appeared in 0.6.1
    assert not problems(before, too_new, "0.7.0", None)
    gone = "import jax\n\ndef f(g):\n    return jax.tree_map(g, 1)\n"
    assert problems(before, gone, "0.4.30", None)  # removed in 0.6.0
    flagged = gone.replace("(g, 1)\n", "(g, 1)  # expect: JAX701\n")
    assert not problems(before, flagged, "0.4.30", None)  # a finding on its line says so
    shadowed = "import jax\n\ndef f(jax):\n    return jax.tree_map\n"
    assert not problems(before, shadowed, "0.4.30", None)  # a parameter named jax
    typo = "import jax\n\ndef f(g):\n    return jax.numpy.not_a_function(g)\n"
    assert problems(before, typo, "0.4.30", None)


# Rules whose version gate is the release that added the spelling they write (the others' gates
# are about behaviour, such as the jax.Array world of 0.4.1, which no name records).  The gate
# must be that release as the API history says (the rules take it from there with
# ``rules._api_history.added_in``): a hand-written "needs JAX X" that drifted from it would
# write a name where it does not exist, or hold back a fix where it does.
SPELLING_GATES = {
    "JAX601": "jax.shard_map",
    "JAX602": "jax.lax.pcast",
    "JAX604": "jax.make_mesh",
    "JAX605": "jax.set_mesh",
    "JAX608": "jax.sharding.AxisType",
    "JAX703": "jax.tree_util.keystr",
    "JAX803": "jax.enable_x64",
    "JAX308": "jax.experimental.array_serialization.serialization",
}


@pytest.mark.parametrize("code", sorted(SPELLING_GATES))
def test_version_gate_is_the_release_that_added_the_spelling(code: str) -> None:
    known = history().lookup(SPELLING_GATES[code])
    assert known is not None, SPELLING_GATES[code]
    assert all_rules()[code].needs_jax == history().releases[known.present[0][0]]
