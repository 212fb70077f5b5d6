"""A module's facts with every binding of a name merged across its scopes: what gate 2 reads
for JAX402's receivers before it builds the scopes (:func:`rules._receiver_gate.ast_cannot_tie`).
"""

from __future__ import annotations

import ast
import dataclasses
from typing import Dict, List, Optional

from jaxmigrate.migrator.astfacts import AstScope, Facts
from jaxmigrate.migrator.binding import Binding


class LooseFacts(Facts):
    """A module's facts with the bindings of each name merged across its scopes, from the
    binding nodes the facts' own walk kept (:attr:`Facts.binders`): ``=``, ``x: T`` and
    ``:=`` give values (``value``), a ``def`` or ``class`` a definition (``def``), and every
    parameter, ``*args`` and ``**kwargs`` included, a ``param`` with its annotation.  Other
    bindings (imports, loop and ``with`` targets) are left out: the receiver gate never reads
    them but to learn a name has no binding besides them."""

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

    def inner_scope(self, function: ast.AST) -> Optional[AstScope]:
        return None  # (no scopes: building them is the walk these facts spare)
