"""Turn JAX values into JSON-able summaries that two JAX versions can be compared on.

Imported by runtime drivers (``fixtures/*/*.run.py``) in both the modern and the legacy
environment, so it only uses APIs that exist from jax 0.4.13 on.
"""

from __future__ import annotations

from typing import Any

import numpy as np

DECIMALS = 5


def _sharding_map(array: Any) -> Any:
    """device id -> the global index (as [start, stop] pairs) that device holds."""
    try:
        shards = array.addressable_shards
    except AttributeError:
        return None
    result = {}
    for shard in shards:
        index = []
        for axis, part in enumerate(shard.index):
            start, stop, _ = part.indices(array.shape[axis])
            index.append([start, stop])
        result[str(shard.device.id)] = index
    return dict(sorted(result.items(), key=lambda item: int(item[0])))


def _values(host: Any) -> Any:
    if host.dtype.kind in "fiub":
        return np.round(host.astype(np.float64), DECIMALS).tolist()
    return host.tolist()


def summarize(value: Any) -> Any:
    """Arrays become {shape, dtype, values, sharding}; containers are summarized recursively.

    A global array that is not fully addressable (multi-process) becomes {shape, dtype,
    local_values (device id -> that shard's values), sharding}.
    """
    if isinstance(value, dict):
        return {str(k): summarize(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [summarize(v) for v in value]
    if isinstance(value, (bool, str, type(None))):
        return value
    if isinstance(value, (int, float, np.integer, np.floating)):
        return (
            round(float(value), DECIMALS) if isinstance(value, (float, np.floating)) else int(value)
        )
    if (
        hasattr(value, "shape")
        and hasattr(value, "dtype")
        and not getattr(value, "is_fully_addressable", True)
    ):
        # A global array in a multi-process run: this process can only see its own shards.
        return {
            "shape": list(value.shape),
            "dtype": str(value.dtype),
            "local_values": {
                str(shard.device.id): _values(np.asarray(shard.data))
                for shard in sorted(value.addressable_shards, key=lambda s: s.device.id)
            },
            "sharding": _sharding_map(value),
        }
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        host = np.asarray(value)
        summary = {
            "shape": list(host.shape),
            "dtype": str(host.dtype),
            "values": np.round(host.astype(np.float64), DECIMALS).tolist()
            if host.dtype.kind in "fiub"
            else host.tolist(),
        }
        sharding = _sharding_map(value)
        if sharding is not None:
            summary["sharding"] = sharding
        return summary
    return repr(value)


def outcome(thunk: Any) -> Any:
    """What ``thunk()`` gives, or the kind of TypeError or ValueError it raises (the error is
    what is compared); the value as it comes, for the driver to read further."""
    try:
        value = thunk()
    except (TypeError, ValueError) as caught:
        return {"raises": type(caught).__name__}
    return {"type": type(value).__name__, "value": value}
