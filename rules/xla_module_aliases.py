"""JAX104 xla-module-aliases: ``jax.xla``/``jax.pxla`` and what was re-exported through them.

Release notes: the ``jax.xla``/``jax.pxla`` module aliases are deprecated in 0.4.8 and removed
in 0.4.14; ``xla.device_put``/``pxla.device_put`` deprecated in 0.4.7, removed in 0.4.11/0.4.14;
``xla.Device`` deprecated in 0.4.4, removed in 0.4.11.  The members that still exist in
``jax.interpreters.xla``/``pxla`` were read from the installed JAX 0.10.2 (names marked removed
in pxla's deprecation table excluded).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, AbstractSet, FrozenSet, List, Optional

from jaxmigrate.migrator import lazycst as cst, references as refs
from jaxmigrate.migrator.context import Context, NameSite
from jaxmigrate.migrator.rule import Example, Lifecycle, Rule, Safety
from jaxmigrate.migrator.version import parse_version
from jaxmigrate.rules._api_history import history
from jaxmigrate.rules._ast_sites import nothing_at_sites
from jaxmigrate.rules._helpers import MESSAGE_LIMIT, fitting, report_once

if TYPE_CHECKING:  # pragma: no cover
    from jaxmigrate.migrator.astview import AstView
    from jaxmigrate.migrator.diagnostics import Diagnostic

# Members of jax.interpreters.{xla,pxla} on JAX 0.10.2 (pxla ones are deprecated since 0.8.2).
MODERN_MEMBERS = {
    "xla": frozenset({"Backend", "apply_primitive", "canonicalize_dtype_handlers"}),
    "pxla": frozenset(
        {
            "Index",
            "MeshAxisName",
            "MeshComputation",
            "MeshExecutable",
            "global_aval_to_result_handler",
            "global_avals_to_results_handler",
            "global_result_handlers",
            "thread_resources",
            "are_hlo_shardings_equal",
            "is_hlo_sharding_replicated",
            "op_sharding_to_indices",
            "ArrayMapping",
            "array_mapping_to_axis_resources",
            "create_compile_options",
        }
    ),
}
MODULES = {"jax.xla": "xla", "jax.pxla": "pxla"}
DEVICE = frozenset({"jax.interpreters.xla.Device", "jax.xla.Device"})
XLA_DEVICE_PUT = frozenset({"jax.interpreters.xla.device_put", "jax.xla.device_put"})
# The deprecation of xla.Device (0.4.4) names jax.Device as its replacement; older targets are
# not assumed to have it.
DEVICE_SINCE = "0.4.4"
PXLA_DEVICE_PUT = frozenset({"jax.interpreters.pxla.device_put", "jax.pxla.device_put"})


# What takes the place of a gone member of ``jax.interpreters.xla`` where the answer is one
# public API: (a few words for the message, the recipe for the detail).  XLA translation rules
# gave way to MLIR lowerings; ``jax.interpreters.mlir.register_lowering`` and ``mlir.lower_fun``
# exist on every jax.Array release (checked on jax 0.4.13 and 0.10.2).
_LOWERING = (
    "use mlir.register_lowering",
    "a primitive's XLA translation rule is an MLIR lowering now: "
    "jax.interpreters.mlir.register_lowering(prim, mlir.lower_fun(impl, "
    "multiple_results=...)) lowers it through its implementation, on every jax.Array release.",
)
_INSTEAD = {
    ("xla", "register_translation"): _LOWERING,
    ("xla", "translations"): _LOWERING,
    ("xla", "backend_specific_translations"): _LOWERING,
    ("xla", "lower_fun"): ("use mlir.lower_fun", _LOWERING[1]),
    ("xla", "TranslationContext"): ("lowerings take mlir.LoweringRuleContext", _LOWERING[1]),
    ("xla", "XlaOp"): (
        "lowerings build MLIR values (mlir.ir.Value)",
        "XLA builder operations are gone: a lowering (jax.interpreters.mlir.register_lowering) "
        "builds MLIR values, jax.interpreters.mlir.ir.Value; a type that named XlaOp for them "
        "names that, or drops it.",
    ),
}


class XlaModuleAliases(Rule, code="JAX104", safety=Safety.SAFE):
    """jax.xla/jax.pxla -> jax.interpreters.xla/pxla; xla.Device -> jax.Device; xla.device_put ->
    jax.device_put

    **What it does.**
    * `jax.xla.NAME` / `jax.pxla.NAME` and `from jax import xla, pxla` become
      `jax.interpreters.xla` / `jax.interpreters.pxla` when `NAME` still exists there (or
      another rule migrates it); otherwise the use is reported: `NAME` is gone from both.
    * `xla.Device` / `jax.xla.Device` become `jax.Device` (the same class; reported instead
      when the target version is older than 0.4.4, whose deprecation named `jax.Device`).
    * `xla.device_put(x)` / `xla.device_put(x, device)` (positional, or `device=`) become
      `(jax.device_put(x, device),)`, and `xla.device_put(x, device)[0]` becomes
      `jax.device_put(x, device)` (unsafe fixes: the legacy function returned a tuple of
      one raw device buffer, the replacement gives a jax.Array).
    * `pxla.device_put(x, devices, replicate)` is reported: it returned a list of per-device
      buffers; use `jax.device_put(x, sharding)` with a `NamedSharding`, or
      `[jax.device_put(x, d) for d in devices]`.

    **Why.** `jax.xla`/`jax.pxla` were deprecated in JAX 0.4.8 and removed in 0.4.14;
    `xla.Device` and `xla.device_put` were removed in 0.4.11, `pxla.device_put` in 0.4.14.
    """

    whole_module = False  # hooks read their sites and the names those resolve to

    lifecycle = Lifecycle(
        deprecated=("0.4.4", "jax.interpreters.xla.Device deprecated"),
        removed=("0.4.14", "jax.xla and jax.pxla removed"),
    )
    references = (
        refs.release_notes("0.4.7", "device_put re-exports deprecated"),
        refs.release_notes("0.4.8", "jax.xla and jax.pxla deprecated"),
        refs.release_notes("0.4.11", "xla.Device and xla.device_put removed"),
    )
    names = frozenset(MODULES) | DEVICE | XLA_DEVICE_PUT | PXLA_DEVICE_PUT

    def survey_writes(self, words: AbstractSet[str]) -> FrozenSet[str]:
        """A moved ``from jax import xla`` binds its name to ``jax.interpreters.xla``: every
        chain on the name then reads a member of that module, whatever release added it."""
        found = set(super().survey_writes(words))
        for short in MODULES.values():
            if short in words:
                found.update(("jax", "interpreters", short))
        return frozenset(found)

    examples = (
        Example(
            title="module alias and Device",
            before="""
            import jax

            def describe(d: jax.xla.Device) -> str:
                return str(jax.xla.apply_primitive)
            """,
            after="""
            import jax

            def describe(d: jax.Device) -> str:
                return str(jax.interpreters.xla.apply_primitive)
            """,
        ),
        Example(
            title="from jax import xla",
            before="""
            from jax import xla

            handlers = xla.canonicalize_dtype_handlers
            """,
            after="""
            from jax.interpreters import xla

            handlers = xla.canonicalize_dtype_handlers
            """,
        ),
        Example(
            title="xla.device_put returned a tuple of one buffer",
            unsafe_fixes=True,
            before="""
            import jax
            from jax.interpreters import xla

            def put(x):
                return xla.device_put(x, jax.devices()[1])[0]
            """,
            after="""
            import jax

            def put(x):
                return jax.device_put(x, jax.devices()[1])
            """,
        ),
        Example.reported(
            title="pxla.device_put is reported",
            code="""
            from jax.interpreters import pxla

            def put(x, devices):
                return pxla.device_put(x, devices, replicate=True)
            """,
        ),
    )

    def ast_findings(self, view: AstView) -> Optional[List[Diagnostic]]:
        """Nothing, read on ``ast``, in a file with no site of the aliases (every hook is
        :meth:`visit_name`'s): chex's ``hasattr(jax, "pxla")`` checks are compatibility code;
        None where there is one."""
        return nothing_at_sites(view, self.names, self.legacy_modules)

    def visit_name(self, site: NameSite, ctx: Context) -> None:
        qualname = site.qualname
        if qualname in MODULES:
            self._module_alias(site, ctx, MODULES[qualname])
            return
        if site.is_import:
            return  # the import goes once nothing uses it
        if qualname in DEVICE:
            if ctx.target < parse_version(DEVICE_SINCE):
                ctx.report(
                    site.node,
                    f"xla.Device was removed in JAX 0.4.11; "
                    f"use jax.Device (from JAX {DEVICE_SINCE})",
                    f"jax.Device replaces it (named as the replacement from {DEVICE_SINCE}, "
                    "newer than the target version).",
                )
                return
            ctx.replace(
                site.node, ctx.ref("jax.Device", site.scope), f"{ctx.code(site.node)} -> jax.Device"
            )
        elif qualname in XLA_DEVICE_PUT:
            self._xla_device_put(site, ctx)
        elif qualname in PXLA_DEVICE_PUT:
            ctx.report(
                site.node,
                "pxla.device_put was removed in JAX 0.4.14; "
                "use jax.device_put with a NamedSharding",
                "pxla.device_put(x, devices, replicate) was removed in JAX 0.4.14 "
                "and returned a list of per-device buffers; "
                "use jax.device_put(x, NamedSharding(mesh, P(...))) or "
                "[jax.device_put(x, d) for d in devices]",
            )

    # -- device_put re-exports ----------------------------------------------------------------
    def _xla_device_put(self, site: NameSite, ctx: Context) -> None:
        call = site.parent
        if not (isinstance(call, cst.Call) and call.func is site.node):
            ctx.report(
                site.node,
                "xla.device_put was removed in JAX 0.4.11; use jax.device_put",
                "jax.device_put returns a jax.Array, not a tuple of buffers.",
            )
            return
        args = call.args
        positional = [a for a in args if a.keyword is None and not a.star]
        keywords = [a for a in args if a.keyword is not None]
        simple = (
            len(positional) + len(keywords) == len(args)
            and 1 <= len(positional) <= 2
            and all(k.keyword.value == "device" for k in keywords)  # type: ignore[union-attr]
            and (not keywords or len(positional) == 1)
        )
        if not simple:
            ctx.report(
                site.node,
                "xla.device_put with unusual arguments: "
                "rewrite by hand as jax.device_put(x, device)",
            )
            return
        new_call = call.with_changes(func=ctx.ref("jax.device_put", site.scope))
        parent = ctx.parent(call)
        message = f"{ctx.code(site.node)}(...) -> jax.device_put(...)"
        detail = "jax.device_put returns a jax.Array, not a tuple of one buffer."
        if isinstance(parent, cst.Subscript) and parent.value is call and _is_index_zero(parent):
            ctx.replace(
                parent,
                new_call.with_changes(lpar=parent.lpar, rpar=parent.rpar),
                message,
                safety=Safety.UNSAFE,
                detail=detail,
            )
            return
        wrapped = cst.Tuple(elements=[cst.Element(value=new_call, comma=cst.Comma())])
        if call.lpar:
            wrapped = wrapped.with_changes(lpar=call.lpar, rpar=call.rpar)
        ctx.replace(call, wrapped, message, safety=Safety.UNSAFE, detail=detail)

    # -- the jax.xla / jax.pxla module aliases ------------------------------------------------
    def _module_alias(self, site: NameSite, ctx: Context, short: str) -> None:
        modern = f"jax.interpreters.{short}"
        if site.is_import:
            self._rewrite_import(site, ctx, short)
            return
        parent = site.parent
        member: Optional[str] = None
        if isinstance(parent, cst.Attribute) and parent.value is site.node:
            member = parent.attr.value
        if member is not None and self._gone(ctx, short, member):
            instead = _INSTEAD.get((short, member))
            detail = (
                f"jax.{short} was removed in JAX 0.4.14, and {modern}.{member} no longer "
                "exists either; "
                + (instead[1] if instead else f"find the public replacement of {member}.")
            )
            said = jax_says(f"{modern}.{member}", ctx)
            message = fitting(  # (room for report_once's count of the uses)
                f"{modern}.{member} is gone (jax.{short} too); "
                + (instead[0] if instead else "find a public replacement"),
                f"{modern}.{member} is gone; " + (instead[0] if instead else "no public twin"),
                f"{modern}.{member} is gone (jax.{short} too)",
                room=MESSAGE_LIMIT - len(" (99 uses)"),
            )
            gone = ctx.memo((self.code, "gone members"), dict)
            gone.setdefault(message, ([], f"{detail} {said}" if said else detail))[0].append(
                site.node
            )
            return
        if isinstance(site.node, cst.Name):
            return  # bound by `from jax import xla`: the import itself is rewritten
        if member is not None and ctx.owner(f"jax.{short}.{member}", besides="") is not None:
            return  # another rule (or another part of this one) migrates the member itself
        ctx.replace(site.node, ctx.ref(modern, site.scope), f"{ctx.code(site.node)} -> {modern}")

    def visit_module(self, ctx: Context) -> None:
        """A gone member once per file, at its first use, with the count of its uses: each
        use needs the same replacement, which a reader finds by the name."""
        gone = ctx.memo((self.code, "gone members"), dict)
        for message, (uses, detail) in gone.items():
            report_once(ctx, uses, message, detail)

    @staticmethod
    def _gone(ctx: Context, short: str, member: str) -> bool:
        """``jax.<short>.<member>`` is gone with its module and no rule (this one included)
        migrates the member under either spelling."""
        if member in MODERN_MEMBERS[short]:
            return False
        return not any(
            ctx.owner(f"{module}.{short}.{member}", besides="")
            for module in ("jax", "jax.interpreters")
        )

    def _rewrite_import(self, site: NameSite, ctx: Context, short: str) -> None:
        statement = site.parent
        if (
            not isinstance(statement, cst.ImportFrom)
            or statement.relative
            or isinstance(statement.names, cst.ImportStar)
        ):
            return
        if self._has_gone_uses(ctx):
            return  # the uses are reported; the import is the person's to change with them
        moved: List[cst.ImportAlias] = []
        kept: List[cst.ImportAlias] = []
        for alias in statement.names:
            name = alias.name.value if isinstance(alias.name, cst.Name) else None
            (moved if name in ("xla", "pxla") else kept).append(alias)
        new_module = cst.Attribute(value=cst.Name("jax"), attr=cst.Name("interpreters"))
        message = f"from jax import {short} -> from jax.interpreters import {short}"
        if not kept:
            ctx.replace(statement, statement.with_changes(module=new_module), message)
            return
        line = site.ancestors[-2] if len(site.ancestors) >= 2 else None
        if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
            ctx.report(
                site.node,
                f"jax.{short} was removed in JAX 0.4.14; "
                f"import it as `from jax.interpreters import {short}`",
                "Not rewritten: the import shares its line with other statements.",
            )
            return
        kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        moved[-1] = moved[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        old = statement.with_changes(names=kept)
        if not statement.lpar:
            old = old.with_changes(lpar=None, rpar=None)
        new = cst.ImportFrom(module=new_module, names=moved)
        ctx.replace(
            line,
            cst.FlattenSentinel(
                [line.with_changes(body=[old]), cst.SimpleStatementLine(body=[new])]
            ),
            message,
        )

    def _has_gone_uses(self, ctx: Context) -> bool:
        for other in ctx.analysis.name_sites:
            node = other.node
            if not isinstance(node, cst.Name) or other.guarded:
                continue
            qualname = ctx.qualname(node, other.scope)
            short = MODULES.get(qualname or "")
            parent = other.ancestors[-1]
            if short and isinstance(parent, cst.Attribute) and parent.value is node:
                if self._gone(ctx, short, parent.attr.value):
                    return True
        return False


def _is_index_zero(subscript: cst.Subscript) -> bool:
    if len(subscript.slice) != 1:
        return False
    index = subscript.slice[0].slice
    return (
        isinstance(index, cst.Index)
        and isinstance(index.value, cst.Integer)
        and index.value.value == "0"
    )


_JAX_NAME = re.compile(r"\bjax(?:\.\w+)+")


def jax_says(qualname: str, ctx: Context) -> str:
    """JAX's own deprecation message for ``qualname`` (from the API history), and that of each
    name it points to that is itself gone from some release of the target range (so that the
    advice does not end at a removed name); empty when JAX said nothing."""
    known = history().lookup(qualname)
    if known is None or not known.message:
        return ""
    said = [f'JAX\'s deprecation message: "{known.message}"']
    for name in dict.fromkeys(_JAX_NAME.findall(known.message)):
        other = history().lookup(name)
        if name == qualname or other is None or not other.message:
            continue
        if not ctx.exists_throughout(name):
            said.append(f'And of {name}: "{other.message}"')
    return " ".join(said)
