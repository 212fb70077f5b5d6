"""What a round's passes read without a walk of the whole tree (issue #29): each shortcut
gives what ``Context.all_nodes`` (one walk of every node) would, checked on every fixture input.

* the analysis visits every ``if`` and ``from`` import, in the tree's order, so the clean-up
  passes read ``ctx.nodes`` for them (``migrator.folds``, ``migrator.importwrap``);
* the blocks that hold touched statements and the containers around or inside a fix's nodes
  are found by walking only the paths down to them (``migrator.folds``, ``migrator.tidy``);
* the unused-import clean-up finds a name read where the analysis indexed a ``Name``, or sees
  from the first round's text that no other ``Name`` spells it (``migrator.cleanup``).
"""

from __future__ import annotations

import random
from typing import Dict, List

import libcst as cst
import pytest

from jaxmigrate.migrator import Settings
from jaxmigrate.migrator.analysis import analyze
from jaxmigrate.migrator.context import Context
from jaxmigrate.migrator.scope import Interest
from tests.fixture_support import fixture_cases

INPUTS = [case[1] for case in fixture_cases()]


def _context(text: str) -> Context:
    module = cst.parse_module(text)
    settings = Settings()
    ctx = Context(module, analyze(module, Interest()), settings, settings.target, None)
    ctx.source = text  # the first round's: the tree is the parse of this text
    return ctx


def _same(got: List[cst.CSTNode], want: List[cst.CSTNode]) -> bool:
    return len(got) == len(want) and all(a is b for a, b in zip(got, want))


@pytest.mark.parametrize("before", INPUTS)
def test_the_analysis_lists_every_if_and_from_import_in_the_tree_s_order(before) -> None:
    ctx = _context(before.read_text(encoding="utf-8"))
    for kind in (cst.If, cst.ImportFrom):
        assert _same(ctx.nodes(kind), ctx.all_nodes(kind)), kind.__name__


@pytest.mark.parametrize("before", INPUTS)
def test_blocks_in_tree_order_without_the_walk(before) -> None:
    from jaxmigrate.migrator.folds import _in_tree_order

    ctx = _context(before.read_text(encoding="utf-8"))
    blocks = [ctx.module, *ctx.all_nodes(cst.IndentedBlock)]
    chosen = random.Random(before.name).sample(blocks, k=min(len(blocks), 3))
    wanted: Dict[int, cst.CSTNode] = {id(node): node for node in chosen}
    assert _same(_in_tree_order(ctx, wanted), [n for n in blocks if id(n) in wanted])


@pytest.mark.parametrize("before", INPUTS)
def test_the_tidying_finds_the_containers_around_and_inside_a_fix_s_nodes(before) -> None:
    from jaxmigrate.migrator.tidy import Produced, _Touched

    ctx = _context(before.read_text(encoding="utf-8"))
    kinds = (cst.Subscript, cst.BinaryOperation, cst.Call, cst.BooleanOperation, cst.If)
    candidates = [node for kind in (cst.Attribute, cst.Name, cst.Call) for node in ctx.nodes(kind)]
    if not candidates:
        return
    produced = Produced()
    for node in random.Random(before.name).sample(candidates, k=min(len(candidates), 4)):
        produced.nodes[id(node)] = (node, "JAX000")  # as if a fix had written it
    touched = _Touched(ctx, produced)
    found = touched.nodes(ctx, kinds)
    for kind in kinds:
        want = [node for node in ctx.all_nodes(kind) if touched.of(node) is not None]
        assert _same(found[kind], want), kind.__name__


@pytest.mark.parametrize("before", INPUTS)
def test_names_no_other_name_spells_are_told_from_the_text(before) -> None:
    """Soundness of ``_maybe_elsewhere``: a name some ``Name`` outside the given nodes and the
    import statements spells is never said to be spelled nowhere else; and every ``Name``
    the analysis indexes lies outside the import statements (the clean-up reads them as
    reads)."""
    from jaxmigrate.migrator.cleanup import _ids_under, _maybe_elsewhere

    ctx = _context(before.read_text(encoding="utf-8"))
    imports = [*ctx.all_nodes(cst.Import), *ctx.all_nodes(cst.ImportFrom)]
    in_imports = _ids_under(imports)
    assert not any(id(name) in in_imports for name in ctx.nodes(cst.Name))
    statements = list(ctx.module.body)
    replaced = random.Random(before.name).sample(statements, k=min(len(statements), 2))
    inside = _ids_under(replaced) | in_imports
    names = {name.value for name in ctx.all_nodes(cst.Name)} | {"jax", "jnp", "not_there"}
    elsewhere = {name.value for name in ctx.all_nodes(cst.Name) if id(name) not in inside}
    assert elsewhere <= _maybe_elsewhere(ctx, names, replaced)
