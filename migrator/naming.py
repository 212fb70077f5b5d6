"""How a fix names a modern name at a site, and the imports that takes: :class:`Naming`, the
part of :class:`migrator.context.Context` behind :meth:`~Naming.ref`.

A reference reuses an import of the module (or one a fix of the round planned) that reaches the
site, else plans one under a name no binding takes.  The engine adds the planned imports once
the round's edits are in (:mod:`migrator.rounds`); a fix that will not be applied gives back
those only it planned (:meth:`Naming._forget_imports_of`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, Iterable, List, Optional, Set, Tuple

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.migrator.scope import Scope, dotted_expr
from jaxmigrate.migrator.traversal import structural_children

if TYPE_CHECKING:  # pragma: no cover
    from jaxmigrate.migrator.analysis import Analysis
    from jaxmigrate.migrator.context import Edit, Replacement


class CannotReference(Exception):
    """A replacement name cannot be spelled at a site without clashing with a local name."""


class Naming:
    """References to modern names, for :class:`migrator.context.Context`, which sets what they
    read: the module, its analysis, the edits recorded, and the imports planned (qualified
    name -> (module or None, name))."""

    module: "cst.Module"
    analysis: "Analysis"
    edits: Dict[int, "Edit"]
    planned_imports: Dict[str, Tuple[Optional[str], str]]

    def ref(
        self, qualname: str, scope: Scope, prefer_from: bool = False, direct: bool = False
    ) -> cst.BaseExpression:
        """An expression that names ``qualname`` at ``scope``, adding an import if needed.

        Reuses an existing import (``import jax.numpy as jnp`` serves ``jax.numpy.x``).
        With ``prefer_from`` a missing name is imported as ``from module import name``.
        With ``direct`` only an import of the name or of its own module is reused: for a name
        in a submodule its package does not load (``import jax`` does not make
        ``jax.extend.core`` an attribute).
        Raises :class:`CannotReference` when every spelling would clash with a local name.
        """
        parts = qualname.split(".")
        lowest = max(len(parts) - 1, 1) if direct else 1
        for cut in range(len(parts), lowest - 1, -1):
            local = self._visible_import(".".join(parts[:cut]), scope)
            if local is not None:
                return dotted_expr([*local.split("."), *parts[cut:]])
        if prefer_from and len(parts) > 1 and self._free(parts[-1], scope, qualname):
            self.planned_imports[qualname] = (".".join(parts[:-1]), parts[-1])
            return cst.Name(parts[-1])
        if self._free(parts[0], scope, parts[0]):
            self.planned_imports[parts[0]] = (None, parts[0])
            return dotted_expr(parts)
        if direct and len(parts) > 2 and scope.resolve_name(parts[0]) == parts[0]:
            # ``import jax`` binds the package but does not load ``jax.extend.core``:
            # ``import jax.extend.core`` does, and binds the same name to the same package.
            module = ".".join(parts[:-1])
            self.planned_imports[module] = (None, module)
            return dotted_expr(parts)
        raise CannotReference(f"cannot refer to {qualname}: {parts[0]!r} is taken by a local name")

    def _visible_import(self, qualname: str, scope: Scope) -> Optional[str]:
        planned = self.planned_imports.get(qualname)
        if planned is not None:
            head = bound_name(planned[1])
            if scope.lookup(head) is None or (
                head != planned[1] and scope.resolve_name(head) == head
            ):
                return planned[1]
        for binding in self.analysis.imports:
            if binding.qualname == qualname and not binding.guarded:
                if scope.resolve_name(binding.name) == qualname:
                    return binding.name
        return None

    def _free(self, name: str, scope: Scope, planned_key: str) -> bool:
        """True if a new module-level binding ``name`` is visible at ``scope`` and clashes with
        nothing."""
        if scope.lookup(name) is not None or name in self.analysis.scopes[id(self.module)].bindings:
            return False
        for key, (_module, bound) in self.planned_imports.items():
            if bound_name(bound) == name and key != planned_key:
                return False
        return True

    def _forget_imports_of(self, rejected: Replacement) -> None:
        """Drop the planned imports that ``rejected`` (a replacement that will not be applied)
        spells and no recorded edit does, so that they reserve no name for later references."""
        bound = {bound_name(name) for _module, name in self.planned_imports.values()}
        spelled = names_in([rejected], bound)
        if not spelled:
            return
        spelled -= names_in([edit.new for edit in self.edits.values()], spelled)
        planned = self.planned_imports.items()
        for key in [k for k, (_module, name) in planned if bound_name(name) in spelled]:
            del self.planned_imports[key]


def bound_name(imported: str) -> str:
    """The name an import binds: ``jax`` for ``import jax.extend.core``, else the name."""
    return imported.split(".", 1)[0]


def names_in(replacements: Iterable[object], wanted: Set[str]) -> Set[str]:
    """The names of ``wanted`` that some ``Name`` in the replacements spells."""
    found: Set[str] = set()
    stack: List[object] = []
    for new in replacements:
        stack.extend(new.nodes if isinstance(new, cst.FlattenSentinel) else [new])
    while stack and len(found) < len(wanted):
        node = stack.pop()
        if type(node) is cst.Name:
            if node.value in wanted:
                found.add(node.value)
        elif isinstance(node, cst.CSTNode):
            stack.extend(structural_children(node))
    return found
