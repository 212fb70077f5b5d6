"""JAX916 unmapped-aval-axis-name: ``unmapped_aval(n, axis_name, axis, aval)`` ->
``unmapped_aval(n, axis, aval)``.

Through JAX 0.5.0, ``jax.core.unmapped_aval(size, axis_name, axis, aval)`` took the name of
the mapped axis (0.4.x dropped it from the aval's named shape; 0.5.0 read it only under the
experimental ``sharding_in_types`` flag).  JAX 0.5.1 made it ``unmapped_aval(size, axis, aval,
explicit_mesh_axis=None)`` (read in the 0.5.0 and 0.5.1 sources of ``jax/_src/core.py``;
``inspect.signature`` on 0.4.13, 0.4.30 and 0.6.2), and ``jax.extend.core.unmapped_aval``, the
name JAX903 renames it to, is that function.  So a custom batching rule's
``core.unmapped_aval(axis_size, core.no_axis_name, 0, aval)`` passes the axis name as
``axis`` and the axis as ``aval`` there, and ``axis_name=`` is a ``TypeError``.  JAX906 reports
the keyword where this rule cannot act; the positional layout only this rule can read.
"""

from __future__ import annotations

import functools
from typing import Optional, Tuple

from jaxmigrate.migrator import lazycst as cst, references as refs
from jaxmigrate.migrator.astfacts import Facts
from jaxmigrate.migrator.context import Context, NameSite
from jaxmigrate.migrator.rule import Example, Lifecycle, Rule, Safety
from jaxmigrate.migrator.scope import dotted_name
from jaxmigrate.migrator.version import Version, parse_version
from jaxmigrate.rules._arg_layout import effect_free, in_slots
from jaxmigrate.rules._helpers import call_target

LEGACY = "jax.core.unmapped_aval"
MODERN = "jax.extend.core.unmapped_aval"
GONE = parse_version("0.5.1")  # the first release without axis_name
KEYWORD = "axis_name"
# the legacy parameters before ``aval``: (size, axis_name, axis) -- a call passing four
# positional arguments passed axis_name second
LEGACY_POSITIONAL = 4
NO_AXIS_NAME = "no_axis_name"  # jax.core.no_axis_name: only ever an axis_name


