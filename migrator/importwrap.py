"""Laying out the ``from`` imports a migration changed, in the project's line length and style.

``from jax.core import (ClosedJaxpr, DropVar,`` / ``new_jaxpr_eqn)`` renamed to
``jax.extend.core`` moves its parenthesis: the first line runs past the line length and the
second stays at the old column; a name dropped from ``from jax.experimental.pjit import
(PartitionSpec, pjit,`` leaves the rest wrapped though it now fits a line.  Once the rounds
of a file settle, this pass lays out again every ``from`` import whose text the file as read
does not hold (so: one a fix or the import management wrote, added to or cut down), when it
spans several lines or runs past the project's line length (:mod:`migrator.linelength`):

* on one line, without parentheses, when it fits (unless black's trailing comma keeps it
  exploded);
* else in the import's own wrapped style, or, for a one-line import, the style of the file's
  other wrapped ``from`` imports, else the file's bracket style (:mod:`migrator.wrap`):
  black's (one name a line, a trailing comma, the parenthesis closing alone), a hanging
  indent (names filled after ``(`` and a line break), or names filled and aligned after the
  parenthesis (Google's style, yapf's and pyink's).

Imports with comments inside, star imports and imports the file already had are left alone.

A fix that rewrites an import in place (``from jax.config import config`` -> ``import jax``)
leaves it where the old one stood; :func:`order_imports` moves such a line to its sorted place
in its group when the group's other lines are sorted, and were with the old line where it
stood (:func:`migrator.importplace.settle_order`): a group the user does not keep sorted
keeps the new line in place (jax-md 0.2.5's ``from jax import tree_map`` after ``from
jax.interpreters import ...``).
"""

from __future__ import annotations

from typing import Callable, Collection, List, Optional, Sequence

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.migrator.context import Context, Edit
from jaxmigrate.migrator.diagnostics import CLEANUP_CODE
from jaxmigrate.migrator.importplace import (
    ImportNode,
    import_groups,
    import_of,
    settle_order,
    sorted_by,
)
from jaxmigrate.migrator.rule import Safety
from jaxmigrate.migrator.tidy import Produced
from jaxmigrate.migrator.wrap import closes_alone, continuation_unit

BLACK, HANGING, ALIGNED = "black", "hanging", "aligned"


def layout_imports(ctx: Context, produced: Produced, original: str, limit: int) -> int:
    """Records in ``ctx.edits`` a new layout for the ``from`` imports the migration changed
    that span lines or run past ``limit``; returns how many."""
    if not limit:
        return 0
    before = len(ctx.edits)
    file_style: Optional[str] = None
    read: Optional[str] = None  # (the lines of ``original`` without their indentation)
    for node in ctx.nodes(cst.ImportFrom):  # (every one: the analysis visits them all)
        if isinstance(node.names, cst.ImportStar) or id(node) in ctx.edits:
            continue
        code = ctx.code(node)
        if code in original or "#" in code or "\\" in code:
            continue
        column = ctx.position(node).start.column
        if column and "\n" in code:  # (in a block: its lines go without the block's indent)
            read = _unindented(original) if read is None else read
            if _unindented(code) in read:
                continue  # the file had it (numpyro 0.9.2's import inside a function)
        if "\n" not in code and column + len(code) <= limit:
            continue
        style = _own_style(node)
        if style is None:
            if file_style is None:
                file_style = _file_style(ctx, original)
            style = file_style
        laid_out = _layout(ctx, node, column, limit, style)
        if laid_out is not None and column:  # (LibCST writes the block's indent before
            laid_out = _within_block(laid_out, column)  # each line of it again)
        if laid_out is None or laid_out == code:
            continue
        try:
            line = cst.parse_statement(laid_out + "\n")
        except cst.ParserSyntaxError:
            continue
        if not isinstance(line, cst.SimpleStatementLine):
            continue
        new = line.body[0]
        rule_code = produced.code_of(ctx, node) or CLEANUP_CODE
        message = f"laid out an import the migration changed in {limit} columns"
        ctx.edits[id(node)] = Edit(node, new, rule_code, message, Safety.SAFE)
    return len(ctx.edits) - before


def _unindented(text: str) -> str:
    return "\n".join(line.lstrip(" \t") for line in text.split("\n"))


def _within_block(laid_out: str, column: int) -> str:
    """``laid_out``, written for ``column``, with its continuation lines less the block's
    indent (``column`` spaces), which LibCST writes before them in the block."""
    first, *rest = laid_out.split("\n")
    cut = " " * column
    return "\n".join([first, *(line[column:] if line.startswith(cut) else line for line in rest)])


