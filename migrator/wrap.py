"""Wrapping the lines a rewrite made too long, the way a maintainer would.

``jax.device_put_replicated(tree, devices)`` becomes a ``tree_map`` over ``device_put`` with
a ``NamedSharding``: one line of 200 columns where the project holds lines to 88.  Once the
rounds of a file settle (after :mod:`migrator.tidy`), this pass looks at every line over the
project's line length (:mod:`migrator.linelength`) that holds a node a fix wrote and that was
not already over it in the file as read (the user's long lines are theirs).  On such a line
it takes the largest one-line expression around the written node and lays it out again:
breaks go after an opening bracket, at argument commas and before ``and``/``or`` inside
parentheses, with a hanging indent of the file's own indentation unit, and only as many as
needed (all arguments on one indented line when they fit there, else one a line, the inner
calls broken the same way when a line still does not fit).  A file whose closing brackets
stand on lines of their own (black's style) gets them there, with black's trailing comma
after one-a-line arguments; else a closing bracket ends the last line (the Google style many
JAX projects use; a file that breaks no bracket is taken as black's when it indents by 4).
There, an ``and``/``or`` chain in its own parentheses breaks after its operators instead, each
next operand under the first (``(isinstance(v, Literal) and\n v in seen)``), as such files
break their own conditions.
Code no fix wrote is never re-laid out, nor a line with a comment that speaks for it
(``# type: ignore``, ``# noqa``), which must stay on the line it silences.  The layout itself
(a document in the manner of Wadler's "prettier printer") is built and printed by
:mod:`migrator.prettyprint`.
"""

from __future__ import annotations

import io
import re
import tokenize
from typing import List, Optional, Set, Tuple, Union

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.migrator.context import Context, Edit
from jaxmigrate.migrator.linemap import line_map
from jaxmigrate.migrator.positions import module_code
from jaxmigrate.migrator.prettyprint import Builder, render
from jaxmigrate.migrator.rule import Safety
from jaxmigrate.migrator.tidy import Produced

_OPENING, _CLOSING = "([{", ")]}"
# A comment that speaks for its own line (a type checker's ignore, a linter's noqa or disable):
# a line holding one stays whole, as black leaves it, for the comment would end up on another
# line than the one it silences.
_PRAGMA = re.compile(r"#\s*(?:type:|noqa\b|pylint:|pyright:|mypy:|pragma\b|nosec\b|fmt:)")


def wrap(
    ctx: Context, produced: Produced, original: str, limit: int, style: Optional[str] = None
) -> int:
    """Records in ``ctx.edits`` a new layout for the written expressions on lines the rewrite
    made longer than ``limit``; returns how many.  ``style``: the text whose brackets tell the
    file's style (the whole file, where ``original`` is a reduced module; default
    ``original``)."""
    if not produced or not limit:
        return 0
    code = ctx.generated_code() or module_code(ctx.module)
    lines = code.splitlines()
    if not any(len(line) > limit for line in lines):
        return 0
    long = lines_made_long(lines, code, original, limit)
    if not long:
        return 0  # (before asking any node's position: each generates its whole statement)
    unit = continuation_unit(ctx.module.default_indent)
    black: Optional[bool] = None  # the file's style: a tokenize of all of it, on first need
    before = len(ctx.edits)
    done: set = set()
    written = laid_out(ctx)
    for node, rule_code in produced.nodes.values():
        if node is not ctx.module and ctx.parent(node) is None:
            continue  # replaced since
        if any(node is done for done in written):
            continue  # this pass's own layout: once is enough (the rounds must settle)
        span = ctx.position(node)
        for number in range(span.start.line, span.end.line + 1):
            if number in done or number not in long or _PRAGMA.search(lines[number - 1]):
                continue
            root = _root(ctx, node, number)
            if root is None:
                continue
            done.add(number)
            if black is None:
                black = closes_alone(
                    original if style is None else style, ctx.module.default_indent
                )
            if not _relayout(ctx, root, lines, limit, unit, black, rule_code):
                # (nothing to break on the line, as in ``a if b else c``: the arguments of
                # the call around it, laid over lines of their own already, one a line)
                call = _spanning_call(ctx, root)
                if call is not None:
                    _relayout(ctx, call, lines, limit, unit, black, rule_code)
    return len(ctx.edits) - before


