"""The receiver question asked of CPython's ``ast`` for the engine's gate 2: could this
expression be a JAX array at all?  Cheaper and coarser than :mod:`rules._receivers` (it may
say yes where the LibCST analysis then says no, never the reverse), so that files with no
possible receiver are never parsed by LibCST.
"""

from __future__ import annotations

import ast
import dataclasses
from typing import Dict, FrozenSet, List, Optional

from jaxmigrate.migrator.astfacts import AstScope, Facts, dotted, iter_statements
from jaxmigrate.migrator.binding import Binding
from jaxmigrate.rules._array_names import (
    ARRAY_PROPERTIES,
    ARRAY_TYPES,
    GDA_CLASS_NAMES,
    GDA_CONSTRUCTORS,
    GDA_MODULES,
    JIT_WRAPPERS,
    MAYBE_ARRAY_PREFIXES,
    NOT_ARRAY_METHODS,
    NOT_ARRAY_PREFIXES,
    PARTIALS,
    is_jax_name,
    under,
)
from jaxmigrate.rules._receivers import array_producer_name

# -- the same question asked of CPython's ast, for the engine's gate 2 ----------------------------
ARRAY_TYPE_TAILS = frozenset(name.rsplit(".", 1)[-1] for name in ARRAY_TYPES | GDA_CLASS_NAMES)
_SHARD_LISTS = ("addressable_shards", "global_shards", "local_shards")


def ast_may_tie(
    facts: Facts, expr: ast.AST, scope: Optional[AstScope], seen: FrozenSet[str] = frozenset()
) -> bool:
    """Could :func:`receiver_tie` find ``expr`` (read in ``scope``) tied?  An
    over-approximation on ``ast`` facts (*some* binding of a name instead of every one, any
    resolution of an import): False only when no reading of the module ties it.  Call
    ``facts.scopes()`` first and answer True yourself when it is None."""
    if type(expr) is ast.Call:
        func = expr.func
        qualnames = facts.qualnames(func)
        for qualname in qualnames:
            if qualname in GDA_CONSTRUCTORS:
                return True
            if (
                is_jax_name(qualname)
                and not under(qualname, MAYBE_ARRAY_PREFIXES)
                and not under(qualname, NOT_ARRAY_PREFIXES)
                and array_producer_name(qualname)
            ):
                return True
        if qualnames:
            head = dotted(func)[0]  # type: ignore[index]
            if not any(b.kind != "other" for b in facts.bindings(head, scope)):
                return False  # only an import: receiver_tie stops at its qualified name
        if type(func) is ast.Attribute and func.attr not in NOT_ARRAY_METHODS:
            return ast_may_tie(facts, func.value, scope, seen)
        if type(func) is ast.Call:  # jax.jit(f)(x)
            return _ast_wrapper(facts, func)
        if type(func) is ast.Name:  # a jitted function of this module
            for binding in facts.bindings(func.id, scope):
                if binding.kind == "def" and any(
                    _ast_wrapper(facts, d) for d in getattr(binding.value, "decorator_list", ())
                ):
                    return True
                if (
                    binding.kind == "value"
                    and binding.value is not None
                    and _ast_wrapper(facts, binding.value)
                ):
                    return True
        return False
    if type(expr) is ast.Subscript:
        return ast_may_tie(facts, expr.value, scope, seen)
    if type(expr) is ast.Name:
        ident = expr.id
        if ident in seen:
            return False  # a tie through a cycle also exists without it
        seen = seen | {ident}
        for binding in facts.bindings(ident, scope):
            if binding.annotation is not None and _ast_annotation_may_tie(binding.annotation):
                return True
            if (
                binding.kind == "value"
                and binding.value is not None
                and ast_may_tie(facts, binding.value, binding.scope, seen)
            ):
                return True
        return False
    if type(expr) is ast.NamedExpr:
        return ast_may_tie(facts, expr.value, scope, seen)
    if type(expr) is ast.BinOp:
        return ast_may_tie(facts, expr.left, scope, seen) or ast_may_tie(
            facts, expr.right, scope, seen
        )
    if type(expr) is ast.UnaryOp:
        return ast_may_tie(facts, expr.operand, scope, seen)
    if type(expr) is ast.Attribute:
        inner = expr.value
        if expr.attr in ARRAY_PROPERTIES:
            return ast_may_tie(facts, inner, scope, seen)
        if type(inner) is ast.Name and _ast_attribute_may_tie(facts, expr.attr, seen):
            return True  # self.table, assigned an array in a method (see _flow.attribute_tie)
        if (
            expr.attr == "data"
            and type(inner) is ast.Subscript
            and type(inner.value) is ast.Attribute
            and inner.value.attr in _SHARD_LISTS
        ):
            return ast_may_tie(facts, inner.value.value, scope, seen)
    return False


def ast_cannot_tie(loose: "LooseFacts", expr: ast.AST) -> bool:
    """True where :func:`ast_may_tie` is False in every scope, read without building the
    scopes (a walk of the whole tree, most of gate 2's cost for a module full of
    ``sharding.mesh`` reads): :func:`ast_may_tie` asked of :class:`LooseFacts`, which answer
    every binding of a name anywhere in the module where the scopes answer those seen from
    one scope.  Every check it makes on bindings only says "may tie" more often with more of
    them, so a False there is False in every scope."""
    return not ast_may_tie(loose, expr, None)


