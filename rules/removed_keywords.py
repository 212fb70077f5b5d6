"""JAX906 removed-keywords: keyword arguments a JAX release dropped from a function that stays.

A call with a removed keyword passes every check that reads names only, and fails at run time
with ``TypeError: unexpected keyword argument``.  The API history records each public
function's keyword parameters per release (``scripts/api_history_signatures.py``): any keyword
a release of the target range dropped is reported.  Two have a rewrite, each measured on the
signatures of jax 0.4.13, 0.4.30, 0.6.2 and 0.10.2:

* ``jax.scipy.linalg.solve(..., sym_pos=...)``: deprecated in jax 0.3.15 in favour of
  ``assume_a="pos"`` (following ``scipy.linalg.solve``); present on 0.4.13, gone on 0.4.30.
* ``jax.numpy.clip(a, a_min=..., a_max=...)``: the Array API signature ``clip(arr, /, min,
  max)`` replaced ``a``/``a_min``/``a_max`` (deprecated arguments on 0.4.30 and 0.6.2, gone on
  0.10.2).  Positional bounds mean the same on every release.
"""

from __future__ import annotations

import ast
import functools
from typing import AbstractSet, Dict, FrozenSet, List, Optional, Set

from jaxmigrate.migrator import lazycst as cst, references as refs
from jaxmigrate.migrator.astfacts import Facts
from jaxmigrate.migrator.context import Context, NameSite
from jaxmigrate.migrator.rule import Example, Lifecycle, Rule, Safety, all_rules
from jaxmigrate.migrator.version import Version, parse_version
from jaxmigrate.rules._api_history import history
from jaxmigrate.rules._arg_layout import in_slots, positional_arg, renamed_arg, reorders_safely
from jaxmigrate.rules._helpers import call_target, needs_to_fix
from jaxmigrate.rules._solve_keywords import ASSUME_A_SINCE, solve as _solve
from jaxmigrate.rules._text_gates import (
    CLIP,
    MAKE_MESH,
    PURE_CALLBACK,
    RESHAPE,
    REWRITTEN,
    SOLVE,
    VMAP_METHOD_SINCE,
    WHERE,
    RemovedKeywordsGate,
)

# The first release known without the keyword (present on the one before it that was measured).
SYM_POS_GONE = parse_version("0.4.14")
CLIP_KEYWORDS_GONE = parse_version("0.7.0")
# pure_callback's vectorized=: deprecated in 0.4.34 for vmap_method= (added there), a
# ValueError from 0.6.0, and from 0.10.0 passed on to the callback through **kwargs.
VECTORIZED_GONE = parse_version("0.6.0")
PARTIAL = "functools.partial"
PARTIAL_WORD = "partial"  # (however it is imported, a partial spells it)


