"""Keeping the user's layout where a fix moved it: continuation lines aligned to a parenthesis.

``jax.tree_multimap(f,`` / ``                  x)`` aligns its second line to the column after
the opening parenthesis.  A fix that renames the callee (``jax.tree.map(``) moves the
parenthesis, and the second line would stay at the old column.  Before the edits of a round
are applied, :func:`realignments` finds every call whose callee an edit replaces by a
one-line expression of another width; when the transformer rebuilds that call,
:func:`realign` shifts the continuation lines inside its parentheses that moved with it by
the change in width (as pyupgrade does for the tokens it touches): those that stood at or
right of the old parenthesis and are laid out from a bracket that moved too, one opened on
the call's first line from its parenthesis on, or on a line that moves.  Hanging indents
(lines left of the parenthesis), the lines aligned under a bracket a hanging line opened
(``str(x`` / ``).lower()``), and everything outside the call stay as they are: only calls a
fix changed are read.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.migrator.context import Context, Edit
from jaxmigrate.migrator.continuation import moving_lines
from jaxmigrate.migrator.positions import module_code

# id(call) -> (indent of its statement, column after its old ``(``, change in width, whether
# each of its continuation lines moves, in order: None where the text did not tell)
Shift = Tuple[int, int, int, Optional[Tuple[bool, ...]]]


def realignments(ctx: Context, edits: Dict[int, Edit]) -> Dict[int, Shift]:
    """id(call) -> how its continuation lines move (:data:`Shift`), for the calls whose
    callee an edit replaces (the call itself not being replaced)."""
    found: Dict[int, Shift] = {}
    lines: Optional[List[str]] = None  # the module's, read once a call needs them
    for edit in edits.values():
        call = ctx.parent(edit.node)
        if not isinstance(call, cst.Call) or call.func is not edit.node or id(call) in edits:
            continue
        if not isinstance(edit.new, cst.CSTNode):
            continue
        old, new = ctx.code(edit.node), ctx.module.code_for_node(edit.new)
        if "\n" in old or "\n" in new or len(old) == len(new):
            continue
        if not _has_continuation(call):
            continue
        indent = _indent(ctx, call)
        if indent is None:
            continue
        position = ctx.position(edit.node)
        if position.start.line != position.end.line:
            continue
        after_paren = (
            position.end.column + len(ctx.module.code_for_node(call.whitespace_after_func)) + 1
        )
        if lines is None:
            lines = (ctx.generated_code() or module_code(ctx.module)).splitlines()
        span = ctx.position(call)
        moves = moving_lines(lines[span.start.line - 1 : span.end.line], after_paren)
        found[id(call)] = (indent, after_paren, len(new) - len(old), moves)
    return found


def _has_continuation(call: cst.Call) -> bool:
    return "\n" in cst.Module(body=[]).code_for_node(call.with_changes(func=cst.Name("f")))


def _indent(ctx: Context, node: cst.CSTNode) -> Optional[int]:
    """The indentation (in columns) of the block the statement holding ``node`` is in."""
    for up in ctx.ancestors(node):
        if isinstance(up, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            return ctx.position(up).start.column
    return None


def realign(
    call: cst.Call,
    indent: int,
    after_paren: int,
    delta: int,
    moves: Optional[Tuple[bool, ...]] = None,
) -> cst.Call:
    """``call`` with its continuation lines that move (``moves``, one a line break between its
    parentheses, in order; where they are not one a line break, each line at or right of
    ``after_paren``) moved by ``delta``."""
    breaks = _Breaks()
    call.whitespace_before_args.visit(breaks)
    for arg in call.args:
        arg.visit(breaks)
    shift = _Shift(
        indent,
        after_paren,
        delta,
        moves if moves is not None and len(moves) == breaks.count else None,
    )
    return call.with_changes(
        whitespace_before_args=call.whitespace_before_args.visit(shift),
        args=[arg.visit(shift) for arg in call.args],
        rpar=call.rpar,
    )


class _Breaks(cst.CSTVisitor):
    """Counts the line breaks between a call's parentheses (one a continuation line)."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def visit_ParenthesizedWhitespace(self, node: cst.ParenthesizedWhitespace) -> None:
        self.count += 1


class _Shift(cst.CSTTransformer):
    def __init__(
        self, indent: int, after_paren: int, delta: int, moves: Optional[Tuple[bool, ...]]
    ) -> None:
        super().__init__()
        self.indent, self.after_paren, self.delta = indent, after_paren, delta
        self.moves, self.line = moves, 0

    def leave_ParenthesizedWhitespace(
        self, original_node: cst.ParenthesizedWhitespace, updated_node: cst.ParenthesizedWhitespace
    ) -> cst.ParenthesizedWhitespace:
        self.line += 1
        if self.moves is not None and not self.moves[self.line - 1]:
            return updated_node  # laid out from a bracket that stays
        spaces = updated_node.last_line.value
        if spaces.strip(" "):
            return updated_node  # tabs: left alone
        column = (self.indent if updated_node.indent else 0) + len(spaces)
        if column < self.after_paren:
            return updated_node
        width = max(len(spaces) + self.delta, 0)
        return updated_node.with_changes(last_line=cst.SimpleWhitespace(" " * width))