def lines_made_long(lines: List[str], code: str, original: str, limit: int) -> Set[int]:
    """The numbers of the lines of ``code`` (split as ``lines``) over ``limit`` that the
    rewrite made so: a line already over it in ``original`` is the user's and stays."""
    original_lines = original.splitlines()
    to_before = line_map(original, code)
    long = set()
    for number, line in enumerate(lines, start=1):
        if len(line) > limit:
            was = to_before(number)
            if not (0 < was <= len(original_lines) and len(original_lines[was - 1]) > limit):
                long.add(number)
    return long


def closes_alone(text: str, default_indent: str) -> bool:
    """Whether most brackets the file breaks inside close on a line of their own (black's
    style) rather than at the end of the last line; in a file that breaks none, whether it
    indents by 4 spaces (black's) rather than 2 (Google's, whose brackets end the line)."""
    alone = trailing = 0
    stack: List[int] = []
    previous_line = 0
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type != tokenize.OP:
                if token.type not in (tokenize.NL, tokenize.COMMENT):
                    previous_line = token.end[0]
                continue
            if token.string in _OPENING:
                stack.append(token.start[0])
            elif token.string in _CLOSING and stack:
                opened = stack.pop()
                if opened != token.start[0]:
                    if previous_line < token.start[0]:
                        alone += 1
                    else:
                        trailing += 1
            previous_line = token.end[0]
    except (tokenize.TokenError, SyntaxError):
        pass
    if not alone and not trailing:
        return default_indent == "    "
    return alone > trailing


def laid_out(ctx: Context) -> List[cst.CSTNode]:
    """The nodes this pass wrote in the file's earlier rounds (kept alive, so ids stay theirs)."""
    return ctx.file_state.setdefault("wrap.laid_out", [])  # type: ignore[return-value]


def continuation_unit(default_indent: str) -> int:
    """The continuation indent: the file's indentation unit, but 4 where blocks go by 2
    (Google's style guide, which the 2-space JAX projects follow, asks for 4)."""
    unit = len(default_indent) if default_indent and not default_indent.strip(" ") else 4
    return max(unit, 4)


# What an expression root may grow through: expressions, and the parts of them that are not.
_INSIDE_EXPRESSIONS = (
    cst.BaseExpression,
    cst.Arg,
    cst.Element,
    cst.StarredElement,
    cst.ComparisonTarget,
)


def _one_line(ctx: Context, node: cst.CSTNode, number: int) -> bool:
    span = ctx.position(node)
    return span.start.line == span.end.line == number and "#" not in ctx.code(node)


def _root(ctx: Context, node: cst.CSTNode, number: int) -> Optional[cst.BaseExpression]:
    """The largest one-line expression on line ``number`` around (or, for a written node
    over several lines or a written statement, inside) ``node``."""
    if _one_line(ctx, node, number) and not isinstance(node, cst.BaseStatement):
        root = node if isinstance(node, cst.BaseExpression) else None
        for up in ctx.ancestors(node):
            # (A Param, say, has no code of its own: its Parameters write its ``=``.)
            if not isinstance(up, _INSIDE_EXPRESSIONS) or not _one_line(ctx, up, number):
                break
            if isinstance(up, cst.BaseExpression):
                root = up
        return root
    best: Optional[cst.BaseExpression] = None
    stack = list(node.children)
    while stack:
        child = stack.pop()
        span = ctx.position(child)
        if span.end.line < number or span.start.line > number:
            continue
        if isinstance(child, cst.BaseExpression) and _one_line(ctx, child, number):
            if best is None or len(ctx.code(child)) > len(ctx.code(best)):
                best = child
            continue
        stack.extend(child.children)
    return best


