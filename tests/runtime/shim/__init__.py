"""Test-only re-creation of legacy JAX APIs that no installable JAX has any more.

NOT a runtime dependency: it exists so the runtime suite can run a fixture's *before*-file on
the installed JAX and compare it with the after-file.  ``install()`` patches the ``jax``
namespace (module attributes and ``sys.modules``) of the current process only; the harness
calls it in the ``shim`` worker subprocess, never in the pytest process.

What it re-creates, from the documented semantics (JAX's guides, release notes, jax 0.4.13):

* ``jax.experimental.global_device_array``: ``GlobalDeviceArray`` (constructor,
  ``from_callback`` -- called once per local device, replicas included --,
  ``from_batched_callback``, ``from_batched_callback_with_devices``), ``Shard``,
  ``PartitionSpec`` re-export.  GDA objects are real ``jax.Array``s carrying the legacy
  attributes (``local_shards``, ``local_data(i)`` = buffer i in ``mesh.local_devices`` order,
  ``mesh``, ``mesh_axes``) -- see ``gda.py``.
* ``jax.experimental.pjit``: ``pjit`` accepting ``in_axis_resources``/``out_axis_resources``
  (and the legacy positional order) with pjit semantics: resolved against the ``with mesh:``
  environment at call time, ``None`` = replicated, ``FROM_GDA`` = the argument's own sharding;
  ``FROM_GDA``, ``PartitionSpec``, ``NamedSharding``, ``with_sharding_constraint``.
* DeviceArray names with their jax.Array-era (0.4.x) meaning, i.e. aliases of ``jax.Array``:
  ``jax.numpy.DeviceArray``, ``jax.interpreters.xla.DeviceArray``/``_DeviceArray``,
  ``jax.xla``, ``jaxlib.xla_extension.DeviceArray``; ``jax.interpreters.pxla.ShardedDeviceArray``
  as the empty legacy shell it was on 0.4.13 (``isinstance`` is False for every value,
  observed on jax 0.4.13).
* DeviceArray-era methods on arrays: ``to_py()`` (-> ``np.asarray``) and
  ``block_host_until_ready()`` (-> ``block_until_ready()``); ``xla.device_put(x, device)``
  returning a 1-tuple of buffers.
* ``jax.config.jax_array`` (True), ``jax_parallel_functions_output_gda`` /
  ``jax_jit_pjit_api_merge`` flags; ``jax.config.update('jax_array', False)`` raises
  ValueError as on 0.4.13.
* ``jax.experimental.stax`` and ``jax.experimental.optimizers``: until JAX 0.3.15 forwarding
  modules (``from jax.example_libraries.stax import *`` and a FutureWarning).
* ``jax.experimental.maps.Mesh``, ``jax.experimental.PartitionSpec``,
  ``jax.interpreters.pxla.{Mesh, PartitionSpec}`` (old re-exports).
* ``multihost_utils.host_local_array_to_global_array`` / ``global_array_to_host_local_array``
  accepting ``None`` pspecs as "replicated", as before jax 0.4.13 (its release notes;
  ``multihost.py``).
* ``jax.experimental.gda_serialization.serialization`` over ``array_serialization`` with the
  legacy ``gda_inp=`` / ``gdas=`` parameter names (removed in 0.4.11; ``serialization.py``; only
  when tensorstore is installed).
* ``Device.live_buffers()`` returning the live buffers on that device, its pre-jax.Array meaning,
  instead of the ``[]`` every installable JAX returns (observed; ``devices.py``).
* ``jax.ShapeDtypeStruct(shape, None)`` as a float64 struct, as before jax 0.4.2 (``shapes.py``).

Opt-in flavours (driver constant ``SHIM_FLAVOURS = ("name", ...)``, passed to ``install``):

* ``"sda-pre-0.4.1"``: ``pxla.ShardedDeviceArray`` with its pre-jax.Array meaning -- the type
  of pmap outputs (and of ``device_put_sharded``/``device_put_replicated`` results), whatever
  the device count -- instead of the empty 0.4.13 shell: ``jax.pmap`` is wrapped to record its
  outputs and ``isinstance`` is True exactly for those.  Values that did not exist before
  jax.Array (multi-device ``NamedSharding`` arrays from ``device_put``/``jit``) have no legacy
  answer; drivers using this flavour must not feed them.
* ``"hashable-arrays-pre-0.4.1"``: a JAX array as a dataclass field's default, which Python
  3.11's ``dataclasses`` took while arrays were DeviceArrays (whose class defined
  ``__hash__``); ``array_defaults.py``.
"""

