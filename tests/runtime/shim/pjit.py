"""Legacy ``pjit`` re-created on ``jax.jit`` (test-only; see the package docstring).

Semantics (pjit's documented behaviour): specs are resolved against the ``with mesh:``
environment when the function is *called*; a bare ``PartitionSpec`` means ``NamedSharding(mesh,
spec)``, ``None`` means replicated (``PartitionSpec()``), ``FROM_GDA`` means "keep the
argument's own sharding".  Legacy positional order: ``pjit(fun, in_axis_resources,
out_axis_resources, static_argnums, donate_argnums)``.  The modern keywords ``in_shardings``/
``out_shardings`` are accepted with the same (pjit) meaning.

Multi-process (``jax.process_count() > 1``): before jax.Array (0.3.x, the migration guide's
"host local inputs") pjit treated inputs that were not global arrays as *host-local* (each
process passes its own rows, concatenated into the global array) and returned host-local
outputs.  The shim re-creates that with ``multihost_utils.host_local_array_to_global_array`` /
``global_array_to_host_local_array`` on the given PartitionSpecs.
"""

from __future__ import annotations

import functools
from typing import Any


class _FromGda:
    def __repr__(self) -> str:
        return "FROM_GDA"


FROM_GDA = _FromGda()
_UNSPECIFIED = object()


def _current_mesh():
    from jax._src import mesh as mesh_lib

    mesh = mesh_lib.thread_resources.env.physical_mesh
    if mesh.empty:
        raise RuntimeError("pjit requires a non-empty mesh: call it under `with mesh:`")
    return mesh


def _is_leaf(value: Any) -> bool:
    from jax.sharding import PartitionSpec, Sharding

    return value is None or value is FROM_GDA or isinstance(value, (PartitionSpec, Sharding))


def _resolve(spec: Any, mesh: Any, arg: Any = None) -> Any:
    from jax.sharding import NamedSharding, PartitionSpec, Sharding

    if spec is FROM_GDA:
        return arg.sharding
    if isinstance(spec, Sharding):
        return spec
    if spec is None:
        return NamedSharding(mesh, PartitionSpec())
    return NamedSharding(mesh, spec)


def _resolve_tree(specs: Any, mesh: Any, args: Any = None) -> Any:
    import jax

    if _is_leaf(specs):
        if specs is FROM_GDA:
            return jax.tree_util.tree_map(lambda a: a.sharding, args)
        return _resolve(specs, mesh)
    if args is None:
        return jax.tree_util.tree_map(lambda s: _resolve(s, mesh), specs, is_leaf=_is_leaf)
    return jax.tree_util.tree_map(
        lambda s, a: (
            jax.tree_util.tree_map(lambda x: x.sharding, a) if s is FROM_GDA else _resolve(s, mesh)
        ),
        specs,
        args,
        is_leaf=_is_leaf,
    )


def pjit(
    fun,
    in_axis_resources=_UNSPECIFIED,
    out_axis_resources=_UNSPECIFIED,
    static_argnums=None,
    donate_argnums=(),
    *,
    in_shardings=_UNSPECIFIED,
    out_shardings=_UNSPECIFIED,
    **kwargs,
):
    import jax

    if in_shardings is not _UNSPECIFIED:
        in_axis_resources = in_shardings
    if out_shardings is not _UNSPECIFIED:
        out_axis_resources = out_shardings
    if static_argnums is None:
        static = ()
    elif isinstance(static_argnums, int):
        static = (static_argnums,)
    else:
        static = tuple(static_argnums)

    @functools.wraps(fun)
    def call(*args):
        mesh = _current_mesh()
        jit_kwargs = dict(kwargs, static_argnums=static, donate_argnums=donate_argnums)
        dynamic = tuple(a for i, a in enumerate(args) if i not in static)
        if in_axis_resources is not _UNSPECIFIED:
            if _is_leaf(in_axis_resources):
                jit_kwargs["in_shardings"] = tuple(
                    _resolve_tree(in_axis_resources, mesh, a) for a in dynamic
                )
            else:
                jit_kwargs["in_shardings"] = _resolve_tree(tuple(in_axis_resources), mesh, dynamic)
        if out_axis_resources is not _UNSPECIFIED:
            jit_kwargs["out_shardings"] = _resolve_tree(out_axis_resources, mesh)
        host_local = jax.process_count() > 1 and in_axis_resources is not _UNSPECIFIED
        if host_local:
            args = _globalize(args, static, in_axis_resources, mesh)
        out = jax.jit(fun, **jit_kwargs)(*args)
        if host_local and out_axis_resources is not _UNSPECIFIED:
            from jax.experimental import multihost_utils

            out = multihost_utils.global_array_to_host_local_array(
                out, mesh, _specs(out_axis_resources)
            )
        return out

    return call


def _specs(tree: Any) -> Any:
    """Axis resources as PartitionSpecs (None = replicated)."""
    import jax
    from jax.sharding import PartitionSpec

    return jax.tree_util.tree_map(
        lambda s: PartitionSpec() if s is None else (s.spec if hasattr(s, "spec") else s),
        tree,
        is_leaf=_is_leaf,
    )


def _globalize(args, static, in_axis_resources, mesh):
    """Host-local inputs -> global arrays, as 0.3-era multi-process pjit did.

    Host-local means anything but a global array: NumPy, scalars, and arrays on this
    process's devices only (a DeviceArray or a host-local pjit output of the time).
    """
    import jax
    from jax.experimental import multihost_utils

    dynamic = [i for i in range(len(args)) if i not in static]
    specs = (
        in_axis_resources
        if not _is_leaf(in_axis_resources)
        else (in_axis_resources,) * len(dynamic)
    )
    out = list(args)
    for i, spec in zip(dynamic, specs):
        if spec is FROM_GDA or isinstance(args[i], jax.core.Tracer):
            continue  # a nested pjit, traced inside another: its inputs are already global
        if isinstance(args[i], jax.Array) and not args[i].is_fully_addressable:
            continue
        out[i] = multihost_utils.host_local_array_to_global_array(args[i], mesh, _specs(spec))
    return tuple(out)


def with_sharding_constraint(x, axis_resources):
    import jax

    mesh = _current_mesh()
    return jax.lax.with_sharding_constraint(x, _resolve_tree(axis_resources, mesh))
