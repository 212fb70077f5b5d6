"""JAX302 gda-constructor: ``GlobalDeviceArray(shape, mesh, axes, buffers)`` ->
``jax.make_array_from_single_device_arrays(shape, NamedSharding(mesh, P(...)), buffers)``.

The jax.Array migration guide, "Creating jax.Array", gives the replacement (safe: jax.Array
accepts the per-device buffers in any order and places them by device).  GDA warned from 0.4.6
and its module is gone in 0.4.7.  Uses of the class as a *type* belong to JAX103; this rule only
handles calls of the class.
"""

from __future__ import annotations

from jaxmigrate.migrator.context import Context, NameSite
from jaxmigrate.migrator.rule import Example, Safety
from jaxmigrate.rules._gda import INIT_PARAMS, gda_names
from jaxmigrate.rules._gda_rule import GdaRule, gda_references, sharded_call
from jaxmigrate.rules._helpers import called

MODERN = "jax.make_array_from_single_device_arrays"
RECIPE = (
    "jax.make_array_from_single_device_arrays(shape, NamedSharding(mesh, P(*mesh_axes)), buffers)"
)


class GdaConstructor(GdaRule, code="JAX302", safety=Safety.SAFE):
    """GlobalDeviceArray(shape, mesh, axes, buffers) ->
    jax.make_array_from_single_device_arrays(shape, NamedSharding(mesh, P(...)), buffers)

    **What it does.** Rewrites a call of the `GlobalDeviceArray` constructor,
    `GlobalDeviceArray(global_shape, global_mesh, mesh_axes, device_buffers)` (positional or
    keyword arguments, any import spelling), to
    `jax.make_array_from_single_device_arrays(global_shape, NamedSharding(global_mesh, spec),
    device_buffers)`.  The spec is built as for JAX301: a literal tuple/list becomes
    `P(...)`, a PartitionSpec is kept, any other expression `e` becomes `P(*e)`.

    **Why.** `GlobalDeviceArray` was deprecated in JAX 0.4.6 and removed in 0.4.7; the
    migration guide gives this replacement.

    **Behaviour.** GDA required the buffers in `global_mesh.local_devices` order; jax.Array
    takes them in any order and places each by its device, so every call GDA accepted builds
    the same array.

    **Not rewritten.** Calls passing the private `_gda_fast_path_args=`/`_enable_checks=`,
    `*args`/`**kwargs`, or `mesh_axes=None` are reported with the recipe.  Uses of the class as
    a type (`isinstance`, annotations) are JAX103's.
    """

    references = gda_references(MODERN)
    names = gda_names()
    examples = (
        Example(
            before="""
            import jax.experimental.global_device_array as gda
            from jax.sharding import PartitionSpec as P

            arr = gda.GlobalDeviceArray((8, 2), mesh, P('x'), buffers)
            """,
            after="""
            import jax
            from jax.sharding import NamedSharding, PartitionSpec as P

            arr = jax.make_array_from_single_device_arrays((8, 2), NamedSharding(mesh, P('x')), buffers)
            """,  # noqa: E501
        ),
    )

    def visit_name(self, site: NameSite, ctx: Context) -> None:
        call = called(site)
        if call is None:
            return  # an import, or a type use: JAX103
        rewritten = sharded_call(
            call, INIT_PARAMS, MODERN, "GlobalDeviceArray(...)", RECIPE, site, ctx
        )
        if rewritten is not None:
            message = "GlobalDeviceArray(...) -> jax.make_array_from_single_device_arrays"
            ctx.replace(call, rewritten[0], message)
