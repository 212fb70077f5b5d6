"""JAX405 block-host-until-ready: ``x.block_host_until_ready()`` -> ``x.block_until_ready()``.

Safe.  jaxlib 0.3.2's release notes deprecate ``block_host_until_ready``, jaxlib 0.4.1 removes
it; ``block_until_ready`` exists on every JAX array type.  Receivers are checked with
``rules._receivers``.
"""

from __future__ import annotations

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.migrator.context import Context
from jaxmigrate.migrator.rule import Example, Lifecycle, Rule, Safety
from jaxmigrate.rules._verdict import (
    REPORT,
    decide,
    receiver_of_method,
    replace_by_verdict,
)


class BlockHostUntilReady(Rule, code="JAX405", safety=Safety.SAFE):
    """x.block_host_until_ready() -> x.block_until_ready()

    **What it does.** Renames the buffer method `block_host_until_ready()` to
    `block_until_ready()` on receivers tied to a JAX array (the result of a `jax`/`jnp` call
    or of a jitted function, a name assigned only such values, a parameter annotated
    `jax.Array`).  In a module that imports JAX (and no other array library) other receivers
    are renamed only with `--unsafe-fixes`, otherwise reported.

    **Why.** The method was deprecated in jaxlib 0.3.2 and removed in jaxlib 0.4.1.
    `block_until_ready()` does the same (waits for the computation, returns the array) on
    every JAX version.

    **Use instead.** `x.block_until_ready()`, or `jax.block_until_ready(tree)` for pytrees
    (JAX 0.4.3+).
    """

    lifecycle = Lifecycle(
        deprecated=("0.3.2", "block_host_until_ready deprecated", "jaxlib"),
        removed=("0.4.1", "block_host_until_ready removed", "jaxlib"),
    )
    attributes = frozenset({"block_host_until_ready"})
    examples = (
        Example(
            title="wait for a jitted result",
            before="""
            import jax

            y = jax.jit(lambda v: v * 2)(3.0)
            y.block_host_until_ready()
            """,
            after="""
            import jax

            y = jax.jit(lambda v: v * 2)(3.0)
            y.block_until_ready()
            """,
        ),
    )

    def visit_attribute(self, node: cst.Attribute, ctx: Context) -> None:
        call = receiver_of_method(ctx, node)
        if call is None:
            return
        verdict, _tie = decide(ctx, node, specific=True)
        new = node.with_changes(attr=cst.Name("block_until_ready"))
        message = "block_host_until_ready() -> block_until_ready()"
        replace_by_verdict(ctx, verdict, node, new, message)
        if verdict == REPORT:
            ctx.report(
                node,
                "block_host_until_ready() was removed in jaxlib 0.4.1; "
                "on a JAX array use block_until_ready()",
            )
