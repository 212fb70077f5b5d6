"""JAX911 pure-callback-vmap: ``jax.pure_callback(f, shapes, *args)`` in code written before
jax 0.4.34 gets ``vmap_method="sequential"``.

Safe.  Until jax 0.4.34 a pure_callback without ``vectorized=True`` met ``vmap`` as a loop: the
callback called once per batch element (``jax/_src/callback.py``'s batching rule, "the default
behavior is to generate a sequential vmap (i.e. a loop)").  0.4.34 added ``vmap_method`` and
warned that the default would change; from 0.6.0 a call with neither keyword raises
``NotImplementedError`` under ``vmap`` (the 0.6.0 sources; observed on jax 0.10.2).  Outside
``vmap`` the keyword changes nothing, so ``vmap_method="sequential"`` keeps what the call did,
where the code was written for a JAX before 0.4.34 and the target reaches 0.6.0.  Code that
says nothing of when it was written is left alone: written for 0.6.0+, the call may be meant
never to be vmapped.
"""

from __future__ import annotations

import ast
from typing import List, Optional

from jaxmigrate.migrator import lazycst as cst, references as refs
from jaxmigrate.migrator.astfacts import Facts
from jaxmigrate.migrator.astview import AstView
from jaxmigrate.migrator.context import Context, NameSite
from jaxmigrate.migrator.diagnostics import Diagnostic
from jaxmigrate.migrator.rule import Example, Lifecycle, Rule, Safety
from jaxmigrate.migrator.version import parse_version
from jaxmigrate.rules._ast_sites import Resolver, name_sites
from jaxmigrate.rules._helpers import call_target, needs_to_fix
from jaxmigrate.rules._mesh import append_arg, keyword_arg
from jaxmigrate.rules._text_gates import PURE_CALLBACK, VMAP_METHOD_SINCE, PureCallbackVmapGate

RAISES_FROM = parse_version("0.6.0")  # neither keyword: NotImplementedError under vmap
_CHOSEN = ("vmap_method", "vectorized")  # a call that says how it meets vmap (JAX906's)


class PureCallbackVmap(PureCallbackVmapGate, Rule, code="JAX911", safety=Safety.SAFE):
    """jax.pure_callback(f, shapes, x) -> jax.pure_callback(f, shapes, x,
    vmap_method="sequential") in code written before 0.4.34

    **What it does.** Adds `vmap_method="sequential"` to a `jax.pure_callback` call that
    passes neither `vmap_method` nor `vectorized`, in code written for a JAX before 0.4.34
    (the user's `--source-version`, the file's own JAX names, or the project's requirement),
    where the target reaches 0.6.0.  `vmap_method` exists from 0.4.34, so the default target
    starts there.

    **Why.** Such a call met `vmap` as a loop, calling the callback once per batch element.
    JAX 0.4.34 deprecated that default, and from 0.6.0 the call raises `NotImplementedError`
    under `vmap`: a library's error check or host-side op that worked in a vmapped model
    (equinox 0.9's `jax.pure_callback(raises, struct, index)`) stops working, with no
    warning on the way.  Outside `vmap` the keyword changes nothing.

    **Use instead.** `vmap_method="sequential"` (the old loop), or `"expand_dims"` /
    `"broadcast_all"` where the callback handles a batch itself.
    """

    whole_module = False  # hooks read their sites and the names those resolve to

    lifecycle = Lifecycle(
        deprecated=(VMAP_METHOD_SINCE, "pure_callback's default vmap behaviour deprecated"),
    )
    fix_needs = VMAP_METHOD_SINCE  # vmap_method=
    references = (refs.api(PURE_CALLBACK),)
    names = frozenset({PURE_CALLBACK})
    names_are_legacy = False  # the function stays: never drop its imports
    examples = (
        Example(
            title="an error check in a vmapped model (equinox 0.9)",
            before="""
            import jax

            def check(pred, index):
                return jax.pure_callback(raises, struct, index)
            """,
            after="""
            import jax

            def check(pred, index):
                return jax.pure_callback(raises, struct, index, vmap_method="sequential")
            """,
            source_version="0.3.25",
        ),
    )

    def ast_gate(self, facts: Facts) -> bool:
        """A call of the function that passes neither keyword and unpacks nothing."""
        return any(
            _undecided(call) for call in facts.calls if PURE_CALLBACK in facts.qualnames(call.func)
        )

    def ast_findings(self, view: AstView) -> Optional[List[Diagnostic]]:
        """Nothing where the target stops before 0.6.0 or the code is not known to be older
        than 0.4.34 (:meth:`visit_name` then leaves every call alone); None elsewhere."""
        if (view.upper is not None and view.upper < RAISES_FROM) or view.written_before(
            parse_version(VMAP_METHOD_SINCE)
        ) is not True:
            return []
        sites = name_sites(view, Resolver(view, self.names))
        return [] if sites == [] else None

    def visit_name(self, site: NameSite, ctx: Context) -> None:
        target = None if site.is_import else call_target(site, ())
        if target is None or not ctx.reaches(RAISES_FROM):
            return
        call = target[0]
        if any(arg.star for arg in call.args) or any(
            arg.keyword is not None and arg.keyword.value in _CHOSEN for arg in call.args
        ):
            return
        older, why = ctx.written_before(parse_version(VMAP_METHOD_SINCE))
        if older is not True:
            return
        needs = needs_to_fix(ctx, VMAP_METHOD_SINCE)
        if needs is None:
            ctx.report(
                call,
                f"pure_callback without vmap_method raises under vmap from JAX 0.6.0; "
                f"vmap_method needs {VMAP_METHOD_SINCE}",
                f"{why}: there the call met vmap as a loop.  From JAX 0.6.0 it raises "
                'NotImplementedError under vmap; vmap_method="sequential" keeps the loop, from '
                f"JAX {VMAP_METHOD_SINCE} on.",
            )
            return
        new = keyword_arg("vmap_method", cst.SimpleString('"sequential"'))
        ctx.replace(
            call,
            call.with_changes(args=append_arg(call.args, new)),
            'pure_callback(...) -> pure_callback(..., vmap_method="sequential")',
            detail=f"It keeps the loop the call made under vmap: {why}.",
            needs=needs,
        )


def _undecided(call: ast.Call) -> bool:
    if any(type(arg) is ast.Starred for arg in call.args):
        return False
    return not any(k.arg is None or k.arg in _CHOSEN for k in call.keywords)
