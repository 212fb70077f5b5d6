"""GlobalDeviceArray re-created on top of jax.Array (test-only; see the package docstring).

Signatures and contracts from ``jax/experimental/global_device_array.py@0.3.25`` as recorded in
``jax/experimental/global_device_array.py`` in jax 0.3.25:

* ``GlobalDeviceArray(global_shape, global_mesh, mesh_axes, device_buffers)``: buffers in
  ``global_mesh.local_devices`` order.
* ``from_callback(shape, mesh, mesh_axes, cb)``: ``cb(index)`` once per *local device*,
  replicas included (8 calls for a replicated array on 8 devices).
* ``from_batched_callback(shape, mesh, mesh_axes, cb)``: ``cb([index per local device])`` ->
  list of host arrays, once.
* ``from_batched_callback_with_devices(shape, mesh, mesh_axes, cb)``: ``cb([(index,
  (device, ...)), ...])`` with one pair per distinct index -> device arrays, flattened in the
  same order.
* ``local_shards`` (in ``mesh.local_devices`` order), ``local_data(i)`` = buffer i of that order
  (unlike ``jax.Array.addressable_data(i)`` which returns the first replica for replicated
  arrays), ``mesh``, ``mesh_axes``, ``is_fully_replicated``, ``global_shards``,
  ``addressable_shards``/``addressable_data``, ``shape/dtype/ndim/size``,
  ``block_until_ready/delete/is_deleted``.

The values made here are genuine ``jax.Array``s (so ``jit``/``jnp`` accept them like they
accepted GDAs); the GDA-only attributes are added to the array class by ``patch_array_type``,
and ``isinstance(x, GlobalDeviceArray)`` is True for arrays built by these constructors.
"""

from __future__ import annotations

import dataclasses
import weakref
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np


def _jax():
    import jax

    return jax


def _spec(mesh_axes: Any):
    from jax.sharding import PartitionSpec

    if mesh_axes is None:
        return PartitionSpec()
    if isinstance(mesh_axes, PartitionSpec):
        return mesh_axes
    return PartitionSpec(*mesh_axes)


def _local_devices(mesh) -> List[Any]:
    jax = _jax()
    return [d for d in mesh.devices.flat if d.process_index == jax.process_index()]


@dataclasses.dataclass(frozen=True)
class Shard:
    device: Any
    index: Tuple[slice, ...]
    replica_id: int = 0
    data: Optional[Any] = None


# Arrays made by the GDA constructors: id -> (weak reference, mesh, mesh_axes).  jax.Arrays are
# unhashable, so this is keyed by id and checked against the weak reference.
_CREATED: Dict[int, Tuple[Any, Any, Any]] = {}


def _meta(value: Any) -> Optional[Tuple[Any, Any]]:
    entry = _CREATED.get(id(value))
    if entry is None or entry[0]() is not value:
        return None
    return entry[1], entry[2]


class _GdaMeta(type):
    def __instancecheck__(cls, instance: Any) -> bool:
        return _meta(instance) is not None


def _finish(array: Any, mesh: Any, mesh_axes: Any) -> Any:
    key = id(array)
    try:
        ref = weakref.ref(array, lambda _r, key=key: _CREATED.pop(key, None))
    except TypeError:  # not weak-referenceable: the GDA-only attributes still work via sharding
        return array
    _CREATED[key] = (ref, mesh, mesh_axes)
    return array


def _build(shape, mesh, mesh_axes, per_device: Sequence[Any]) -> Any:
    jax = _jax()
    from jax.sharding import NamedSharding

    sharding = NamedSharding(mesh, _spec(mesh_axes))
    return _finish(
        jax.make_array_from_single_device_arrays(tuple(shape), sharding, list(per_device)),
        mesh,
        mesh_axes,
    )


def _indices(shape, mesh, mesh_axes):
    from jax.sharding import NamedSharding

    index_map = NamedSharding(mesh, _spec(mesh_axes)).devices_indices_map(tuple(shape))
    return [(device, index_map[device]) for device in _local_devices(mesh)]


