"""JAX914 gensym-args: ``core.gensym([jaxpr], suffix)`` -> ``gensym()``.

Safe.  ``jax.core.gensym`` made a function that returns fresh jaxpr variables.  Through JAX
0.4.24 it took ``(jaxprs=None, suffix='')``: the jaxprs whose variables the new ones' printed
names must not repeat, and a suffix for those names.  JAX 0.4.25 dropped ``jaxprs`` (a
variable is told apart by identity, its name is made when a jaxpr is printed), leaving
``gensym(suffix='')``; JAX 0.6.2 dropped ``suffix`` too: ``gensym()`` (read in the 0.4.24,
0.4.25, 0.6.1 and 0.6.2 sources of ``jax/_src/core.py``).  So ``core.gensym([jaxpr])``, as
kfac-jax 0.0.3's graph matcher writes it, raises ``TypeError: gensym() takes 0 positional
arguments`` from 0.6.2 on, and ``gensym(jaxprs=...)`` from 0.4.25; the renamed
``jax.extend.core.gensym`` (JAX903) takes none either.  Both arguments only ever named the
variables when printed, and ``gensym()`` is valid on every release, so the call loses them
where the target range reaches a release that rejects them.
"""

from __future__ import annotations

import functools
from typing import FrozenSet, Optional

from jaxmigrate.migrator import lazycst as cst, references as refs
from jaxmigrate.migrator.astfacts import Facts
from jaxmigrate.migrator.context import Context, NameSite
from jaxmigrate.migrator.rule import Example, Lifecycle, Rule, Safety
from jaxmigrate.migrator.version import Version, parse_version
from jaxmigrate.rules._arg_layout import effect_free
from jaxmigrate.rules._helpers import call_target

GENSYM = "jax.core.gensym"
MODERN = "jax.extend.core.gensym"  # (JAX903 renames the one to the other)
JAXPRS_GONE = parse_version("0.4.25")  # gensym(suffix='') from here
SUFFIX_GONE = parse_version("0.6.2")  # gensym() from here
_WHY = "its arguments only named the variables"


class GensymArgs(Rule, code="JAX914", safety=Safety.SAFE):
    """core.gensym([jaxpr], suffix="_x") -> core.gensym(): JAX dropped its arguments

    **What it does.** Drops the arguments of a `jax.core.gensym` (or `jax.extend.core.gensym`)
    call where the target range reaches a release that rejects them: `jaxprs` from JAX
    0.4.25, any argument from 0.6.2.  An argument whose evaluation may have an effect (a call),
    a comment among the arguments or `*args`/`**kwargs` leaves the call as it is, reported.

    **Why.** `gensym(jaxprs, suffix)` kept the printed names of new variables apart from those
    of `jaxprs`, with `suffix` at their end.  JAX 0.4.25 tells variables apart by identity and
    dropped `jaxprs` (`gensym(suffix='')`); JAX 0.6.2 dropped `suffix` (`gensym()`).  A call
    written for an older JAX raises `TypeError` there, usually deep in a tracing pass
    (kfac-jax 0.0.3's graph matcher: `gensym([jaxpr])`).  `gensym()` works on every release;
    only printed names differ.

    **Use instead.** `jax.extend.core.gensym()` (JAX 0.10 on), with no arguments.
    """

    whole_module = False  # hooks read the call alone

    lifecycle = Lifecycle(removed=("0.6.2", "gensym takes no arguments"))
    references = (refs.source_at("0.6.2", "jax/_src/core.py", "def gensym()"),)
    # The modern name only, for the registry: a rule declaring a name keeps the others off it,
    # and JAX903 must go on renaming the legacy one.  The rule as it runs reads both
    # (:meth:`for_range`); where both act on a call, the arguments go, then the name moves.
    names = frozenset({MODERN})
    names_are_legacy = False  # the function stays: keep its imports
    examples = (
        Example(
            title="a graph matcher's fresh variables (kfac-jax 0.0.3)",
            before="""
            from jax import core

            def fresh(jaxpr, avals):
                gen = core.gensym([jaxpr], suffix="_x")
                return [gen(aval) for aval in avals]
            """,
            after="""
            from jax import core

            def fresh(jaxpr, avals):
                gen = core.gensym()
                return [gen(aval) for aval in avals]
            """,
            target_version="0.6.2",
        ),
    )

    def for_range(self, low: Version, high: Optional[Version], aside: FrozenSet[str]) -> Rule:
        """A copy reading the legacy name too (see :attr:`names`)."""
        return _with_legacy()

    def ast_gate(self, facts: Facts) -> bool:
        """A call of gensym that passes something."""
        return any(
            (call.args or call.keywords) and not self.names.isdisjoint(facts.qualnames(call.func))
            for call in facts.calls
        )

    def visit_name(self, site: NameSite, ctx: Context) -> None:
        target = None if site.is_import else call_target(site, ())
        if target is None or not target[0].args:
            return
        call = target[0]
        gone = _rejected_from(call)
        if not ctx.reaches(gone):
            return
        when = ".".join(map(str, gone))
        if _droppable(call):
            message = f"gensym(...) -> gensym(): JAX {when} rejects them; {_WHY}"
            ctx.replace(call, call.with_changes(args=()), message)
            return
        ctx.report(
            call,
            f"gensym()'s arguments are rejected from JAX {when}: drop them ({_WHY})",
            f"{site.qualname} took (jaxprs, suffix) through JAX 0.4.24, (suffix) through 0.6.1 "
            f"and nothing from 0.6.2; these arguments are rejected from JAX {when} (a "
            "TypeError).  They only named the new variables when printed: call gensym() once "
            "their effects are kept elsewhere.",
        )


@functools.lru_cache(maxsize=1)
def _with_legacy() -> GensymArgs:
    rule = object.__new__(GensymArgs)
    rule.names = frozenset({GENSYM, MODERN})  # type: ignore[misc]
    return rule


def _rejected_from(call: "cst.Call") -> Version:
    """The first release that rejects the call's arguments: 0.4.25 for ``jaxprs=`` (or
    ``**kwargs``, which may hold it), else 0.6.2 (a positional ``jaxprs`` landed in
    ``suffix`` in between, which took it)."""
    for arg in call.args:
        if arg.star == "**" or (arg.keyword is not None and arg.keyword.value == "jaxprs"):
            return JAXPRS_GONE
    return SUFFIX_GONE


def _droppable(call: "cst.Call") -> bool:
    """Can the arguments go unread: none with an effect, no comment among them."""
    if any(arg.star for arg in call.args):
        return False
    if not all(effect_free(arg.value) for arg in call.args):
        return False
    return "#" not in cst.Module([]).code_for_node(call.with_changes(func=cst.Name("f")))
