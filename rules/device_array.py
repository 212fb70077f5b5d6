"""JAX101 device-array: every ``DeviceArray`` spelling becomes ``jax.Array``.

Release notes: jax 0.4.1 makes jax.Array the default array type, 0.4.4 deprecates
``jax.interpreters.xla.DeviceArray``, 0.4.7 deprecates ``jnp.DeviceArray``, 0.4.14 removes it;
the jax.Array migration guide ("New public type named jax.Array") says to use ``jax.Array``.
"""

from __future__ import annotations

from jaxmigrate.migrator import references as refs
from jaxmigrate.migrator.rule import Example, Lifecycle
from jaxmigrate.rules._array_type import DEVICE_ARRAY_NAMES, ArrayTypeRule


class DeviceArray(ArrayTypeRule, code="JAX101"):
    """DeviceArray (every spelling) -> jax.Array in isinstance checks, annotations and aliases

    **What it does.** Replaces references to the pre-jax.Array array classes
    (`jnp.DeviceArray`, `jax.interpreters.xla.DeviceArray`, `xla._DeviceArray`,
    `jaxlib.xla_extension.DeviceArray`, `jax.xla.DeviceArray`, the `Buffer` aliases) with
    `jax.Array`: in `isinstance`/`issubclass` checks (tuples are de-duplicated), annotations,
    `Union[...]` and type aliases.  The legacy import is removed once nothing uses it.

    **Why.** jax.Array became the only array type in JAX 0.4.1; the old names were deprecated
    from 0.4.4/0.4.7 and removed in 0.4.11-0.4.14, so the code fails with AttributeError or
    ImportError on current JAX.

    **Behaviour.** On every JAX where the legacy name still existed with jax.Array enabled
    (0.4.1-0.4.13), `jnp.DeviceArray` already *was* `jax.Array`, so the rewrite keeps what the
    code did there.  Note that `isinstance(tracer, jax.Array)` is True inside `jit`; code that
    meant "a concrete array" should add `and not isinstance(x, jax.core.Tracer)`.

    **Not rewritten.** `type(x) is DeviceArray` (and `x.__class__ is DeviceArray`, and
    `type(x) in (DeviceArray, np.ndarray)`) is reported: the concrete class is an
    implementation detail (`ArrayImpl`) whose module moved; use `isinstance(x, jax.Array)`.
    The class as a dispatch key (`{DeviceArray: f}`, `handlers[DeviceArray] = f`) is reported
    for the same reason: a table looked up by `type(x)` never sees `jax.Array`.  Calls
    (`DeviceArray(...)`) and subclassing are reported too.  String annotations are left as
    they are; one that spells `DeviceArray` is reported.
    """

    # reports a string annotation or a method call by its name, import or not
    needs_jax_import = False
    lifecycle = Lifecycle(
        needs=("0.4.1", "jax.Array replaces DeviceArray"),
        deprecated=("0.4.4", "jax.interpreters.xla.DeviceArray deprecated"),
        removed=("0.4.14", "jax.numpy.DeviceArray removed"),
    )
    references = (
        refs.release_notes("0.4.7", "jax.numpy.DeviceArray deprecated"),
        refs.array_migration("New public type named jax.Array"),
        refs.release_notes("0.3.18", "jax.numpy.ndarray is an alias of jax.Array"),
    )
    names = DEVICE_ARRAY_NAMES
    examples = (
        Example(
            title="isinstance with an imported name",
            before="""
            from jax.interpreters.xla import DeviceArray

            def is_arr(x):
                return isinstance(x, DeviceArray)
            """,
            after="""
            import jax

            def is_arr(x):
                return isinstance(x, jax.Array)
            """,
        ),
        Example(
            title="tuples collapse, annotations follow",
            before="""
            import numpy as np
            import jax.numpy as jnp
            from jax.interpreters import xla

            def f(x: jnp.DeviceArray) -> bool:
                return isinstance(x, (jnp.DeviceArray, xla.DeviceArray, np.ndarray))
            """,
            after="""
            import numpy as np
            import jax

            def f(x: jax.Array) -> bool:
                return isinstance(x, (jax.Array, np.ndarray))
            """,
        ),
    )

    label = "DeviceArray"
