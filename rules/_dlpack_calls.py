"""JAX905's ``jax.dlpack.from_dlpack(jax.dlpack.to_dlpack(x))``: the capsule's round trip."""

from __future__ import annotations

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.migrator.context import Context, NameSite

DLPACK = "jax.dlpack.to_dlpack"
# jax.dlpack.from_dlpack took a capsule up to JAX 0.4.x and takes the array itself later;
# jax.numpy.from_dlpack takes the array on every release a target can hold.
FROM_DLPACK = "jax.dlpack.from_dlpack"
ROUND_TRIP = "jax.numpy.from_dlpack"


def round_trip(call: cst.Call, site: NameSite, ctx: Context) -> bool:
    """``jax.dlpack.from_dlpack(to_dlpack(x))`` (the capsule's only use) ->
    ``jax.numpy.from_dlpack(x)``: newer JAX takes no capsule there.  Done (True) where the
    call is the only argument of such a call, with no ``stream``."""
    arg = ctx.parent(call)
    outer = ctx.parent(arg) if isinstance(arg, cst.Arg) else None
    if not (
        isinstance(outer, cst.Call)
        and len(outer.args) == 1
        and outer.args[0] is arg
        and arg.keyword is None
        and not arg.star
        and len(call.args) == 1
        and ctx.qualname(outer.func, site.scope) == FROM_DLPACK
    ):
        return False
    new = cst.Call(
        func=ctx.ref(ROUND_TRIP, site.scope),
        args=[cst.Arg(value=call.args[0].value)],
        lpar=outer.lpar,
        rpar=outer.rpar,
    )
    ctx.replace(
        outer,
        new,
        f"{FROM_DLPACK}({DLPACK}(x)) -> {ROUND_TRIP}(x)",
        detail=f"{DLPACK} is gone (JAX 0.7.0) and newer JAX's {FROM_DLPACK} takes the "
        f"array itself, not a capsule; {ROUND_TRIP}(x) takes it on every release.",
    )
    return True