class GlobalDeviceArray(metaclass=_GdaMeta):
    """Construct with the legacy signature; the result is a jax.Array with GDA attributes."""

    def __new__(
        cls,
        global_shape,
        global_mesh,
        mesh_axes,
        device_buffers,
        _gda_fast_path_args=None,
        _enable_checks=True,
    ):
        return _build(global_shape, global_mesh, mesh_axes, device_buffers)

    @staticmethod
    def from_callback(global_shape, global_mesh, mesh_axes, data_callback: Callable[[Any], Any]):
        jax = _jax()
        buffers = [
            jax.device_put(data_callback(index), device)
            for device, index in _indices(global_shape, global_mesh, mesh_axes)
        ]
        return _build(global_shape, global_mesh, mesh_axes, buffers)

    @staticmethod
    def from_batched_callback(global_shape, global_mesh, mesh_axes, data_callback):
        jax = _jax()
        pairs = _indices(global_shape, global_mesh, mesh_axes)
        host = data_callback([index for _, index in pairs])
        buffers = [jax.device_put(h, device) for h, (device, _) in zip(host, pairs)]
        return _build(global_shape, global_mesh, mesh_axes, buffers)

    @staticmethod
    def from_batched_callback_with_devices(global_shape, global_mesh, mesh_axes, data_callback):
        groups: List[Tuple[Any, List[Any]]] = []
        where = {}
        for device, index in _indices(global_shape, global_mesh, mesh_axes):
            key = tuple((s.start, s.stop, s.step) for s in index)
            if key not in where:
                where[key] = len(groups)
                groups.append((index, []))
            groups[where[key]][1].append(device)
        arrays = data_callback([(index, tuple(devices)) for index, devices in groups])
        return _build(global_shape, global_mesh, mesh_axes, list(arrays))


def _mesh_and_axes(self) -> Tuple[Any, Any]:
    meta = _meta(self)
    if meta is not None:
        return meta
    sharding = self.sharding
    if not hasattr(sharding, "mesh"):
        raise AttributeError("this array has no mesh (it is not a GlobalDeviceArray)")
    return sharding.mesh, sharding.spec


def _local_shards(self) -> List[Any]:
    by_device = {s.device: s for s in self.addressable_shards}
    try:
        mesh, _ = _mesh_and_axes(self)
        order = [d for d in _local_devices(mesh) if d in by_device]
    except AttributeError:
        order = list(by_device)
    return [by_device[d] for d in order]


def patch_array_type() -> None:
    """Add the GDA-only attributes to jax.Array (values made by the shim are jax.Arrays)."""
    jax = _jax()
    for cls in {jax.Array, type(jax.numpy.zeros(()))}:
        cls.local_shards = property(_local_shards)
        cls.local_data = lambda self, i: _local_shards(self)[i].data
        cls.mesh = property(lambda self: _mesh_and_axes(self)[0])
        cls.mesh_axes = property(lambda self: _mesh_and_axes(self)[1])
        # DeviceArray-era methods (the DeviceArray API).
        cls.to_py = lambda self: np.asarray(self)
        cls.block_host_until_ready = lambda self: self.block_until_ready()
        cls.tile = lambda self, reps: jax.numpy.tile(self, reps)  # (gone from JAX 0.3.17)


class _ShardedDeviceArrayMeta(type):
    def __instancecheck__(cls, instance: Any) -> bool:
        # jax 0.4.13 kept ShardedDeviceArray only as a legacy shell: no value is an instance.
        return False


class ShardedDeviceArray(metaclass=_ShardedDeviceArrayMeta):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("ShardedDeviceArray cannot be constructed (legacy shell, as in jax 0.4.13)")


# Arrays returned by pmap since the flavour was installed (kept alive so ids stay unique).
_PMAP_OUTPUTS: List[Any] = []
_PMAP_IDS: set = set()


class _PmapShardedDeviceArrayMeta(type):
    def __instancecheck__(cls, instance: Any) -> bool:
        # Before jax.Array (jax < 0.4.1) ShardedDeviceArray was the type of pmap outputs (and of
        # device_put_sharded/_replicated results), one-device pmaps included.  Newer JAX gives
        # pmap outputs a NamedSharding like any other array, so the shim's pmap records them.
        return id(instance) in _PMAP_IDS


class PmapShardedDeviceArray(metaclass=_PmapShardedDeviceArrayMeta):
    """``pxla.ShardedDeviceArray`` as it was before jax.Array (shim flavour ``sda-pre-0.4.1``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("ShardedDeviceArray objects were made by pmap, not constructed")


def recording_pmap(real_pmap: Any) -> Any:
    """``jax.pmap`` whose outputs are ShardedDeviceArrays (flavour ``sda-pre-0.4.1``)."""
    import functools

    import jax

    @functools.wraps(real_pmap)
    def pmap(fun: Any, *args: Any, **kwargs: Any) -> Any:
        mapped = real_pmap(fun, *args, **kwargs)

        @functools.wraps(fun)
        def call(*call_args: Any, **call_kwargs: Any) -> Any:
            out = mapped(*call_args, **call_kwargs)
            for leaf in jax.tree_util.tree_leaves(out):
                if isinstance(leaf, jax.Array):
                    _PMAP_OUTPUTS.append(leaf)
                    _PMAP_IDS.add(id(leaf))
            return out

        return call

    return pmap


__all__ = [
    "GlobalDeviceArray",
    "PmapShardedDeviceArray",
    "Shard",
    "ShardedDeviceArray",
    "patch_array_type",
    "np",
]
