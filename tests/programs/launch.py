"""Run one whole program as ``__main__`` on the JAX of the interpreter that runs this file.

    python tests/programs/launch.py legacy|shim|modern PROGRAM.py

* ``legacy``: real old JAX (a venv from tests/runtime/venvs.py).  Only what that release had
  already lost is re-created, with the test-only shim's own pieces: the
  ``jax.experimental.global_device_array`` module (GDA, removed in 0.4.7), ``maps.Mesh`` and
  ``PartitionSpec`` from ``jax.experimental(.pjit)`` (old re-exports of the same classes) and
  ``jax.tree_multimap`` (``tree_map`` under its old name).  Everything else (pjit with
  ``in_axis_resources``, xmap, ``device_buffers``, ``.device()``, ``DeviceArray`` ...) is the
  real release.
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


TREE_ALIASES = (
    "tree_map",
    "tree_flatten",
    "tree_unflatten",
    "tree_leaves",
    "tree_structure",
    "tree_transpose",
    "tree_reduce",
    "tree_all",
)


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
        import jax

        from tests.runtime.shim import install

        if "NUM_PROCESSES" in os.environ:
            # Installing the shim touches the backend, which must come after
            # jax.distributed.initialize: initialize here, and let the program's own call
            # (made with these same values) do nothing.
            jax.distributed.initialize(
                os.environ["COORDINATOR_ADDRESS"],
                int(os.environ["NUM_PROCESSES"]),
                int(os.environ["PROCESS_ID"]),
            )
            jax.distributed.initialize = lambda *args, **kwargs: None
        install()

        sys.modules["jax.experimental.global_device_array"].get_shard_indices = get_shard_indices
        for name in TREE_ALIASES:  # jax.tree_* aliases, removed in JAX 0.6
            setattr(jax, name, getattr(jax.tree_util, name))
        jax.tree_multimap = jax.tree_util.tree_map
        sys.modules["jax.experimental.maps"].mesh = mesh_context
    elif mode != "modern":
        raise SystemExit(f"unknown mode {mode!r}")
    sys.argv = [program]
    # Native code (gloo) logs to fd 1 from its own threads: give it stderr, and give the
    # program's prints the real stdout.
    out = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = open(out, "w", buffering=1)
    try:
        runpy.run_path(program, run_name="__main__")
    finally:
        sys.stdout.flush()


if __name__ == "__main__":
    main()
