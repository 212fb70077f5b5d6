"""A module-level alias of a removed array type (``ArraySharded = pxla.ShardedDeviceArray``),
and whether every use of it in the module is a type one.

Such an alias line runs at import: left as it is, the module dies with AttributeError on today's
JAX, and with it every module that imports it.  Where each use of the alias in the module is an
annotation, a ``Union[...]``/``Optional[...]`` member, an ``isinstance``/``issubclass`` class
argument or a name ``__all__`` exports, pointing the alias at ``jax.Array`` keeps all of them
working (an isinstance through it then accepts every jax.Array: the unsafe part).  A use as a
constructor, a dictionary or registry key (``handlers[Alias] = f``, ``register(Alias, f)``), a
``type(x) is Alias`` test or a base class keeps the finding: ``type(x)`` is never jax.Array.
"""

from __future__ import annotations

from typing import Optional

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.migrator.context import Context, NameSite
from jaxmigrate.migrator.scope import Site
from jaxmigrate.rules._helpers import (
    in_type_expression,
    is_called,
    is_type_identity_check,
    isinstance_position,
)


def module_alias(site: NameSite, ctx: Context) -> Optional[str]:
    """``NAME`` when the site is the whole value of a module-level ``NAME = <site>``."""
    parent = site.parent
    if not (isinstance(parent, cst.Assign) and parent.value is site.node):
        return None
    if len(parent.targets) != 1 or not isinstance(parent.targets[0].target, cst.Name):
        return None
    statement = ctx.parent(parent)
    if (
        not isinstance(statement, cst.SimpleStatementLine)
        or ctx.parent(statement) is not ctx.module
    ):
        return None
    name = parent.targets[0].target.value
    ctx.needs_name(name)  # its bindings here, and every use non_type_use reads
    bindings = ctx.analysis.scopes[id(ctx.module)].bindings.get(name, ())
    return name if len(bindings) == 1 else None  # bound once: every load means this value


def _context_code(node: cst.CSTNode, ctx: Context) -> str:
    """The code around a use: the subscript, call or dict it is a key or an argument of."""
    current: Optional[cst.CSTNode] = node
    while current is not None and not isinstance(current, (cst.Subscript, cst.Call, cst.Dict)):
        if isinstance(current, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            return ctx.code(node)
        current = ctx.parent(current)
    text = " ".join(ctx.code(current or node).split())
    return text if len(text) <= 40 else text[:37] + "..."


def non_type_use(alias: str, ctx: Context) -> Optional[str]:
    """How ``alias`` is used other than as a type in the module (None: only as a type)."""
    target: Optional[cst.CSTNode] = None
    module_bindings = ctx.analysis.scopes[id(ctx.module)].bindings.get(alias)
    for node in ctx.all_nodes(cst.Name):
        if node.value != alias:
            continue
        parent = ctx.parent(node)
        if isinstance(parent, cst.AssignTarget):
            target = node
            continue
        if isinstance(parent, (cst.ImportAlias, cst.AsName)):
            continue  # a re-export
        scope = ctx.scope_of(node)
        if scope.lookup(alias) is not module_bindings:
            continue  # a local of the same name
        ancestors = tuple(reversed(ctx.ancestors(node)))
        use = NameSite(Site(node, scope, ancestors, False), alias)
        if is_called(use):
            return f"a constructor ({alias}(...))"
        if is_type_identity_check(use):
            return f"a type(x) comparison ({alias})"
        if isinstance(parent, cst.Arg) and isinstance(ctx.parent(parent), cst.ClassDef):
            return "a base class"
        if isinstance_position(use) is not None or in_type_expression(use, ctx):
            continue
        return f"a value: `{_context_code(node, ctx)}` (type(x) is never jax.Array)"
    return None if target is not None else "nothing this module binds"
