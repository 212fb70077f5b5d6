"""JAX406 to-py: ``x.to_py()`` -> ``np.asarray(x)``.

Safe.  jax 0.3.17's release notes deprecate ``to_py`` and say to use ``np.asarray(x)``;
``jax.Array`` (the default from 0.4.1) never had the method.  Receivers are checked with
``rules._receivers``.
"""

from __future__ import annotations

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.migrator.context import Context
from jaxmigrate.migrator.rule import Example, Lifecycle, Rule, Safety
from jaxmigrate.rules._verdict import (
    FILE,
    FIX,
    REPORT,
    decide,
    receiver_of_method,
    replace_by_verdict,
    strip_parens,
)


class ToPy(Rule, code="JAX406", safety=Safety.SAFE):
    """x.to_py() -> np.asarray(x)

    **What it does.** Replaces `x.to_py()` with `np.asarray(x)` (reusing the module's NumPy
    import, or adding `import numpy`) on receivers tied to a JAX array (the result of a
    `jax`/`jnp` call or of a jitted function, a name assigned only such values, a parameter
    annotated `jax.Array`).  In a module that imports JAX (and no other array library) other
    receivers are rewritten only with `--unsafe-fixes`, otherwise reported.

    **Why.** `DeviceArray.to_py()` was deprecated in JAX 0.3.17 and `jax.Array` (the only
    array type since 0.4.1) never had it: the call raises AttributeError.

    **Use instead.** `np.asarray(x)` (a host copy; `jax.device_get(x)` for pytrees).
    """

    lifecycle = Lifecycle(
        deprecated=("0.3.17", "to_py deprecated; use np.asarray"),
        removed=("0.4.1", "jax.Array, which has no to_py, is the default"),
    )
    attributes = frozenset({"to_py"})
    examples = (
        Example(
            title="host copy of a result",
            before="""
            import numpy as np
            import jax.numpy as jnp

            host = jnp.arange(4).to_py()
            """,
            after="""
            import numpy as np
            import jax.numpy as jnp

            host = np.asarray(jnp.arange(4))
            """,
        ),
    )

    def visit_attribute(self, node: cst.Attribute, ctx: Context) -> None:
        call = receiver_of_method(ctx, node)
        if call is None or call.args:
            return
        verdict, _tie = decide(ctx, node, specific=True)
        if verdict == REPORT:
            ctx.report(call, "to_py() does not exist on jax.Array (JAX 0.4.1+); use np.asarray(x)")
            return
        if verdict not in (FIX, FILE):
            return  # SKIP
        asarray = ctx.ref("numpy.asarray", ctx.scope_of(call))
        new = cst.Call(func=asarray, args=[cst.Arg(strip_parens(node.value))])
        new = new.with_changes(lpar=call.lpar, rpar=call.rpar)
        message = f"{ctx.code(call)} -> {cst.Module([]).code_for_node(new)}"
        replace_by_verdict(ctx, verdict, call, new, message)