class RemovedKeywords(RemovedKeywordsGate, Rule, code="JAX906", safety=Safety.SAFE):
    """solve(sym_pos=True) -> solve(assume_a="pos"); clip(x, a_min=lo, a_max=hi) -> clip(x, lo, hi)

    **What it does.** Rewrites keyword arguments JAX removed from functions that remain:

    * `jax.scipy.linalg.solve(a, b, sym_pos=True)` becomes `solve(a, b, assume_a="pos")`;
      `sym_pos=False` is dropped; another value `v` becomes `assume_a="pos" if v else "gen"`.
      A call that also passes `assume_a` gets `"pos"` for `sym_pos=True` (JAX's solve let a
      true `sym_pos` override `assume_a`), keeps its `assume_a` for `sym_pos=False`, and gets
      `"pos" if v else a` where both values are names or strings; any other is reported.
      Below a target of 0.3.15 (`--target-version 0.2.18`), whose `solve` has no `assume_a`,
      a call that needs it is reported.
    * `jax.numpy.reshape(x, newshape=s)` becomes `reshape(x, s)` and `jax.make_mesh(axis_shapes=s,
      ...)` becomes `make_mesh(s, ...)`: JAX renamed those parameters in place (`newshape` is
      gone from 0.6.0, `axis_shapes` from 0.11.1), so by position they mean the same everywhere.
      An array passed as `a=x` moves to its position too; two arguments that would swap
      places, both with effects (calls), are reported instead.
    * `jax.numpy.where(c, x=a, y=b)` becomes `where(c, a, b)` (`condition=` too): JAX
      deprecated passing them by keyword in 0.4.21 and takes them by position only from 0.4.27
      (qdax's repertoires), while by position they mean the same on every release.  A call
      whose arguments with effects would swap places is reported.
    * `jax.pure_callback(f, shapes, x, vectorized=True)` becomes `vmap_method="legacy_vectorized"`
      (`False` becomes `"sequential"`, another value `v` becomes `"legacy_vectorized" if v
      else "sequential"`): what each meant under `vmap`, as JAX 0.4.34 maps them itself.
      `vmap_method=` came in 0.4.34, so the default target starts there; below a target given
      the call is reported.
    * `jax.numpy.clip(x, a_min=lo, a_max=hi)` becomes `clip(x, lo, hi)` (`a_max` alone:
      `clip(x, None, hi)`; `a=x` becomes the first positional argument).  Positional bounds
      mean the same on every JAX, old or new, so the rewrite needs no newer release.

    It acts where the target reaches a release without the keyword.

    **Through `functools.partial`.** A keyword a partial binds reaches the function when the
    partial is called, and a removed one raises there (rlax's `partial(jnp.clip,
    a_min=1e-10)`).  A partial's arguments bind from the left, so a bound keyword cannot move to
    its position: `sym_pos` becomes `assume_a` as in a call, and `a_min`/`a_max`, `newshape`
    and `axis_shapes` become `min`/`max` (jax 0.4.27), `shape` (0.4.28) and `axis_sizes`
    (0.11.1) where every release of the target range has them.  The default target starts at
    that release (the fix says what it needs, as a rewrite to a newer name does); below a
    target given (`--target-version 0.4.13`) they are reported.

    **Every other dropped keyword is reported.**  The API history records the keyword
    parameters of JAX's public functions in every release (read from their sources), so a call
    passing a keyword that an earlier release took and a release of the target range takes
    neither by name nor through `**kwargs` is reported at the keyword, with that release.
    So is one that a function's old name dropped before JAX903 renamed it (the same object):
    `jax.core.find_top_trace(xs=...)` becomes `jax.extend.core.find_top_trace(xs=...)`,
    which takes no `xs=` either.

    **Why.** `sym_pos` was deprecated in jax 0.3.15 and is gone by 0.4.30; `a_min`/`a_max`
    gave way to the Array API signature `clip(arr, /, min, max)` and are gone by 0.10.2.  A
    call with either raises `TypeError: unexpected keyword argument`, silently to every check
    that reads names only.  pure_callback's `vectorized` is worse: JAX 0.6.0 raises a
    `ValueError` on it, and from 0.10.0 it falls into `**kwargs`, which pure_callback passes
    on to the callback (a `TypeError` inside the callback, or a wrong result where the
    callback takes `**kwargs`).

    **Use instead.** `assume_a="pos"`; positional bounds (or `min=`/`max=` where the oldest
    JAX you support has them).
    """

    whole_module = False  # hooks read their sites and the names those resolve to

    lifecycle = Lifecycle(deprecated=("0.3.15", "sym_pos of jax.scipy.linalg.solve deprecated"))
    # a partial's renamed keyword needs the release that added its replacement (RENAMED)
    fix_needs = "0.11.1"
    references = (refs.api(SOLVE), refs.api(CLIP), refs.api(PURE_CALLBACK))
    names = frozenset(REWRITTEN)
    names_are_legacy = False  # the functions stay: never drop their imports
    dropped: Dict[str, FrozenSet[str]] = {}  # function -> the keywords the newest JAX lacks
    # a function JAX903 renames into -> each keyword its old name dropped -> that old name
    moved: Dict[str, Dict[str, str]] = {}
    # function -> the keywords a call of it must pass for the rule to act: the rewritten ones
    # and (in the rule :meth:`for_range` gives) the dropped ones
    keywords_of: Dict[str, FrozenSet[str]] = REWRITTEN
    examples = (
        Example(
            before="""
            import jax.scipy.linalg as jsl

            x = jsl.solve(cov, y, sym_pos=True)
            """,
            after="""
            import jax.scipy.linalg as jsl

            x = jsl.solve(cov, y, assume_a="pos")
            """,
        ),
        Example(
            before="""
            import jax.numpy as jnp

            probs = jnp.clip(p, a_min=1e-6, a_max=1.0)
            upper = jnp.clip(p, a_max=1.0)
            """,
            after="""
            import jax.numpy as jnp

            probs = jnp.clip(p, 1e-6, 1.0)
            upper = jnp.clip(p, None, 1.0)
            """,
        ),
    )

    def for_range(self, low: Version, high: Optional[Version], aside: FrozenSet[str]) -> Rule:
        return _with_history()

    def fix_needs_in(self, words: AbstractSet[str]) -> Optional[str]:
        """A partial's renamed keyword needs the release that added its replacement, and
        pure_callback's ``vmap_method=`` the release that added it."""
        found = [VMAP_METHOD_SINCE] if {"pure_callback", "vectorized"} <= words else []
        found += [ASSUME_A_SINCE] if "sym_pos" in words else []
        if PARTIAL_WORD in words:
            found += [since for (_, keyword), (_, since) in RENAMED.items() if keyword in words]
        return max(found, key=parse_version, default=None)

    def for_survey(self, low: Version, high: Optional[Version], unsafe_fixes: bool) -> Rule:
        """Only the functions whose keywords it rewrites: the others it only reports."""
        return _rewrites_only()

    def ast_gate(self, facts: Facts) -> bool:
        """A call of one of the functions, or a ``functools.partial`` of one, passing a keyword
        the rule rewrites or the history saw the function drop (``**kwargs`` included: the
        rule leaves those calls alone)."""
        for call in facts.calls:
            if not call.keywords:
                continue
            qualnames = facts.qualnames(call.func)
            if not qualnames:
                continue
            if PARTIAL in qualnames and call.args and type(call.args[0]) is not ast.Starred:
                qualnames = qualnames | facts.qualnames(call.args[0])
            passed = {k.arg for k in call.keywords}
            if any(passed & self.keywords_of.get(q, frozenset()) for q in qualnames):
                return True
        return False

    def visit_name(self, site: NameSite, ctx: Context) -> None:
        target = None if site.is_import else call_target(site, (PARTIAL,))
        if target is None or any(arg.star for arg in target[0].args):
            return
        call, partial = target
        if partial:
            _partial(site.qualname, call, ctx)
        elif site.qualname == SOLVE and ctx.reaches(SYM_POS_GONE):
            _solve(call, ctx)
        elif site.qualname == CLIP and ctx.reaches(CLIP_KEYWORDS_GONE):
            self._clip(call, ctx)
        elif site.qualname == PURE_CALLBACK and ctx.reaches(VECTORIZED_GONE):
            _vectorized(call, ctx)
        elif _by_position(site.qualname, call, ctx):
            return
        else:
            _report_dropped(site.qualname, call, ctx)

    @staticmethod
    def _clip(call: cst.Call, ctx: Context) -> None:
        named: Dict[str, cst.Arg] = {
            arg.keyword.value: arg for arg in call.args if arg.keyword is not None
        }
        if not {"a", "a_min", "a_max"} & named.keys() or set(named) - {"a", "a_min", "a_max"}:
            return  # nothing removed, or keywords (min=, max=, out=) the rule leaves alone
        positional = [arg for arg in call.args if arg.keyword is None]
        if len(positional) + ("a" in named) != 1:
            return  # bounds passed both ways, or no array: not a call the rule understands
        array = positional[0] if positional else named["a"]
        lower, upper = named.get("a_min"), named.get("a_max")
        bounds: List[Optional[cst.Arg]] = [array]  # each from the argument it was, or None
        if lower is not None or upper is not None:
            bounds.append(lower)
        if upper is not None:
            bounds.append(upper)
        args = in_slots(
            call.args,
            [
                positional_arg(arg) if arg is not None else cst.Arg(cst.Name("None"))
                for arg in bounds
            ],
            bounds,
        )
        message = "clip(x, a_min=..., a_max=...) -> clip(x, lo, hi): positional bounds"
        ctx.replace(call, call.with_changes(args=args), message)


