"""A pjit sharding tree as ``jax.jit`` shardings, for JAX202 (:mod:`rules.pjit_to_jit`).

pjit resolved a bare ``PartitionSpec`` and ``None`` against the ``with mesh:`` around its
calls (``None`` meant replicated); ``jax.jit`` does not (``None`` means unspecified).
:class:`Converter` rewrites the leaves of an ``in_shardings``/``out_shardings`` tree: each
spec becomes ``NamedSharding(mesh, spec)``, each ``None`` ``NamedSharding(mesh, P())``, a
``Sharding`` object stays, and a tree held in a variable goes through ``jax.tree.map``.  A dry
run tells the rule whether a mesh is needed before it looks for one.
"""

from __future__ import annotations

from typing import Optional

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.migrator.context import Context
from jaxmigrate.migrator.scope import Scope
from jaxmigrate.migrator.version import parse_version
from jaxmigrate.rules._flow import single_assignment
from jaxmigrate.rules._name_refs import local_name_for
from jaxmigrate.rules._pjit import NAMED_SHARDING_NAMES, PARTITION_SPEC_NAMES, qualname_of


class Converter:
    """Turns a pjit sharding tree into jit shardings; ``needs_mesh`` says if a mesh was used."""

    def __init__(
        self,
        ctx: Context,
        scope: Scope,
        mesh: Optional[cst.BaseExpression],
        dry: bool = False,
        bare: bool = False,
    ) -> None:
        self.ctx = ctx
        self.bare = bare  # keep bare specs (None leaves -> P()): the calls run under jax.set_mesh
        self.scope = scope
        self.mesh = mesh
        self.dry = dry  # only find out whether a mesh is needed: no imports planned
        self.needs_mesh = False
        self.mixed = False  # a variable tree mixing Sharding objects and specs

    def _ref(self, qualnames: frozenset, modern: str) -> cst.BaseExpression:
        if self.dry:
            return cst.Name(modern.rsplit(".", 1)[-1])
        return local_name_for(self.ctx, qualnames, modern, self.scope)

    def _mesh(self) -> cst.BaseExpression:
        self.needs_mesh = True
        if self.mesh is None:
            return cst.Name("mesh")  # dry run: only needs_mesh matters
        return self.ctx.copy(self.mesh)

    def _named(self, spec: cst.BaseExpression) -> cst.BaseExpression:
        if self.bare:
            return spec
        named = self._ref(NAMED_SHARDING_NAMES, "jax.sharding.NamedSharding")
        comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        return cst.Call(func=named, args=[cst.Arg(self._mesh(), comma=comma), cst.Arg(spec)])

    def _spec(self) -> cst.BaseExpression:
        return self._ref(PARTITION_SPEC_NAMES, "jax.sharding.PartitionSpec")

    def kind(self, expr: cst.BaseExpression, depth: int = 0) -> str:
        """ "spec", "sharding" or "unknown" for a leaf expression."""
        if isinstance(expr, cst.Call):
            qualname = qualname_of(self.ctx, expr.func, self.scope) or ""
            if qualname in PARTITION_SPEC_NAMES:
                return "spec"
            if qualname.startswith("jax.") and qualname.endswith("Sharding"):
                return "sharding"
            return "unknown"
        if isinstance(expr, cst.Name):
            if expr.value == "None":
                return "spec"
            assign = single_assignment(self.ctx, expr.value, self.scope)
            if assign is not None and depth < 3:
                inner = Converter(self.ctx, self.ctx.scope_of(assign), None, dry=True)
                kinds = inner.tree_kinds(assign.value, depth + 1)
                if kinds == {"sharding"}:
                    return "sharding"
                if "sharding" in kinds:
                    return "mixed"
                if kinds == {"spec"} and not isinstance(
                    assign.value, (cst.Tuple, cst.List, cst.Dict)
                ):
                    return "spec"
        return "unknown"

    def tree_kinds(self, expr: cst.BaseExpression, depth: int = 0) -> set:
        """The kinds of the leaves of a literal tree (following names bound once)."""
        if isinstance(expr, (cst.Tuple, cst.List)):
            elements = [e.value for e in expr.elements]
        elif isinstance(expr, cst.Dict):
            elements = [e.value for e in expr.elements if isinstance(e, cst.DictElement)]
        else:
            return {self.kind(expr, depth)}
        kinds: set = set()
        for element in elements:
            kinds |= self.tree_kinds(element, depth)
        return kinds

    def convert(self, expr: cst.BaseExpression) -> cst.BaseExpression:
        if isinstance(expr, cst.Name) and expr.value == "None":
            call = cst.Call(func=self._spec())
            return self._named(call)
        if isinstance(expr, (cst.Tuple, cst.List)):
            return expr.with_changes(
                elements=[e.with_changes(value=self.convert(e.value)) for e in expr.elements]
            )
        if isinstance(expr, cst.Dict):
            return expr.with_changes(
                elements=[
                    e.with_changes(value=self.convert(e.value))
                    if isinstance(e, cst.DictElement)
                    else e
                    for e in expr.elements
                ]
            )
        kind = self.kind(expr)
        if kind == "mixed":
            self.mixed = True
        if kind == "spec":
            return self._named(expr)
        if kind == "sharding":
            return expr
        return self._tree_map(expr)

    def _tree_map(self, expr: cst.BaseExpression) -> cst.BaseExpression:
        """``jax.tree.map(lambda s: NamedSharding(mesh, P() if s is None else s), specs,
        is_leaf=lambda s: s is None or isinstance(s, P))``."""
        if self.dry:
            tree_map: cst.BaseExpression = cst.Name("tree_map")
        elif self.ctx.target >= parse_version("0.4.25"):
            tree_map = self.ctx.ref("jax.tree.map", self.scope)
        else:
            tree_map = self.ctx.ref("jax.tree_util.tree_map", self.scope)
        s = cst.Name("s")
        is_none = cst.Comparison(
            left=s, comparisons=[cst.ComparisonTarget(cst.Is(), cst.Name("None"))]
        )
        leaf = cst.IfExp(test=is_none, body=cst.Call(func=self._spec()), orelse=cst.Name("s"))
        param = cst.Parameters(params=[cst.Param(cst.Name("s"))])
        space = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        isinstance_call = cst.Call(
            func=cst.Name("isinstance"),
            args=[cst.Arg(cst.Name("s"), comma=space), cst.Arg(self._spec())],
        )
        is_leaf = cst.Lambda(
            params=param,
            body=cst.BooleanOperation(
                left=cst.Comparison(
                    left=cst.Name("s"),
                    comparisons=[cst.ComparisonTarget(cst.Is(), cst.Name("None"))],
                ),
                operator=cst.Or(),
                right=isinstance_call,
            ),
        )
        return cst.Call(
            func=tree_map,
            args=[
                cst.Arg(cst.Lambda(params=param, body=self._named(leaf)), comma=space),
                cst.Arg(expr, comma=space),
                cst.Arg(
                    is_leaf,
                    keyword=cst.Name("is_leaf"),
                    equal=cst.AssignEqual(
                        whitespace_before=cst.SimpleWhitespace(""),
                        whitespace_after=cst.SimpleWhitespace(""),
                    ),
                ),
            ],
        )
