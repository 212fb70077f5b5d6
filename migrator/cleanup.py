"""Unused-import cleanup: which imports a round leaves unused (legacy names nothing reads,
imports the migration stopped using), reported under the rule whose name they imported or
the engine's own cleanup code, and their removal from the round's output.  Imports the user
left unused before the migration are never touched."""

from __future__ import annotations

from typing import (
    Dict,
    Iterable,
    List,
    Optional,
    Set,
    Tuple,
)

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.migrator.analysis import Analysis
from jaxmigrate.migrator.apply import Apply, ImportRemoval, Removals
from jaxmigrate.migrator.binding import Binding
from jaxmigrate.migrator.context import Context, Edit, binding_is_legacy
from jaxmigrate.migrator.diagnostics import CLEANUP_CODE, Diagnostic
from jaxmigrate.migrator.naming import names_in as _names_in
from jaxmigrate.migrator.origins import Origins, located_fix
from jaxmigrate.migrator.plan import Plan
from jaxmigrate.migrator.traversal import children


def unused_imports(
    ctx: Context,
    analysis: Analysis,
    plan: Plan,
    originally_used: Set[Tuple[str, str]],
    added_imports: Set[str],
) -> Removals:
    """Imports to drop: legacy ones nothing uses, and ones the migration left unused."""
    # A name this round's edits start to use is not unused, whatever the old tree says.
    unused = [
        binding
        for binding in analysis.imports
        if not (binding.guarded or binding.name in analysis.exported or analysis.is_used(binding))
        and id(binding.statement) not in ctx.edits
    ]
    if unused and ctx.edits:
        wanted_by_edits = _read_by(ctx.edits.values(), {b.name for b in unused})
        unused = [binding for binding in unused if binding.name not in wanted_by_edits]
    return _removals(unused, plan, originally_used, added_imports, ctx)


def _read_by(edits: Iterable[Edit], names: Set[str]) -> Set[str]:
    """The ``names`` the new code of ``edits`` reads; not a name an edit spells as a builtin."""
    edits = list(edits)
    read = _names_in((edit.new for edit in edits if not edit.builtins), names)
    for edit in edits:
        if edit.builtins:
            read |= _names_in([edit.new], names - edit.builtins)
    return read


def _removals(
    bindings: Iterable[Binding],
    plan: Plan,
    originally_used: Set[Tuple[str, str]],
    added_imports: Set[str],
    ctx: Context,
) -> Removals:
    """The unused import ``bindings`` to remove, by statement, with the code each removal is
    reported under: a legacy name's rule, or cleanup of an import that was used before (or
    that the migration added).  Other unused imports are the user's business.  A legacy
    name that JAX's API history shows on every release of the target range is not legacy
    there (``from jax.interpreters import pxla`` in a package's ``__init__`` re-exports it)."""
    removals: Removals = {}
    for binding in bindings:
        name = binding.name
        owner = None
        if binding_is_legacy(
            binding, plan.legacy_names, plan.legacy_modules
        ) and not ctx.exists_throughout(binding.qualname or ""):
            owner = plan.owner(binding.qualname or "")
        elif (name, binding.qualname or "") in originally_used or name in added_imports:
            owner = CLEANUP_CODE
        if owner is None:
            continue
        statement = binding.statement
        if statement is None:  # an import binding always has its statement
            continue
        deletions = ctx.analysis.deleted_by(binding)
        if any(others for others, _del, _name in deletions):
            continue  # a ``del`` of it may delete another binding: which one, flow decides
        entry = removals.setdefault(id(statement), ImportRemoval(statement, set(), owner))
        entry.aliases.add(id(binding.node))
        for _others, node, deleted in deletions:  # ``del config``: NameError once it is gone
            entry = removals.setdefault(id(node), ImportRemoval(node, set(), owner))
            entry.aliases.add(id(deleted))
    return removals


