"""JAX915 named-shape: ``ShapeDtypeStruct(s, d, x.named_shape)`` -> ``ShapeDtypeStruct(s, d)``.

Safe from a target of 0.4.31, unsafe below.  ``named_shape`` carried xmap's named axes on
abstract values.  JAX 0.4.33 still took it and ignored it (``ShapedArray(shape, dtype,
weak_type=False, named_shape=None, sharding=None)``, ``del named_shape  # unused,
vestigial``; ``ShapeDtypeStruct(shape, dtype, named_shape=None, sharding=None)``), and JAX
0.4.34 took it out of both signatures, of ``ShapedArray.update`` and of the avals (read in
the 0.4.33 and 0.4.34 sources of ``jax/_src/core.py`` and ``jax/_src/api.py``).  So
``jax.ShapeDtypeStruct(x.shape, x.dtype, x.named_shape)`` (numpyro 0.10.1's provenance
tracking, code copied from JAX's own ``eval_shape``) and ``ShapedArray(s, d,
named_shape=x.named_shape)`` (custom primitives' abstract evaluation) raise ``TypeError``
from 0.4.34 on.  The argument goes where the target range starts at 0.4.31 or later, where
xmap is gone and every named shape is empty; below that the fix is unsafe (a value built
under xmap may carry named axes).
"""

from __future__ import annotations

from typing import Optional

from jaxmigrate.migrator import lazycst as cst, references as refs
from jaxmigrate.migrator.astfacts import Facts
from jaxmigrate.migrator.context import Context, NameSite
from jaxmigrate.migrator.rule import Example, Lifecycle, Rule, Safety
from jaxmigrate.migrator.version import parse_version
from jaxmigrate.rules._arg_layout import effect_free, in_slots
from jaxmigrate.rules._helpers import call_target
from jaxmigrate.rules._text_gates import NamedShapeGate

STRUCT = "jax.ShapeDtypeStruct"
SHAPED = "jax.core.ShapedArray"
# where ``named_shape`` stands among each one's positional parameters (JAX 0.4.33)
POSITION = {STRUCT: 2, SHAPED: 3}
GONE = parse_version("0.4.34")
XMAP_GONE = parse_version("0.4.31")  # (jax.experimental.maps removed: no named axis is left)
KEYWORD = "named_shape"


class NamedShape(NamedShapeGate, Rule, code="JAX915", safety=Safety.SAFE):
    """jax.ShapeDtypeStruct(s, d, x.named_shape) -> jax.ShapeDtypeStruct(s, d); ShapedArray too

    **What it does.** Drops the `named_shape` argument of `jax.ShapeDtypeStruct` and
    `jax.core.ShapedArray` (by position or keyword) where the target range reaches JAX 0.4.34,
    which rejects it.  From a target of 0.4.31, where xmap is gone, every named shape is empty
    and the fix is safe; below, a value built under xmap may carry named axes, and the fix is
    unsafe (`--unsafe-fixes`).  A value that may have an effect (a call), or a later positional
    argument that would shift into its place, is reported.

    **Why.** `named_shape` held xmap's named axes on abstract values.  JAX 0.4.33 still took it
    and ignored it ("unused, vestigial"); 0.4.34 removed it from both signatures and from the
    avals, so `ShapeDtypeStruct(x.shape, x.dtype, x.named_shape)` (JAX's own old
    `eval_shape`, copied into numpyro 0.10.1) raises `TypeError` there.

    **Use instead.** `jax.ShapeDtypeStruct(shape, dtype)`; `sharding=` for what named axes
    meant under `shard_map` or `jit`.
    """

    whole_module = False  # hooks read the call alone

    lifecycle = Lifecycle(removed=("0.4.34", "named_shape removed from avals"))
    references = (refs.source_at("0.4.34", "jax/_src/core.py", "ShapedArray without named_shape"),)
    names = frozenset({STRUCT, SHAPED})
    names_are_legacy = False  # the classes stay: keep their imports
    examples = (
        Example(
            title="an output's shape from its aval (numpyro 0.10.1)",
            before="""
            import jax

            def shapes_of(avals):
                return [jax.ShapeDtypeStruct(x.shape, x.dtype, x.named_shape) for x in avals]
            """,
            after="""
            import jax

            def shapes_of(avals):
                return [jax.ShapeDtypeStruct(x.shape, x.dtype) for x in avals]
            """,
            target_version="0.4.31",
        ),
    )

    def ast_gate(self, facts: Facts) -> bool:
        """A call of one of the classes with more positional arguments than ``named_shape``'s
        place, or a ``named_shape=`` keyword."""
        for call in facts.calls:
            found = facts.qualnames(call.func) & self.names
            if found and (
                any(k.arg == KEYWORD for k in call.keywords)
                or any(len(call.args) > POSITION[name] for name in found)
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
        arg = _named_shape_arg(call, POSITION[site.qualname])
        if arg is None:
            return
        short = site.qualname.rsplit(".", 1)[1]
        positional = [a for a in call.args if a.keyword is None]
        if not effect_free(arg.value) or (arg.keyword is None and positional[-1] is not arg):
            ctx.report(
                arg,
                f"{short}() takes no named_shape from JAX 0.4.34; drop it",
                f"{site.qualname} took named_shape (xmap's named axes) through JAX 0.4.33 and "
                "rejects it from 0.4.34 (a TypeError).  Left here: its value may have an "
                "effect, or later arguments would move into its place.",
            )
            return
        kept = [a for a in call.args if a is not arg]
        new = call.with_changes(args=in_slots(call.args, kept, kept))
        message = f"{short}(..., named_shape) -> {short}(...): gone from JAX 0.4.34"
        if ctx.target >= XMAP_GONE:
            ctx.replace(call, new, message)
            return
        ctx.replace(
            call,
            new,
            message,
            safety=Safety.UNSAFE,
            detail=f"{site.qualname} rejects named_shape from JAX 0.4.34 (a TypeError).  The "
            "target range starts before 0.4.31, where a value built under xmap may carry named "
            "axes this drops; elsewhere every named shape is empty.",
        )


def _named_shape_arg(call: "cst.Call", position: int) -> Optional["cst.Arg"]:
    """The argument given for ``named_shape``: its keyword, or the positional one in its
    place."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == KEYWORD:
            return arg
    positional = [arg for arg in call.args if arg.keyword is None]
    return positional[position] if len(positional) > position else None
