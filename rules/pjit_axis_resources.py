"""JAX201 pjit-axis-resources: ``in_axis_resources``/``out_axis_resources`` -> ``*_shardings``.

Implements catalog row PJ-2 (jax 0.4.4 adds ``in_shardings``; 0.4.9 deprecates the old
keywords; 0.4.14 removes them: "a safe and trivial name replacement").
"""

from __future__ import annotations

from typing import List

import libcst as cst

from migrator.context import Context, NameSite
from migrator.rule import Example, Rule, Safety
from rules._helpers import call_target

RENAMES = {"in_axis_resources": "in_shardings", "out_axis_resources": "out_shardings"}
# pjit's legacy positional parameters after ``fun``, in order.
POSITIONAL = ("in_shardings", "out_shardings", "static_argnums", "donate_argnums")


class PjitAxisResources(Rule):
    code = "JAX201"
    name = "pjit-axis-resources"
    summary = "pjit(in_axis_resources=, out_axis_resources=) -> in_shardings=, out_shardings="
    safety = Safety.SAFE
    needs_jax = "0.4.4"
    deprecated_in = "0.4.9"
    removed_in = "0.4.14"
    catalog = ("PJ-2",)
    names = frozenset({"jax.experimental.pjit.pjit"})
    doc = """
    **What it does.** Renames pjit's `in_axis_resources=`/`out_axis_resources=` keywords to
    `in_shardings=`/`out_shardings=`, in direct calls and in `functools.partial(pjit, ...)`
    decorators, and turns positional shardings (and `static_argnums`/`donate_argnums`) into
    keywords.  The values are unchanged: pjit still accepts PartitionSpecs there.

    **Why.** The keywords were deprecated in JAX 0.4.9 and removed in 0.4.14; calls with them
    raise `TypeError: unexpected keyword argument`.  `in_shardings` exists from 0.4.4.

    **See also.** Moving from `pjit` to `jax.jit` is a separate step, because `None` and bare
    `PartitionSpec`s mean different things under `jax.jit`.
    """
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
        keywords = {arg.keyword.value for arg in call.args if arg.keyword is not None}
        clash = [new for old, new in RENAMES.items() if old in keywords and new in keywords]
        if clash:
            ctx.report(call, f"both {clash[0]} and its legacy spelling are given; keep one")
            return
        args = self._rename(call, skip_positional=through_partial)
        if args is not None:
            ctx.replace(call, call.with_changes(args=args), "pjit axis_resources -> shardings")

    @staticmethod
    def _rename(call: cst.Call, skip_positional: bool) -> List[cst.Arg] | None:
        changed = False
        new_args: List[cst.Arg] = []
        positional_index = -1
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value in RENAMES:
                arg = arg.with_changes(keyword=cst.Name(RENAMES[arg.keyword.value]))
                changed = True
            elif arg.keyword is None and not arg.star and not skip_positional:
                positional_index += 1
                if 1 <= positional_index <= len(POSITIONAL):
                    arg = arg.with_changes(
                        keyword=cst.Name(POSITIONAL[positional_index - 1]),
                        equal=cst.AssignEqual(
                            whitespace_before=cst.SimpleWhitespace(""),
                            whitespace_after=cst.SimpleWhitespace(""),
                        ),
                    )
                    changed = True
            new_args.append(arg)
        return new_args if changed else None
