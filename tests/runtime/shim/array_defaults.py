"""Shim flavour ``"hashable-arrays-pre-0.4.1"``: a JAX array as a dataclass field's default,
as Python 3.11's ``dataclasses`` took it before jax.Array.

DeviceArray defined ``__hash__`` (to raise ``TypeError``: "JAX DeviceArray, like
numpy.ndarray, is not hashable.", ``jax/_src/device_array.py`` in jax 0.3.25), so the
check ``dataclasses`` makes of a default since Python 3.11 (``type(default).__hash__ is
None`` refuses it as mutable) let it through, and the class kept the array as the default
of every instance.  ``jax.Array`` sets ``__hash__`` to None, and its class cannot be patched:
this flavour wraps ``dataclasses._get_field`` so that a field whose default is a
``jax.Array`` (or ``field(default=<a jax.Array>)``) passes the check as a DeviceArray did,
and keeps that very array as its default.  Everything else goes through unchanged.
"""

from __future__ import annotations

import dataclasses
from typing import Any

_PLACEHOLDER = object()  # hashable, for the check alone


def install() -> None:
    import jax

    real = dataclasses._get_field  # type: ignore[attr-defined]

    def get_field(cls: type, name: str, annotation: Any, *rest: Any) -> Any:
        default = cls.__dict__.get(name, dataclasses.MISSING)
        inner = default.default if isinstance(default, dataclasses.Field) else default
        if not isinstance(inner, jax.Array):
            return real(cls, name, annotation, *rest)
        if isinstance(default, dataclasses.Field):
            default.default = _PLACEHOLDER
        else:
            setattr(cls, name, _PLACEHOLDER)
        try:
            made = real(cls, name, annotation, *rest)
        finally:
            if isinstance(default, dataclasses.Field):
                default.default = inner
            else:
                setattr(cls, name, default)
        made.default = inner
        return made

    dataclasses._get_field = get_field  # type: ignore[attr-defined]
