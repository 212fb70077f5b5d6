"""Continuation lines a rewrite left at the wrong column, laid out again.

A rule that writes its replacement from a template (``hcb.call(f, (x,`` / ``x), ...)`` ->
``jax.pure_callback(f, shape, (x,`` / ``x))``) copies an argument's text, line breaks
included: its continuation lines keep the columns they had under the old call, aligned with
nothing.  Once the rounds of a file settle, this pass reads every expression over several
lines that a fix wrote; when one of its continuation lines starts neither right after an
open bracket (visual alignment) nor at a hanging indent (the statement's indentation plus
one to three units, or the opening line's plus one; a closing bracket also at the opening
line's indentation), it lays the expression out again: on one line when it fits the
project's line length, else broken as :mod:`migrator.wrap` breaks lines.
"""

from __future__ import annotations

import io
import tokenize
from typing import List, Optional, Tuple

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.migrator.context import Context, Edit
from jaxmigrate.migrator.positions import module_code
from jaxmigrate.migrator.prettyprint import Builder, render
from jaxmigrate.migrator.rule import Safety
from jaxmigrate.migrator.tidy import Produced
from jaxmigrate.migrator.wrap import (
    block_indent,
    closes_alone,
    continuation_unit,
    laid_out,
    lines_made_long,
)

_OPENING, _CLOSING = "([{", ")]}"


def realign_written(ctx: Context, produced: Produced, original: str, limit: int) -> int:
    """Records in ``ctx.edits`` a new layout for the written expressions whose continuation
    lines align with nothing; returns how many."""
    if not produced or not limit:
        return 0
    candidates = [
        (node, code)
        for node, code in produced.nodes.values()
        if isinstance(node, cst.BaseExpression) and ctx.parent(node) is not None
    ]
    written = [(node, code, ctx.code(node)) for node, code in candidates]
    # an expression on one line needs nothing (and its position, which generates its whole
    # statement, is not asked)
    written = [entry for entry in written if "\n" in entry[2] or "\r" in entry[2]]
    if not written:
        return 0
    lines = (ctx.generated_code() or module_code(ctx.module)).splitlines()
    unit = continuation_unit(ctx.module.default_indent)
    black: Optional[bool] = None  # the file's style: a tokenize of all of it, on first need
    mine = laid_out(ctx)
    before = len(ctx.edits)
    for node, rule_code, text in written:
        span = ctx.position(node)
        if span.start.line == span.end.line or any(node is done for done in mine):
            continue
        if id(node) in ctx.edits or any(id(up) in ctx.edits for up in ctx.ancestors(node)):
            continue
        if "#" in text or '"""' in text or "'''" in text or "\\\n" in text:
            continue
        block = block_indent(ctx, node)
        if block is None or span.end.line > len(lines):
            continue
        segment = lines[span.start.line - 1 : span.end.line]
        if _aligned(segment, span.start.column, block, unit):
            continue
        if black is None:
            black = closes_alone(original, ctx.module.default_indent)
        layout = (segment, span.start.column, block, unit, black, limit)
        _lay_out_again(ctx, node, layout, rule_code, "an expression the rewrite left misaligned")
    return len(ctx.edits) - before


def relayout_long_calls(
    ctx: Context, produced: Produced, source: str, style: str, limit: int
) -> int:
    """Records in ``ctx.edits`` a new layout for each call over several lines whose callee a
    fix wrote, where a continuation line is now longer than ``limit`` and was not in the file
    as read: a longer name moved the call's continuation lines right to keep them aligned
    with its bracket (:mod:`migrator.layout`).  ``source``: the text the module was parsed
    from; ``style``: the file's whole text (its bracket style).  Returns how many."""
    if not produced or not limit:
        return 0
    calls = []
    for node, rule_code in produced.nodes.values():
        call = ctx.parent(node)
        if isinstance(call, cst.Call) and call.func is node and "\n" in ctx.code(call):
            calls.append((call, rule_code))
    if not calls:
        return 0
    code = ctx.generated_code() or module_code(ctx.module)
    lines = code.splitlines()
    if not any(len(line) > limit for line in lines):
        return 0
    long = lines_made_long(lines, code, source, limit)
    if not long:
        return 0
    unit = continuation_unit(ctx.module.default_indent)
    black: Optional[bool] = None
    mine = laid_out(ctx)
    before = len(ctx.edits)
    for call, rule_code in calls:
        if any(call is done for done in mine) or id(call) in ctx.edits:
            continue
        if any(id(up) in ctx.edits for up in ctx.ancestors(call)):
            continue
        text = ctx.code(call)
        if "#" in text or '"""' in text or "'''" in text or "\\\n" in text:
            continue
        span = ctx.position(call)
        block = block_indent(ctx, call)
        if block is None or span.end.line > len(lines):
            continue
        if long.isdisjoint(range(span.start.line + 1, span.end.line + 1)):
            continue  # no continuation line of the call that the rewrite made too long
        if black is None:
            black = closes_alone(style, ctx.module.default_indent)
        segment = lines[span.start.line - 1 : span.end.line]
        layout = (segment, span.start.column, block, unit, black, limit)
        _lay_out_again(ctx, call, layout, rule_code, "a call the rewrite made too long")
    return len(ctx.edits) - before


