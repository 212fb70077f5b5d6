"""JAX605 use-mesh: ``jax.sharding.use_mesh`` / ``jax.sharding.set_mesh`` -> ``jax.set_mesh``.

``use_mesh`` exists in 0.5.0-0.7.0; the jax 0.7.1 release notes expose ``jax.set_mesh``, a
global setter and a context manager, and remove ``jax.sharding.use_mesh`` in its favour.  In
0.5.3-0.7.0 ``jax.sharding.set_mesh`` is a global setter returning the previous mesh, not a
context manager (checked on jax 0.5.3, 0.6.0 and 0.6.1).
"""

from __future__ import annotations

import ast
from typing import List, Optional, Tuple

from jaxmigrate.migrator import lazycst as cst, references as refs
from jaxmigrate.migrator.astview import AstView
from jaxmigrate.migrator.context import Context, NameSite
from jaxmigrate.migrator.diagnostics import Diagnostic
from jaxmigrate.migrator.rule import Example, Lifecycle, Rule, Safety
from jaxmigrate.rules._api_history import added_in, history
from jaxmigrate.rules._ast_sites import (
    Resolver,
    called_at,
    legacy_imports_stay,
    name_sites,
    parents_of,
)
from jaxmigrate.rules._helpers import called, fitting

USE_MESH = "jax.sharding.use_mesh"
OLD_SET_MESH = "jax.sharding.set_mesh"
MODERN = "jax.set_mesh"


class UseMesh(Rule, code="JAX605", safety=Safety.SAFE):
    """with jax.sharding.use_mesh(m): -> with jax.set_mesh(m); jax.sharding.set_mesh(m) only where
    the range lacks it

    **What it does.** Rewrites `jax.sharding.use_mesh(mesh)` (a context manager) to
    `jax.set_mesh(mesh)`, and the 0.5.3-0.7.0 global setter `jax.sharding.set_mesh(mesh)`
    used as a statement to `jax.set_mesh(mesh)`.  When the old setter's return value (the
    previous mesh) is used, the site is reported: `jax.set_mesh` returns a context manager,
    so restore code must become `with jax.set_mesh(mesh): ...`.

    **Why.** JAX 0.7.1 removed `jax.sharding.use_mesh` without a deprecation period and added
    `jax.set_mesh`, which is both the global setter and the context manager.

    **Left alone.** A name that exists on every release of the target range: from 0.7.1 on
    `jax.sharding.set_mesh` *is* `jax.set_mesh` (the same object), so while JAX keeps the old
    name, renaming it changes nothing (`with jax.sharding.set_mesh(mesh):` is code written for
    0.7.1+).  Only a use of the value the 0.5.3-0.7.0 setter returned is still reported.

    **Use instead.** `with jax.set_mesh(mesh): ...` or `jax.set_mesh(mesh)`.
    """

    whole_module = False  # hooks read their sites and the names those resolve to

    lifecycle = Lifecycle(
        needs=added_in("jax.set_mesh"),
        removed=("0.7.1", "jax.set_mesh added, jax.sharding.use_mesh removed"),
    )
    references = (refs.api("jax.set_mesh"),)
    names = frozenset({USE_MESH, OLD_SET_MESH})
    examples = (
        Example(
            before="""
            import jax

            with jax.sharding.use_mesh(mesh):
                y = f(x)
            """,
            after="""
            import jax

            with jax.set_mesh(mesh):
                y = f(x)
            """,
        ),
        Example.reported(
            title="the previous mesh returned by the old setter is used: report",
            code="""
            import jax

            previous = jax.sharding.set_mesh(mesh)  # expect: JAX605
            """,
        ),
    )

    def visit_name(self, site: NameSite, ctx: Context) -> None:
        if site.is_import:
            return
        # On every release of the range (jax.sharding.set_mesh from 0.7.1 on is jax.set_mesh,
        # the same object): not legacy there, renaming it would be churn.
        present = ctx.exists_throughout(site.qualname)
        call = called(site)
        if call is None:
            if not present:
                ctx.report(site.node, *_as_value(site.qualname))
            return
        if site.qualname == OLD_SET_MESH:
            parent = ctx.parent(call)
            # a statement (the setter) or a with item (only the 0.7.1+ class is a context
            # manager, and jax.sharding.set_mesh is jax.set_mesh there) keep their meaning
            if not isinstance(parent, (cst.Expr, cst.WithItem)):
                ctx.report(call, RESULT_USED, RESULT_USED_DETAIL)
                return
        if not present:
            ctx.replace(site.node, ctx.ref(MODERN, site.scope), f"{site.qualname} -> {MODERN}")

    def ast_findings(self, view: AstView) -> Optional[List[Diagnostic]]:
        """:meth:`visit_name` on ``ast``: its findings where it makes no fix; None (LibCST
        decides) where it renames a site, the sites could differ, or the engine might drop an
        unused legacy import."""
        if not legacy_imports_stay(view, self.names, self.legacy_modules):
            return None
        sites = name_sites(view, Resolver(view, self.names))
        if sites is None:
            return None
        calls = called_at(view, sites)
        users = parents_of(view.tree, calls.values())
        found: List[Optional[Diagnostic]] = []
        for node, qualname in sites:
            present = history().exists_throughout(qualname, view.target, view.upper)
            call = calls.get(id(node))
            if call is None:
                if not present:
                    found.append(view.report(self.code, node, *_as_value(qualname)))
                continue
            if qualname == OLD_SET_MESH and type(users.get(id(call))) not in _KEEPS_MEANING:
                found.append(view.report(self.code, call, RESULT_USED, RESULT_USED_DETAIL))
                continue
            if not present:
                return None  # a rename: LibCST writes it
        return [finding for finding in found if finding is not None]


# What holds a call of the old setter whose result is not used (LibCST: Expr, WithItem).
_KEEPS_MEANING = (ast.Expr, ast.withitem)
RESULT_USED = "jax.sharding.set_mesh's result changed in 0.7.1; use `with jax.set_mesh(mesh):`"
RESULT_USED_DETAIL = (
    "jax.sharding.set_mesh returned the previous mesh before 0.7.1; jax.set_mesh returns a "
    "context manager: use `with jax.set_mesh(mesh): ...` to restore the mesh afterwards."
)


def _as_value(qualname: str) -> Tuple[str, str]:
    """(message, detail) of a site used as a value, not called."""
    return (
        fitting(
            f"{qualname} used as a value: use {MODERN}",
            f"{qualname.rpartition('.')[2]} used as a value: use {MODERN}",
        ),
        f"{qualname} used as a value: use {MODERN} (a global setter and a context manager).",
    )
