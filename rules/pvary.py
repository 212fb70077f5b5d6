"""JAX602 pvary: ``jax.lax.pvary(x, axis)`` -> ``jax.lax.pcast(x, axis, to='varying')``.

``pcast`` added in jax 0.8.2, ``pvary`` deprecated in 0.8.2 and removed in 0.10.0 (release
notes); on jax 0.10.2 ``jax.lax.pvary`` raises AttributeError.
"""

from __future__ import annotations

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.migrator.context import Context, NameSite
from jaxmigrate.migrator.rule import Example, Lifecycle, Rule, Safety
from jaxmigrate.rules._api_history import added_in
from jaxmigrate.rules._helpers import called_or_report
from jaxmigrate.rules._mesh import append_arg, keyword_arg

LEGACY = "jax.lax.pvary"
MODERN = "jax.lax.pcast"


class Pvary(Rule, code="JAX602", safety=Safety.SAFE):
    """jax.lax.pvary(x, axis) -> jax.lax.pcast(x, axis, to='varying')

    **What it does.** Rewrites `jax.lax.pvary(x, axis_name)` to
    `jax.lax.pcast(x, axis_name, to='varying')`.

    **Why.** `pvary` (0.6.0) was deprecated in JAX 0.8.2 and removed in 0.10.0; `pcast` with
    `to='varying'` is the same operation and exists from 0.8.2.  Below 0.8.2 the rule does not
    run (`pvary` is the only spelling there).

    **Use instead.** `jax.lax.pcast(x, axis_name, to='varying')`.
    """

    whole_module = False  # hooks read their sites and the names those resolve to

    lifecycle = Lifecycle(
        needs=added_in("jax.lax.pcast"),
        deprecated=("0.8.2", "jax.lax.pvary deprecated; use jax.lax.pcast(..., to='varying')"),
        removed=("0.10.0", "jax.lax.pvary removed"),
    )
    names = frozenset({LEGACY})
    examples = (
        Example(
            before="""
            import jax

            def body(x):
                init = jax.lax.pvary(jnp.zeros(2), 'x')
                return init + x
            """,
            after="""
            import jax

            def body(x):
                init = jax.lax.pcast(jnp.zeros(2), 'x', to='varying')
                return init + x
            """,
        ),
    )

    def visit_name(self, site: NameSite, ctx: Context) -> None:
        recipe = "lambda x, axis: jax.lax.pcast(x, axis, to='varying')"
        call = called_or_report(site, ctx, f"pvary used as a value: use {recipe}")
        if call is None:
            return
        if any(arg.star for arg in call.args) or any(
            arg.keyword is not None and arg.keyword.value == "to" for arg in call.args
        ):
            ctx.report(call, "pvary with *args/**kwargs: use jax.lax.pcast(x, axis, to='varying')")
            return
        to = keyword_arg("to", cst.SimpleString("'varying'"))
        new_call = call.with_changes(
            func=ctx.ref(MODERN, site.scope), args=append_arg(call.args, to)
        )
        ctx.replace(call, new_call, f"{LEGACY} -> {MODERN}(..., to='varying')")
