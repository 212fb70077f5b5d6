"""JAX902 private-api: imports from, and references into, JAX's private ``jax._src`` package.

``jax._src`` carries no compatibility promise: JAX moves and deletes its contents in any
release, so code that reaches into it is the code most likely to break on the next upgrade.
Reported once per file and private module, at the first place that names it.
"""

from __future__ import annotations

from typing import Dict, List, Tuple

import libcst as cst

from jaxmigrate.migrator import references as refs
from jaxmigrate.migrator.context import Context, NameSite
from jaxmigrate.migrator.rule import Example, Rule, Safety

PRIVATE = "jax._src"


class PrivateApi(Rule):
    code = "JAX902"
    name = "private-api"
    summary = "report uses of JAX's private jax._src modules (no compatibility promise)"
    safety = Safety.MANUAL
    references = (
        refs.api_compatibility("What is not covered?"),
    )
    names = frozenset({PRIVATE})
    legacy_modules = frozenset({PRIVATE})
    names_are_legacy = False
    doc = """
    **What it does.** Reports each private JAX module (``jax._src.core``,
    ``jax._src.lib.xla_client``, ...) a file imports or reaches through an attribute chain,
    once per file and module, at the first place that names it.

    **Why.** JAX documents ``jax._src`` as private: it changes without deprecation, so code
    that uses it may fail at import on the next release even where every public name was
    migrated.  Look for the public equivalent (``jax.extend``, ``jax.core``,
    ``jax.tree_util``, ``jax.sharding``, ...), or pin the JAX version this code was tested
    with.

    **Left alone.** Code under ``try: ... except ImportError/AttributeError`` and under a
    feature or version check.
    """
    examples = (
        Example(
            title="reported, not rewritten",
            before="""
            from jax._src import core

            def is_tracer(x):
                return isinstance(x, core.Tracer)
            """,
            after="""
            from jax._src import core

            def is_tracer(x):
                return isinstance(x, core.Tracer)
            """,
        ),
    )

    def visit_name(self, site: NameSite, ctx: Context) -> None:
        if site.is_import:
            return
        node = site.node
        parent = ctx.parent(node)
        while isinstance(parent, cst.Attribute) and parent.value is node:
            node, parent = parent, ctx.parent(parent)
        qualname = ctx.qualname(node, site.scope) or site.qualname
        self._uses(ctx).append((site.node, _private_module(qualname)))

    def visit_module(self, ctx: Context) -> None:
        """Runs after the name sites: adds the imports, then reports each module once, at the
        first place (in the file's order) that names it."""
        uses = self._uses(ctx)
        for binding in ctx.analysis.imports:
            qualname = binding.imported_name
            if not (binding.guarded or binding.node is None) and (qualname + ".").startswith(PRIVATE + "."):
                uses.append((binding.node, _private_module(qualname)))
        first: Dict[str, Tuple[Tuple[int, int], cst.CSTNode]] = {}
        for node, module in uses:
            start = ctx.position(node).start
            where = (start.line, start.column)
            if module not in first or where < first[module][0]:
                first[module] = (where, node)
        for module, (_where, node) in sorted(first.items(), key=lambda item: item[1][0]):
            ctx.report(
                node,
                f"{module} is private JAX API, with no compatibility promise: it can change or "
                "disappear in any release; use a public equivalent (jax.extend, jax.core, "
                "jax.tree_util, jax.sharding, ...) or pin the JAX version",
            )

    def _uses(self, ctx: Context) -> List[Tuple[cst.CSTNode, str]]:
        return ctx.memo((self.code, "uses"), list)


def _private_module(qualname: str) -> str:
    """``jax._src.lib.xla_client.Device`` -> ``jax._src.lib``: the package and its first part."""
    parts = qualname.split(".")
    return ".".join(parts[:3]) if len(parts) >= 3 else qualname
