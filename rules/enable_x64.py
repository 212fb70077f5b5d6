"""JAX803 enable-x64: ``jax.experimental.enable_x64()/disable_x64()`` ->
``jax.enable_x64(True/False)``.

The experimental context managers were deprecated in JAX 0.8.0 (release notes) in favour of
``jax.enable_x64``, which jax 0.4.x does not have and which is the ``jax_enable_x64`` config
state on 0.10.2 (checked: ``with jax.enable_x64(True):`` and ``@jax.enable_x64(True)`` both
work; ``jax.experimental.enable_x64`` is gone there).  Safe for targets >= 0.8.
"""

from __future__ import annotations

from typing import List, Optional

from jaxmigrate.migrator import lazycst as cst, references as refs
from jaxmigrate.migrator.astview import AstView
from jaxmigrate.migrator.context import Context, NameSite
from jaxmigrate.migrator.diagnostics import Diagnostic
from jaxmigrate.migrator.rule import Example, Lifecycle, Rule, Safety
from jaxmigrate.rules._api_history import added_in
from jaxmigrate.rules._ast_sites import nothing_at_sites
from jaxmigrate.rules._helpers import called_or_report, fitting

DEFAULTS = {"jax.experimental.enable_x64": "True", "jax.experimental.disable_x64": "False"}


class EnableX64(Rule, code="JAX803", safety=Safety.SAFE):
    """jax.experimental.enable_x64() / disable_x64() -> jax.enable_x64(True) / jax.enable_x64(False)

    **What it does.** Rewrites calls of the experimental context managers:
    `jax.experimental.enable_x64()` -> `jax.enable_x64(True)`,
    `jax.experimental.enable_x64(flag)` -> `jax.enable_x64(flag)`,
    `jax.experimental.disable_x64()` -> `jax.enable_x64(False)`, in `with` statements,
    decorators and anywhere else they are called.  A reference that is not called (for example
    `cm = enable_x64`) is reported, as is `disable_x64(...)` with arguments.

    **Why.** The `jax.experimental` spellings were deprecated in JAX 0.8.0 and are gone on
    current JAX.

    **Target version.** `jax.enable_x64` does not exist on 0.4.x, so the rule runs only for
    `--target-version 0.8.0` or newer; older targets keep the experimental spelling, which
    works there.  `jax.enable_x64(...)` needs its argument: there is no default.
    """

    whole_module = False  # hooks read their sites and the names those resolve to

    lifecycle = Lifecycle(
        needs=added_in("jax.enable_x64"),
        deprecated=("0.8.0", "jax.experimental.enable_x64 and disable_x64 deprecated"),
    )
    references = (refs.api("jax.enable_x64"),)
    names = frozenset(DEFAULTS)
    examples = (
        Example(
            before="""
            from jax.experimental import enable_x64, disable_x64

            with enable_x64():
                y = f(x)
            with disable_x64():
                z = f(x)
            """,
            after="""
            import jax

            with jax.enable_x64(True):
                y = f(x)
            with jax.enable_x64(False):
                z = f(x)
            """,
        ),
    )

    def ast_findings(self, view: AstView) -> Optional[List[Diagnostic]]:
        """Nothing, read on ``ast``, in a file with no site of the experimental spellings
        (``try: from jax import enable_x64 except ImportError: from jax.experimental import
        enable_x64`` leaves the name unresolved: no site); None where there is one."""
        return nothing_at_sites(view, self.names, self.legacy_modules)

    def visit_name(self, site: NameSite, ctx: Context) -> None:
        legacy = site.qualname.rsplit(".", 1)[-1]
        message = (
            f"jax.experimental.{legacy} is deprecated since JAX 0.8.0; "
            f"use jax.enable_x64({DEFAULTS[site.qualname]})"
        )
        detail = (
            f"jax.experimental.{legacy} is deprecated since JAX 0.8.0 and gone on current JAX; "
            f"use jax.enable_x64({DEFAULTS[site.qualname]}) (a context manager and decorator)."
        )
        call = called_or_report(site, ctx, message, detail)
        if call is None:
            return
        modern = ctx.ref("jax.enable_x64", site.scope)
        if not call.args:
            args = [cst.Arg(cst.Name(DEFAULTS[site.qualname]))]
        elif (
            site.qualname == "jax.experimental.enable_x64"
            and len(call.args) == 1
            and not call.args[0].star
            and call.args[0].keyword is None
        ):
            args = [call.args[0].with_changes(comma=cst.MaybeSentinel.DEFAULT)]
        elif (
            site.qualname == "jax.experimental.enable_x64"
            and len(call.args) == 1
            and call.args[0].keyword is not None
            and call.args[0].keyword.value == "new_val"
        ):
            args = [call.args[0]]
        else:
            ctx.report(
                call,
                f"jax.experimental.{legacy}(...) with these arguments: rewrite by hand as "
                "jax.enable_x64(<bool>)",
            )
            return
        ctx.replace(
            call,
            call.with_changes(func=modern, args=args),
            fitting(
                f"jax.experimental.{legacy}() -> jax.enable_x64({ctx.code(args[0].value)})",
                f"jax.experimental.{legacy}() -> jax.enable_x64(...)",
            ),
        )
