"""JAX918 jax-array-test: ``hasattr(x, "__jax_array__")`` ->
``getattr(x, "__jax_array__", None) is not None``.

``__jax_array__`` is the protocol an object implements to be taken as a JAX array.  Code tests
for it before calling it (equinox 0.9.2's ``nn/conv.py`` and ``filters.py``)::

    if hasattr(weight, "__jax_array__"):
        weight = weight.__jax_array__()

From JAX 0.10.1 every tracer has a ``__jax_array__`` property (read in the 0.10.0 and 0.10.1
sources of ``jax/_src/core.py``): it delegates to the aval's, and is None where the aval has
none, as for every array's.  So under ``jit``, ``grad`` or ``vmap`` the test is True for
every traced value and the call raises ``TypeError: 'NoneType' object is not callable``; JAX's
own checks read ``getattr(x, "__jax_array__", None) is not None``.  That test answers as
``hasattr`` did on every older release, where no value JAX makes had the attribute.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from jaxmigrate.migrator import lazycst as cst, references as refs
from jaxmigrate.migrator.astfacts import Facts
from jaxmigrate.migrator.context import Context
from jaxmigrate.migrator.rule import Example, Lifecycle, Rule, Safety
from jaxmigrate.migrator.version import parse_version
from jaxmigrate.rules._helpers import attribute_test
from jaxmigrate.rules._module_facts import module_facts

if TYPE_CHECKING:  # pragma: no cover
    from jaxmigrate.migrator.source import SourceRange

PROTOCOL = "__jax_array__"
TRACERS_HAVE_IT = parse_version("0.10.1")
# Where the comparison the rewrite makes needs no parentheses: a test, a boolean operand, a
# value assigned, returned or passed (LibCST's node types: read when a file is rewritten).
_BARE = (
    "If", "While", "IfExp", "BooleanOperation", "Assign", "AnnAssign", "Return", "Arg",
    "Assert", "Expr", "CompIf", "Lambda",
)  # fmt: skip


class JaxArrayTest(Rule, code="JAX918", safety=Safety.SAFE):
    """hasattr(x, "__jax_array__") -> getattr(x, "__jax_array__", None) is not None

    **What it does.** In code written for a JAX before 0.10.1 (its requirement, or the names
    it uses, say so; not a requirement open above from the jax.Array releases, such as
    `jax>=0.4.38`) that imports JAX, rewrites the builtin
    `hasattr(x, "__jax_array__")` to `getattr(x, "__jax_array__", None) is not None`
    (`not hasattr(...)` to `... is None`), where the target range reaches JAX 0.10.1.

    **Why.** From 0.10.1 every tracer has a `__jax_array__` property, None unless its aval
    has one, so under `jit`, `grad` or `vmap` `hasattr` is True for every traced value and
    the `x.__jax_array__()` it guards raises `TypeError: 'NoneType' object is not callable`.
    The `getattr` test is JAX's own, and answers as `hasattr` did on every older release.

    **Use instead.** `getattr(x, "__jax_array__", None) is not None`.
    """

    lifecycle = Lifecycle(removed=("0.10.1", "tracers have __jax_array__"))
    references = (
        refs.source_at("0.10.0", "jax/_src/core.py", "Tracer without __jax_array__"),
        refs.source_at("0.10.1", "jax/_src/core.py", "Tracer.__jax_array__ property"),
    )
    strings = frozenset({PROTOCOL})
    examples = (
        Example(
            title="an array-like layer weight (equinox 0.9.2's conv.py)",
            before="""
            import jax.numpy as jnp


            def as_array(weight):
                if hasattr(weight, "__jax_array__"):
                    return weight.__jax_array__()
                return jnp.asarray(weight)
            """,
            after="""
            import jax.numpy as jnp


            def as_array(weight):
                if getattr(weight, "__jax_array__", None) is not None:
                    return weight.__jax_array__()
                return jnp.asarray(weight)
            """,
            source_version="0.4.13",
        ),
    )

    def ast_gate(self, facts: Facts) -> bool:
        """A call ``hasattr(x, "__jax_array__")`` (JAX's own ``getattr`` test passes none)."""
        return any(
            type(call.func) is ast.Name
            and call.func.id == "hasattr"
            and len(call.args) == 2
            and not call.keywords
            and type(call.args[1]) is ast.Constant
            and call.args[1].value == PROTOCOL
            for call in facts.calls
        )

    def visit_module(self, ctx: Context) -> None:
        # (the tests are the sites of a feature test: the engine calls no hook on them)
        if not ctx.reaches(TRACERS_HAVE_IT):
            return
        for site in ctx.analysis.string_sites:
            node = site.node
            if isinstance(node, cst.SimpleString) and node.evaluated_value == PROTOCOL:
                self._test(node, ctx)

    def runs_for(self, source: "SourceRange") -> bool:
        """Not for a requirement of the jax.Array releases open above (equinox 0.13.8's
        ``jax>=0.4.38`` still tests ``hasattr``): it says little of when the code was written,
        and such code is left as its authors keep it."""
        if source.lower is not None and source.upper is None:
            return False
        return source.written_before(TRACERS_HAVE_IT) is not False

    def _test(self, node: cst.SimpleString, ctx: Context) -> None:
        call = attribute_test(node, ctx)
        if call is None or ctx.code(call.func) != "hasattr":
            return
        if ctx.written_before(TRACERS_HAVE_IT)[0] is not True:
            return  # (code written for 0.10.1 or later, or nothing says: its own test)
        if not module_facts(ctx).imports_jax:
            return  # (the protocol of a module that hands no value to JAX)
        if ctx.scope_of(call).lookup("getattr") is not None:
            return  # (getattr is not the builtin here)
        got = cst.Call(
            func=cst.Name("getattr"),
            args=[
                call.args[0],
                call.args[1].with_changes(
                    comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
                ),
                cst.Arg(cst.Name("None")),
            ],
        )
        parent = ctx.parent(call)
        negated = (
            isinstance(parent, cst.UnaryOperation)
            and isinstance(parent.operator, cst.Not)
            and not parent.lpar
        )
        target: cst.BaseExpression = parent if negated else call  # type: ignore[assignment]
        test = cst.Comparison(
            left=got,
            comparisons=[
                cst.ComparisonTarget(
                    cst.Is() if negated else cst.IsNot(), comparator=cst.Name("None")
                )
            ],
        )
        holder = ctx.parent(target)
        if type(holder).__name__ not in _BARE and not target.lpar:
            test = test.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        elif target.lpar:
            test = test.with_changes(lpar=target.lpar, rpar=target.rpar)
        ctx.replace(
            target,
            test,
            f'hasattr(x, "{PROTOCOL}") -> getattr(...) is not None: '
            "tracers have it from JAX 0.10.1",
        )
