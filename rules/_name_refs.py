"""How a fix spells a JAX name at a site: through an import the file already has, a ``from``
import of the module it already uses, or a new import planned on the context.  Shared by
the pjit family and the sharding rules, which write ``NamedSharding``/``PartitionSpec``
and module references into user code.
"""

from __future__ import annotations

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.migrator.context import Context
from jaxmigrate.migrator.naming import bound_name
from jaxmigrate.migrator.scope import Scope


def module_ref(ctx: Context, qualname: str, scope: Scope) -> cst.BaseExpression:
    """``from package import module`` style reference to a (sub)module or name: a submodule is
    not reliably reachable as an attribute of its package, so never ``jax.x.y`` from ``import
    jax`` alone."""
    for binding in ctx.analysis.imports:
        if (
            binding.qualname == qualname
            and not binding.guarded
            and scope.resolve_name(binding.name) == qualname
        ):
            return cst.Name(binding.name)
    package, _, name = qualname.rpartition(".")
    planned = ctx.planned_imports.get(qualname)
    if planned is not None and scope.lookup(name) is None:
        return cst.Name(name)
    module_bindings = ctx.analysis.scopes[id(ctx.module)].bindings
    if (
        scope.lookup(name) is None
        and name not in module_bindings
        and all(bound_name(b) != name for _m, b in ctx.planned_imports.values())
    ):
        ctx.planned_imports[qualname] = (package, name)
        return cst.Name(name)
    return ctx.ref(qualname, scope)


def local_name_for(
    ctx: Context, qualnames: frozenset, modern: str, scope: Scope
) -> cst.BaseExpression:
    """A local name already bound to one of ``qualnames`` (legacy spellings are moved by other
    rules, keeping the local name); else a reference to ``modern`` with an import."""
    best = None
    for binding in ctx.analysis.imports:
        if binding.qualname in qualnames and not binding.guarded:
            if scope.resolve_name(binding.name) == binding.qualname:
                if best is None or binding.qualname == modern:
                    best = binding.name
    if best is not None:
        return cst.Name(best)
    module, _, name = modern.rpartition(".")
    if _from_imports(ctx, module) and _free(ctx, name, scope, modern):
        # the file already imports from ``module``: add the name there, not ``jax.x.y``
        ctx.planned_imports[modern] = (module, name)
        return cst.Name(name)
    return ctx.ref(modern, scope, prefer_from=True)


def _from_imports(ctx: Context, module: str) -> bool:
    return any(
        b.qualname == f"{module}.{b.node.name.value if isinstance(b.node.name, cst.Name) else ''}"
        and isinstance(b.statement, cst.ImportFrom)
        and not b.guarded
        for b in ctx.analysis.imports
        if isinstance(b.node, cst.ImportAlias)
    )


def _free(ctx: Context, name: str, scope: Scope, qualname: str) -> bool:
    if scope.lookup(name) is not None or name in ctx.analysis.scopes[id(ctx.module)].bindings:
        return False
    planned = ctx.planned_imports.get(qualname)
    if planned is not None:
        return True
    return all(bound_name(bound) != name for _m, bound in ctx.planned_imports.values())
