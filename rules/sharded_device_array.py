"""JAX102 sharded-device-array: ``ShardedDeviceArray`` as a type becomes ``jax.Array``.

Deprecated in jax 0.4.7, removed in 0.4.14 (release notes); the jax.Array migration guide
("New public type named jax.Array") gives the isinstance predicate.  On real jax 0.4.13
``isinstance(pmap_out, ShardedDeviceArray)`` is already False, so the predicate is an unsafe
fix.
"""

from __future__ import annotations

from jaxmigrate.migrator import references as refs
from jaxmigrate.migrator.rule import Example, Lifecycle
from jaxmigrate.rules._array_type import PredicateTypeRule


class ShardedDeviceArray(PredicateTypeRule, code="JAX102"):
    """ShardedDeviceArray -> jax.Array (annotations) or the migration guide's isinstance predicate
    (unsafe)

    **What it does.** `isinstance(x, pxla.ShardedDeviceArray)` becomes the jax.Array migration
    guide's predicate `isinstance(x, jax.Array) and x.is_fully_addressable and
    len(x.sharding.device_set) > 1` (an unsafe fix); in a class tuple the other classes stay
    (`isinstance(x, np.ndarray) or (...)`).  Annotations and `Union[...]`/`Optional[...]`
    members become `jax.Array` (safe).

    **Why.** ShardedDeviceArray was deprecated in JAX 0.4.7 and removed in 0.4.14; pmap now
    returns a `jax.Array` sharded over its devices.

    **Unsafe because** the guide itself notes that a one-device ShardedDeviceArray cannot be
    told apart from any other single-device array, and on JAX 0.4.13 the legacy check was
    already False for pmap outputs (the class was an empty shell), so the rewrite changes
    what such code observed there.

    **Safe in a tuple with jax.Array.** When the class tuple also holds `jax.Array` or a
    DeviceArray spelling (which becomes `jax.Array` itself), the predicate adds nothing
    and the legacy class is simply dropped: `isinstance(x, (jax.Array, ShardedDeviceArray))` is
    `isinstance(x, jax.Array)` exactly.

    **Reported, not rewritten.** `issubclass(..., ShardedDeviceArray)`, `type(x) is
    ShardedDeviceArray`, isinstance checks on an expression that is not a plain name (the
    predicate uses it three times), and the class used as a value (an argument, a call).
    Use the predicate above on each array.

    **A module-level alias** (`ArraySharded = pxla.ShardedDeviceArray`, as chex 0.1's types
    module has) runs at import: left as it is, the module and everything importing it die.
    Where every use of the alias in the module is a type (an annotation, a `Union[...]`
    member, an isinstance/issubclass class argument) or none (an export), it becomes
    `ArraySharded = jax.Array` under `--unsafe-fixes` (an isinstance through it then accepts
    any jax.Array).  An alias used as a constructor, a dictionary or registry key, in a
    `type(x) is` test or as a base class is reported: `type(x)` is never jax.Array.
    """

    lifecycle = Lifecycle(
        needs="0.4.1",
        deprecated=("0.4.7", "ShardedDeviceArray deprecated"),
        removed=("0.4.14", "ShardedDeviceArray removed"),
    )
    references = (refs.array_migration("New public type named jax.Array"),)
    label = "ShardedDeviceArray"
    predicate = (
        "isinstance({x}, {array}) and {x}.is_fully_addressable and len({x}.sharding.device_set) > 1"
    )
    recipe = (
        "isinstance(x, jax.Array) and x.is_fully_addressable and len(x.sharding.device_set) > 1"
    )
    names = frozenset(
        {
            "jax.interpreters.pxla.ShardedDeviceArray",
            "jax.interpreters.pxla._ShardedDeviceArray",
            "jax.pxla.ShardedDeviceArray",
            "jax._src.interpreters.pxla.ShardedDeviceArray",
            "jaxlib.xla_extension.pmap_lib.ShardedDeviceArray",
        }
    )
    examples = (
        Example(
            title="the guide's predicate",
            unsafe_fixes=True,
            before="""
            from jax.interpreters import pxla

            def first(y):
                if isinstance(y, pxla.ShardedDeviceArray):
                    y = y[0]
                return y
            """,
            after="""
            import jax

            def first(y):
                if isinstance(y, jax.Array) and y.is_fully_addressable and len(y.sharding.device_set) > 1:
                    y = y[0]
                return y
            """,  # noqa: E501
        ),
        Example(
            title="annotations are safe",
            before="""
            from jax.interpreters.pxla import ShardedDeviceArray

            def total(y: ShardedDeviceArray) -> float:
                return float(y.sum())
            """,
            after="""
            import jax

            def total(y: jax.Array) -> float:
                return float(y.sum())
            """,
        ),
    )
