"""JAX502 jax-config-module: ``from jax.config import config`` / ``import jax.config`` ->
``jax.config``.

The ``jax.config.config`` object and ``define_*`` helpers were removed in JAX 0.4.25,
``import jax.config`` was deprecated in 0.4.25 and the submodule removed in 0.4.29 (release
notes of both; ``import jax.config`` fails on real jax 0.4.30 and 0.10.2).  The
Config object itself has always been the attribute ``jax.config`` of the ``jax`` package.
"""

from __future__ import annotations

from typing import List, Optional, Set

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.migrator.astview import AstView
from jaxmigrate.migrator.context import Context, NameSite
from jaxmigrate.migrator.diagnostics import Diagnostic
from jaxmigrate.migrator.naming import CannotReference
from jaxmigrate.migrator.rule import Example, Lifecycle, Rule, Safety
from jaxmigrate.migrator.scope import dotted_name
from jaxmigrate.migrator.textgate import under
from jaxmigrate.rules._ast_sites import nothing_at_sites
from jaxmigrate.rules._config import removal
from jaxmigrate.rules._pjit import module_facts

LEGACY_OBJECT = "jax.config.config"
MODERN = "jax.config"


class JaxConfigModule(Rule, code="JAX502", safety=Safety.SAFE):
    """from jax.config import config / import jax.config / jax.config.config -> import jax;
    jax.config

    **What it does.** Rewrites references to the Config object through the old `jax.config`
    submodule to the `jax.config` attribute of the `jax` package:

    * `from jax.config import config` + `config.update(...)` -> `import jax` +
      `jax.config.update(...)` (every reference the import binds; a local `config` variable or
      parameter is a different name and stays);
    * `jax.config.config.update(...)` -> `jax.config.update(...)`;
    * `import jax.config` -> `import jax` (dropped when `import jax` is already there);
    * `from jax.config import config` -> `from jax import config`, its uses left alone, where
      `jax` names something else (a parameter; a package's `from . import jax`) or `config`
      is bound again later in the module (netket's `__init__`: `config.update(...)`,
      `del config`, then `from .utils import config`).

    A `del config` of the import goes with it.

    **Why.** The `jax.config.config` object was removed in JAX 0.4.25 and the `jax.config`
    submodule in 0.4.29: these imports fail with ImportError on current JAX.  `jax.config`
    reached through `import jax` is the same object on every release.

    **Reported.** `import jax.config as cfg` (the alias named the submodule, not the Config
    object: rewrite its uses by hand to `jax.config`).
    """

    # no gate: ``jax.config`` (the Config object) exists on every JAX release
    lifecycle = Lifecycle(
        deprecated=("0.4.25", "jax.config.config removed, import jax.config deprecated"),
        removed=("0.4.29", "the jax.config submodule removed"),
    )
    # Its hooks read its sites, the imports, and the module-level reads of the names those
    # bind (each a site: the piecewise path keeps every statement that spells one).
    whole_module = False
    names = frozenset({LEGACY_OBJECT})
    # The submodule: ``import jax.config`` wakes the rule up, and an import of it left unused
    # is removed.  (``from jax import config`` has the same dotted name; unused, it goes too.)
    legacy_modules = frozenset({"jax.config"})
    examples = (
        Example(
            before="""
            from jax.config import config
            config.update("jax_enable_x64", True)
            """,
            after="""
            import jax
            jax.config.update("jax_enable_x64", True)
            """,
        ),
        Example(
            title="the submodule import",
            before="""
            import jax.config
            jax.config.config.update("jax_debug_nans", True)
            """,
            after="""
            import jax
            jax.config.update("jax_debug_nans", True)
            """,
        ),
    )

    def visit_name(self, site: NameSite, ctx: Context) -> None:
        if site.is_import:
            return  # removed by the engine once nothing uses it
        if isinstance(site.node, cst.Name):
            bindings = site.scope.lookup(site.node.value) or []
            if any(binding.guarded for binding in bindings):
                return  # a try/except ImportError compatibility pair: leave it
        else:
            parts = site.parts or []
            head = site.scope.lookup(parts[0]) if parts else None
            if head and any(
                b.qualname == "jax.config" and isinstance(b.statement, cst.Import) for b in head
            ):
                # ``import jax.config as m``: ``m`` is the submodule (reported at the import)
                return
        if isinstance(site.node, cst.Name) and site.scope.resolve_name(site.node.value) is None:
            # read in order before another binding of the name (netket's ``del config``, then
            # ``from .utils import config``): the import changes in place, the rest stays
            if self._import_from_jax(site, ctx):
                return
        # ``jax`` + ``.config``: never reuse an alias of the submodule for the Config object.
        try:
            jax = ctx.ref("jax", site.scope)
        except CannotReference:
            if self._import_from_jax(site, ctx):
                return
            raise
        new = cst.Attribute(value=jax, attr=cst.Name("config"))
        ctx.replace(
            site.node,
            new,
            f"{ctx.code(site.node)} -> {MODERN}",
            detail="The jax.config submodule is gone from JAX 0.4.29.",
        )

    def _import_from_jax(self, site: NameSite, ctx: Context) -> bool:
        """``from jax.config import config`` -> ``from jax import config``, the same object on
        every release, its uses left as they are: where the name ``jax`` is taken (netket's
        ``from . import jax``), or the name has other bindings.  False where the site's name
        is not bound by one such import."""
        if not isinstance(site.node, cst.Name):
            return False
        bindings = site.scope.lookup(site.node.value) or []
        imports = [b for b in bindings if b.qualname == LEGACY_OBJECT]
        if len(imports) != 1:
            return False
        statement = imports[0].statement
        if (
            not isinstance(statement, cst.ImportFrom)
            or statement.relative
            or isinstance(statement.names, cst.ImportStar)
            or any(dotted_name(alias.name) != "config" for alias in statement.names)
            or statement.module is None
        ):
            return False
        if id(statement.module) not in ctx.edits:
            ctx.replace(
                statement.module,
                cst.Name("jax"),
                "from jax.config import config -> from jax import config",
                detail="The jax.config submodule is gone from JAX 0.4.29; the jax package's "
                "config attribute is the same Config object on every release.",
            )
        return True

    def visit_module(self, ctx: Context) -> None:
        done: Set[int] = set()
        self._import_jax_in_place(ctx)
        for binding in ctx.analysis.imports:
            statement = binding.statement
            if not isinstance(statement, cst.Import) or binding.guarded or id(statement) in done:
                continue
            if not any(dotted_name(alias.name) == "jax.config" for alias in statement.names):
                continue
            done.add(id(statement))
            self._rewrite_import(statement, binding.scope, ctx)

    def ast_findings(self, view: AstView) -> Optional[List[Diagnostic]]:
        """Nothing to do, read on ``ast``: the file reaches ``jax.config`` only through
        ``from jax import config`` (the Config object on every release) and never names
        ``jax.config.config``; None (LibCST decides) wherever :meth:`visit_name` or
        :meth:`visit_module` may act: an ``import jax.config`` or an import from the
        submodule, or a site of ``jax.config.config`` (or one the view cannot rule out)."""
        for item in view.imports:
            if under(item.imported, self.legacy_modules) and not (
                item.imported == MODERN and item.node.name == "config"  # from jax import config
            ):
                return None
        return nothing_at_sites(view, self.names, self.legacy_modules)

    def _import_jax_in_place(self, ctx: Context) -> None:
        """``from jax.config import config`` above the module's ``import jax`` (config flags set
        before anything else): the rewritten ``jax.config`` lines run before that import, so
        the from-import itself becomes ``import jax``."""
        module_scope = ctx.analysis.scopes[id(ctx.module)]
        jax_lines = [
            ctx.position(b.statement).start.line
            for b in ctx.analysis.imports
            if b.name == "jax"
            and b.qualname == "jax"
            and b.scope is module_scope
            and b.statement is not None
        ]
        if not jax_lines:
            return  # ctx.ref adds ``import jax`` with the other imports
        for binding in ctx.analysis.imports:
            statement = binding.statement
            if (
                binding.qualname != LEGACY_OBJECT
                or binding.scope is not module_scope
                or binding.guarded
                or not isinstance(statement, cst.ImportFrom)
                or isinstance(statement.names, cst.ImportStar)
                or len(statement.names) != 1
            ):
                continue
            early = [
                use
                for use in module_facts(ctx).name_loads.get(binding.name, [])
                if ctx.scope_of(use) is module_scope
                and not isinstance(ctx.parent(use), cst.ImportAlias)
                and getattr(ctx.parent(use), "attr", None) is not use
                and ctx.position(use).start.line < min(jax_lines)
            ]
            if not early:
                continue  # read only after `import jax` or inside functions: jax is bound by then
            ctx.replace(
                statement,
                cst.Import(names=[cst.ImportAlias(name=cst.Name("jax"))]),
                "from jax.config import config -> import jax (in place)",
                detail="In place: the module sets its config flags before its own `import jax`.",
            )

    def _rewrite_import(self, statement: cst.Import, scope, ctx: Context) -> None:  # noqa: ANN001
        # Another binding of the package name ``jax`` (``import jax``, ``import jax.numpy``)?
        other_jax = any(
            b.qualname == "jax"
            and b.node is not None
            and dotted_name(b.node.name) != "jax.config"
            and not b.guarded
            for b in scope.bindings.get("jax", ())
        )
        result: List[cst.ImportAlias] = []
        changed = False
        for alias in statement.names:
            if dotted_name(alias.name) != "jax.config":
                result.append(alias)
                continue
            if alias.asname is not None:
                ctx.report(
                    alias,
                    "the jax.config submodule was removed in JAX 0.4.29; use `import jax`",
                    "The jax.config submodule is gone from JAX 0.4.29: use `import jax` and "
                    "refer to the Config object as `jax.config`.",
                )
                result.append(alias)
                continue
            changed = True
            if not other_jax:
                result.append(alias.with_changes(name=cst.Name("jax")))
                other_jax = True
        if not changed:
            return
        message = "import jax.config -> import jax (the jax.config submodule is gone)"
        if not result:
            target = removal(ctx, statement)
            if target is not None:
                ctx.replace(target, cst.RemovalSentinel.REMOVE, message)
            return
        result[-1] = result[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        ctx.replace(statement, statement.with_changes(names=result), message)
