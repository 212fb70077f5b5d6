"""Which continuation lines of a call move with its opening parenthesis: read from the text
alone (``tokenize``), by :mod:`migrator.layout` where a fix renames a call's callee, and by
:mod:`migrator.astfixes` where such a fix is written without LibCST."""

from __future__ import annotations

import io
import tokenize
from typing import List, Tuple


def moving_lines(segment: List[str], after_paren: int) -> Tuple[bool, ...]:
    """Whether each continuation line of a call (the lines of ``segment`` after the first that
    start with code, in order) moves with the call's opening parenthesis, which stands just
    before ``after_paren`` on the first: it starts at or right of ``after_paren`` and is laid
    out from the innermost bracket open at its start, which moves (it opened on the first line
    from the parenthesis on, or on a line that moves)."""
    moving = {1: True}
    stack: List[bool] = []  # for each open bracket: does it move?
    found: List[bool] = []
    text = "\n".join(segment) + "\n"
    skipped = (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT)
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            row, col = token.start
            if token.type in skipped or token.type == tokenize.ENDMARKER:
                continue
            if row == 1 and col < after_paren - 1:
                continue  # the statement before the call's parenthesis
            if row not in moving:
                moving[row] = bool(stack) and stack[-1] and col >= after_paren
                found.append(moving[row])
            if token.type == tokenize.OP and token.string in "([{":
                stack.append(moving[row])
            elif token.type == tokenize.OP and token.string in ")]}" and stack:
                stack.pop()
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass  # (brackets left open before the call, at the end of the segment: all was read)
    return tuple(found)  # (cut short where it could not be read: realign then counts)