def _vectorized(call: cst.Call, ctx: Context) -> None:
    """``pure_callback(..., vectorized=v)`` -> ``vmap_method=``: ``"legacy_vectorized"`` for
    True, ``"sequential"`` for False or None (what each meant under ``vmap``), and
    ``"legacy_vectorized" if v else "sequential"`` for any other value, as JAX 0.4.34 maps
    them itself while it still takes ``vectorized``."""
    named = {arg.keyword.value: arg for arg in call.args if arg.keyword is not None}
    vectorized = named.get("vectorized")
    if vectorized is None:
        return
    if "vmap_method" in named:
        ctx.report(
            vectorized, "pure_callback() passes both vectorized= and vmap_method=: drop vectorized="
        )
        return
    needs = needs_to_fix(ctx, VMAP_METHOD_SINCE)
    if needs is None:
        ctx.report(
            vectorized,
            f"pure_callback(vectorized=...) is gone from JAX 0.6.0; vmap_method= needs "
            f"{VMAP_METHOD_SINCE}",
            "JAX 0.6.0 raises on vectorized=, and from 0.10.0 pure_callback passes it on to "
            'the callback.  vmap_method="legacy_vectorized" (for True) or "sequential" (for '
            f"False) replaces it, from JAX {VMAP_METHOD_SINCE} on.",
        )
        return
    value = vectorized.value
    words = {"True": '"legacy_vectorized"', "False": '"sequential"', "None": '"sequential"'}
    if isinstance(value, cst.Name) and value.value in words:
        choice: cst.BaseExpression = cst.SimpleString(words[value.value])
    else:
        choice = cst.parse_expression(f'"legacy_vectorized" if {ctx.code(value)} else "sequential"')
    new = renamed_arg(vectorized, "vmap_method", choice)
    args = [new if arg is vectorized else arg for arg in call.args]
    message = "pure_callback(vectorized=...) -> vmap_method=, its replacement since jax 0.4.34"
    ctx.replace(call, call.with_changes(args=args), message, needs=needs)


