"""The names that say what a value is, for the receiver analysis: JAX APIs that return
arrays (or GlobalDeviceArrays), those that return something else, the wrappers whose calls
return arrays (``jit``, ``pmap``), other array libraries, and :class:`Tie`, the answer
"what is this receiver?" with the evidence behind it.

Kept apart as plain data so that the tracing (:mod:`rules._receivers`), the module facts
(:mod:`rules._module_facts`) and the CPython-``ast`` gate (:mod:`rules._receiver_gate`)
share one list of names without depending on each other.
"""

from __future__ import annotations

import dataclasses
from typing import Optional

GDA_MODULES = ("jax.experimental.global_device_array", "jax._src.global_device_array")
GDA_CLASS_NAMES = frozenset(m + ".GlobalDeviceArray" for m in GDA_MODULES)
GDA_CONSTRUCTORS = frozenset(
    name + suffix
    for name in GDA_CLASS_NAMES
    for suffix in (
        "",
        ".from_callback",
        ".from_batched_callback",
        ".from_batched_callback_with_devices",
    )
)
ARRAY_TYPES = frozenset(
    {
        "jax.Array",
        "jax.numpy.ndarray",
        "jax.numpy.DeviceArray",
        "jax.interpreters.xla.DeviceArray",
        "jax.interpreters.pxla.ShardedDeviceArray",
        "jax.xla.DeviceArray",
        "jax.pxla.ShardedDeviceArray",
        "jaxlib.xla_extension.DeviceArray",
        "jax.typing.ArrayLike",
        "chex.Array",
        "chex.ArrayDevice",
        "jaxtyping.Array",
        "flax.typing.Array",
    }
)
JIT_WRAPPERS = frozenset(
    {
        "jax.jit",
        "jax.pmap",
        "jax.experimental.pjit.pjit",
        "jax.pjit",
        "jax.api.jit",
        "jax.api.pmap",
        "jax.experimental.maps.xmap",
        "jax.experimental.shard_map.shard_map",
        "jax.shard_map",
    }
)
PMAP_WRAPPERS = frozenset({"jax.pmap", "jax.api.pmap"})
PARTIALS = frozenset({"functools.partial"})
# Calls under jax. that do not return arrays.
NOT_ARRAY_PREFIXES = (
    "jax.devices",
    "jax.local_devices",
    "jax.device_count",
    "jax.local_device_count",
    "jax.process_index",
    "jax.process_count",
    "jax.host_id",
    "jax.host_count",
    "jax.jit",
    "jax.pmap",
    "jax.vmap",
    "jax.grad",
    "jax.value_and_grad",
    "jax.jacfwd",
    "jax.jacrev",
    "jax.checkpoint",
    "jax.remat",
    "jax.custom_jvp",
    "jax.custom_vjp",
    "jax.named_call",
    "jax.make_jaxpr",
    "jax.eval_shape",
    "jax.ShapeDtypeStruct",
    "jax.config",
    "jax.distributed",
    "jax.sharding",
    "jax.make_mesh",
    "jax.tree_util",
    "jax.tree",
    "jax.tree_map",
    "jax.tree_leaves",
    "jax.tree_flatten",
    "jax.experimental.mesh_utils",
    "jax.experimental.maps",
    "jax.experimental.pjit",
    "jax.experimental.shard_map",
    "jax.experimental.multihost_utils.process_allgather",
    "jax.experimental.multihost_utils.sync_global_devices",
    "jax.experimental.multihost_utils.assert_equal",
    "jax.experimental.multihost_utils.reached_preemption_sync_point",
    "jax.interpreters.pxla.Mesh",
    "jax.numpy.dtype",
    "jax.numpy.shape",
    "jax.numpy.ndim",
    "jax.numpy.size",
    "jax.numpy.result_type",
    "jax.numpy.promote_types",
    "jax.numpy.issubdtype",
    "jax.numpy.finfo",
    "jax.numpy.iinfo",
    "jax.dtypes",
    "jax.debug",
    "jax.core",
    "jax.extend",
    "jax.interpreters",
    "jax.lib",
    "jax.named_scope",
    "jax.default_device",
    "jax.ensure_compile_time_eval",
    "jax.disable_jit",
    "jax.transfer_guard",
    "jax.checking_leaks",
    "jax.hessian",
    "jax.jvp",
    "jax.vjp",
    "jax.linearize",
    "jax.linear_transpose",
    "jax.closure_convert",
    "jax.xla_computation",
    "jax.custom_batching",
    "jax.numpy.vectorize",
    "jax.experimental.compilation_cache",
    "jax.profiler",
    "jax.monitoring",
    "jax.stages",
    "jax.export",
    "jax.ffi",
)
# Attributes and methods of a jax.Array that give a jax.Array (or do not).
ARRAY_PROPERTIES = frozenset({"T", "mT", "real", "imag", "at"})
NOT_ARRAY_METHODS = frozenset(
    {
        "tolist",
        "item",
        "tobytes",
        "devices",
        "delete",
        "is_deleted",
        "copy_to_host_async",
        "on_device_size_in_bytes",
        "__array__",
        "__dlpack__",
        "device",
        "to_py",
        "block_host_until_ready",
        "device_buffer",
        "device_buffers",
        "local_data",
    }
)
# Calls under jax. whose result may or may not be an array (pytrees, internals).
MAYBE_ARRAY_PREFIXES = (
    "jax.tree_util",
    "jax.tree",
    "jax.tree_map",
    "jax.tree_multimap",
    "jax.tree_leaves",
    "jax.tree_flatten",
    "jax.tree_unflatten",
    "jax.device_get",
    "jax.interpreters",
    "jax.lib",
    "jax.extend",
    "jax._src",
)
# Array libraries whose objects have look-alike attributes.
FOREIGN_ARRAY_LIBRARIES = (
    "torch",
    "tensorflow",
    "cupy",
    "mxnet",
    "paddle",
    "oneflow",
    "jittor",
    "mindspore",
    "dask",
    "numpy",
)


@dataclasses.dataclass(frozen=True)
class Tie:
    kind: Optional[str]  # "array" | "gda" | "likely" (evidence short of proof) | "foreign" | None
    reason: str = ""
    pmap: bool = False
    named: bool = False
    source: str = ""  # the qualified name of the JAX call that made the value, if one did

    @property
    def tied(self) -> bool:
        return self.kind in ("array", "gda", "likely")


UNKNOWN = Tie(None)


def kept(*ties: Tie) -> str:
    """The kind of a value derived from ``ties`` (``x[0]``, ``x + 1``): an array, but only as
    likely as the weakest tie it comes from."""
    return "likely" if any(t.kind == "likely" for t in ties) else "array"


def under(qualname: str, prefixes) -> bool:  # noqa: ANN001
    return any(qualname == p or qualname.startswith(p + ".") for p in prefixes)


def is_foreign_library(qualname: str) -> bool:
    """A name from another array library (or NumPy): its values are not JAX arrays."""
    return qualname.split(".", 1)[0] in FOREIGN_ARRAY_LIBRARIES


def is_jax_name(qualname: Optional[str]) -> bool:
    return bool(qualname) and under(qualname, ("jax", "jaxlib"))  # type: ignore[arg-type]
