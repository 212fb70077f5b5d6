"""What each binding of a scope was made by (a parameter and its annotation, an assigned
value, ``self``, a ``def``, something else), for the receiver analysis and the flow helpers
(:mod:`rules._flow`).  Memoised per scope on the context.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple, Union

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.migrator.context import Context
from jaxmigrate.migrator.scope import Scope
from jaxmigrate.migrator.traversal import fast_visit
from jaxmigrate.rules._helpers import target_names

Definition = Tuple[str, Optional["cst.BaseExpression"], Optional["cst.BaseExpression"]]


def scope_definitions(ctx: Context, scope: Scope) -> Dict[str, List[Definition]]:
    """name -> how each binding in ``scope`` was made: ("param", annotation, None),
    ("value", value or None, annotation), ("self", ...), ("def", ...) or ("other", ...)."""
    from jaxmigrate.rules._scope_body import ScopeBodyVisitor  # (LibCST's visitor: loaded here)

    class _DefinitionCollector(ScopeBodyVisitor):
        """Bindings made directly in one scope body (nested functions/classes are not entered)."""

        def __init__(self, result: Dict[str, List[Definition]]) -> None:
            super().__init__()
            self.result = result

        def _add(self, name: str, entry: Definition) -> None:
            self.result.setdefault(name, []).append(entry)

        def _other(self, target: cst.CSTNode) -> None:
            for name in target_names(target):
                self._add(name, ("other", None, None))

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            self._add(node.name.value, ("def", None, None))
            return False

        def visit_ClassDef(self, node: cst.ClassDef) -> bool:
            self._add(node.name.value, ("def", None, None))
            return False

        def visit_Assign(self, node: cst.Assign) -> bool:
            for target in node.targets:
                if isinstance(target.target, cst.Name):
                    self._add(target.target.value, ("value", node.value, None))
                else:
                    self._other(target.target)
            return True

        def visit_AnnAssign(self, node: cst.AnnAssign) -> bool:
            if isinstance(node.target, cst.Name):
                self._add(node.target.value, ("value", node.value, node.annotation.annotation))
            return True

        def _target_binds(
            self, node: Union[cst.AugAssign, cst.For, cst.NamedExpr, cst.Del]
        ) -> bool:
            """``x += v``, ``for x in ...``, ``(x := v)``, ``del x``: bindings not followed."""
            self._other(node.target)
            return True

        visit_AugAssign = visit_For = visit_NamedExpr = visit_Del = _target_binds

        def visit_WithItem(self, node: cst.WithItem) -> bool:
            if node.asname is not None:
                self._other(node.asname.name)
            return True

        def visit_ExceptHandler(self, node: cst.ExceptHandler) -> bool:
            if node.name is not None:
                self._other(node.name.name)
            return True

        def visit_Import(self, node: cst.Import) -> bool:
            for alias in node.names:
                bound: cst.BaseExpression = alias.asname.name if alias.asname else alias.name
                while isinstance(bound, cst.Attribute):
                    bound = bound.value
                self._other(bound)
            return False

        def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
            if not isinstance(node.names, cst.ImportStar):
                for alias in node.names:
                    self._other(alias.asname.name if alias.asname else alias.name)
            return False

        def visit_Global(self, node: cst.Global) -> bool:
            for item in node.names:
                self._add(item.name.value, ("other", None, None))
            return False

        def visit_Nonlocal(self, node: cst.Nonlocal) -> bool:
            for item in node.names:
                self._add(item.name.value, ("other", None, None))
            return False

    cache: Dict[int, Dict[str, List[Definition]]] = ctx.memo(("receivers", "definitions"), dict)
    found = cache.get(id(scope.node))
    if found is not None:
        return found
    result: Dict[str, List[Definition]] = {}
    node = scope.node
    if isinstance(node, (cst.FunctionDef, cst.Lambda)):
        params = node.params
        all_params = [*params.posonly_params, *params.params, *params.kwonly_params]
        takes_self = (
            isinstance(node, cst.FunctionDef)
            and is_method(ctx, node)
            and not _is_staticmethod(node)
        )
        for index, param in enumerate(all_params):
            if index == 0 and takes_self and not param.annotation:
                result.setdefault(param.name.value, []).append(("self", None, None))
                continue
            annotation = param.annotation.annotation if param.annotation else None
            result.setdefault(param.name.value, []).append(("param", annotation, None))
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param):
                result.setdefault(star.name.value, []).append(("other", None, None))
    if not isinstance(node, (cst.Lambda, cst.FunctionDef, cst.ClassDef, cst.Module)):
        pass  # a comprehension: its targets stay unknown
    elif not isinstance(node, cst.Lambda):
        collector = _DefinitionCollector(result)
        body = node.body
        if isinstance(body, cst.BaseSuite):
            fast_visit(body, collector)
        elif isinstance(node, cst.Module):
            for statement in node.body:
                fast_visit(statement, collector)
    cache[id(scope.node)] = result
    return result


def is_method(ctx: Context, node: cst.FunctionDef) -> bool:
    parent = ctx.parent(node)
    grand = ctx.parent(parent) if parent is not None else None
    return isinstance(grand, cst.ClassDef)


def _is_staticmethod(node: cst.FunctionDef) -> bool:
    return any(
        isinstance(d.decorator, cst.Name) and d.decorator.value == "staticmethod"
        for d in node.decorators
    )
