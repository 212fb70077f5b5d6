"""``Device.live_buffers()`` with its pre-jax.Array meaning (catalog DEV-5).

Every installable JAX (0.4.13, 0.4.30, 0.10.2: catalog PROBE) returns ``[]`` from
``live_buffers()`` with a DeprecationWarning, so a real legacy run only shows the bug JAX401
fixes.  What the method did before jax.Array is what its name and the deprecation message
("Per device live_buffers() ... use jax.live_arrays() for jax.Arrays instead") and the
migration guide's recommended replacement say: the live buffers on *that* device.  In the
jax.Array world a live array holds exactly one buffer on each device of its device set, so the
model is: for each live array, its buffer on this device -- the array itself when it lives on
one device (a pre-jax.Array DeviceArray *was* its buffer), ``shard.data`` for a multi-device
array (an SDA's ``device_buffers`` entry).

Fidelity limit: ``shard.data`` makes a new array object each call, so a caller that keeps the
returned list alive and calls again sees those copies counted; the legacy list held the
existing buffer objects.  Drivers only use ``len(...)`` of a transient list.
"""

from __future__ import annotations

from typing import Any, List


def live_buffers(device: Any) -> List[Any]:
    import jax

    found: List[Any] = []
    for array in jax.live_arrays():
        if device not in array.devices():
            continue
        if len(array.devices()) == 1:
            found.append(array)
            continue
        for shard in array.addressable_shards:
            if shard.device == device:
                found.append(shard.data)
                break
    return found


def install() -> None:
    import jax

    jax.Device.live_buffers = live_buffers
