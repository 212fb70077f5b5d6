"""JAX304 gda-from-batched-callback-with-devices:
``GlobalDeviceArray.from_batched_callback_with_devices`` -> group the local devices by index,
one callback call, then ``jax.make_array_from_single_device_arrays``.

The callback contract was one call per distinct index with the devices that hold it, so the
recipe groups ``addressable_devices_indices_map`` by index, calls the callback, then builds the
array with ``make_array_from_single_device_arrays``.  GDA warned from 0.4.6 and its
module is gone in 0.4.7.
"""

from __future__ import annotations

from jaxmigrate.migrator.rule import Example
from jaxmigrate.rules._gda import fresh_name
from jaxmigrate.rules._gda_rule import BatchedCallbackRule

RECIPE = (
    "s = NamedSharding(mesh, P(*mesh_axes)); idx = s.addressable_devices_indices_map(shape); "
    "groups = {}; for dev in s.mesh.local_devices: "
    "groups.setdefault(tuple((i.start, i.stop, i.step) for i in idx[dev]), "
    "(idx[dev], []))[1].append(dev); "
    "bufs = callback([(index, tuple(devs)) for index, devs in groups.values()]); "
    "arr = jax.make_array_from_single_device_arrays(shape, s, list(bufs))"
)


class GdaFromBatchedCallbackWithDevices(BatchedCallbackRule, code="JAX304"):
    """x = GlobalDeviceArray.from_batched_callback_with_devices(...) -> grouped callback +
    jax.make_array_from_single_device_arrays

    **What it does.** Replaces the statement
    `x = GlobalDeviceArray.from_batched_callback_with_devices(global_shape, global_mesh,
    mesh_axes, data_callback)` by statements that do what GDA did: build the
    `NamedSharding`, group the local devices (in `global_mesh.local_devices` order) by the
    index they hold, call the callback *once* with one `(index, (device, ...))` pair per
    distinct index, and assemble the device arrays it returns with
    `jax.make_array_from_single_device_arrays`.  Temporaries are named after `x` and never
    clash with a name the module uses.

    **Why.** `GlobalDeviceArray` was deprecated in JAX 0.4.6 and removed in 0.4.7; jax.Array
    has no such constructor.

    **Behaviour.** The pairs, their order and the grouping (by the slices' start/stop/step,
    as GDA's hashed index did) are the ones GDA built, so the callback sees the same input;
    jax.Array places each returned array by its device, so their order does not matter.
    Arguments that contain calls are first bound to temporaries, so they are evaluated once
    and in their original order.

    **Not rewritten.** A call that is not the whole value of a plain `name = ...` statement,
    calls with `*args`/`**kwargs`, and `mesh_axes=None` are reported with the recipe.
    """

    method = "from_batched_callback_with_devices"
    recipe = RECIPE
    summary_of_fix = "grouped callback + jax.make_array_from_single_device_arrays"
    examples = (
        Example(
            before="""
            from jax.experimental import global_device_array as gda_lib

            def load(mesh, put_batch):
                arr = gda_lib.GlobalDeviceArray.from_batched_callback_with_devices((8, 2), mesh, ('x',), put_batch)
                return arr
            """,  # noqa: E501
            after="""
            import jax
            from jax.sharding import NamedSharding, PartitionSpec

            def load(mesh, put_batch):
                arr_sharding = NamedSharding(mesh, PartitionSpec('x'))
                arr_indices = arr_sharding.addressable_devices_indices_map((8, 2))
                arr_groups = {}
                for arr_device in arr_sharding.mesh.local_devices:
                    arr_groups.setdefault(tuple((i.start, i.stop, i.step) for i in arr_indices[arr_device]), (arr_indices[arr_device], []))[1].append(arr_device)
                arr_buffers = put_batch([(index, tuple(devices)) for index, devices in arr_groups.values()])
                arr = jax.make_array_from_single_device_arrays((8, 2), arr_sharding, list(arr_buffers))
                return arr
            """,  # noqa: E501
        ),
    )

    def tail(self, target, s, idx, shape, callback, jax_name, taken):  # noqa: ANN001, ANN201
        groups = fresh_name(f"{target}_groups", taken)
        device = fresh_name(f"{target}_device", taken)
        buffers = fresh_name(f"{target}_buffers", taken)
        return [
            f"{groups} = {{}}\n",
            f"for {device} in {s}.mesh.local_devices:\n"
            f"    {groups}.setdefault(tuple((i.start, i.stop, i.step) for i in {idx}[{device}]), "
            f"({idx}[{device}], []))[1].append({device})\n",
            f"{buffers} = {callback}("
            f"[(index, tuple(devices)) for index, devices in {groups}.values()])\n",
            f"{target} = {jax_name}.make_array_from_single_device_arrays("
            f"{shape}, {s}, list({buffers}))\n",
        ]
