"""Where a fix is reported: the line and column in the file as read, whichever round applied
it.  :class:`Origins` maps the nodes of later rounds' trees back to the first round's tree
(an earlier round's added or removed lines would otherwise shift the location), and the
helpers here turn edits and findings into :class:`Diagnostic` records."""

from __future__ import annotations

import dataclasses
from typing import (
    Callable,
    Dict,
    List,
    Optional,
    Sequence,
    Tuple,
)

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.migrator.context import Context, Edit, Finding
from jaxmigrate.migrator.diagnostics import Diagnostic
from jaxmigrate.migrator.traversal import structural_children


def diagnostic_at(
    ctx: Context, node: cst.CSTNode, code: str, message: str, safety: str, detail: str = ""
) -> Diagnostic:
    code_range = ctx.position(node)
    return Diagnostic(
        code=code,
        message=message,
        line=code_range.start.line,
        column=code_range.start.column + 1,
        safety=safety,
        end_line=code_range.end.line,
        detail=detail,
    )


def located_fix(origins: Optional["Origins"], ctx: Context, edit: Edit) -> Diagnostic:
    """An applied edit's fix: located in the input when fixes are located, else on line 0."""
    if origins is None:
        fix = Diagnostic(edit.code, edit.message, 0, 0, edit.safety.value, detail=edit.detail)
    else:
        safety = edit.safety.value
        fix = origins.locate(ctx, edit.node, edit.code, edit.message, safety, edit.detail)
    return dataclasses.replace(fix, needs=edit.needs) if edit.needs else fix


class Origins:
    """Where the nodes of a later round's tree stood in the file as read, so that a fix is
    located in the input's lines and columns whichever round applied it (an earlier round's
    added or removed lines would otherwise shift it).

    A node of a later round is one of three things: a node of the first round's tree (a
    transformer keeps the subtrees it does not enter), a node the rewriting rebuilt or put
    in place of another (recorded here with the first-round node it stands for), or a node
    inside such a replacement, which stands where the replacement does."""

    def __init__(self, first: Context) -> None:
        self.first = first
        # id(node) -> (node, the first-round node it stands for); the node is kept alive
        # with its entry, so its id is not reused
        self.roots: Dict[int, Tuple[cst.CSTNode, cst.CSTNode]] = {}

    def root(self, node: cst.CSTNode, ctx: Context) -> Optional[cst.CSTNode]:
        """The first-round node that ``node`` (a node of ``ctx``'s tree) is or stands for."""
        return self._root(node, ctx)[0]

    def _root(
        self, node: cst.CSTNode, ctx: Context
    ) -> Tuple[Optional[cst.CSTNode], Optional[cst.CSTNode]]:
        """:meth:`root`, and the replacement ``node`` lies inside (None if it is one itself,
        or a first-round node)."""
        first = self.first
        current: Optional[cst.CSTNode] = node
        while current is not None:
            entry = self.roots.get(id(current))
            if entry is not None and entry[0] is current:
                return entry[1], (current if current is not node else None)
            if current is first.module or first.parent(current) is not None:
                return current, None
            current = ctx.parent(current)
        return None, None

    def _counterpart(
        self, node: cst.CSTNode, ctx: Context, replacement: cst.CSTNode, root: cst.CSTNode
    ) -> cst.CSTNode:
        """The node of ``root``'s subtree that ``node`` (inside ``replacement``, which stands
        for ``root``) was copied from, when the rewriting kept its code: the same k-th node of
        its type and code in both; else ``root`` itself."""
        kind, code = type(node), ctx.module.code_for_node(node)

        def same(subtree: cst.CSTNode, module: cst.Module) -> List[cst.CSTNode]:
            found, stack = [], [subtree]
            while stack:
                current = stack.pop()
                if type(current) is kind and module.code_for_node(current) == code:
                    found.append(current)
                stack.extend(reversed(structural_children(current)))
            return found

        ordinal = next(i for i, n in enumerate(same(replacement, ctx.module)) if n is node)
        originals = same(root, self.first.module)
        return originals[ordinal] if ordinal < len(originals) else root

    def tracer(self, ctx: Context) -> Callable[[cst.CSTNode, object], None]:
        """What a transformer over ``ctx``'s tree calls with each node it rebuilds or replaces."""

        def trace(original: cst.CSTNode, result: object) -> None:
            root = self.root(original, ctx)
            if root is not None:
                for node in result.nodes if isinstance(result, cst.FlattenSentinel) else (result,):
                    if isinstance(node, cst.CSTNode):
                        self.roots[id(node)] = (node, root)

        return trace

    def carry_body(self, before: cst.Module, after: cst.Module, ctx: Context) -> None:
        """Records what the statements of ``after`` that import management changed or
        inserted stand for: the statement of ``before`` changed in place, or the one an
        inserted statement went in front of."""
        module_root = self.root(before, ctx)
        if module_root is not None:
            self.roots[id(after)] = (after, module_root)
        old, kept = before.body, {id(statement) for statement in after.body}
        index = 0
        for statement in after.body:
            if index < len(old) and old[index] is statement:
                index += 1
                continue
            stands_for = old[index] if index < len(old) else None
            if stands_for is not None and id(stands_for) not in kept:
                index += 1  # changed in place
            root = self.root(stands_for, ctx) if stands_for is not None else None
            if root is not None:
                self.roots[id(statement)] = (statement, root)

    def locate(
        self, ctx: Context, node: cst.CSTNode, code: str, message: str, safety: str, detail: str
    ) -> Diagnostic:
        """A fix on ``node`` of ``ctx``'s tree, located in the input."""
        if ctx is not self.first:
            root, replacement = self._root(node, ctx)
            if root is not None and (root is not self.first.module or isinstance(node, cst.Module)):
                if replacement is not None:
                    root = self._counterpart(node, ctx, replacement, root)
                return diagnostic_at(self.first, root, code, message, safety, detail)
        return diagnostic_at(ctx, node, code, message, safety, detail)


def diagnostics_of(ctx: Context, entries: Sequence[Finding]) -> List[Diagnostic]:
    found = {
        diagnostic_at(ctx, *entry, ctx.details.get((id(entry[0]), entry[1], entry[2]), ""))
        for entry in entries
    }
    return sorted(found, key=lambda d: (d.line, d.column, d.code, d.message))
