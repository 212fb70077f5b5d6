"""JAX407 removed-array-methods: ``x.tile(r)`` -> ``jnp.tile(x, r)``, ``x.broadcast(s)`` ->
``lax.broadcast(x, s)``, ``x.broadcast_in_dim(s, d)`` -> ``lax.broadcast_in_dim(x, s, d)``.

Safe: each method was that very function with the array first (``jax/_src/numpy/lax_numpy.py``
set ``lax.broadcast`` and ``lax.broadcast_in_dim`` as methods up to 0.4.4, wrappers that warned
and called them up to 0.4.13; ``tile`` warned from 0.3.7 and is gone in 0.3.17).  Receivers
are checked with ``rules._receivers``.  ``x.split(...)`` is left out: gate 1 would pass every
module that calls ``str.split``.
"""

from __future__ import annotations

import ast
import functools
from typing import TYPE_CHECKING, Dict, Tuple

from jaxmigrate.migrator import lazycst as cst, references as refs
from jaxmigrate.migrator.astfacts import Facts, dotted
from jaxmigrate.migrator.context import Context
from jaxmigrate.migrator.rule import Example, Lifecycle, Rule, Safety
from jaxmigrate.migrator.version import parse_version
from jaxmigrate.rules._evidence_gate import EvidenceGate, names_gone
from jaxmigrate.rules._module_facts import module_facts
from jaxmigrate.rules._receiver_gate import ast_may_tie
from jaxmigrate.rules._verdict import FILE, FIX, REPORT, decide, receiver_of_method, strip_parens

if TYPE_CHECKING:  # pragma: no cover
    from jaxmigrate.migrator.source import SourceRange

GONE_FROM = "0.4.14"  # the last of the methods (code written for a JAX from it on has none)

# method -> (the function it was, the release without it)
METHODS: Dict[str, Tuple[str, str]] = {
    "tile": ("jax.numpy.tile", "0.3.17"),
    "broadcast": ("jax.lax.broadcast", "0.4.14"),
    "broadcast_in_dim": ("jax.lax.broadcast_in_dim", "0.4.14"),
}
# Reported on a receiver not tied to an array, in legacy JAX code: few objects of 2021-2022
# code had these (``broadcast`` is flax's ``Rngs.broadcast`` too: left alone).
REPORTED = frozenset({"tile", "broadcast_in_dim"})


