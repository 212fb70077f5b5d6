"""Which part of a dotted ``import a.b.c`` a file still reads, for JAX806
(:mod:`rules.removed_modules`).

``import jax.experimental.maps`` binds ``jax``: the import can go once no expression reads
through ``jax.experimental.maps``, but the name ``jax`` (or ``jax.experimental``) may still be
needed, unless another import binds it too.  :func:`load_chains` lists the dotted chains the
file reads (outside imports), :func:`used_through` tells whether one goes through a module and
:func:`kept_prefix` which shorter import, if any, replaces the dotted one.
"""

from __future__ import annotations

from typing import List, Optional, Tuple

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.migrator.context import Context
from jaxmigrate.migrator.scope import dotted_name, dotted_parts


def module_of(qualname: str, modules) -> Optional[str]:  # noqa: ANN001
    for module in modules:
        if qualname == module or qualname.startswith(module + "."):
            return module
    return None


def load_chains(ctx: Context) -> List[Tuple[str, ...]]:
    """Every outermost dotted chain (and bare name) in load position outside imports."""

    def build() -> List[Tuple[str, ...]]:
        found: List[Tuple[str, ...]] = []
        for node in ctx.all_nodes(cst.Attribute):
            parts = dotted_parts(node)
            if parts is None:
                continue
            parent = ctx.parent(node)
            if isinstance(parent, cst.Attribute) and dotted_parts(parent) is not None:
                continue
            if not inside_import(ctx, node):
                found.append(tuple(parts))
        for name in ctx.all_nodes(cst.Name):
            parent = ctx.parent(name)
            if isinstance(parent, cst.Attribute):
                continue  # part of a chain (counted above) or an attribute name
            if (
                isinstance(parent, (cst.FunctionDef, cst.ClassDef, cst.Param))
                and parent.name is name
            ):
                continue
            if isinstance(parent, cst.Arg) and parent.keyword is name:
                continue
            if isinstance(parent, (cst.ImportAlias, cst.AsName, cst.ImportFrom)) or inside_import(
                ctx, name
            ):
                continue
            found.append((name.value,))
        return found

    return ctx.memo(("JAX806", "chains"), build)


def used_through(module: str, chains: List[Tuple[str, ...]]) -> bool:
    parts = tuple(module.split("."))
    return any(chain[: len(parts)] == parts for chain in chains)


def kept_prefix(
    ctx: Context,
    alias: cst.ImportAlias,
    module: str,
    chains: List[Tuple[str, ...]],
    removed: Tuple[str, ...],
) -> Optional[str]:
    """The module to import instead (``a`` or ``a.b``), or None to drop the alias."""
    parts = module.split(".")
    for length in range(len(parts) - 1, 0, -1):
        prefix = tuple(parts[:length])
        if length > 1:
            used = any(chain[:length] == prefix and len(chain) > length for chain in chains)
        else:
            used = any(chain[0] == parts[0] for chain in chains)
        if not used:
            continue
        name = ".".join(prefix)
        return None if _imported_elsewhere(ctx, alias, name, removed, chains) else name
    return None


def _imported_elsewhere(
    ctx: Context,
    alias: cst.ImportAlias,
    name: str,
    removed: Tuple[str, ...],
    chains: List[Tuple[str, ...]],
) -> bool:
    """Another ``import name`` / ``import name.x`` (no ``as``) in the file binds the head."""
    head = name.split(".", 1)[0]
    for binding in ctx.analysis.imports:
        if (
            binding.node is alias
            or binding.name != head
            or not isinstance(binding.statement, cst.Import)
        ):
            continue
        other = dotted_name(binding.node.name) or ""  # type: ignore[union-attr]
        if binding.node.asname is None and (other == name or other.startswith(name + ".")):  # type: ignore[union-attr]
            if module_of(other, removed) is None or used_through(other, chains):
                return True  # an import that stays
    return False


def inside_import(ctx: Context, node: cst.CSTNode) -> bool:
    parent = ctx.parent(node)
    while parent is not None:
        if isinstance(parent, (cst.Import, cst.ImportFrom)):
            return True
        if isinstance(parent, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            return False
        parent = ctx.parent(parent)
    return False
