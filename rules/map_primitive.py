"""JAX908 map-primitive: ``p.map_primitive`` -> ``getattr(p, "map_primitive", False)``.

Safe.  Every JAX primitive class had a ``map_primitive`` attribute (True on the map primitives
``pmap`` was built on, ``xla_pmap_p``; False elsewhere) until jax 0.10.0, whose sources have
neither the attribute nor a map primitive.  Code that walks a jaxpr (distrax's
``transformations.py``: ``primitive.call_primitive or primitive.map_primitive``) reads it on
a primitive it cannot name, so no name check sees it, and it raises ``AttributeError`` for
every equation on today's JAX.  ``getattr(p, "map_primitive", False)`` reads the attribute
where it exists and says False where no primitive is a map primitive: the same answer on
every release.
"""

from __future__ import annotations

from jaxmigrate.migrator import lazycst as cst, references as refs
from jaxmigrate.migrator.context import Context
from jaxmigrate.migrator.rule import Example, Lifecycle, Rule, Safety
from jaxmigrate.rules._helpers import is_store
from jaxmigrate.rules._module_facts import module_facts

ATTRIBUTE = "map_primitive"
GONE = "0.10.0"


class MapPrimitive(Rule, code="JAX908", safety=Safety.SAFE):
    """p.map_primitive (gone in 0.10.0) -> getattr(p, "map_primitive", False)

    **What it does.** In a module that imports JAX, rewrites each read of an attribute
    `map_primitive` to `getattr(p, "map_primitive", False)`.  An assignment to it (a custom
    primitive class declaring `map_primitive = False`, `p.map_primitive = True`) is left
    alone; where `getattr` is not Python's builtin in that scope, the read is reported.

    **Why.** JAX's primitive classes carried `map_primitive` until jax 0.10.0, whose
    sources no longer have it, nor any map primitive (pmap's `xla_pmap_p` went with it).
    Code that interprets jaxprs reads it on whatever primitive an equation has, a value no
    name check can see, and fails with `AttributeError` on every equation.  The `getattr`
    reads the real attribute on every JAX that has it and gives False, the answer for every
    primitive, on those that do not.

    **Use instead.** `getattr(p, "map_primitive", False)`, or drop the test where the
    oldest JAX you support is 0.10.0.
    """

    lifecycle = Lifecycle(removed=GONE)
    references = (
        refs.source_at("0.9.2", "jax/_src/core.py", "Primitive.map_primitive"),
        refs.source_at(GONE, "jax/_src/core.py", "Primitive without map_primitive"),
    )
    attributes = frozenset({ATTRIBUTE})
    examples = (
        Example(
            title="an interpreter of jaxprs (distrax's transformations.py)",
            before="""
            import jax


            def _extract_call_jaxpr(primitive, params):
                if not (primitive.call_primitive or primitive.map_primitive):
                    return None, params
                params = dict(params)
                return params.pop("call_jaxpr"), params
            """,
            after="""
            import jax


            def _extract_call_jaxpr(primitive, params):
                if not (primitive.call_primitive or getattr(primitive, "map_primitive", False)):
                    return None, params
                params = dict(params)
                return params.pop("call_jaxpr"), params
            """,
        ),
    )

    def visit_attribute(self, node: cst.Attribute, ctx: Context) -> None:
        if node.attr.value != ATTRIBUTE or is_store(ctx, node):
            return
        if not module_facts(ctx).imports_jax:
            return  # another library's attribute of the same name
        scope = ctx.scope_of(node)
        if scope.lookup("getattr") is not None:
            ctx.report(
                node,
                f"{ATTRIBUTE} is gone from JAX {GONE}; use the builtin "
                f'getattr(p, "{ATTRIBUTE}", False)',
            )
            return
        new = cst.Call(
            func=cst.Name("getattr"),
            args=[
                cst.Arg(node.value.with_changes(lpar=[], rpar=[])),
                cst.Arg(cst.SimpleString(f'"{ATTRIBUTE}"')),
                cst.Arg(cst.Name("False")),
            ],
            lpar=node.lpar,
            rpar=node.rpar,
        )
        message = f'p.{ATTRIBUTE} -> getattr(p, "{ATTRIBUTE}", False): gone in JAX {GONE}'
        ctx.replace(node, new, message)
