"""JAX910 removed-constants: removed JAX constants replaced by their values.

Safe.  Each constant was a plain value in every release that had it, and the replacement is
that value:

* ``jax.numpy.NINF`` -> ``-jax.numpy.inf``, ``jax.numpy.NZERO`` -> ``-0.0``,
  ``jax.numpy.PZERO`` -> ``0.0``: NumPy's aliases, ``-inf``, ``-0.0`` and ``0.0``
  (``jax/_src/numpy/lax_numpy.py`` took them from NumPy); gone from jax.numpy in 0.4.24, as
  NumPy 2.0 dropped them (the API history; JAX's changelog for 0.4.24).
* ``jax.interpreters.batching.not_mapped`` -> ``None``: ``not_mapped = None`` in the sources of
  every release that had it (0.2.x to 0.10.1; observed ``None`` on jax 0.4.13), gone in 0.10.2.
  Custom batching rules compare axes with it (``d is not batching.not_mapped``).
"""

from __future__ import annotations

from typing import Dict, Optional, Tuple

from jaxmigrate.migrator import lazycst as cst, references as refs
from jaxmigrate.migrator.context import Context, NameSite
from jaxmigrate.migrator.rule import Example, Lifecycle, Rule, Safety
from jaxmigrate.rules._api_history import HISTORY_SOURCES
from jaxmigrate.rules._helpers import is_store

INF = "jax.numpy.inf"
# legacy name -> (its value's source, where ``{inf}`` is spelled jax.numpy.inf in the module)
VALUES: Dict[str, Tuple[str, str]] = {
    "jax.numpy.NINF": ("-{inf}", "-inf"),
    "jax.numpy.NZERO": ("-0.0", "-0.0"),
    "jax.numpy.PZERO": ("0.0", "0.0"),
    "jax.interpreters.batching.not_mapped": ("None", "None"),
}


class RemovedConstants(Rule, code="JAX910", safety=Safety.SAFE):
    """jnp.NINF -> -jnp.inf, jnp.NZERO / PZERO -> -0.0 / 0.0, batching.not_mapped -> None

    **What it does.** Replaces constants JAX removed by the values they always had:
    `jax.numpy.NINF` becomes `-jnp.inf` (spelled through the module's own import of
    `jax.numpy`), `jax.numpy.NZERO` and `jax.numpy.PZERO` become `-0.0` and `0.0`, and
    `jax.interpreters.batching.not_mapped` becomes `None` (and a conditional that then gives
    a name whatever it holds, `None if b is batching.not_mapped else b`, becomes `b`).  An
    import of the name itself
    (`from jax.numpy import NINF`), or of the module it came from, goes once nothing reads it.

    **Why.** `NINF`, `NZERO` and `PZERO` left jax.numpy in 0.4.24, as NumPy 2.0 dropped them;
    `batching.not_mapped` left in 0.10.2.  Each was the same plain value in every release that
    had it (`-inf`, `-0.0`, `0.0`, `None`), so its value keeps the code's meaning exactly, on
    old JAX and new.

    **Use instead.** `-jnp.inf`, `-0.0`, `0.0`, `None`.
    """

    whole_module = False  # hooks read their sites and the names those resolve to

    lifecycle = Lifecycle(removed=("0.4.24", "jax.numpy.NINF, NZERO and PZERO removed"))
    references = HISTORY_SOURCES + (refs.api(INF),)
    names = frozenset(VALUES)
    examples = (
        Example(
            title="a custom batching rule (equinox 0.9)",
            before="""
            from jax.interpreters import batching

            def rule(args, dims):
                return [d is not batching.not_mapped for d in dims]
            """,
            after="""
            def rule(args, dims):
                return [d is not None for d in dims]
            """,
        ),
        Example(
            title="NumPy's aliases",
            before="""
            import jax.numpy as jnp

            floor = jnp.NINF
            """,
            after="""
            import jax.numpy as jnp

            floor = -jnp.inf
            """,
        ),
    )

    def visit_name(self, site: NameSite, ctx: Context) -> None:
        entry = VALUES.get(site.qualname)
        if entry is None or site.is_import or is_store(ctx, site.node, binding_forms=True):
            return
        source, shown = entry
        kept = _kept_by_test(site, ctx) if source == "None" else None
        if kept is not None:  # ``None if b is batching.not_mapped else b``: just ``b``
            expression, name = kept
            said = f"{'.'.join(site.qualname.split('.')[-2:])} -> None, and the conditional"
            ctx.replace(expression, ctx.copy(name), f"{said} then gives {name.value} itself")
            return
        new: cst.BaseExpression
        if source == "-{inf}":
            new = cst.UnaryOperation(cst.Minus(), ctx.ref(INF, site.scope))
        else:
            new = cst.parse_expression(source)
        if source.startswith("-") and _tight(site, new):
            new = new.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        short = ".".join(site.qualname.split(".")[-2:])
        ctx.replace(site.node, new, f"{short} -> {shown}: the value it always had")


def _tight(site: NameSite, new: "cst.BaseExpression") -> bool:
    """Would ``new``'s leading minus bind looser than the place ``site`` is in
    (``jnp.NINF ** 2``, ``jnp.NINF.real``)?"""
    parent = site.parent
    if isinstance(parent, (cst.Attribute, cst.Subscript, cst.Call, cst.UnaryOperation, cst.Await)):
        return not isinstance(parent, cst.Call) or parent.func is site.node
    if isinstance(parent, cst.BinaryOperation):
        return isinstance(parent.operator, cst.Power) and parent.left is site.node
    return False


def _kept_by_test(site: NameSite, ctx: Context) -> Optional[Tuple["cst.IfExp", "cst.Name"]]:
    """Where ``None`` in the place of ``site`` makes a conditional expression give a name
    whatever it holds (``None if b is NM else b``, ``NM if b is None else b``, ``b if b is
    not NM else None``): the expression and the name."""
    node = site.node
    parent = ctx.parent(node)
    in_test = isinstance(parent, cst.ComparisonTarget)
    comparison = ctx.parent(parent) if in_test else None
    expression = ctx.parent(comparison) if in_test else parent
    if not isinstance(expression, cst.IfExp) or expression.lpar or "#" in ctx.code(expression):
        return None
    test = expression.test
    if (
        not isinstance(test, cst.Comparison)
        or len(test.comparisons) != 1
        or not isinstance(test.left, cst.Name)
        or test.left.lpar
        or (in_test and test is not comparison)
    ):
        return None
    target = test.comparisons[0]
    if not (target.comparator is node if in_test else _none(target.comparator)):
        return None
    if isinstance(target.operator, cst.Is):
        kept, gone = expression.orelse, expression.body
    elif isinstance(target.operator, cst.IsNot):
        kept, gone = expression.body, expression.orelse
    else:
        return None
    name = test.left
    same = isinstance(kept, cst.Name) and kept.value == name.value and not kept.lpar
    if same and (_none(gone) if in_test else gone is node):
        return expression, name
    return None


def _none(node: "cst.BaseExpression") -> bool:
    return isinstance(node, cst.Name) and node.value == "None" and not node.lpar