class LooseFacts(Facts):
    """A module's facts with the bindings of each name merged across its scopes, from the
    binding nodes the facts' own walk kept (:attr:`Facts.binders`): ``=``, ``x: T`` and
    ``:=`` give values (``value``), a ``def`` or ``class`` a definition (``def``), and every
    parameter, ``*args`` and ``**kwargs`` included, a ``param`` with its annotation.  Other
    bindings (imports, loop and ``with`` targets) are left out: :func:`ast_may_tie` never
    reads them but to learn a name has no binding besides them."""

    _merged: Dict[str, List[Binding]]

    @classmethod
    def of(cls, facts: Facts) -> "LooseFacts":
        loose = cls(**{f.name: getattr(facts, f.name) for f in dataclasses.fields(facts)})
        merged: Dict[str, List[Binding]] = {}
        for node in facts.binders:
            kind = type(node)
            if kind is ast.arg:
                found = [(node.arg, Binding(kind="param", annotation=node.annotation))]  # type: ignore[attr-defined]
            elif kind is ast.Assign:
                value = node.value  # type: ignore[attr-defined]
                found = [
                    (t.id, Binding(kind="value", value=value))
                    for t in node.targets  # type: ignore[attr-defined]
                    if type(t) is ast.Name
                ]
            elif kind is ast.AnnAssign or kind is ast.NamedExpr:
                target = node.target  # type: ignore[attr-defined]
                annotation = getattr(node, "annotation", None)
                binding = Binding(kind="value", value=node.value, annotation=annotation)  # type: ignore[attr-defined]
                found = [(target.id, binding)] if type(target) is ast.Name else []
            else:  # a def or a class
                found = [(node.name, Binding(kind="def", value=node))]  # type: ignore[attr-defined]
            for name, binding in found:
                merged.setdefault(name, []).append(binding)
        loose._merged = merged
        return loose

    def bindings(self, ident: str, scope: Optional[AstScope] = None) -> List[Binding]:
        return self._merged.get(ident, [])

    def scope_of(self, node: ast.AST) -> Optional[AstScope]:
        return None


def _attribute_stores(facts: Facts) -> Dict[str, List[ast.AST]]:
    """attr -> the value of each ``<name>.attr = value`` statement of the module."""
    stores = facts.derived.get("receivers: attribute stores")
    if stores is None:
        stores = facts.derived["receivers: attribute stores"] = {}
        for node in iter_statements(facts.tree) if facts.tree is not None else ():
            if type(node) is ast.Assign:
                targets, value = node.targets, node.value
            elif type(node) is ast.AnnAssign and node.value is not None:
                targets, value = [node.target], node.value
            else:
                continue
            for target in targets:
                if type(target) is ast.Attribute and type(target.value) is ast.Name:
                    stores.setdefault(target.attr, []).append(value)
    return stores


def _ast_attribute_may_tie(facts: Facts, attr: str, seen: FrozenSet[str]) -> bool:
    """Some ``<name>.attr = value`` in the module whose value may tie."""
    key = "." + attr
    if key in seen:
        return False
    stores = _attribute_stores(facts)
    return any(
        ast_may_tie(facts, value, facts.scope_of(value), seen | {key})
        for value in stores.get(attr, ())
    )


def _ast_wrapper(facts: Facts, expr: ast.AST) -> bool:
    """``jax.jit``, ``jax.jit(...)``, ``partial(jax.jit, ...)`` (as :func:`wrapper_of`)."""
    if facts.qualnames(expr) & JIT_WRAPPERS:
        return True
    if type(expr) is ast.Call:
        func_names = facts.qualnames(expr.func)
        if func_names & JIT_WRAPPERS:
            return True
        if func_names & PARTIALS and expr.args:
            return bool(facts.qualnames(expr.args[0]) & JIT_WRAPPERS)
    return False


def _ast_annotation_may_tie(annotation: ast.AST) -> bool:
    if type(annotation) is ast.Constant and isinstance(annotation.value, str):
        try:
            annotation = ast.parse(annotation.value.strip(), mode="eval").body
        except (SyntaxError, ValueError):
            return False
    parts = dotted(annotation)
    return bool(parts) and parts[-1] in ARRAY_TYPE_TAILS  # type: ignore[index]


def ast_imports_gda(facts: Facts) -> bool:
    return any(under(name, GDA_MODULES) for name in facts.imports)


def ast_called_without_arguments(facts: Facts, attr: str) -> bool:
    """Does ``<expr>.attr()`` (no arguments at all) occur?"""
    return any(
        type(call.func) is ast.Attribute
        and call.func.attr == attr
        and not call.args
        and not call.keywords
        for call in facts.calls
    )


def ast_called(facts: Facts, attr: str) -> bool:
    """Does ``<expr>.attr(...)`` occur?"""
    return any(type(call.func) is ast.Attribute and call.func.attr == attr for call in facts.calls)