def left_unused(
    ctx: Context,
    analysis: Analysis,
    plan: Plan,
    originally_used: Set[Tuple[str, str]],
    added_imports: Set[str],
    removals: Removals,
) -> Removals:
    """Imports this round's edits leave unused, found now rather than by the next round's
    analysis (which would remove them alone, in a round of its own).

    Only the certain cases: every ``Name`` spelling the import's name, anywhere outside import
    statements, lies inside a node an edit replaces this round, and no replacement spells
    it, so the new tree reads the name nowhere, whatever its scopes.  Anything less certain
    is left to the next round, which decides as before."""
    edits = ctx.edits
    applied = {
        key: edit
        for key, edit in edits.items()
        if not any(id(up) in edits for up in ctx.ancestors(edit.node))  # else it waits a round
    }

    def replaced(node: cst.CSTNode) -> bool:
        return id(node) in applied or any(id(up) in applied for up in ctx.ancestors(node))

    candidates = [
        binding
        for binding in analysis.imports
        if not binding.guarded
        and binding.name not in analysis.exported
        and id(binding.statement) not in edits
        and id(binding.statement) not in removals
        and _top_level_line(ctx, binding.statement) is not None  # type: ignore[arg-type]
        and analysis.is_used(binding)
    ]
    if not candidates:
        return {}
    names = {binding.name for binding in candidates}
    read = _read_by(applied.values(), names)
    # Read: a name some Name outside the replaced nodes and the import statements spells.
    # The analysis indexed most Names (every reference), so most reads are found there
    # without the walk of the whole tree, and the first round's text can show that no other
    # Name spells a name; only what is left needs the walk.
    unsure = names - read
    if unsure:
        inside = _ids_under(edit.node for edit in applied.values())
        for name in ctx.nodes(cst.Name):
            if name.value in unsure and id(name) not in inside:
                read.add(name.value)
        unsure -= read
    if unsure and ctx.source is not None:
        unsure = _maybe_elsewhere(ctx, unsure, [edit.node for edit in applied.values()])
    if unsure:
        for name in ctx.all_nodes(cst.Name):
            value = name.value
            if value in unsure and value not in read and not replaced(name):
                if not any(
                    isinstance(up, (cst.Import, cst.ImportFrom)) for up in ctx.ancestors(name)
                ):
                    read.add(value)
    left = [b for b in candidates if b.name not in read and not replaced(b.statement)]  # type: ignore[arg-type]
    return _removals(left, plan, originally_used, added_imports, ctx)


def _ids_under(roots: Iterable[cst.CSTNode]) -> Set[int]:
    """The ids of the nodes under ``roots`` (the roots included)."""
    found: Set[int] = set()
    stack = list(roots)
    while stack:
        node = stack.pop()
        found.add(id(node))
        stack.extend(children(node))
    return found


def _maybe_elsewhere(ctx: Context, names: Set[str], replaced: List[cst.CSTNode]) -> Set[str]:
    """The ``names`` a ``Name`` outside the ``replaced`` nodes and the import statements may
    spell, read from the text the round's tree was parsed from (``ctx.source``, the first
    round's): each such ``Name`` is an occurrence of its name in that text, apart from the
    ones counted inside those nodes, so a name the text holds no more often than those spell
    it is spelled nowhere else (strings, comments and longer words only add occurrences)."""
    text = ctx.source
    assert text is not None
    counted: Dict[str, Set[int]] = {name: set() for name in names}
    roots: List[cst.CSTNode] = [*replaced, *ctx.nodes(cst.Import), *ctx.nodes(cst.ImportFrom)]
    while roots:
        node = roots.pop()
        if isinstance(node, cst.Name):
            found = counted.get(node.value)
            if found is not None:
                found.add(id(node))  # (a node inside two roots counts once)
            continue
        roots.extend(children(node))
    return {name for name in names if text.count(name) > len(counted[name])}


def _top_level_line(ctx: Context, statement: cst.CSTNode) -> Optional[cst.CSTNode]:
    line = ctx.parent(statement)
    return line if line is not None and ctx.parent(line) is ctx.module else None


def remove_top_level(
    module: cst.Module,
    removals: Removals,
    fixes: List[Diagnostic],
    ctx: Context,
    origins: Optional["Origins"],
) -> cst.Module:
    """Applies ``removals`` of top-level imports to the module this round produced: those
    whose line the round kept as it was (the others wait for the next round)."""
    lines = {
        id(small): line
        for line in module.body
        if isinstance(line, cst.SimpleStatementLine)
        for small in line.body
        if id(small) in removals
    }
    present = {key: entry for key, entry in removals.items() if key in lines}
    if not present:
        return module
    paths = {id(module)} | {id(lines[key]) for key in present} | set(present)
    applied = Apply({}, present, paths)
    if origins is not None:
        applied.trace = origins.tracer(ctx)
    module = module.visit(applied)
    fixes.extend(
        located_fix(origins, ctx, edit) for edit in applied.applied
    )  # imports of ctx's tree
    return module