def _spanning_call(ctx: Context, root: cst.BaseExpression) -> Optional[cst.Call]:
    """The call whose arguments hold ``root`` (through no other bracket), where it spans
    several lines and holds no comment."""
    for up in ctx.ancestors(root):
        if isinstance(up, cst.Call):
            span = ctx.position(up)
            multiline = span.start.line != span.end.line
            return up if multiline and "#" not in ctx.code(up) else None
        if not isinstance(up, (cst.Arg, cst.BaseExpression)) or isinstance(
            up, (cst.List, cst.Tuple, cst.Dict, cst.Set, cst.Subscript, cst.Lambda)
        ):
            return None
    return None


def _relayout(
    ctx: Context,
    root: cst.BaseExpression,
    lines: List[str],
    limit: int,
    unit: int,
    black: bool,
    rule_code: str,
) -> bool:
    """Records a new layout of ``root`` (on one line of ``lines``, or a call over several);
    False where none is shorter."""
    ancestors = ctx.ancestors(root)
    if id(root) in ctx.edits or any(id(up) in ctx.edits for up in ancestors):
        return True  # (laid out already)
    span = ctx.position(root)
    line = lines[span.start.line - 1]
    strings = [up for up in ancestors if isinstance(up, cst.FormattedString)]
    if strings:  # a line break inside an f-string's braces is Python 3.12's only
        _split_string(ctx, strings[-1], line, limit, rule_code)
        return True
    start, end = _with_parentheses(ctx, root, span.start.column, span.end.column)
    spanned = lines[span.start.line - 1 : span.end.line]
    if len(spanned) > 1:  # (the text from its first line's start to its last line's end)
        end += sum(len(x) + 1 for x in spanned[:-1])
        line = "\n".join(spanned)
    block = block_indent(ctx, root)
    indent = len(line) - len(line.lstrip(" "))
    if block is None or block > indent or "\t" in line[:indent]:
        return False
    if line[start:end] != ctx.code(root).replace("\n", "\n" + " " * block):
        return False  # (its code continues lines at the statement's indentation)
    if not black and indent == block and _in_header(ctx, root):
        unit *= 2  # continuation lines of an ``if``/``def`` header stand apart from its body
    shaped = root
    if len(spanned) > 1:  # (a call over several lines: its arguments, each on one, laid out anew)
        if not isinstance(root, cst.Call) or any("\n" in ctx.code(a.value) for a in root.args):
            return False
        shaped = root.with_changes(whitespace_before_args=cst.SimpleWhitespace(""))
    if isinstance(root, cst.BooleanOperation) and not root.lpar:
        shaped = root.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])  # (a and\n b)
    builder = Builder(ctx, black)
    if not black and isinstance(root, cst.BooleanOperation) and root.lpar:
        doc = builder.aligned(root)  # (a visual indent, as such files break their own)
    else:
        doc = builder.build(shaped)
    suffix = line[end:]
    rendered = render([doc, suffix], limit, start, indent, unit)
    new_lines = (line[:start] + rendered).split("\n")
    longest = max(len(x) for x in new_lines)
    if (
        len(new_lines) < 2
        or not rendered.endswith(suffix)
        or longest >= max(len(x) for x in spanned)
        or (len(spanned) > 1 and longest > limit)
    ):
        return False
    body = rendered[: len(rendered) - len(suffix)].split("\n")
    relative = "\n".join([body[0]] + [x[block:] for x in body[1:]])
    try:
        new = cst.parse_expression(relative)
    except cst.ParserSyntaxError:
        return False
    message = f"wrapped a line the rewrite made longer than {limit} columns"
    ctx.edits[id(root)] = Edit(root, new, rule_code, message, Safety.SAFE)
    laid_out(ctx).append(new)
    return True


