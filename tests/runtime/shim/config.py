"""Legacy config flags (test-only): ``jax_array`` and friends as they behaved on jax 0.4.13.

* ``jax.config.jax_array`` reads True; ``update('jax_array', True)`` is accepted,
  ``update('jax_array', False)`` raises ValueError (observed on jax 0.4.13).
* ``jax_parallel_functions_output_gda`` and ``jax_jit_pjit_api_merge`` are accepted no-ops.
"""

from __future__ import annotations

from typing import Any

LEGACY_FLAGS = {
    "jax_array": True,
    "jax_parallel_functions_output_gda": False,
    "jax_jit_pjit_api_merge": True,
}


def install(config: Any) -> None:
    original_update = config.update
    values = dict(LEGACY_FLAGS)

    def update(name: str, value: Any) -> Any:
        if name == "jax_array":
            if not value:
                raise ValueError(
                    "jax.config.update('jax_array', False) is not supported: "
                    "jax.Array is the only array type"
                )
            values[name] = True
            return None
        if name in values:
            values[name] = value
            return None
        return original_update(name, value)

    config.update = update
    for name, value in LEGACY_FLAGS.items():
        try:
            setattr(type(config), name, property(lambda self, _n=name: values[_n]))
        except (AttributeError, TypeError):
            setattr(config, name, value)
