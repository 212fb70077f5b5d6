"""``jax.ShapeDtypeStruct(shape, None)`` with its meaning before jax 0.4.2.

Through jax 0.4.1, ``ShapeDtypeStruct.__init__`` stored ``np.dtype(dtype)``, and NumPy reads
``None`` as float64; jax 0.4.2 added ``if dtype is None: raise ValueError("ShapeDtypeStruct:
dtype must be specified.")`` (``jax/_src/api.py`` in the 0.4.1 and 0.4.2 sdists).  No JAX
older than 0.4.13 installs on Python 3.11, so the model is that line undone: a ``None`` dtype
becomes ``np.dtype(None)`` before the installed constructor sees it.
"""

from __future__ import annotations

from typing import Any


def install() -> None:
    import jax
    import numpy as np

    struct = jax.ShapeDtypeStruct
    if getattr(struct.__init__, "_legacy_none_dtype", False):
        return
    original = struct.__init__

    def __init__(self: Any, shape: Any, dtype: Any, *args: Any, **kwargs: Any) -> None:
        original(self, shape, np.dtype(dtype) if dtype is None else dtype, *args, **kwargs)

    __init__._legacy_none_dtype = True  # type: ignore[attr-defined]
    struct.__init__ = __init__  # type: ignore[method-assign]