def _with_parentheses(
    ctx: Context, root: cst.BaseExpression, start: int, end: int
) -> Tuple[int, int]:
    """The columns of ``root``'s code, its own parentheses included (its position leaves
    them out: ``(isinstance(v, Literal) and v in seen)`` inside a longer condition)."""
    code = ctx.module.code_for_node
    before = sum(len(code(paren)) for paren in getattr(root, "lpar", ()))
    after = sum(len(code(paren)) for paren in getattr(root, "rpar", ()))
    return start - before, end + after


def _split_string(
    ctx: Context, string: cst.FormattedString, line: str, limit: int, rule_code: str
) -> None:
    """An f-string that continues an implicit concatenation on its own line (so it stands
    inside brackets) is split in two at a space of its text, the second piece on a line of
    its own aligned with it, as maintainers split a message that grew."""
    parent = ctx.parent(string)
    if not isinstance(parent, cst.ConcatenatedString) or parent.right is not string:
        return
    if not isinstance(parent.whitespace_between, cst.ParenthesizedWhitespace):
        return  # not a continuation line
    span = ctx.position(string)
    if span.start.line != span.end.line or line[: span.start.column].strip() or "\t" in line:
        return
    block = block_indent(ctx, string)
    if block is None or block > span.start.column:
        return
    column, quote = span.start.column, string.start[len(string.prefix) :]
    best: Optional[Tuple[int, int]] = None  # (index of the text part, split offset in it)
    width = column + len(string.start)
    for index, part in enumerate(string.parts):
        text = ctx.module.code_for_node(part)
        if isinstance(part, cst.FormattedStringText):
            for offset, char in enumerate(text):
                if (
                    char == " "
                    and width + offset + 1 + len(quote) <= limit
                    and offset + 1 < len(text)
                ):
                    best = (index, offset + 1)
        width += len(text)
    if best is None:
        return
    index, offset = best
    text = string.parts[index].value  # type: ignore[attr-defined]
    head = [*string.parts[:index], cst.FormattedStringText(text[:offset])]
    tail = [cst.FormattedStringText(text[offset:]), *string.parts[index + 1 :]]
    pieces = [_piece(string, head), _piece(string, tail)]
    whitespace = cst.ParenthesizedWhitespace(
        first_line=cst.TrailingWhitespace(),
        indent=True,
        last_line=cst.SimpleWhitespace(" " * (column - block)),
    )
    new = cst.ConcatenatedString(left=pieces[0], right=pieces[1], whitespace_between=whitespace)
    if max(len(x) for x in (line[:column] + ctx.module.code_for_node(new)).split("\n")) >= len(
        line
    ):
        return
    message = f"split a string the rewrite made longer than {limit} columns"
    ctx.edits[id(string)] = Edit(string, new, rule_code, message, Safety.SAFE)
    laid_out(ctx).append(new)


def _piece(
    string: cst.FormattedString, parts: List[cst.BaseFormattedStringContent]
) -> Union[cst.SimpleString, cst.FormattedString]:
    """One piece of a split f-string (a plain string when it has no placeholders left)."""
    texts = [p for p in parts if isinstance(p, cst.FormattedStringText) and p.value]
    if len(texts) == len(parts) and not any("{" in p.value or "}" in p.value for p in texts):
        prefix = string.prefix.replace("f", "").replace("F", "")
        return cst.SimpleString(
            prefix
            + string.start[len(string.prefix) :]
            + "".join(p.value for p in texts)
            + string.end
        )
    return string.with_changes(
        parts=[p for p in parts if not (isinstance(p, cst.FormattedStringText) and not p.value)]
    )


def _in_header(ctx: Context, node: cst.CSTNode) -> bool:
    for up in ctx.ancestors(node):
        if isinstance(up, (cst.BaseSuite, cst.SimpleStatementLine)):
            return False
        if isinstance(up, cst.BaseCompoundStatement):
            return True
    return False


def block_indent(ctx: Context, node: cst.CSTNode) -> Optional[int]:
    """The column of the statement holding ``node`` (what ``indent=True`` whitespace adds)."""
    for up in ctx.ancestors(node):
        if isinstance(up, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            return ctx.position(up).start.column
    return None
