"""``jax.experimental.gda_serialization`` re-created over ``array_serialization``.

jax 0.4.9 renamed the checkpoint module ``jax.experimental.gda_serialization`` to
``jax.experimental.array_serialization`` (the old path was removed in 0.4.11) and renamed two
keyword parameters: ``async_serialize(gda_inp=...)`` -> ``arr_inp=`` and
``run_serialization(gdas=...)`` -> ``arrays=``.  The shim's ``gda_serialization.serialization``
is a module holding every public name of the installed ``array_serialization.serialization``,
with those two functions taking the legacy parameter names and delegating.  Other legacy
signatures (e.g. the GDA-era ``async_deserialize(mesh, mesh_axes, ...)``) are not re-created:
the JAX307/JAX308 rules do not rewrite them, so no fixture compares them.

Needs ``tensorstore`` (as ``array_serialization`` does); without it nothing is installed.
"""

from __future__ import annotations

import types
from typing import Any


def build(real: types.ModuleType) -> types.ModuleType:
    legacy = types.ModuleType("jax.experimental.gda_serialization.serialization")
    for name in dir(real):
        if not name.startswith("__"):
            setattr(legacy, name, getattr(real, name))

    async def async_serialize(
        gda_inp: Any, tensorstore_spec: Any, *args: Any, **kwargs: Any
    ) -> Any:
        return await real.async_serialize(gda_inp, tensorstore_spec, *args, **kwargs)

    def run_serialization(gdas: Any, tensorstore_specs: Any) -> Any:
        return real.run_serialization(gdas, tensorstore_specs)

    legacy.async_serialize = async_serialize
    legacy.run_serialization = run_serialization
    return legacy


def install(make_module: Any) -> bool:
    """Register the legacy modules; ``make_module(name, **attrs)`` is the shim's helper."""
    try:
        import jax.experimental.array_serialization.serialization as real
    except ImportError:  # tensorstore missing
        return False
    import sys

    legacy = build(real)
    sys.modules[legacy.__name__] = legacy
    make_module("jax.experimental.gda_serialization", serialization=legacy)
    return True
