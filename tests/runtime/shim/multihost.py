"""Legacy ``multihost_utils`` converters that accept ``None`` as a pspec.

Before jax 0.4.13 a ``None`` leaf in the ``pspecs`` tree of
``host_local_array_to_global_array`` / ``global_array_to_host_local_array`` meant "replicated"
(the pjit convention of the time); jax 0.4.13 made it invalid and says to write ``P()``.  The shim
wraps the installed functions and turns every ``None`` pspec leaf (the whole argument, or a leaf
inside a tuple/list/dict prefix tree) into ``PartitionSpec()`` before delegating, which is
exactly that documented meaning; everything else is the installed implementation.
"""

from __future__ import annotations

import functools
from typing import Any, Callable


def _none_is_replicated(pspecs: Any) -> Any:
    import jax
    from jax.sharding import PartitionSpec

    return jax.tree_util.tree_map(
        lambda leaf: PartitionSpec() if leaf is None else leaf,
        pspecs,
        is_leaf=lambda leaf: leaf is None or isinstance(leaf, PartitionSpec),
    )


def _legacy(function: Callable[..., Any]) -> Callable[..., Any]:
    if getattr(function, "_jaxmigrate_shim", False):
        return function

    @functools.wraps(function)
    def wrapper(inputs: Any, global_mesh: Any, pspecs: Any, *args: Any, **kwargs: Any) -> Any:
        return function(inputs, global_mesh, _none_is_replicated(pspecs), *args, **kwargs)

    wrapper._jaxmigrate_shim = True  # type: ignore[attr-defined]
    return wrapper


def install() -> None:
    import jax.experimental.multihost_utils as multihost_utils

    for name in ("host_local_array_to_global_array", "global_array_to_host_local_array"):
        setattr(multihost_utils, name, _legacy(getattr(multihost_utils, name)))
