"""The blank lines where a statement went, as a maintainer would leave them.

When a fix or the import cleanup removes a whole statement, LibCST drops the statement with
the blank lines above it and keeps those above the next one.  Removing a file's first import
then leaves the file starting with blank lines, and removing one after a comment header leaves
three blank lines before a ``def``.  :class:`Gaps` follows one transformer pass and gives the
statement after a removed run the blank lines a person would write: none at the start of a
file or block, no more than the file's header already holds before it, and elsewhere the
larger of the two gaps that met (so an import group's separating line survives).
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence

from jaxmigrate.migrator import lazycst as cst

Containers = (cst.Module, cst.IndentedBlock)
Statements = (cst.SimpleStatementLine, cst.BaseCompoundStatement)  # the ones with leading_lines


class _Block:
    __slots__ = ("node", "removed_blanks", "survivor")

    def __init__(self, node: cst.CSTNode) -> None:
        self.node = node
        self.removed_blanks: Optional[int] = None  # blank lines above the removed run, if any
        self.survivor = False  # a statement of this block was kept before the current one


class Gaps:
    """Call :meth:`enter` when the pass enters a module or indented block, and :meth:`leave`
    for every node it leaves, with what replaces it; :meth:`leave` returns the replacement
    with its blank lines settled."""

    def __init__(self) -> None:
        self._blocks: List[_Block] = []
        self._by_id: Dict[int, _Block] = {}

    def enter(self, node: cst.CSTNode) -> None:
        if isinstance(node, Containers):
            block = _Block(node)
            self._blocks.append(block)
            self._by_id[id(node)] = block

    def leave(self, original: cst.CSTNode, result: object) -> object:
        if id(original) in self._by_id:
            block = self._by_id.pop(id(original))
            if self._blocks and self._blocks[-1] is block:
                self._blocks.pop()
            return result
        if not self._blocks or not isinstance(original, Statements):
            return result
        block = self._blocks[-1]
        if _removed(result):
            if block.removed_blanks is None:
                block.removed_blanks = _blank_count(original.leading_lines)
            return result
        if block.removed_blanks is not None:
            result = self._settle(block, result)
        block.survivor = True
        return result

    def _settle(self, block: _Block, result: object) -> object:
        removed, block.removed_blanks = block.removed_blanks or 0, None
        first = result.nodes[0] if isinstance(result, cst.FlattenSentinel) else result
        if not isinstance(first, Statements):
            return result
        lines = list(first.leading_lines)
        blanks = _leading_blanks(lines)
        if block.survivor:
            wanted = max(removed, blanks)
        elif isinstance(block.node, cst.Module) and any(line.comment for line in block.node.header):
            wanted = max(0, blanks - _trailing_blanks(block.node.header))
        else:
            wanted = 0
        if wanted == blanks:
            return result
        settled = first.with_changes(leading_lines=[cst.EmptyLine()] * wanted + lines[blanks:])
        if isinstance(result, cst.FlattenSentinel):
            return cst.FlattenSentinel([settled, *result.nodes[1:]])
        return settled


def _removed(result: object) -> bool:
    """The statement is gone: removed, or a line whose every small statement was removed."""
    if isinstance(result, cst.RemovalSentinel):
        return True
    if isinstance(result, cst.FlattenSentinel):
        return not result.nodes
    return isinstance(result, cst.SimpleStatementLine) and not result.body


def _blank_count(lines: Sequence[cst.EmptyLine]) -> int:
    return sum(1 for line in lines if line.comment is None)


def _leading_blanks(lines: Sequence[cst.EmptyLine]) -> int:
    count = 0
    for line in lines:
        if line.comment is not None:
            break
        count += 1
    return count


def _trailing_blanks(lines: Sequence[cst.EmptyLine]) -> int:
    return _leading_blanks(list(reversed(lines)))
