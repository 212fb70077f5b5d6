"""The per-round index of a module's tree that :class:`~migrator.context.Context` reads: each
node's parent and the nodes of each type, built in one walk and cached per top-level
statement (an unchanged statement is not walked again in a later round).
"""

from __future__ import annotations

from typing import (
    Dict,
    List,
    Tuple,
    cast,
)

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.migrator.traversal import (
    children,
    structural_children,
    subtree_cache,
)


def all_parents(module: cst.CSTNode) -> Dict[int, cst.CSTNode]:
    """id(node) -> parent for every node under ``module``, :func:`trivia` included."""
    parents: Dict[int, cst.CSTNode] = {}
    stack: List[cst.CSTNode] = [module]
    while stack:
        node = stack.pop()
        found = children(node)
        for child in found:
            parents[id(child)] = node
        stack.extend(found)
    return parents


def walk_module(
    module: cst.CSTNode,
) -> Tuple[Dict[int, cst.CSTNode], Dict[type, List[cst.CSTNode]]]:
    """id(node) -> parent, and type -> nodes in source order (LibCST's visiting order), for
    every node under ``module`` but whitespace, comments and punctuation (see
    :func:`migrator.traversal.structural_children`).

    Inside :func:`migrator.traversal.cached_children`, a module's top-level statements are walked
    once per file: a later round reuses what an unchanged statement held."""
    cache = subtree_cache("walk")
    if cache is None or type(module) is not cst.Module:
        return _walk_tree(module)
    parents: Dict[int, cst.CSTNode] = {}
    by_type: Dict[type, List[cst.CSTNode]] = {cst.Module: [module]}
    for statement in children(module):
        parents[id(statement)] = module
        entry = cache.get(id(statement))
        if entry is None or entry[0] is not statement:
            entry = cache[id(statement)] = (statement, _walk_tree(statement))
        below, kinds = cast(Tuple[Dict[int, cst.CSTNode], Dict[type, List[cst.CSTNode]]], entry[1])
        parents.update(below)
        for kind, nodes in kinds.items():
            found = by_type.get(kind)
            if found is None:
                by_type[kind] = list(nodes)
            else:
                found.extend(nodes)
    return parents, by_type


def _walk_tree(module: cst.CSTNode) -> Tuple[Dict[int, cst.CSTNode], Dict[type, List[cst.CSTNode]]]:
    parents: Dict[int, cst.CSTNode] = {}
    by_type: Dict[type, List[cst.CSTNode]] = {}
    stack: List[cst.CSTNode] = [module]
    while stack:
        node = stack.pop()
        kind = type(node)
        found = by_type.get(kind)
        if found is None:
            by_type[kind] = [node]
        else:
            found.append(node)
        found_children = structural_children(node)
        for child in found_children:
            parents[id(child)] = node
        stack.extend(reversed(found_children))
    return parents, by_type
