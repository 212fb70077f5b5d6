"""JAX303 gda-from-batched-callback: ``GlobalDeviceArray.from_batched_callback`` -> one batched
callback over the sharding's indices, then ``jax.make_array_from_single_device_arrays``.

The modern API is per index, so the recipe computes the sharding's index map, calls the
batched callback once, and builds the array from the single-device pieces.  GDA warned from
0.4.6 and its module is gone in 0.4.7.
"""

from __future__ import annotations

from jaxmigrate.migrator.rule import Example
from jaxmigrate.rules._gda import fresh_name
from jaxmigrate.rules._gda_rule import BatchedCallbackRule

RECIPE = (
    "s = NamedSharding(mesh, P(*mesh_axes)); idx = s.addressable_devices_indices_map(shape); "
    "devs = list(s.mesh.local_devices); host = callback([idx[d] for d in devs]); "
    "arr = jax.make_array_from_single_device_arrays(shape, s, "
    "[jax.device_put(h, d) for h, d in zip(host, devs)])"
)


class GdaFromBatchedCallback(BatchedCallbackRule, code="JAX303"):
    """x = GlobalDeviceArray.from_batched_callback(...) -> one batched callback +
    jax.make_array_from_single_device_arrays

    **What it does.** Replaces the statement
    `x = GlobalDeviceArray.from_batched_callback(global_shape, global_mesh, mesh_axes,
    data_callback)`, or `return GlobalDeviceArray.from_batched_callback(...)`, by statements
    that do what GDA did: build the `NamedSharding`, look up each local device's index, call
    the callback *once* with the indices in `global_mesh.local_devices` order, put each
    returned host array on its device and assemble the array with
    `jax.make_array_from_single_device_arrays` (then return it).  The temporaries are named
    after `x` (`array` for a return) and never clash with a name the module uses.

    **Why.** `GlobalDeviceArray` was deprecated in JAX 0.4.6 and removed in 0.4.7.  jax.Array
    has no batched-callback constructor: `jax.make_array_from_callback` calls the callback
    once per index, which breaks callbacks that read a whole batch at once.

    **Behaviour.** The callback receives the same indices in the same order as under GDA
    (`mesh.local_devices` order, not the sharding's own device order, which may differ), is
    called once, and its results go to the same devices; the array is the same.  Arguments
    that contain calls are first bound to temporaries, so they are evaluated once and in
    their original order.

    **Not rewritten.** A call that is not the whole value of a plain `name = ...` statement
    (inside an expression, an attribute target, a one-line `if x: y = ...`), calls
    with `*args`/`**kwargs`, and `mesh_axes=None` are reported with the recipe.
    """

    method = "from_batched_callback"
    recipe = RECIPE
    summary_of_fix = "batched callback + jax.make_array_from_single_device_arrays"
    examples = (
        Example(
            before="""
            from jax.experimental.global_device_array import GlobalDeviceArray
            from jax.sharding import PartitionSpec as P

            def load(mesh, read_batch):
                batch = GlobalDeviceArray.from_batched_callback((8, 2), mesh, P('x'), read_batch)
                return batch
            """,
            after="""
            import jax
            from jax.sharding import NamedSharding, PartitionSpec as P

            def load(mesh, read_batch):
                batch_sharding = NamedSharding(mesh, P('x'))
                batch_indices = batch_sharding.addressable_devices_indices_map((8, 2))
                batch_devices = list(batch_sharding.mesh.local_devices)
                batch_host = read_batch([batch_indices[d] for d in batch_devices])
                batch = jax.make_array_from_single_device_arrays((8, 2), batch_sharding, [jax.device_put(h, d) for h, d in zip(batch_host, batch_devices)])
                return batch
            """,  # noqa: E501
        ),
        Example.reported(
            title="inside an expression: reported with the recipe",
            code="""
            from jax.experimental.global_device_array import GlobalDeviceArray as GDA

            def load(mesh, read_batch, out):
                out.append(GDA.from_batched_callback((8, 2), mesh, ('x',), read_batch))
            """,
        ),
    )

    def tail(self, target, s, idx, shape, callback, jax_name, taken):  # noqa: ANN001, ANN201
        devs = fresh_name(f"{target}_devices", taken)
        host = fresh_name(f"{target}_host", taken)
        return [
            f"{devs} = list({s}.mesh.local_devices)\n",
            f"{host} = {callback}([{idx}[d] for d in {devs}])\n",
            f"{target} = {jax_name}.make_array_from_single_device_arrays({shape}, {s}, "
            f"[{jax_name}.device_put(h, d) for h, d in zip({host}, {devs})])\n",
        ]