class RemovedArrayMethods(EvidenceGate, Rule, code="JAX407", safety=Safety.SAFE):
    """x.tile(r), x.broadcast(s), x.broadcast_in_dim(s, d) -> jnp.tile(x, r), lax.broadcast(x, s)

    **What it does.** Rewrites the array methods JAX removed into the functions they called,
    with the array first: `x.tile(reps)` -> `jnp.tile(x, reps)`, `x.broadcast(sizes)` ->
    `jax.lax.broadcast(x, sizes)`, `x.broadcast_in_dim(shape, dims)` ->
    `jax.lax.broadcast_in_dim(x, shape, dims)`, on receivers tied to a JAX array (the result
    of a `jax`/`jnp` call or of a jitted function, a name assigned only such values, a
    parameter annotated `jax.Array`).  Other receivers of `tile` and `broadcast_in_dim` are
    reported, in a module that imports JAX and no other array library; of `broadcast` left
    alone (flax's `Rngs.broadcast`).  Other objects have these methods too (XLA's
    `HloSharding.tile`, the Mosaic GPU arrays' `broadcast_in_dim` in JAX's own sources), so
    never rewritten unproven, and only in code written for a
    JAX before 0.4.14 (`--source-version`, the project's requirement, or where neither says,
    the file's own names: one JAX removed by then): code written for a later JAX calls no
    such method of an array.

    **Why.** NumPy arrays have none of these methods.  JAX deprecated `tile` in 0.3.7 and
    dropped it in 0.3.17; `broadcast` and `broadcast_in_dim` warned from 0.4.5 and are gone
    from 0.4.14: the call raises AttributeError (numpyro 0.9.2's von Mises distributions).

    **Use instead.** The functions above.  (`x.split(n)`, gone from 0.4.14 too, becomes
    `jnp.split(x, n)`; it is not rewritten, since most modules call `str.split`.)
    """

    lifecycle = Lifecycle(
        deprecated=("0.3.7", "DeviceArray.tile() deprecated; use jax.numpy.tile"),
        removed="0.4.14",
    )
    references = (
        refs.source_at(
            "0.4.13",
            "jax/_src/numpy/array_methods.py",
            "arr.broadcast() and arr.broadcast_in_dim() deprecated (since 0.4.5)",
        ),
        refs.source_at("0.4.14", "jax/_src/numpy/array_methods.py", "the methods are gone"),
    )
    attributes = frozenset(METHODS)
    # the functions themselves, as modern code calls them (speed only: gate 1 masks them)
    modern_spellings = (
        r"\b(?:jnp|np|numpy|lax|jax\.numpy|jax\.lax)\s*\.\s*(?:tile|broadcast_in_dim|broadcast)\b",
    )
    examples = (
        Example(
            title="a tiled result, in code written for JAX 0.3.16",
            source_version="0.3.16",
            before="""
            import jax.numpy as jnp

            table = jnp.arange(3.0).tile(2)
            """,
            after="""
            import jax.numpy as jnp

            table = jnp.tile(jnp.arange(3.0), 2)
            """,
        ),
    )

    def runs_for(self, source: "SourceRange") -> bool:
        return source.written_before(parse_version(GONE_FROM)) is not False

    def for_source(self, source: "SourceRange") -> Rule:
        """Itself where the source says the code was written before 0.4.14; else the rule
        that acts only where a file's own names prove it (:class:`EvidenceGate`)."""
        return self if source.written_before(parse_version(GONE_FROM)) is True else _proving()

    def ast_gate(self, facts: Facts) -> bool:
        """A call of one of the methods on what may be an array (not ``jnp.tile`` nor
        ``lax.broadcast``: functions of modules the module imports), in code that may be
        written before 0.4.14."""
        if self.proven_by is not None and not names_gone(facts.names | facts.imports, GONE_FROM):
            return False
        for call in facts.calls:
            func = call.func
            if type(func) is not ast.Attribute or func.attr not in METHODS:
                continue
            parts = dotted(func)
            if parts and facts.qualnames(func) and _imports_only(facts, parts[0]):
                continue
            if func.attr in REPORTED or facts.scopes() is None:
                return True
            if ast_may_tie(facts, func.value, None):
                return True
        return False

    def visit_attribute(self, node: cst.Attribute, ctx: Context) -> None:
        call = receiver_of_method(ctx, node)
        if call is None or any(arg.star for arg in call.args):
            return
        if ctx.qualname(node, ctx.scope_of(node)) is not None:
            return  # a module's function (``lax.broadcast``, ``np.tile``), not a method
        if (
            self.proven_by is not None
            and ctx.proven_before(parse_version(GONE_FROM))[0] is not True
        ):
            return  # (nothing says the code was written before the methods went)
        ctx.needs_whole_module()  # (decide reads the receiver's flow and the module's facts)
        verdict, _tie = decide(ctx, node, specific=False)
        function, gone = METHODS[node.attr.value]
        shown = f"{function.replace('jax.numpy.', 'jnp.')}(x, ...)"
        if (
            verdict in (REPORT, FILE)
            and node.attr.value in REPORTED
            and not module_facts(ctx).foreign_libraries
        ):
            ctx.report(
                call,
                f"x.{node.attr.value}() is gone from JAX {gone}; use {shown} if x is an array",
                f"jax.Array has no {node.attr.value} method (JAX {gone}); the module's code was "
                f"written before it went, and the receiver is not tied to an array here.",
            )
            return
        if verdict != FIX:
            return  # (only an array's: other objects have these methods too)
        receiver = cst.Arg(strip_parens(node.value))
        if call.args:
            comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
            receiver = receiver.with_changes(comma=comma)
        new = cst.Call(
            func=ctx.ref(function, ctx.scope_of(call)),
            args=[receiver, *call.args],
            lpar=call.lpar,
            rpar=call.rpar,
            whitespace_before_args=call.whitespace_before_args,
        )
        ctx.replace(call, new, f"x.{node.attr.value}(...) -> {shown}")


@functools.lru_cache(maxsize=1)
def _proving() -> RemovedArrayMethods:
    """The rule where the source leaves open what the code was written for."""
    rule = object.__new__(RemovedArrayMethods)
    rule.proven_by = GONE_FROM
    return rule


def _imports_only(facts: Facts, head: str) -> bool:
    """Is ``head`` bound by imports alone, in every scope of the module?"""
    scopes = facts.scopes()
    return scopes is not None and all(b.qualname is not None for b in facts.bindings(head))
