"""JAX201 pjit-axis-resources: ``in_axis_resources``/``out_axis_resources`` -> ``*_shardings``.

Release notes: jax 0.4.4 adds ``in_shardings``; 0.4.9 deprecates the old keywords; 0.4.14
removes them ("a safe and trivial name replacement").  Also spreads literal
``**dict(...)``/``**{...}`` keyword dicts and renames the keys of a local ``kw = dict(...)``
used only as ``**kw`` in pjit calls.
"""

from __future__ import annotations

from typing import List

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.migrator.context import Context, NameSite
from jaxmigrate.migrator.rule import Example, Lifecycle, Rule, Safety
from jaxmigrate.rules._helpers import call_target
from jaxmigrate.rules._pjit import RENAMES, kwargs_variable, normalized_args
from jaxmigrate.rules._pjit_wrappers import check_wrappers


class PjitAxisResources(Rule, code="JAX201", safety=Safety.SAFE):
    """pjit(in_axis_resources=, out_axis_resources=) -> in_shardings=, out_shardings=

    **What it does.** Renames pjit's `in_axis_resources=`/`out_axis_resources=` keywords to
    `in_shardings=`/`out_shardings=`, in direct calls and in `functools.partial(pjit, ...)`
    decorators, and turns positional shardings (and `static_argnums`/`donate_argnums`) into
    keywords.  Literal keyword dicts (`**dict(in_axis_resources=...)`, `**{"in_axis_resources":
    ...}`) are spread into keywords; a local `kw = dict(...)` used only as `**kw` in pjit calls
    has its keys renamed.  The values are unchanged: pjit still accepts PartitionSpecs there.

    **Why.** The keywords were deprecated in JAX 0.4.9 and removed in 0.4.14; calls with them
    raise `TypeError: unexpected keyword argument`.  `in_shardings` exists from 0.4.4.

    **Note.** On jax 0.4.4-0.4.13 a *top-level* `in_axis_resources=None` /
    `out_axis_resources=None` is silently ignored by pjit (it means "unspecified"), while
    `in_shardings=None` means replicated, as pjit's `None` did before 0.4.4 and does again
    after 0.4.14 (verified on 0.4.13: `pjit(f, in_axis_resources=P('x'),
    out_axis_resources=None)` returns a `P('x')` output, `out_shardings=None` a replicated
    one).  The rename restores the documented meaning; values are unchanged.

    **Wrappers.** A function of the module that passes its own `in_axis_resources`/
    `out_axis_resources` parameters to pjit (`def pjit(fn, in_axis_resources, ...): return
    jax_pjit(fn, in_axis_resources=in_axis_resources, ...)`) is reported; with
    `--unsafe-fixes` its parameters, their uses and the keywords at its calls in the module are
    renamed too, and a public wrapper keeps a finding that callers in other modules must
    rename theirs.

    **See also.** Moving from `pjit` to `jax.jit` is a separate step, because `None` and bare
    `PartitionSpec`s mean different things under `jax.jit`.
    """

    lifecycle = Lifecycle(
        needs=("0.4.4", "in_shardings and out_shardings added"),
        deprecated=("0.4.9", "in_axis_resources and out_axis_resources deprecated"),
        removed=("0.4.14", "in_axis_resources and out_axis_resources removed"),
    )
    names = frozenset({"jax.experimental.pjit.pjit"})
    examples = (
        Example(
            before="""
            from jax.experimental.pjit import pjit, PartitionSpec as P

            f = pjit(step, in_axis_resources=P('x'), out_axis_resources=None)
            """,
            after="""
            from jax.experimental.pjit import pjit, PartitionSpec as P

            f = pjit(step, in_shardings=P('x'), out_shardings=None)
            """,
        ),
        Example(
            title="partial decorators and positional shardings",
            before="""
            import functools
            from jax.experimental import pjit as pjit_lib

            @functools.partial(pjit_lib.pjit, in_axis_resources=None, out_axis_resources=None)
            def step(x):
                return x

            g = pjit_lib.pjit(step, None, None)
            """,
            after="""
            import functools
            from jax.experimental import pjit as pjit_lib

            @functools.partial(pjit_lib.pjit, in_shardings=None, out_shardings=None)
            def step(x):
                return x

            g = pjit_lib.pjit(step, in_shardings=None, out_shardings=None)
            """,
        ),
    )

    def visit_name(self, site: NameSite, ctx: Context) -> None:
        if site.is_import:
            return
        target = call_target(site)
        if target is None:
            return
        call, through_partial = target
        args, ok = normalized_args(ctx, call, through_partial, site.scope)
        if not ok:
            clash = [
                new
                for old, new in RENAMES.items()
                if old in _keywords(call) and new in _keywords(call)
            ]
            ctx.report(call, f"both {clash[0]} and its legacy spelling are given; keep one")
            return
        if args is not None:
            ctx.replace(call, call.with_changes(args=args), "pjit axis_resources -> shardings")
        for arg in call.args:
            found = kwargs_variable(ctx, arg, site.scope)
            if found is not None:
                self._rename_variable(found[0], ctx)

    def visit_module(self, ctx: Context) -> None:
        check_wrappers(ctx)  # functions that forward in_axis_resources/out_axis_resources

    @staticmethod
    def _rename_variable(assign: cst.Assign, ctx: Context) -> None:
        """``kw = dict(in_axis_resources=...)`` / ``{"in_axis_resources": ...}``: rename the
        keys."""
        value = assign.value
        if isinstance(value, cst.Call):
            keys = [a.keyword.value for a in value.args if a.keyword is not None]
            if any(RENAMES.get(k) in keys for k in keys):
                ctx.report(
                    assign, "both a shardings keyword and its legacy spelling are given; keep one"
                )
                return
            args = [
                a.with_changes(keyword=cst.Name(RENAMES[a.keyword.value]))
                if a.keyword is not None and a.keyword.value in RENAMES
                else a
                for a in value.args
            ]
            if args != list(value.args):
                ctx.replace(
                    value,
                    value.with_changes(args=args),
                    "pjit axis_resources -> shardings (**kwargs dict)",
                )
        elif isinstance(value, cst.Dict):
            strings = [  # kwargs_variable saw to it: string keys only
                e.key.evaluated_value
                for e in value.elements
                if isinstance(e, cst.DictElement) and isinstance(e.key, cst.SimpleString)
            ]
            if any(RENAMES.get(k) in strings for k in strings if isinstance(k, str)):
                ctx.report(
                    assign, "both a shardings keyword and its legacy spelling are given; keep one"
                )
                return
            elements = []
            for element in value.elements:
                key = element.key if isinstance(element, cst.DictElement) else None
                if isinstance(key, cst.SimpleString) and key.evaluated_value in RENAMES:
                    quote = key.quote
                    element = element.with_changes(
                        key=key.with_changes(
                            value=key.prefix + quote + RENAMES[key.evaluated_value] + quote
                        )
                    )
                elements.append(element)
            if elements != list(value.elements):
                ctx.replace(
                    value,
                    value.with_changes(elements=elements),
                    "pjit axis_resources -> shardings (**kwargs dict)",
                )


def _keywords(call: cst.Call) -> List[str]:
    return [arg.keyword.value for arg in call.args if arg.keyword is not None]