from __future__ import annotations

import sys
import types

_INSTALLED = False
FLAVOURS = ("sda-pre-0.4.1", "hashable-arrays-pre-0.4.1")


def _module(name: str, **attrs: object) -> types.ModuleType:
    module = sys.modules.get(name)
    if module is None:
        module = types.ModuleType(name)
        sys.modules[name] = module
        parent, _, child = name.rpartition(".")
        if parent and parent in sys.modules:
            setattr(sys.modules[parent], child, module)
    for key, value in attrs.items():
        setattr(module, key, value)
    return module


def install(flavours: "tuple[str, ...] | list[str]" = ()) -> None:
    """Patch the legacy names into this process's ``jax``.  Idempotent.

    ``flavours``: opt-in legacy models (see the module docstring), e.g. ``("sda-pre-0.4.1",)``.
    """
    global _INSTALLED
    unknown = [f for f in flavours if f not in FLAVOURS]
    if unknown:
        raise ValueError(f"unknown shim flavour(s) {unknown}; known: {FLAVOURS}")
    if _INSTALLED:
        return
    import jax
    import jax.experimental
    import jax.experimental.pjit as pjit_module
    import jax.interpreters.pxla as pxla
    import jax.interpreters.xla as xla
    import jax.numpy as jnp
    import jaxlib
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    from . import (
        config as config_shim,
        devices,
        gda,
        multihost,
        pjit as pjit_shim,
        serialization,
        shapes,
    )

    gda.patch_array_type()
    for name in ("jax.experimental.global_device_array", "jax._src.global_device_array"):
        _module(
            name,
            GlobalDeviceArray=gda.GlobalDeviceArray,
            Shard=gda.Shard,
            PartitionSpec=PartitionSpec,
            MeshAxes=PartitionSpec,
            Device=jax.Device,
        )
    for key, value in dict(
        pjit=pjit_shim.pjit,
        FROM_GDA=pjit_shim.FROM_GDA,
        PartitionSpec=PartitionSpec,
        NamedSharding=NamedSharding,
        with_sharding_constraint=pjit_shim.with_sharding_constraint,
    ).items():
        setattr(pjit_module, key, value)

    # DeviceArray names: in the jax.Array era they were aliases of jax.Array.
    jnp.DeviceArray = jax.Array
    xla.DeviceArray = jax.Array
    xla._DeviceArray = jax.Array
    xla.Device = jax.Device
    # 0.3-era ``xla.device_put(x, device=None)`` returned a tuple of buffers.
    xla.device_put = lambda x, device=None: (jax.device_put(x, device),)
    jax.xla = xla
    jax.pxla = pxla
    _module(
        "jaxlib.xla_extension",
        DeviceArray=jax.Array,
        Device=jax.Device,
        ArrayImpl=type(jnp.zeros(())),
    )
    jaxlib.xla_extension = sys.modules["jaxlib.xla_extension"]
    if "hashable-arrays-pre-0.4.1" in flavours:
        from . import array_defaults

        array_defaults.install()
    if "sda-pre-0.4.1" in flavours:
        pxla.ShardedDeviceArray = gda.PmapShardedDeviceArray
        jax.pmap = gda.recording_pmap(jax.pmap)
    else:
        pxla.ShardedDeviceArray = gda.ShardedDeviceArray
    pxla.Mesh = Mesh
    # Until JAX 0.3.15 these modules were ``from jax.example_libraries.X import *`` shims.
    import jax.example_libraries.optimizers
    import jax.example_libraries.stax

    for legacy, modern in (
        ("stax", jax.example_libraries.stax),
        ("optimizers", jax.example_libraries.optimizers),
    ):
        _module(
            f"jax.experimental.{legacy}",
            **{k: v for k, v in vars(modern).items() if not k.startswith("_")},
        )
    pxla.PartitionSpec = PartitionSpec
    jax.experimental.PartitionSpec = PartitionSpec
    _module("jax.experimental.maps", Mesh=Mesh)
    config_shim.install(jax.config)
    multihost.install()
    devices.install()
    shapes.install()
    serialization.install(_module)
    _INSTALLED = True
