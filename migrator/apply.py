"""The transformer that applies a round's edits and import removals in one pass over the
tree, and the import removal record it reads.  Shared by the rounds (every edit) and the
import cleanup (top-level imports removed in the same round), so it lives in neither."""

from __future__ import annotations

from typing import (
    Callable,
    Dict,
    List,
    NamedTuple,
    Optional,
    Set,
    Union,
)

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.migrator.context import Edit
from jaxmigrate.migrator.diagnostics import CLEANUP_CODE
from jaxmigrate.migrator.gaps import Gaps
from jaxmigrate.migrator.imports import without_aliases
from jaxmigrate.migrator.layout import Shift, realign
from jaxmigrate.migrator.rule import Safety


class ImportRemoval(NamedTuple):
    """An import statement the engine cuts down because the migration left names unused."""

    statement: cst.CSTNode
    aliases: Set[int]  # ids of the import's alias nodes that go
    code: str  # reported under: the rule whose legacy name it imported, or CLEANUP_CODE


Removals = Dict[int, ImportRemoval]  # by id of the statement


class Apply(cst.CSTTransformer):
    """Applies every recorded edit in one pass; an edit inside a replaced node waits a round."""

    def __init__(
        self,
        edits: Dict[int, Edit],
        removals: Removals,
        paths: Optional[Set[int]] = None,
    ) -> None:
        super().__init__()
        self.edits = edits
        self.removals = removals
        self.applied: List[Edit] = []
        self.paths = paths  # when given, subtrees holding no edit are not entered
        # id(call) -> how its continuation lines move (see migrator.layout)
        self.realign: Dict[int, Shift] = {}
        # called with (node, what replaces it) for every node the pass rebuilds or replaces
        self.trace: Optional[Callable[[cst.CSTNode, object], None]] = None
        self.gaps = Gaps()  # the blank lines where a statement went

    def on_visit(self, node: cst.CSTNode) -> bool:
        if id(node) in self.edits:
            return False
        entered = self.paths is None or id(node) in self.paths
        if entered:
            self.gaps.enter(node)
        return entered

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode):  # noqa: ANN201
        result = self.gaps.leave(original_node, self._leave(original_node, updated_node))
        if self.trace is not None and result is not original_node:
            self.trace(original_node, result)
        return result

    def _leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode):  # noqa: ANN202
        edit = self.edits.get(id(original_node))
        if edit is not None:
            self.applied.append(edit)
            return edit.new
        shift = self.realign.get(id(original_node))
        if shift is not None:
            return realign(updated_node, *shift)  # type: ignore[arg-type]
        removal = self.removals.get(id(original_node))
        if removal is not None:
            statement, alias_ids, code = removal
            new: Union[cst.CSTNode, cst.RemovalSentinel]
            if isinstance(original_node, cst.Del):
                new = without_deleted(original_node, updated_node, alias_ids)  # type: ignore[arg-type]
                message = "removed the del of an import the migration removed"
            else:
                new = without_aliases(original_node, updated_node, alias_ids)  # type: ignore[arg-type]
                message = "removed an import the migration left unused"
                if code != CLEANUP_CODE:
                    message = "removed an import of a name that no longer exists in JAX"
            if new is not updated_node:
                self.applied.append(Edit(statement, new, code, message, Safety.SAFE))
            return new
        return updated_node


def without_deleted(
    original: cst.Del, updated: cst.Del, name_ids: Set[int]
) -> Union[cst.Del, cst.RemovalSentinel]:
    """``del a, b`` (``updated``) without the names whose original nodes are in ``name_ids``:
    ``del a``; nothing left, the statement goes."""
    if isinstance(original.target, cst.Name):
        return cst.RemovalSentinel.REMOVE if id(original.target) in name_ids else updated
    old, new = original.target, updated.target
    if not isinstance(old, (cst.Tuple, cst.List)) or not isinstance(new, type(old)):
        return updated
    if len(old.elements) != len(new.elements):  # another edit changed it: next round
        return updated
    kept = [
        element
        for before, element in zip(old.elements, new.elements)
        if id(before.value) not in name_ids
    ]
    if len(kept) == len(new.elements):
        return updated
    if not kept:
        return cst.RemovalSentinel.REMOVE
    if len(kept) == 1 and not new.lpar and isinstance(new, cst.Tuple):
        return updated.with_changes(target=kept[0].value)  # ``del a, b`` -> ``del a``
    kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return updated.with_changes(target=new.with_changes(elements=kept))