# A keyword JAX renamed in place, or made positional-only: passed by position, the argument
# means the same on every release.  (function, keyword) -> (the parameters before it, the
# first release without the keyword, what JAX did); the keyword's position is theirs plus
# one.  A function's later keyword comes first: it moves the earlier ones with it.
_RENAMED, _POSITIONAL_ONLY = "JAX renamed the parameter", "JAX takes them by position only"
_WHERE_GONE = parse_version("0.4.27")  # (deprecated by keyword in 0.4.21)
POSITIONAL = {
    (RESHAPE, "newshape"): (("a",), parse_version("0.6.0"), _RENAMED),  # ``shape``: 0.4.28
    (MAKE_MESH, "axis_shapes"): ((), parse_version("0.11.1"), _RENAMED),  # ``axis_sizes``
    (WHERE, "y"): (("condition", "x"), _WHERE_GONE, _POSITIONAL_ONLY),
    (WHERE, "x"): (("condition",), _WHERE_GONE, _POSITIONAL_ONLY),
    (WHERE, "condition"): ((), _WHERE_GONE, _POSITIONAL_ONLY),
}


def _by_position(qualname: str, call: cst.Call, ctx: Context) -> bool:
    """``reshape(a, newshape=s)`` -> ``reshape(a, s)``, ``make_mesh(axis_shapes=s, ...)`` ->
    ``make_mesh(s, ...)``: the renamed parameter's argument moves to its position, and so do
    the parameters before it that the call names (``reshape(a=x, newshape=s)`` -> ``reshape(x,
    s)``: every release takes them by position).  Arguments are not reordered where two of
    those that would swap places may have effects."""
    positional = [arg for arg in call.args if arg.keyword is None]
    for (function, keyword), (before, gone, why) in POSITIONAL.items():
        named = {a.keyword.value: a for a in call.args if a.keyword is not None}
        if function != qualname or keyword not in named or not ctx.reaches(gone):
            continue
        leading = before[len(positional) :]  # the parameters before it the call names
        if len(positional) > len(before) or any(name not in named for name in leading):
            return False  # arguments the rule cannot place around it
        moved = [named[name] for name in (*leading, keyword)]
        rest = [a for a in call.args if a.keyword is not None and all(a is not m for m in moved)]
        order = [*positional, *moved, *rest]
        if not reorders_safely(call.args, order):
            return False
        args = in_slots(call.args, [*positional, *map(positional_arg, moved), *rest], order)
        short = qualname.rsplit(".", 1)[1]
        named_here = ", ".join(f"{name}=" for name in (*leading, keyword))
        message = f"{short}({named_here}) -> by position: {why}"
        return ctx.replace(call, call.with_changes(args=args), message)
    return False


