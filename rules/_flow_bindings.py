"""Every binding of a name in one scope, each as the expression that says what it holds.

Part of the flow layer (:mod:`rules._flow` re-exports :func:`bound_values`).  A rule asking
"is this name always a device / a device list / a client?" needs each binding of the name,
not just the one plain assignment :func:`rules._flow.single_assignment` follows: a name may
be assigned in both branches of an ``if``, annotated as a parameter, or iterate over a list.
A binding this cannot follow (``+=``, tuple unpacking, ``with ... as``, ``global``, an import,
an unannotated parameter, a nested ``def`` of that name ...) makes the answer None, so a rule
never acts on half of the evidence.  One table per scope and round, through ``ctx.memo``.
"""

from __future__ import annotations

from typing import Callable, Dict, List, Optional, Set, Tuple

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.migrator.context import Context
from jaxmigrate.migrator.scope import Scope, dotted_parts
from jaxmigrate.migrator.traversal import fast_visit
from jaxmigrate.rules._helpers import target_names

# ("value", the assigned expression) for ``x = v`` and ``x: T = v``; ("iter", the iterable)
# for ``for x in it`` and ``[... for x in it]``; ("annotation", T) for ``x: T`` and an
# annotated parameter.
Bound = Tuple[str, "cst.BaseExpression"]


def bound_values(ctx: Context, name: str, scope: Scope) -> Optional[List[Bound]]:
    """Every binding of ``name`` made directly in ``scope`` (a function, lambda,
    comprehension or the module), in source order, parameters first: a list of
    :data:`Bound`, empty when ``scope`` does not bind ``name``; None when some binding cannot
    be followed (see the module docstring) or ``scope`` is a class body."""
    table = ctx.memo(("flow", "bound_values", id(scope.node)), lambda: _table(scope.node))
    if table is None:
        return None
    found, unknown = table
    return None if name in unknown else list(found.get(name, ()))


def bound_only_to(
    ctx: Context, name: str, scope: Scope, test: Callable[[str, cst.BaseExpression, Scope], bool]
) -> bool:
    """True when ``name``, looked up from ``scope``, is a local name (not an import) whose
    bindings :func:`bound_values` can all follow, and ``test(kind, value, home)`` holds for each
    (``home``: the scope that binds it)."""
    bindings = scope.lookup(name)
    if not bindings or any(b.is_import for b in bindings):
        return False
    home = bindings[0].scope
    definitions = bound_values(ctx, name, home)
    if not definitions:
        return False
    return all(test(kind, value, home) for kind, value in definitions)


def _table(node: cst.CSTNode) -> Optional[Tuple[Dict[str, List[Bound]], Set[str]]]:
    """(name -> its bindings, the names some binding of which cannot be followed)."""
    from jaxmigrate.rules._scope_body import ScopeBodyVisitor  # (LibCST's visitor: loaded here)

    class _Bindings(ScopeBodyVisitor):
        """The bindings one scope body makes (nested defs, classes, lambdas and comprehensions
        are not entered: a ``def`` or ``class`` of a name is itself a binding not followed)."""

        def __init__(self) -> None:
            super().__init__()
            self.found: Dict[str, List[Bound]] = {}
            self.unknown: Set[str] = set()

        def add(self, name: str, bound: Bound) -> None:
            self.found.setdefault(name, []).append(bound)

        def _not_followed(self, target: Optional[cst.CSTNode]) -> None:
            if target is not None:
                self.unknown.update(target_names(target))

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            self.unknown.add(node.name.value)
            return False

        def visit_ClassDef(self, node: cst.ClassDef) -> bool:
            self.unknown.add(node.name.value)
            return False

        def visit_Assign(self, node: cst.Assign) -> None:
            for target in node.targets:
                if isinstance(target.target, cst.Name):
                    if len(node.targets) != 1:  # a = b = v
                        self.unknown.add(target.target.value)
                    self.add(target.target.value, ("value", node.value))
                else:
                    self._not_followed(target.target)

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            for name in target_names(node.target):
                if node.value is None:
                    self.add(name, ("annotation", node.annotation.annotation))
                else:
                    self.add(name, ("value", node.value))

        def visit_For(self, node: cst.For) -> None:
            if isinstance(node.target, cst.Name):
                self.add(node.target.value, ("iter", node.iter))
            else:
                self._not_followed(node.target)

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            self._not_followed(node.target)

        def visit_WithItem(self, node: cst.WithItem) -> None:
            if node.asname is not None:
                self._not_followed(node.asname.name)

        def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
            self._not_followed(node.target)

        def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
            if node.name is not None:
                self._not_followed(node.name.name)

        def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
            if node.asname is not None:
                self._not_followed(node.asname.name)
            else:
                parts = dotted_parts(node.name)
                if parts:
                    self.unknown.add(parts[0])

        def visit_Global(self, node: cst.Global) -> None:
            self.unknown.update(item.name.value for item in node.names)

        def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
            self.unknown.update(item.name.value for item in node.names)

        def visit_Del(self, node: cst.Del) -> None:
            self._not_followed(node.target)

    collector = _Bindings()
    if isinstance(node, (cst.FunctionDef, cst.Lambda)):
        params = node.params
        for param in [*params.posonly_params, *params.params, *params.kwonly_params]:
            if param.annotation is None:
                collector.unknown.add(param.name.value)
            else:
                collector.add(param.name.value, ("annotation", param.annotation.annotation))
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param):
                collector.unknown.add(star.name.value)
        fast_visit(node.body, collector)
    elif isinstance(node, (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)):
        comp_for: Optional[cst.CompFor] = node.for_in
        while comp_for is not None:
            if isinstance(comp_for.target, cst.Name):
                collector.add(comp_for.target.value, ("iter", comp_for.iter))
            else:
                collector.unknown.update(target_names(comp_for.target))
            comp_for = comp_for.inner_for_in
    elif isinstance(node, cst.Module):
        fast_visit(node, collector)
    else:
        return None
    return collector.found, collector.unknown
