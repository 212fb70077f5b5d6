"""Run one whole program as ``__main__`` on the JAX of the interpreter that runs this file.

    python tests/programs/launch.py legacy|shim|modern PROGRAM.py

* ``legacy``: real old JAX (a venv from tests/runtime/venvs.py).  Only what that release had
  already lost is re-created, with the test-only shim's own pieces: the
  ``jax.experimental.global_device_array`` module (GDA, removed in 0.4.7), ``maps.Mesh`` and
  ``PartitionSpec`` from ``jax.experimental(.pjit)`` (old re-exports of the same classes) and ``jax.tree_multimap`` (``tree_map`` under its old name).
  Everything else (pjit with ``in_axis_resources``, xmap, ``device_buffers``, ``.device()``,
  ``DeviceArray`` ...) is the real release.
* ``shim``: the newest JAX with the whole test-only shim (tests/runtime/shim), for programs old
  JAX cannot run here (two processes: old JAX has no working CPU collectives on this machine).
* ``modern``: the newest JAX as it is; the harness runs it with ``-W error::DeprecationWarning``.

A two-process program reads ``COORDINATOR_ADDRESS``, ``NUM_PROCESSES`` and ``PROCESS_ID`` from
the environment, as a cluster launcher would set them.
"""

from __future__ import annotations

import contextlib
import os
import runpy
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def legacy_extras() -> None:
    """Re-create on a real old JAX the few legacy names that release had already removed."""
    import jax
    import jax.experimental
    import jax.experimental.pjit as pjit_module
    import jax.tree_util
    from jax.experimental import maps
    from jax.sharding import Mesh, PartitionSpec

    from tests.runtime.shim import _module, gda

    if not hasattr(maps, "Mesh"):
        maps.Mesh = Mesh
    if not hasattr(maps, "mesh"):
        maps.mesh = mesh_context
    for module in (jax.experimental, pjit_module):  # the old re-exports of the same class
        if not hasattr(module, "PartitionSpec"):
            module.PartitionSpec = PartitionSpec
    if not hasattr(jax, "tree_multimap"):
        jax.tree_multimap = jax.tree_util.tree_map
        jax.tree_util.tree_multimap = jax.tree_util.tree_map
    gda.patch_array_type()
    _module(
        "jax.experimental.global_device_array",
        GlobalDeviceArray=gda.GlobalDeviceArray,
        Shard=gda.Shard,
        PartitionSpec=PartitionSpec,
        MeshAxes=PartitionSpec,
        Device=jax.Device,
        get_shard_indices=get_shard_indices,
    )


@contextlib.contextmanager
def mesh_context(devices, axis_names):
    """``jax.experimental.maps.mesh(devices, axis_names)``: the pre-``Mesh`` context manager."""
    import numpy as np
    from jax.sharding import Mesh

    with Mesh(np.asarray(devices), axis_names) as mesh:
        yield mesh


def get_shard_indices(global_shape, global_mesh, mesh_axes):
    """The GDA module's helper: every mesh device -> the index of its shard."""
    from jax.sharding import NamedSharding

    from tests.runtime.shim import gda

    return NamedSharding(global_mesh, gda._spec(mesh_axes)).devices_indices_map(tuple(global_shape))


def main() -> None:
    mode, program = sys.argv[1], sys.argv[2]
    if REPO not in sys.path:
        sys.path.insert(0, REPO)
    if mode == "legacy":
        legacy_extras()
    elif mode == "shim":
        from tests.runtime.shim import install

        install()
        import jax

        sys.modules["jax.experimental.global_device_array"].get_shard_indices = get_shard_indices
        jax.tree_multimap = jax.tree_util.tree_map
        sys.modules["jax.experimental.maps"].mesh = mesh_context
    elif mode != "modern":
        raise SystemExit(f"unknown mode {mode!r}")
    sys.argv = [program]
    runpy.run_path(program, run_name="__main__")


if __name__ == "__main__":
    main()
