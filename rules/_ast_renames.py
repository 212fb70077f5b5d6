"""Renames written from CPython's ``ast`` (issue #29): the fixes of a rule that replaces a
legacy name read through its package (``jax.tree_map``) by another name of the same package
(``jax.tree.map``), where the LibCST hook would write ``ctx.ref(modern)`` at the site.

:meth:`migrator.naming.Naming.ref` spells a name through the import of its longest prefix
that reaches the site; here only the case where that is the package's one import (``import
jax``, or ``import jax as j``) is taken, the one most legacy code writes, so the replacement
is the site's own head and the rest of the modern name, and no import is added or left
unused.  Anything else is None (LibCST decides): a legacy name imported on its own, a chain
written with blanks, comments or brackets inside, a name stored or deleted, a module that
also imports a prefix of the modern name (``from jax import tree_util``) or binds the
package under two names.  :mod:`migrator.astfixes` writes the edits.
"""

from __future__ import annotations

import ast
from typing import Callable, FrozenSet, List, Optional

from jaxmigrate.migrator.astfacts import dotted
from jaxmigrate.migrator.astfixes import AstEdit
from jaxmigrate.migrator.astview import AstView
from jaxmigrate.migrator.textscan import UNKNOWN, next_significant, previous_significant
from jaxmigrate.rules._ast_sites import Resolver, legacy_imports_stay, name_sites


def renames_through_package(
    view: AstView,
    code: str,
    names: FrozenSet[str],
    modules: FrozenSet[str],
    modern_of: Callable[[str], Optional[str]],
) -> Optional[List[AstEdit]]:
    """Rule ``code``'s edits at the sites of ``names`` (``modern_of``: the qualified name
    each is replaced by, None where the hook would not replace it so); None where the LibCST
    hooks might write anything else (see the module's docstring)."""
    if any(not item.guarded and item.imported in names for item in view.imports):
        return None  # an import site: fixed where it is, by LibCST
    if not legacy_imports_stay(view, names, modules):
        return None
    sites = name_sites(view, Resolver(view, names))
    if not sites:
        return None
    edits: List[AstEdit] = []
    for node, qualname in sites:
        modern = modern_of(qualname)
        if modern is None or type(node) is not ast.Attribute or type(node.ctx) is not ast.Load:
            return None
        parts = dotted(node)
        package = qualname.split(".", 1)[0]
        if parts is None or not _spelled_as(view, node, parts):
            return None
        if view.resolve(parts[0]) != (True, package) or not _one_way_to(view, package, modern):
            return None
        if view.suppressed(code, node):
            continue  # (no fix, no finding: as Context.replace)
        new = ".".join((parts[0], *modern.split(".")[1:]))
        edits.append(AstEdit(node, new, f"{qualname} -> {modern}"))
    return edits


def _spelled_as(view: AstView, node: ast.expr, parts: List[str]) -> bool:
    """Is ``node`` written on one line exactly as its dotted name (no blank, comment,
    continuation or bracket inside it), and not in brackets of its own (``(jax.tree_map)``,
    whose brackets LibCST's replacement drops; ``f(jax.tree_map)`` is taken for it too)?"""
    (line, start), (end_line, end) = view.start(node), view.end(node)
    if line != end_line or view.line(line)[start:end] != ".".join(parts):
        return False
    text = view.text
    before = previous_significant(text, view.offset(line, start))
    if before == UNKNOWN:
        return False
    after = next_significant(text, view.offset(line, end))
    return not (before >= 0 and text[before] == "(" and text[after : after + 1] == ")")


def _one_way_to(view: AstView, package: str, modern: str) -> bool:
    """Does the module bind ``package`` under one name, and import no longer prefix of
    ``modern`` (which ``ref`` would spell it through)?"""
    prefixes = modern.split(".")
    longer = {".".join(prefixes[:cut]) for cut in range(2, len(prefixes) + 1)}
    bound = set()
    for item in view.imports:
        if item.qualname in longer:
            return False
        if item.qualname == package and not item.guarded:
            bound.add(item.bound)
    return len(bound) == 1
