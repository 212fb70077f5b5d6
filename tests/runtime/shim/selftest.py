"""Observations that pin the shim to recorded legacy behaviour.

``python tests/runtime/shim/selftest.py shim``   -> installs the shim on the current JAX
``python tests/runtime/shim/selftest.py real``   -> no shim (run it on real jax 0.4.13)

Prints one JSON object: ``common`` (behaviour that real jax 0.4.13 still has: pjit with
``in_axis_resources``, ``jnp.DeviceArray``, the ``ShardedDeviceArray`` shell, the ``jax_array``
flag) -- test_shim_selftest.py compares it between the shim and real 0.4.13 -- and, in shim
mode, ``gda`` (GlobalDeviceArray behaviour recorded in jax 0.3.25's GDA source; no installable
JAX has it, so the test compares it with the recorded values).
"""

from __future__ import annotations

import json
import os
import sys

sys.path.insert(
    0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
)


def common():
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax.experimental.pjit import pjit
    from jax.interpreters import pxla
    from jax.sharding import Mesh, PartitionSpec as P

    from tests.runtime.summarize import summarize

    mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y"))
    f = pjit(
        lambda a, b: (a * 2, a + b),
        in_axis_resources=(P("x"), None),
        out_axis_resources=(None, P("x", "y")),
    )
    g = pjit(lambda a: a.sum(0), in_axis_resources=P("y"), out_axis_resources=P())
    a = jnp.arange(32.0).reshape(8, 4)
    with mesh:
        out = f(a, jnp.ones((8, 4)))
        summed = g(a)
    pmapped = jax.pmap(lambda v: v * 2)(jnp.arange(8.0))
    observations = {
        "pjit_none_is_replicated": summarize(out[0]),
        "pjit_spec": summarize(out[1]),
        "pjit_p_empty": summarize(summed),
        "device_array_is_array": jnp.DeviceArray is jax.Array,
        "device_array_isinstance": isinstance(a, jnp.DeviceArray),
        "sda_isinstance_pmap_output": isinstance(pmapped, pxla.ShardedDeviceArray),
        "sda_isinstance_array": isinstance(a, pxla.ShardedDeviceArray),
        "jax_array_flag": bool(jax.config.jax_array),
    }
    try:
        jax.config.update("jax_array", False)
        observations["jax_array_false"] = "accepted"
    except ValueError:
        observations["jax_array_false"] = "ValueError"
    return observations


def gda():
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax.experimental import global_device_array as gda_module
    from jax.experimental.global_device_array import GlobalDeviceArray
    from jax.experimental.pjit import FROM_GDA, pjit
    from jax.sharding import Mesh, PartitionSpec as P

    from tests.runtime.summarize import summarize

    devices = jax.devices()
    mesh = Mesh(np.array(devices[::-1]).reshape(4, 2), ("x", "y"))  # permuted device order
    data = np.arange(32.0).reshape(8, 4)
    calls = []

    def cb(index):
        calls.append(index)
        return data[index]

    replicated = GlobalDeviceArray.from_callback((8, 4), mesh, P(), cb)
    replicated_calls = len(calls)
    calls.clear()
    sharded = GlobalDeviceArray.from_callback((8, 4), mesh, P("x", "y"), cb)
    batched_calls = []

    def bcb(indices):
        batched_calls.append(len(indices))
        return [data[i] for i in indices]

    batched = GlobalDeviceArray.from_batched_callback((8, 4), mesh, P("x"), bcb)
    groups = []

    def dcb(pairs):
        groups.extend(len(devs) for _, devs in pairs)
        return [jax.device_put(data[i], d) for i, devs in pairs for d in devs]

    with_devices = GlobalDeviceArray.from_batched_callback_with_devices(
        (8, 4), mesh, ("x", None), dcb
    )
    buffers = [jax.device_put(data[s.index], s.device) for s in sharded.local_shards]
    constructed = GlobalDeviceArray((8, 4), mesh, P("x", "y"), buffers)
    with mesh:
        kept = pjit(lambda v: v + 1, in_axis_resources=FROM_GDA, out_axis_resources=P("x", "y"))(
            sharded
        )
    local_order = [d.id for d in mesh.devices.flat]
    return {
        "from_callback_calls_replicated": replicated_calls,
        "from_callback_calls_sharded": len(calls),
        "local_data_devices_replicated": [
            replicated.local_data(i).devices().pop().id for i in range(8)
        ],
        "addressable_data_devices_replicated": [
            replicated.addressable_data(i).devices().pop().id for i in range(3)
        ],
        "local_shards_follow_mesh_order": [s.device.id for s in sharded.local_shards]
        == local_order,
        "batched_calls": batched_calls,
        "with_devices_groups": groups,
        "isinstance_gda": isinstance(sharded, GlobalDeviceArray),
        "isinstance_plain_array": isinstance(jnp.ones(2), GlobalDeviceArray),
        "mesh_is_mesh": sharded.mesh is mesh,
        "mesh_axes": list(sharded.mesh_axes),
        "tuple_mesh_axes": list(with_devices.mesh_axes),
        "is_fully_replicated": [replicated.is_fully_replicated, sharded.is_fully_replicated],
        "values_equal": all(
            np.array_equal(np.asarray(x), data)
            for x in (replicated, sharded, batched, with_devices, constructed)
        ),
        "from_gda_keeps_sharding": kept.sharding == sharded.sharding,
        "kept": summarize(kept)["values"] == (data + 1).tolist(),
        "partition_spec_reexport": gda_module.PartitionSpec is P,
    }


# What the legacy GDA did (jax 0.3.25's GDA source), for the device order chosen in gda().
RECORDED_GDA = {
    "from_callback_calls_replicated": 8,  # once per local device, replicas included
    "from_callback_calls_sharded": 8,
    "local_data_devices_replicated": [
        7,
        6,
        5,
        4,
        3,
        2,
        1,
        0,
    ],  # buffer i in mesh.local_devices order
    "local_shards_follow_mesh_order": True,
    "batched_calls": [8],  # one call with the index of every local device
    "with_devices_groups": [2, 2, 2, 2],  # one pair per distinct index, with the devices holding it
    "isinstance_gda": True,
    "isinstance_plain_array": False,
    "mesh_is_mesh": True,
    "mesh_axes": ["x", "y"],
    "tuple_mesh_axes": ["x", None],
    "is_fully_replicated": [True, False],
    "values_equal": True,
    "from_gda_keeps_sharding": True,
    "kept": True,
    "partition_spec_reexport": True,
}


def main(mode):
    if mode == "shim":
        from tests.runtime.shim import install

        install()
    result = {"common": common()}
    if mode == "shim":
        result["gda"] = gda()
    print("JAXMIGRATE-SELFTEST " + json.dumps(result, sort_keys=True))


if __name__ == "__main__":
    import warnings

    warnings.simplefilter("ignore")
    main(sys.argv[1] if len(sys.argv) > 1 else "shim")