def _lay_out_again(
    ctx: Context,
    node: cst.BaseExpression,
    layout: Tuple[List[str], int, int, int, bool, int],
    rule_code: str,
    what: str,
) -> None:
    """Records the new layout of ``node`` (:func:`_laid_out_again` with ``layout``), if any,
    as an edit and among this pass's own (:func:`migrator.wrap.laid_out`)."""
    new = _laid_out_again(ctx, node, *layout)
    if new is not None:
        ctx.edits[id(node)] = Edit(node, new, rule_code, f"laid out again {what}", Safety.SAFE)
        laid_out(ctx).append(new)


def _aligned(segment: List[str], column: int, block: int, unit: int) -> bool:
    """Whether every continuation line of the expression starting at ``column`` of the
    first of ``segment`` starts at a column a formatter or a person would use."""
    text = "\n".join(segment) + "\n"
    stack: List[Tuple[int, int]] = []  # (column of an open bracket, indent of its line)
    seen_lines = {1}
    hanging = {block + k * unit for k in (1, 2, 3)}
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            row, col = token.start
            if token.type in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT):
                continue
            if token.type in (tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER):
                continue
            if row == 1 and col < column:
                continue  # the statement before the expression
            if row not in seen_lines:
                seen_lines.add(row)
                fits = {c + 1 for c, _indent in stack} | hanging
                fits |= {indent + unit for _c, indent in stack}
                if token.string in _CLOSING and stack:
                    fits.add(stack[-1][1])
                if col not in fits:
                    return False
            if token.type == tokenize.OP and token.string in _OPENING:
                line = segment[row - 1]
                stack.append((col, len(line) - len(line.lstrip(" "))))
            elif token.type == tokenize.OP and token.string in _CLOSING and stack:
                stack.pop()
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return True


def _laid_out_again(
    ctx: Context,
    node: cst.BaseExpression,
    segment: List[str],
    column: int,
    block: int,
    unit: int,
    black: bool,
    limit: int,
) -> Optional[cst.BaseExpression]:
    span = ctx.position(node)
    prefix, suffix = segment[0][:column], segment[-1][span.end.column :]
    flat = node.visit(_Flatten())
    if not isinstance(flat, cst.BaseExpression):
        return None
    flat_code = ctx.module.code_for_node(flat)
    if "\n" in flat_code:
        return None
    if len(prefix) + len(flat_code) + len(suffix) <= limit:
        return flat
    rendered = render([Builder(ctx, black).build(flat), suffix], limit, column, block, unit)
    if not rendered.endswith(suffix):
        return None
    body = rendered[: len(rendered) - len(suffix)].split("\n")
    widest = max(len(line) for line in (prefix + rendered).split("\n"))
    if widest > limit and widest >= max(len(line) for line in segment):
        return None  # no better than it is
    relative = "\n".join([body[0]] + [x[block:] for x in body[1:]])
    try:
        return cst.parse_expression(relative)
    except cst.ParserSyntaxError:
        return None


class _Flatten(cst.CSTTransformer):
    """Every line break inside brackets as a space (none after an opening or before a
    closing bracket)."""

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode):  # noqa: ANN201
        changes = {}
        for field in ("whitespace_after", "whitespace_before", "whitespace_before_args"):
            value = getattr(updated_node, field, None)
            if isinstance(value, cst.ParenthesizedWhitespace):
                tight = isinstance(
                    updated_node,
                    (
                        cst.LeftParen,
                        cst.LeftSquareBracket,
                        cst.LeftCurlyBrace,
                        cst.RightParen,
                        cst.RightSquareBracket,
                        cst.RightCurlyBrace,
                        cst.Call,
                    ),
                )
                changes[field] = cst.SimpleWhitespace("" if tight else " ")
        if changes:
            updated_node = updated_node.with_changes(**changes)
        return _without_trailing_comma(updated_node)


def _without_trailing_comma(node: cst.CSTNode) -> cst.CSTNode:
    """``f(a, b,)`` -> ``f(a, b)`` once on one line; ``(a,)`` keeps the comma a tuple needs."""
    field = "args" if isinstance(node, cst.Call) else "elements"
    if not isinstance(node, (cst.Call, cst.List, cst.Tuple, cst.Set, cst.Dict)):
        return node
    items = list(getattr(node, field))
    if not items or not isinstance(items[-1].comma, cst.Comma):
        return node
    if isinstance(node, cst.Tuple) and len(items) == 1:
        items[-1] = items[-1].with_changes(comma=cst.Comma())
    else:
        items[-1] = items[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return node.with_changes(**{field: items})