# A keyword a ``functools.partial`` of the function may pass: its arguments bind from the left,
# so the argument cannot move to its position, only to the keyword that replaced it, where the
# whole target range has that keyword.  (function, keyword) -> (its replacement, the first
# release with the replacement), read from the functions' signatures in jax's sources (clip's
# ``min``/``max`` came in 0.4.27); the API history says which release dropped the keyword.
RENAMED = {
    (CLIP, "a_min"): ("min", "0.4.27"),
    (CLIP, "a_max"): ("max", "0.4.27"),
    (RESHAPE, "newshape"): ("shape", "0.4.28"),
    (MAKE_MESH, "axis_shapes"): ("axis_sizes", "0.11.1"),
}


def _partial(qualname: str, call: cst.Call, ctx: Context) -> None:
    """``functools.partial(f, keyword=...)``: the keywords reach ``f`` when the partial is
    called, and a removed one raises there.  ``sym_pos`` becomes ``assume_a`` as in a call;
    a renamed keyword becomes its replacement where every release of the target range has
    it; any other removed keyword is reported."""
    if qualname == SOLVE and ctx.reaches(SYM_POS_GONE):
        _solve(call, ctx)
        return
    passed = {arg.keyword.value for arg in call.args if arg.keyword is not None}
    renamed: Dict[int, cst.Arg] = {}
    needs = ""  # the newest release a renamed keyword needs beyond the target's lower bound
    for arg in call.args:
        keyword = arg.keyword.value if arg.keyword is not None else None
        entry = RENAMED.get((qualname, keyword)) if keyword is not None else None
        if entry is None or keyword is None:
            continue
        gone = history().dropped_keyword(qualname, keyword, ctx.target, ctx.upper)
        if gone is None:
            continue  # every release of the range takes it
        new, since = entry
        short = qualname.rsplit(".", 1)[1]
        this_needs = needs_to_fix(ctx, since)  # (the survey renames it anyway: see there)
        if this_needs is not None and new not in passed:
            renamed[id(arg)] = arg.with_changes(keyword=cst.Name(new))
            if this_needs and (not needs or parse_version(this_needs) > parse_version(needs)):
                needs = this_needs
            continue
        ctx.report(
            arg,
            f"partial({short}, {keyword}=...): JAX {gone} removed {keyword}=; {new}= needs {since}",
            f"{qualname} takes no {keyword}= from JAX {gone} on (a TypeError when the partial "
            f"is called); its replacement {new}= came in JAX {since}, so name it where every "
            "JAX you support has it, or wrap the call in a function that passes the value by "
            "position.",
        )
    if renamed:
        args = [renamed.get(id(arg), arg) for arg in call.args]
        message = "partial(f, keyword=...) -> the keyword that replaced it"
        ctx.replace(call, call.with_changes(args=args), message, needs=needs)
    else:
        _report_dropped(qualname, call, ctx, skip=frozenset(k for q, k in RENAMED if q == qualname))


@functools.lru_cache(maxsize=1)
def _rewrites_only() -> RemovedKeywords:
    """The rule without the API history: the survey's (see :meth:`RemovedKeywords.for_survey`)."""
    return RemovedKeywords()


