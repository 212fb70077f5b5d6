"""Observations of the shim's legacy models that no installable JAX can confirm.

``python tests/runtime/shim/models_check.py`` prints ``JAXMIGRATE-MODELS {...}``;
test_shim_selftest.py checks each model against the documented legacy behaviour it claims
(pspecs, live_buffers, SDA, serialization) and that the installed JAX really lacks it (otherwise the
shim would be modelling nothing).
"""

from __future__ import annotations

import json
import os
import sys

sys.path.insert(
    0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
)


def observe():
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax.experimental import multihost_utils
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

    mesh = Mesh(np.array(jax.devices()), ("x",))
    seen = {}
    # Before the shim: what the installed JAX does.
    try:
        multihost_utils.host_local_array_to_global_array(np.ones(2), mesh, None)
        seen["real_none_pspec"] = "accepted"
    except (ValueError, TypeError):
        seen["real_none_pspec"] = "rejected"
    keep = jax.device_put(jnp.ones(3), jax.devices()[2])
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        seen["real_live_buffers"] = len(jax.devices()[2].live_buffers())
    try:
        import jax.experimental.gda_serialization  # noqa: F401

        seen["real_gda_serialization"] = True
    except ImportError:
        seen["real_gda_serialization"] = False

    try:
        jax.ShapeDtypeStruct((2,), None)
        seen["real_none_dtype"] = "accepted"
    except ValueError:
        seen["real_none_dtype"] = "rejected"

    from tests.runtime.shim import install

    install(("sda-pre-0.4.1",))
    from jax.interpreters import pxla

    out = multihost_utils.host_local_array_to_global_array(
        (np.ones(2), np.arange(8.0)), mesh, (None, P("x"))
    )
    seen["none_pspec"] = [bool(out[0].is_fully_replicated), bool(out[1].sharding.spec == P("x"))]
    before = [len(d.live_buffers()) for d in jax.devices()]
    extra = [jax.device_put(jnp.zeros(2) + i, jax.devices()[2]) for i in range(3)]
    sharded = jax.device_put(np.arange(8.0), NamedSharding(mesh, P("x")))
    after = [len(d.live_buffers()) for d in jax.devices()]
    # one buffer per device for the sharded array, three more on device 2
    seen["live_buffers_delta"] = [b - a for a, b in zip(before, after)]
    del keep, extra, sharded
    pmapped = jax.pmap(lambda v: v + 1)(np.arange(8.0))
    one = jax.pmap(lambda v: v + 1, devices=jax.devices()[:1])(np.arange(1.0))
    seen["sda"] = {
        "pmap_8": isinstance(pmapped, pxla.ShardedDeviceArray),
        "pmap_1": isinstance(one, pxla.ShardedDeviceArray),
        "single_device": isinstance(jnp.arange(3.0), pxla.ShardedDeviceArray),
        "indexed_pmap_output": isinstance(pmapped[0], pxla.ShardedDeviceArray),
    }
    try:
        from jax.experimental.gda_serialization import serialization

        seen["gda_serialization"] = sorted(
            name
            for name in ("async_serialize", "run_serialization")
            if list(__import__("inspect").signature(getattr(serialization, name)).parameters)[0]
            in ("gda_inp", "gdas")
        )
    except ImportError:
        seen["gda_serialization"] = "tensorstore missing"
    struct = jax.ShapeDtypeStruct((2,), None)
    seen["none_dtype"] = [str(struct.dtype), str(jax.ShapeDtypeStruct((2,), dtype=None).dtype)]
    return seen


if __name__ == "__main__":
    print("JAXMIGRATE-MODELS " + json.dumps(observe(), sort_keys=True))