def order_imports(ctx: Context, original: str, first_party: Collection[str]) -> int:
    """Records in ``ctx.edits`` the moves that put the top-level import lines the migration
    wrote at their sorted places; returns how many lines move."""

    def written(line: cst.CSTNode) -> bool:
        node = import_of(line)
        return node is not None and ctx.code(node) not in original

    marked = {ctx.position(finding[0]).start.line for finding in ctx.findings}

    def pinned(line: cst.CSTNode) -> bool:
        span = ctx.position(line)
        return any(span.start.line <= number <= span.end.line for number in marked)

    groups: List[List[ImportNode]] = []  # the file's own import groups, read on need

    def was_sorted(rest: Sequence[cst.CSTNode], key: Callable) -> bool:
        if not groups:
            groups.extend(import_groups(original) or [[]])
        codes = {ctx.code(node) for node in map(import_of, rest) if node is not None}
        empty = cst.Module(body=[])
        for group in groups:
            if any(empty.code_for_node(node) in codes for node in group):
                return sorted_by(group, key)
        return True  # (no group of the file as read holds them: as the others say)

    swaps = settle_order(ctx.module.body, written, pinned, first_party, was_sorted)
    for old, new in swaps.values():
        message = "moved an import the migration wrote to its sorted place in its group"
        # Not a fix: the lines move, and a fix is located on an input line it changed.
        ctx.edits[id(old)] = Edit(old, new, CLEANUP_CODE, message, Safety.SAFE, reported=False)
    return len(swaps)


def _parenthesized_whitespace(node: Optional[cst.CSTNode], field: str) -> bool:
    return node is not None and isinstance(getattr(node, field, None), cst.ParenthesizedWhitespace)


def _own_style(node: cst.ImportFrom) -> Optional[str]:
    """How the import is wrapped now (None: it is one line).  Black's closes the parenthesis
    alone: LibCST keeps the line break before it after the last name's comma, or before the
    parenthesis where the last name has none."""
    names = node.names
    last = names[-1] if isinstance(names, (list, tuple)) and names else None
    if _parenthesized_whitespace(node.rpar, "whitespace_before") or (
        last is not None and _parenthesized_whitespace(last.comma, "whitespace_after")
    ):
        return BLACK
    if _parenthesized_whitespace(node.lpar, "whitespace_after"):
        return HANGING
    if isinstance(names, (list, tuple)) and any(
        isinstance(alias.comma, cst.Comma)
        and isinstance(alias.comma.whitespace_after, cst.ParenthesizedWhitespace)
        for alias in names
    ):
        return ALIGNED
    return None


def _file_style(ctx: Context, original: str) -> str:
    """The style of the file's first wrapped ``from`` import as read, else its brackets'."""
    for node in ctx.nodes(cst.ImportFrom):  # (every one: the analysis visits them all)
        code = ctx.code(node)
        if "\n" in code and code in original:
            style = _own_style(node)
            if style is not None:
                return style
    return BLACK if closes_alone(original, ctx.module.default_indent) else ALIGNED


def _layout(
    ctx: Context, node: cst.ImportFrom, column: int, limit: int, style: str
) -> Optional[str]:
    module = "." * len(node.relative) + (ctx.code(node.module) if node.module else "")
    names = [ctx.code(alias.with_changes(comma=cst.MaybeSentinel.DEFAULT)) for alias in node.names]  # type: ignore[union-attr]
    head = f"from {module} import "
    magic = (
        style == BLACK and node.rpar is not None and isinstance(node.names[-1].comma, cst.Comma)  # type: ignore[index]
    )
    one = head + ", ".join(names)
    if column + len(one) <= limit and not magic:
        return one
    indent = " " * column
    inner = indent + " " * continuation_unit(ctx.module.default_indent)
    if style == BLACK:
        return head + "(\n" + "".join(f"{inner}{name},\n" for name in names) + indent + ")"
    if style == ALIGNED:
        filled = _fill(names, column + len(head) + 1, limit, first=column + len(head) + 1)
        if filled is not None:
            return head + "(" + filled + ")"
    filled = _fill(names, len(inner), limit, first=len(inner))
    if filled is None:
        return None
    return head + "(\n" + inner + filled + ")"


def _fill(names: List[str], at: int, limit: int, first: int) -> Optional[str]:
    """``names`` joined by commas, as many a line as fit in ``limit`` (the closing
    parenthesis included); the first line starts at column ``first``, the others at ``at``.
    None if a name does not fit a line of its own."""
    lines: List[str] = []
    current, start = "", first
    for index, name in enumerate(names):
        end = ")" if index == len(names) - 1 else ","
        candidate = f"{current}, {name}" if current else name
        if current and start + len(candidate) + len(end) > limit:
            lines.append(current + ",")
            current, start = name, at
        else:
            current = candidate
        if current == name and start + len(name) + len(end) > limit:
            return None
    lines.append(current)
    return ("\n" + " " * at).join(lines)
