"""JAX301 gda-from-callback: ``GlobalDeviceArray.from_callback`` ->
``jax.make_array_from_callback``.

The jax.Array migration guide, "Creating jax.Array", calls it a 1:1 switch to
``jax.make_array_from_callback(shape, NamedSharding(mesh, pspec), callback)``.  GDA warned
from 0.4.6 and its module is gone in 0.4.7 (JAX commit 634035a; no changelog entry).
"""

from __future__ import annotations

from jaxmigrate.migrator.context import Context, NameSite
from jaxmigrate.migrator.rule import Example, Safety
from jaxmigrate.rules._gda import METHOD_PARAMS, gda_names, is_pure_index_lambda
from jaxmigrate.rules._gda_rule import GdaRule, gda_references, sharded_call
from jaxmigrate.rules._helpers import called_or_report

MODERN = "jax.make_array_from_callback"
RECIPE = "jax.make_array_from_callback(shape, NamedSharding(mesh, P(*mesh_axes)), callback)"


class GdaFromCallback(GdaRule, code="JAX301", safety=Safety.UNSAFE):
    """GlobalDeviceArray.from_callback(shape, mesh, axes, cb) -> jax.make_array_from_callback(shape,
    NamedSharding(mesh, P(...)), cb)

    **What it does.** Rewrites `GlobalDeviceArray.from_callback(global_shape, global_mesh,
    mesh_axes, data_callback)` (positional or keyword arguments, any import spelling of
    the class) to `jax.make_array_from_callback(global_shape, NamedSharding(global_mesh,
    spec), data_callback)`.  A literal tuple or list of mesh axes becomes `P(...)` directly, a
    `PartitionSpec(...)` call (or a name only ever bound to one) is kept, any other
    expression `e` becomes `P(*e)`, which is right for tuples, lists and PartitionSpecs alike.

    **Why.** `GlobalDeviceArray` was deprecated in JAX 0.4.6 and removed in 0.4.7; jax.Array
    replaces it, and the migration guide calls this a 1:1 switch.

    **Safety.** Unsafe in general: since JAX 0.4.19 `make_array_from_callback` calls the
    callback *once* for a fully replicated sharding and reuses the result for every
    device, where GDA called it once per local device.  Whether a sharding is fully
    replicated depends on the mesh's axis sizes, which are not known statically, so a callback
    with side effects (counters, I/O, random draws) can behave differently.  The fix is
    applied without `--unsafe-fixes` only when the callback is visibly pure, a lambda of the
    form `lambda idx: data[idx]`.

    **Not rewritten.** Calls with `*args`/`**kwargs`, a literal `None` for `mesh_axes`, and
    references that are not called (`f = GDA.from_callback`) are reported with the recipe.
    """

    references = gda_references(MODERN)
    names = gda_names(".from_callback")
    examples = (
        Example(
            title="a pure indexing callback is rewritten directly",
            before="""
            from jax.experimental.global_device_array import GlobalDeviceArray
            from jax.sharding import PartitionSpec as P

            arr = GlobalDeviceArray.from_callback((8, 2), mesh, P('x', 'y'), lambda idx: data[idx])
            """,
            after="""
            import jax
            from jax.sharding import NamedSharding, PartitionSpec as P

            arr = jax.make_array_from_callback((8, 2), NamedSharding(mesh, P('x', 'y')), lambda idx: data[idx])
            """,  # noqa: E501
        ),
        Example(
            title="any other callback needs --unsafe-fixes; tuples of axes become P(...)",
            before="""
            from jax.experimental import global_device_array as gda_lib

            arr = gda_lib.GlobalDeviceArray.from_callback(shape, mesh, ('x', None), load_shard)
            """,
            after="""
            import jax
            from jax.sharding import NamedSharding, PartitionSpec

            arr = jax.make_array_from_callback(shape, NamedSharding(mesh, PartitionSpec('x', None)), load_shard)
            """,  # noqa: E501
            unsafe_fixes=True,
        ),
    )

    def visit_name(self, site: NameSite, ctx: Context) -> None:
        what = "GlobalDeviceArray.from_callback"
        call = called_or_report(
            site, ctx, f"{what} no longer exists; use {MODERN}", f"Call {RECIPE}."
        )
        if call is None:
            return
        rewritten = sharded_call(call, METHOD_PARAMS, MODERN, what, RECIPE, site, ctx)
        if rewritten is None:
            return
        new, bound = rewritten
        callback = bound["data_callback"]
        safety = Safety.SAFE if is_pure_index_lambda(callback) else Safety.UNSAFE
        ctx.replace(
            call,
            new,
            "GlobalDeviceArray.from_callback -> jax.make_array_from_callback",
            safety=safety,
            detail="Since JAX 0.4.19 the callback runs once (not once per device) for fully "
            "replicated shardings.",
        )
