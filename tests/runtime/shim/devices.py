"""``Device.live_buffers()`` with its pre-jax.Array meaning.

Every installable JAX (0.4.13, 0.4.30, 0.10.2, observed) returns ``[]`` from
``live_buffers()`` with a DeprecationWarning, so a real legacy run only shows the bug JAX401
fixes.  What the method did before jax.Array is what its name and the deprecation message
("Per device live_buffers() ... use jax.live_arrays() for jax.Arrays instead") and the
migration guide's recommended replacement say: the live buffers on *that* device.  In the
jax.Array world a live array holds exactly one buffer on each device of its device set, so the
model is: for each live array on this device, its buffer there -- the array itself when it lives
on one device (a pre-jax.Array DeviceArray *was* its buffer), else a ``DeviceBuffer`` record
(array, device) standing for an SDA's ``device_buffers`` entry.

Why not ``shard.data``: it makes new single-device arrays that JAX caches on the sharded array,
so they would themselves be counted as live buffers by the next call (observed: the counts
grew by one per multi-device array after the first call).  Fidelity limits: ``DeviceBuffer`` is
a record, not an array (drivers only use ``len(...)``); aliases of one buffer held by separate
array objects (e.g. an array and its cached ``shard.data``) count separately, as the rewrite
(``jax.live_arrays()``) counts them.
"""

from __future__ import annotations

from typing import Any, List, NamedTuple


class DeviceBuffer(NamedTuple):
    """The buffer of a multi-device ``array`` on ``device``."""

    array: Any
    device: Any


def live_buffers(device: Any) -> List[Any]:
    import jax

    found: List[Any] = []
    for array in jax.live_arrays():
        if device not in array.devices():
            continue
        if len(array.devices()) == 1:
            found.append(array)
            continue
        found.append(DeviceBuffer(array, device))
    return found


def install() -> None:
    import jax

    jax.Device.live_buffers = live_buffers
