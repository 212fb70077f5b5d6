"""JAX806's report of an import of a removed module, read from CPython's ``ast`` (issue #29).

Where a module imports one of the removed modules whose members no rule reports (the
``jax.lib`` modules, ``jax.xla``, ``sharded_jit``) with ``from M import x`` or
``import M as x`` at its top level, and uses each such name, the LibCST hook's work comes
down to one finding per import statement (``_report_leftovers``): nothing to delete, no
member to name, no positional-semantics setting (those need ``jax.experimental.maps``).
JAX's own ``ffi.py`` docstring (``from jax.lib import xla_client``) is such a program, and
was the one reason a run over JAX's sources imported LibCST.
"""

from __future__ import annotations

import ast
from typing import List, Mapping, Optional, Tuple

from jaxmigrate.migrator.astview import AstView
from jaxmigrate.migrator.diagnostics import Diagnostic
from jaxmigrate.migrator.version import parse_version
from jaxmigrate.rules._ast_sites import used
from jaxmigrate.rules._import_chains import module_of


def leftover_imports(
    view: AstView,
    code: str,
    removed: Mapping[str, str],
    members_reported: Tuple[str, ...],
    advice: Mapping[str, str],
) -> Optional[List[Diagnostic]]:
    """JAX806's findings in a module that imports a removed module (``removed``: module ->
    the release without it): each top-level import statement of one the target reaches,
    reported on its line.  None where the hook may do more or the engine may drop an import:
    a module whose members it reports (``members_reported``), a dotted ``import a.b.c``
    (deleted once unused), a star import, an import not at the top level or guarded, one the
    module does not use (the clean-up drops it) or re-exports; and where another rule
    speaks on the same line (``AstView.unless_spoken``: the hook stays silent there only if
    that rule spoke first)."""
    modules = tuple(removed)
    imported = [
        item
        for item in view.imports
        if module_of(item.qualname, modules) or module_of(item.imported, modules)
    ]
    top = {id(alias) for statement in view.tree.body for alias in _aliases(statement)}
    for item in imported:
        if item.guarded or id(item.node) not in top or item.qualname != item.imported:
            return None  # (nested or guarded; a dotted ``import a.b.c`` binds ``a``)
        if module_of(item.imported, members_reported) or "__all__" in view.text:
            return None
        if not used(view, item):
            return None  # (the clean-up may drop it: a fix)
    reached = tuple(m for m, v in removed.items() if _reached(view, v))
    found: List[Optional[Diagnostic]] = []
    lines = view.unless_spoken.setdefault(code, set())
    for statement in view.tree.body:
        module = _statement_module(statement, reached)
        if module is None:
            continue
        lines.add(view.start(statement)[0])
        message = f"{module} was removed in {removed[module]}; {advice[module]}"
        found.append(view.report(code, statement, message))
    if found and not any(module_of(item.qualname, reached) for item in imported):
        return None  # (the hook reads the bindings first: LibCST decides)
    return [finding for finding in found if finding is not None]


def _reached(view: AstView, version: str) -> bool:
    """Does the target range hold ``version`` or a later release (``Context.reaches``)?"""
    return view.upper is None or view.upper >= parse_version(version)


def _aliases(statement: ast.stmt) -> List[ast.alias]:
    if type(statement) in (ast.Import, ast.ImportFrom):
        return list(statement.names)  # type: ignore[attr-defined]
    return []


def _statement_module(statement: ast.stmt, reached: Tuple[str, ...]) -> Optional[str]:
    """The removed module an import statement names, as ``_report_leftovers`` reads it: the
    first ``import`` alias inside one, or the ``from`` module (else its first alias) that is."""
    if type(statement) is ast.Import:
        for alias in statement.names:
            module = module_of(alias.name, reached)
            if module is not None:
                return module
        return None
    if type(statement) is not ast.ImportFrom or statement.level:
        return None
    base = statement.module or ""
    module = module_of(base, reached)
    if module is None and not any(alias.name == "*" for alias in statement.names):
        for alias in statement.names:
            module = module_of(f"{base}.{alias.name}", reached)
            if module is not None:
                break
    return module
