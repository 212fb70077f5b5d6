"""JAX103 global-device-array-type: ``GlobalDeviceArray`` used as a type becomes ``jax.Array``.

The jax.Array migration guide ("New public type named jax.Array") gives the predicate
``isinstance(x, jax.Array) and not x.is_fully_addressable``; GDA was removed in 0.4.7.
Constructing a GDA (``GlobalDeviceArray(...)``, ``GlobalDeviceArray.from_callback``...) belongs
to other rules; this one leaves calls and attribute uses of the class alone.
"""

from __future__ import annotations

from jaxmigrate.migrator import references as refs
from jaxmigrate.migrator.context import NameSite
from jaxmigrate.migrator.rule import Example, Lifecycle
from jaxmigrate.rules._array_type import PredicateTypeRule
from jaxmigrate.rules._gda import GDA_HISTORY
from jaxmigrate.rules._helpers import is_attribute_value, is_called


class GlobalDeviceArrayType(PredicateTypeRule, code="JAX103"):
    """GlobalDeviceArray as a type -> jax.Array (annotations) or `not x.is_fully_addressable`
    (unsafe)

    **What it does.** `isinstance(x, GlobalDeviceArray)` becomes the jax.Array migration
    guide's predicate `isinstance(x, jax.Array) and not x.is_fully_addressable` (an unsafe
    fix); in a class tuple the other classes stay.  Annotations and `Union[...]` members
    become `jax.Array` (safe).  Calls (`GlobalDeviceArray(...)`) and class attributes
    (`GlobalDeviceArray.from_callback`) are left to the GDA construction rules.

    **Why.** GlobalDeviceArray was removed in JAX 0.4.7; `jax.Array` replaced it.

    **Unsafe because** a GDA on a single process was fully addressable, so the guide's
    predicate only recognises the multi-process case: single-process code that relied on
    the check now sees False.  If any jax.Array should pass, use `isinstance(x, jax.Array)`.

    **Safe in a tuple with jax.Array.** When the class tuple also holds `jax.Array` or a
    DeviceArray spelling (which becomes `jax.Array` itself), the predicate adds nothing
    and the legacy class is simply dropped: `isinstance(x, (jax.Array, GlobalDeviceArray))` is
    `isinstance(x, jax.Array)` exactly.

    **Reported, not rewritten.** `issubclass`, `type(x) is GlobalDeviceArray`, isinstance on
    an expression that is not a plain name, and the class used as a value.  A module-level
    alias used only as a type becomes `jax.Array` under `--unsafe-fixes`, as JAX102 does.
    """

    lifecycle = Lifecycle(needs="0.4.1", deprecated="0.4.6", removed="0.4.7")
    references = (
        *GDA_HISTORY,
        refs.array_migration("New public type named jax.Array"),
    )
    label = "GlobalDeviceArray"
    predicate = "isinstance({x}, {array}) and not {x}.is_fully_addressable"
    recipe = "isinstance(x, jax.Array) and not x.is_fully_addressable"
    names = frozenset(
        {
            "jax.experimental.global_device_array.GlobalDeviceArray",
            "jax._src.global_device_array.GlobalDeviceArray",
        }
    )
    examples = (
        Example(
            title="the guide's predicate",
            unsafe_fixes=True,
            before="""
            from jax.experimental.global_device_array import GlobalDeviceArray

            def is_global(x):
                return isinstance(x, GlobalDeviceArray)
            """,
            after="""
            import jax

            def is_global(x):
                return isinstance(x, jax.Array) and not x.is_fully_addressable
            """,
        ),
        Example(
            title="annotations are safe",
            before="""
            from jax.experimental import global_device_array as gda_lib

            def shape_of(x: gda_lib.GlobalDeviceArray) -> tuple:
                return x.shape
            """,
            after="""
            import jax

            def shape_of(x: jax.Array) -> tuple:
                return x.shape
            """,
        ),
    )

    def leaves_alone(self, site: NameSite) -> bool:
        """Construction and ``GlobalDeviceArray.from_*`` belong to the GDA rules."""
        return is_called(site) or is_attribute_value(site)
