"""``import jax.experimental.pjit`` once nothing reads ``jax.experimental.pjit`` any more.

An ``import a.b.c`` binds ``a``: while the code reads ``a`` at all (``jax.devices()``), the
import counts as used, so the unused-import cleanup (:mod:`migrator.cleanup`) keeps it after
the fixes rewrote every ``jax.experimental.pjit.pjit(...)`` to ``jax.jit(...)``: a dead import
of a deprecated module that a maintainer would have removed with its last use.  This finds
the top-level ``import a.b.c`` (no ``as``) whose module the file as read reached through it
and the rewritten tree no longer does, and:

* removes it when another import binds ``a`` too (``import jax`` beside it);
* else makes it ``import a`` when nothing left reads ``a.b`` (the package it loaded), so the
  reads of ``a`` keep their binding.

Imports the user left unreached (side-effect imports) are never touched.
"""

from __future__ import annotations

import ast
from typing import Dict, FrozenSet, List, Optional, Set

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.migrator.analysis import Analysis
from jaxmigrate.migrator.apply import ImportRemoval, Removals
from jaxmigrate.migrator.astfacts import dotted
from jaxmigrate.migrator.context import Context, Edit
from jaxmigrate.migrator.diagnostics import CLEANUP_CODE
from jaxmigrate.migrator.errors import LeftOut
from jaxmigrate.migrator.rule import Safety
from jaxmigrate.migrator.scope import dotted_name


def dead_submodule_imports(ctx: Context, analysis: Analysis, removals: Removals) -> Removals:
    """Records in ``ctx.edits`` the ``import a.b.c`` that become ``import a``; returns the
    ones to remove."""
    candidates = [
        binding
        for binding in analysis.imports
        if isinstance(binding.statement, cst.Import)
        and isinstance(binding.node, cst.ImportAlias)
        and binding.node.asname is None
        and "." in binding.imported_name
        and not binding.guarded
        and binding.name not in analysis.exported
        and id(binding.statement) not in ctx.edits
        and id(binding.statement) not in removals
        and _top_level(ctx, binding.statement)
    ]
    if not candidates:
        return {}
    original = _original_reads(ctx)
    if original is None:
        return {}
    candidates = [b for b in candidates if b.imported_name in original]
    if not candidates:
        return {}
    now = _reads(ctx) | _left_out_reads(ctx)
    found: Removals = {}
    binders: Dict[str, int] = {}
    for binding in analysis.imports:
        if isinstance(binding.statement, cst.Import) and _top_level(ctx, binding.statement):
            binders[binding.name] = binders.get(binding.name, 0) + 1
    for binding in candidates:
        module = binding.imported_name
        if module in now:
            continue
        statement, alias = binding.statement, binding.node
        if statement is None or not isinstance(alias, cst.ImportAlias):
            continue
        if binders.get(binding.name, 0) > 1:
            binders[binding.name] -= 1
            entry = found.setdefault(id(statement), ImportRemoval(statement, set(), CLEANUP_CODE))
            entry.aliases.add(id(alias))
        elif ".".join(module.split(".")[:2]) not in now:
            old = alias.name
            message = f"import {module} -> import {binding.name}: nothing reads {module} any more"
            ctx.edits[id(old)] = Edit(
                old, cst.Name(binding.name), CLEANUP_CODE, message, Safety.SAFE
            )
    return found


def _top_level(ctx: Context, statement: object) -> bool:
    line = ctx.parent(statement)  # type: ignore[arg-type]
    return line is not None and ctx.parent(line) is ctx.module


def _reads(ctx: Context) -> Set[str]:
    """Every dotted prefix (two parts or more) of the attribute chains the tree reads."""
    found: Set[str] = set()
    for node in ctx.all_nodes(cst.Attribute):
        parent = ctx.parent(node)
        if isinstance(parent, (cst.Attribute, cst.ImportAlias, cst.ImportFrom)):
            continue  # inside a longer chain, or an import's module
        name = dotted_name(node)
        if name is not None:
            found.update(_prefixes(name.split(".")))
    return found


def _prefixes(parts: List[str]) -> Set[str]:
    return {".".join(parts[:i]) for i in range(2, len(parts) + 1)}


def _left_out_reads(ctx: Context) -> FrozenSet[str]:
    """:func:`_reads` of the statements the piecewise path left out of the module (none for a
    whole module): they read what they did, and the whole module's tree would show it."""
    pieces = ctx.pieces
    if pieces is None:
        return frozenset()
    key = "submodules.left_out_reads"
    if key not in ctx.file_state:
        found: Set[str] = set()
        for run in pieces.runs:
            # a class's methods are indented: parsed as the body of a block
            source = "if 1:\n" + run if run[:1] in (" ", "\t") else run
            try:
                tree = ast.parse(source)
            except (SyntaxError, ValueError, MemoryError, RecursionError) as error:
                raise LeftOut("a statement left out that does not parse alone") from error
            for node in ast.walk(tree):
                chain = dotted(node) if isinstance(node, ast.Attribute) else None
                if chain is not None:
                    found.update(_prefixes(chain))
        ctx.file_state[key] = frozenset(found)
    return ctx.file_state[key]  # type: ignore[return-value]


def _original_reads(ctx: Context) -> Optional[FrozenSet[str]]:
    """:func:`_reads` of the file as read (CPython's tree; computed once a file)."""
    key = "submodules.original_reads"
    if key not in ctx.file_state:
        text = ctx.file_state.get("text")
        try:
            tree = ast.parse(text) if isinstance(text, str) else None
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            tree = None
        found: Set[str] = set()
        for node in ast.walk(tree) if tree is not None else ():
            chain = dotted(node) if isinstance(node, ast.Attribute) else None
            if chain is not None:
                found.update(_prefixes(chain))
        ctx.file_state[key] = None if tree is None else frozenset(found)
    return ctx.file_state[key]  # type: ignore[return-value]