@functools.lru_cache(maxsize=1)
def _with_history() -> RemovedKeywords:
    """The rule with every function the API history saw drop a keyword."""
    rule = object.__new__(RemovedKeywords)
    rule.dropped = history().dropped_keywords()
    rule.moved = _moved_keywords(rule.dropped)
    rule.names = (  # type: ignore[misc]
        RemovedKeywords.names | frozenset(rule.dropped) | frozenset(rule.moved)
    )
    rule.keywords_of = {
        qualname: rule.dropped.get(qualname, frozenset())
        | REWRITTEN.get(qualname, frozenset())
        | frozenset(rule.moved.get(qualname, ()))
        for qualname in rule.names
    }
    by_word: Dict[str, Set[str]] = {}
    for qualname, keywords in rule.keywords_of.items():
        by_word.setdefault(qualname.rsplit(".", 1)[1], set()).update(keywords)
    rule.by_word = {word: frozenset(keywords) for word, keywords in by_word.items()}
    rule.called_words = frozenset(rule.by_word)
    return rule


def _moved_keywords(dropped: Dict[str, FrozenSet[str]]) -> Dict[str, Dict[str, str]]:
    """The new name of a function JAX903 renames (the same object) -> each keyword its old name
    dropped -> that old name: the history reads the new name's signature only where it dropped
    a keyword of its own, and the migrated call names it (``jax.core.unmapped_aval(n,
    axis_name=a, ...)`` becomes ``jax.extend.core.unmapped_aval(...)``, which never took it)."""
    renames = all_rules()["JAX903"].for_range(parse_version("0.0.0"), None, frozenset())
    found: Dict[str, Dict[str, str]] = {}
    for move in getattr(renames, "moves", ()):
        for keyword in dropped.get(move.legacy, ()):
            found.setdefault(move.modern, {})[keyword] = move.legacy
    return found


@functools.lru_cache(maxsize=1)
def _owned_keywords() -> FrozenSet[str]:
    """Keywords another rule rewrites or reports (pjit's in_axis_resources, pmap's
    global_arg_shapes, ...): theirs, not reported twice."""
    others = (r for code, r in all_rules().items() if code != RemovedKeywords.code)
    return frozenset().union(*(r.keywords for r in others))


def _report_dropped(
    qualname: str, call: cst.Call, ctx: Context, skip: FrozenSet[str] = frozenset()
) -> None:
    """A keyword the function took in an earlier release and lacks in one of the range
    (``skip``: keywords already judged)."""
    if ctx.owner(qualname, besides=RemovedKeywords.code):
        return  # another rule's function (process_allgather's titled=, ...)
    for arg in call.args:
        if arg.keyword is None or arg.keyword.value in _owned_keywords() | skip:
            continue
        short = qualname.rsplit(".", 1)[1]
        moved = POSITIONAL.get((qualname, arg.keyword.value))
        if moved is not None and moved[2] == _POSITIONAL_ONLY and ctx.reaches(moved[1]):
            # (left by _by_position: moving it would swap arguments with effects)
            when = ".".join(map(str, moved[1]))
            ctx.report(
                arg,
                f"{short}() takes {arg.keyword.value} by position only from JAX {when}",
                f"{qualname} takes {arg.keyword.value} by position only from JAX {when} on (a "
                "TypeError there); left as it is where moving it would reorder arguments with "
                "effects.",
            )
            continue
        gone = history().dropped_keyword(qualname, arg.keyword.value, ctx.target, ctx.upper)
        if gone is None:
            gone = _dropped_before_moving(qualname, arg.keyword.value, ctx)
        if gone is not None:
            ctx.report(
                arg,
                f"{short}() takes no {arg.keyword.value}= from JAX {gone}; see its signature",
                f"{qualname} takes no {arg.keyword.value}= from JAX {gone} on (a TypeError "
                "there); see its signature in that release's documentation for what replaced it.",
            )


def _dropped_before_moving(qualname: str, keyword: str, ctx: Context) -> Optional[str]:
    """Where the name JAX903 renamed into ``qualname`` (the same object) dropped ``keyword``,
    if the target range reaches that release: the new name takes it no more than the old one
    did there (a call of ``jax.core.find_top_trace(xs=...)`` renamed)."""
    legacy = _with_history().moved.get(qualname, {}).get(keyword)
    if legacy is None:
        return None
    gone = history().dropped_keyword(legacy, keyword, parse_version("0.0.0"), ctx.upper)
    return gone if gone is not None and ctx.reaches(parse_version(gone)) else None