class UnmappedAvalAxisName(Rule, code="JAX916", safety=Safety.SAFE):
    """unmapped_aval(n, axis_name, axis, aval) -> unmapped_aval(n, axis, aval)

    **What it does.** Drops the `axis_name` argument of `jax.core.unmapped_aval` (the second
    positional one, or `axis_name=`) where every release of the target range is JAX 0.5.1 or
    later, which took it out of the signature; JAX903 then renames the function to
    `jax.extend.core.unmapped_aval`, the same function.  Four positional arguments are read
    as the old layout where the code was written for a JAX before 0.5.1 (its requirement, or
    the names it uses, say so) or where the second is `core.no_axis_name`; where nothing says,
    or the value may have an effect, or the target range also holds older releases (no call
    works on both sides of 0.5.1), the call is reported.

    **Why.** From 0.5.1 the parameters are `(size, axis, aval, explicit_mesh_axis=None)`: the
    old positional call passes the axis name as `axis` and the axis as `aval`, and fails
    inside the unmapping handler; `axis_name=` raises `TypeError`.  The name only mattered
    for xmap's named shapes (gone in 0.4.31) and 0.5.0's experimental sharding in types.

    **Use instead.** `jax.extend.core.unmapped_aval(size, axis, aval)`.
    """

    whole_module = False  # hooks read the call alone

    lifecycle = Lifecycle(removed=("0.5.1", "axis_name removed from unmapped_aval"))
    references = (refs.source_at("0.5.1", "jax/_src/core.py", "unmapped_aval without axis_name"),)
    # Only the new name is declared: a rule that declares a name owns it, and JAX903 must keep
    # renaming the legacy one.  :meth:`for_range` reads both; where both act on a call, the
    # argument goes and the name moves.  (JAX906 reports a legacy axis_name= this leaves.)
    names = frozenset({MODERN})
    names_are_legacy = False  # the function stays: keep its imports
    examples = (
        Example(
            title="a batching rule's output avals",
            before="""
            from jax import core

            def batched_avals(axis_size, avals):
                return [core.unmapped_aval(axis_size, core.no_axis_name, 0, a) for a in avals]
            """,
            after="""
            from jax import core

            def batched_avals(axis_size, avals):
                return [core.unmapped_aval(axis_size, 0, a) for a in avals]
            """,
            target_version="0.6.2",
        ),
    )

    def for_range(self, low: Version, high: Optional[Version], aside: frozenset) -> Rule:
        """A copy reading the legacy name too (see :attr:`names`)."""
        return _with_legacy()

    def ast_gate(self, facts: Facts) -> bool:
        """A call of the function passing ``axis_name=`` or four positional arguments."""
        for call in facts.calls:
            if not self.names.isdisjoint(facts.qualnames(call.func)) and (
                len(call.args) >= LEGACY_POSITIONAL or any(k.arg == KEYWORD for k in call.keywords)
            ):
                return True
        return False

    def visit_name(self, site: NameSite, ctx: Context) -> None:
        target = None if site.is_import else call_target(site, ())
        if target is None or not ctx.reaches(GONE):
            return
        call = target[0]
        if any(arg.star for arg in call.args):
            return
        arg, unsure = _axis_name_arg(call, ctx)
        if unsure:
            ctx.report(
                call,
                "unmapped_aval(): before JAX 0.5.1 the second argument was axis_name, from 0.5.1 "
                "it is axis",
                f"{site.qualname} took (size, axis_name, axis, aval) through JAX 0.5.0 and "
                "takes (size, axis, aval, explicit_mesh_axis) from 0.5.1.  Nothing says which "
                "JAX this call was written for: drop axis_name if it was the older one.",
            )
            return
        if arg is None:
            return
        if arg.keyword is not None and site.qualname == LEGACY and ctx.target < GONE:
            return  # (JAX906 reports the keyword the old name dropped)
        if ctx.target < GONE or not effect_free(arg.value):
            ctx.report(
                arg,
                "unmapped_aval() takes no axis_name from JAX 0.5.1; drop it",
                f"{site.qualname} took axis_name through JAX 0.5.0 and takes (size, axis, "
                "aval, explicit_mesh_axis) from 0.5.1.  Left here: "
                + (
                    "its value may have an effect."
                    if ctx.target >= GONE
                    else "the target range holds releases on both sides of 0.5.1, and no "
                    "call works on both."
                ),
            )
            return
        kept = [a for a in call.args if a is not arg]
        new = call.with_changes(args=in_slots(call.args, kept, kept))
        ctx.replace(
            call,
            new,
            "unmapped_aval(n, axis_name, ...) -> unmapped_aval(n, ...): gone from JAX 0.5.1",
        )


def _axis_name_arg(call: "cst.Call", ctx: Context) -> Tuple[Optional["cst.Arg"], bool]:
    """(the argument given for ``axis_name``: its keyword, or the second of four positional
    arguments where the call was written in the old layout; whether four positional arguments
    may be either layout, nothing saying which)."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == KEYWORD:
            return arg, False
    positional = [arg for arg in call.args if arg.keyword is None]
    if len(positional) != LEGACY_POSITIONAL:
        return None, False
    second = positional[1]
    if (dotted_name(second.value) or "").rsplit(".", 1)[-1] == NO_AXIS_NAME:
        return second, False
    before, _why = ctx.written_before(GONE)
    return (second if before else None), before is None


@functools.lru_cache(maxsize=1)
def _with_legacy() -> UnmappedAvalAxisName:
    rule = object.__new__(UnmappedAvalAxisName)
    rule.names = frozenset({LEGACY, MODERN})  # type: ignore[misc]
    return rule
