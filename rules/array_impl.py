"""JAX105 array-impl: the concrete array class ``ArrayImpl`` named through jax.lib/jaxlib.

``jax.lib.xla_extension``/``jax.lib.xla_client`` were deprecated in jax 0.4.36 and their
``ArrayImpl`` removed in 0.6.0 (release notes of both); ``jaxlib.xla_extension`` itself is gone
by 0.10, where the class lives in ``jaxlib._jax``).  The public name of the type is
``jax.Array``.
"""

from __future__ import annotations

from jaxmigrate.migrator import references as refs
from jaxmigrate.migrator.rule import Example, Lifecycle
from jaxmigrate.rules._array_type import ArrayTypeRule


class ArrayImpl(ArrayTypeRule, code="JAX105"):
    """jax.lib.xla_extension.ArrayImpl (and the jaxlib spellings) -> jax.Array

    **What it does.** Replaces `ArrayImpl` reached through `jax.lib.xla_extension`,
    `jax.lib.xla_client` or `jaxlib.xla_extension` with `jax.Array` in isinstance/issubclass
    checks (tuples are de-duplicated), annotations and aliases.

    **Why.** `jax.lib.xla_extension` and `jax.lib.xla_client` were deprecated in JAX 0.4.36
    and removed in 0.6.0; `jaxlib.xla_extension` no longer exists (the class moved to the
    private `jaxlib._jax`).  `jax.Array` is the public type of every concrete array.

    **Behaviour.** `isinstance(x, jax.Array)` is also True for tracers inside `jit`, where
    `ArrayImpl` was not; add `and not isinstance(x, jax.core.Tracer)` if the check meant a
    concrete array.

    **Not rewritten.** `type(x) is ArrayImpl`, calls and subclassing are reported.
    """

    lifecycle = Lifecycle(
        needs="0.4.1",
        deprecated=("0.4.36", "jax.lib.xla_extension and xla_client APIs deprecated"),
        removed=("0.6.0", "ArrayImpl removed from jax.lib.xla_extension and xla_client"),
    )
    references = (refs.api("jax.Array"),)
    label = "ArrayImpl"
    names = frozenset(
        {
            "jax.lib.xla_extension.ArrayImpl",
            "jax.lib.xla_client.ArrayImpl",
            "jaxlib.xla_extension.ArrayImpl",
            "jaxlib.xla_client.ArrayImpl",
        }
    )
    examples = (
        Example(
            title="isinstance through jax.lib",
            before="""
            from jax.lib import xla_extension

            def concrete(x):
                return isinstance(x, xla_extension.ArrayImpl)
            """,
            after="""
            import jax

            def concrete(x):
                return isinstance(x, jax.Array)
            """,
        ),
    )
