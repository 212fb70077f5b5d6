"""Finding the Python snippets of a documentation page or a docstring, for
:mod:`migrator.docs`.

A :class:`Piece` is one snippet: the lines it spans, its indentation and its code (a doctest
example's code without its prompts).  :func:`markdown_pieces` reads fenced blocks,
:func:`rst_pieces` code directives and ``::`` literal blocks, and :func:`docstring_pieces`
the doctest examples and code blocks of each docstring of a module.  What counts as a
snippet is listed in :mod:`migrator.docs`; a block that is not valid Python is no snippet.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from typing import Iterator, List, Optional, Sequence, Tuple

LANGUAGES = ("python", "py", "python3", "pycon", "ipython", "ipython3")
FENCE_RE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*\{?\.?(?P<info>[\w+-]*)")
DIRECTIVE_RE = re.compile(
    r"^(?P<indent>[ \t]*)\.\.[ \t]+(?:code-block|code|sourcecode)::[ \t]*(?P<lang>[\w+-]*)"
)
PROMPT_RE = re.compile(r"^(?P<indent>[ \t]*)>>>(?: |$)")
CONTINUATION_RE = re.compile(r"^(?P<indent>[ \t]*)\.\.\.(?: |$)")
# A docstring that may hold a reST code block (a literal block, a code directive).
CODE_BLOCK_RE = re.compile(r"::[ \t]*$|^[ \t]*\.\.[ \t]+(?:code-block|code|sourcecode)::", re.M)
# A docstring that may hold a Markdown fenced block (```python, ~~~py).
_LANGS = "|".join(LANGUAGES)
FENCE_HINT_RE = re.compile(rf"^[ \t]*(?:`{{3,}}|~{{3,}})[ \t]*\{{?\.?(?:{_LANGS})\b", re.M)


@dataclasses.dataclass
class Piece:
    start: int  # 0-based index of the first line
    end: int  # one past the last line
    indent: str
    code: str
    doctest: bool = False
    trailing_ellipsis: bool = False
    region_end: int = 0  # a doctest's expected output ends here at the latest
    # CPython's tree of ``code``, from the check that it parses (read by docs.module_prelude)
    tree: Optional[ast.Module] = dataclasses.field(default=None, compare=False, repr=False)


def _parsed(code: str) -> Optional[ast.Module]:
    try:
        return ast.parse(code)
    except (SyntaxError, ValueError):
        return None


def line_body(line: str) -> str:
    return line.rstrip("\r\n")


def _dedent(lines: Sequence[str]) -> Tuple[str, str]:
    bodies = [line_body(line) for line in lines]
    indents = [b[: len(b) - len(b.lstrip(" \t"))] for b in bodies if b.strip()]
    if not indents:
        return "", ""
    common = indents[0]
    for indent in indents[1:]:
        while not indent.startswith(common):
            common = common[:-1]
    code = "".join((b[len(common) :] if b.strip() else "") + "\n" for b in bodies)
    return common, code


def _doctest_pieces(lines: Sequence[str], start: int, end: int, raw: bool = False) -> List[Piece]:
    """The ``>>>`` examples between ``start`` and ``end``.  An example with a backslash is
    skipped unless the text is raw (in a docstring that is not raw it is an escape, and the
    example's code is not what the file spells)."""
    pieces: List[Piece] = []
    index = start
    while index < end:
        body = line_body(lines[index])
        match = PROMPT_RE.match(body)
        if not match:
            index += 1
            continue
        indent = match.group("indent")
        code_lines = [body[len(indent) + 4 :] if len(body) > len(indent) + 3 else ""]
        last = index + 1
        ellipsis = False
        while last < end:
            follow = line_body(lines[last])
            cont = CONTINUATION_RE.match(follow)
            if not cont or cont.group("indent") != indent:
                break
            code_lines.append(follow[len(indent) + 4 :] if len(follow) > len(indent) + 3 else "")
            last += 1
        if code_lines and len(code_lines) > 1 and not code_lines[-1].strip():
            ellipsis = True
            code_lines = code_lines[:-1]
        code = "\n".join(code_lines) + "\n"
        tree = _parsed(code) if raw or "\\" not in code else None
        if tree is not None:
            pieces.append(Piece(index, last, indent, code, True, ellipsis, end, tree))
        index = last
    return pieces


def _block_pieces(lines: Sequence[str], start: int, end: int) -> List[Piece]:
    """A code block's content: doctest examples, or the whole block as code."""
    if any(PROMPT_RE.match(line_body(lines[i])) for i in range(start, end)):
        return _doctest_pieces(lines, start, end)
    indent, code = _dedent(lines[start:end])
    tree = _parsed(code) if code.strip() else None
    if tree is None:
        return []
    return [Piece(start, end, indent, code, tree=tree)]


def markdown_pieces(lines: Sequence[str]) -> List[Piece]:
    pieces: List[Piece] = []
    index = 0
    while index < len(lines):
        match = FENCE_RE.match(line_body(lines[index]))
        if not match:
            index += 1
            continue
        fence = match.group("fence")
        close = index + 1
        while close < len(lines):
            body = line_body(lines[close]).strip()
            if body.startswith(fence[0] * len(fence)) and not body.strip(fence[0]):
                break
            close += 1
        if match.group("info").lower() in LANGUAGES:
            pieces += _block_pieces(lines, index + 1, close)
        index = close + 1
    return pieces


def indent_width(body: str) -> int:
    return len(body) - len(body.lstrip(" \t"))


def rst_pieces(lines: Sequence[str]) -> List[Piece]:
    pieces: List[Piece] = []
    index = 0
    while index < len(lines):
        body = line_body(lines[index])
        directive = DIRECTIVE_RE.match(body)
        literal = (
            not directive and body.rstrip().endswith("::") and not body.lstrip().startswith("..")
        )
        if not directive and not literal:
            index += 1
            continue
        if directive and directive.group("lang").lower() not in LANGUAGES:
            index += 1
            continue
        base = indent_width(body)
        first = index + 1
        # directive options (":linenos:") come right after the directive line
        while directive and first < len(lines) and line_body(lines[first]).strip().startswith(":"):
            first += 1
        last = first
        while last < len(lines):
            current = line_body(lines[last])
            if current.strip() and indent_width(current) <= base:
                break
            last += 1
        while last > first and not line_body(lines[last - 1]).strip():
            last -= 1
        content_start = first
        while content_start < last and not line_body(lines[content_start]).strip():
            content_start += 1
        if content_start < last:
            pieces += _block_pieces(lines, content_start, last)
        index = max(last, index + 1)
    return pieces


_STATEMENT_LISTS = ("body", "orelse", "finalbody", "handlers", "cases")


def _docstring_owners(tree: ast.Module) -> Iterator[ast.AST]:
    """The module, classes and functions: only statements hold them, so the walk never enters
    an expression (walking every node of a big module cost more than parsing it)."""
    stack: List[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node
        for field in _STATEMENT_LISTS:
            children = getattr(node, field, None)
            if children:
                stack.extend(reversed(children))


def docstring_pieces(
    text: str, lines: Sequence[str], tree: Optional[ast.Module] = None
) -> List[List[Piece]]:
    """Doctest examples and reST code blocks that parse, per docstring of a Python module
    (``tree``: the module's ``ast``, when the caller has parsed it)."""
    if tree is None:
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            return []
    groups: List[List[Piece]] = []
    source_lines: List[str] = []  # the lines as ``ast`` counts them, split once, when needed
    for node in _docstring_owners(tree):
        body = getattr(node, "body", [])
        if not body or not isinstance(body[0], ast.Expr):
            continue
        value = body[0].value
        if not (isinstance(value, ast.Constant) and isinstance(value.value, str)):
            continue
        doc = value.value
        blocks = CODE_BLOCK_RE.search(doc) is not None
        fences = FENCE_HINT_RE.search(doc) is not None
        if ">>>" not in doc and not blocks and not fences:
            continue
        start, end = value.lineno - 1, (value.end_lineno or value.lineno)
        if not source_lines:
            source_lines = _AST_LINE.findall(text)
        raw = _raw(source_lines, value)
        pieces = _doctest_pieces(lines, start, end, raw) if ">>>" in doc else []
        if blocks:  # reST code blocks (``Example::``, ``.. code-block:: python``)
            for piece in rst_pieces(lines[start + 1 : end - 1]):
                if not piece.doctest and (raw or "\\" not in piece.code):
                    pieces.append(
                        dataclasses.replace(
                            piece, start=piece.start + start + 1, end=piece.end + start + 1
                        )
                    )
        if fences:  # Markdown fenced blocks (```python), as mkdocstrings renders them
            taken = {p.start for p in pieces}
            for piece in markdown_pieces(lines[start + 1 : end - 1]):
                if not piece.doctest and (raw or "\\" not in piece.code):
                    moved = piece.start + start + 1
                    if moved not in taken:
                        pieces.append(
                            dataclasses.replace(piece, start=moved, end=piece.end + start + 1)
                        )
        pieces.sort(key=lambda p: p.start)
        # the docstring's first and last lines also hold the quotes: only whole lines inside
        pieces = [p for p in pieces if p.start > start and p.end < end]
        if pieces:
            groups.append(pieces)
    return groups


# Lines as ``ast`` numbers them (``\r\n``, ``\r`` or ``\n`` end one; ``str.splitlines`` also
# splits at form feeds and other separators ``ast`` keeps inside a line).
_AST_LINE = re.compile(r"[^\r\n]*(?:\r\n?|\n)|[^\r\n]+$")


def _segment(source_lines: Sequence[str], node: ast.expr) -> str:
    """``ast.get_source_segment`` on lines split once per file: that function splits the whole
    text again on every call, which made a module with many docstrings quadratic."""
    first, last = node.lineno - 1, (node.end_lineno or node.lineno) - 1
    if last >= len(source_lines) or node.end_col_offset is None:
        return ""
    if first == last:
        return source_lines[first].encode()[node.col_offset : node.end_col_offset].decode()
    head = source_lines[first].encode()[node.col_offset :].decode()
    tail = source_lines[last].encode()[: node.end_col_offset].decode()
    return "".join([head, *source_lines[first + 1 : last], tail])


def _raw(source_lines: Sequence[str], value: ast.Constant) -> bool:
    """The docstring is one raw string literal: its backslashes are the example's own."""
    segment = _segment(source_lines, value)
    prefix = segment[: len(segment) - len(segment.lstrip("rRuUbB"))]
    body = segment[len(prefix) :]
    quote = body[:3] if body[:3] in ('"""', "'''") else body[:1]
    return (
        "r" in prefix.lower()
        and len(body) >= 2 * len(quote)
        and quote not in body[len(quote) : -len(quote)]
    )


# A docstring may hold a reST or Markdown code block (cheap tests before the docstrings are
# looked at): ``::`` ending a line, a ``code::``/``code-block::``/``sourcecode::`` directive, or
# a fence opening a Python block.  Each pattern starts with its literal, which the regex engine
# looks for fast (one pattern of all three tried every position: 1.4 s over 12 MB of sources).
_LITERAL_BLOCK = re.compile(r"::[ \t]*\r?$", re.M)
_FENCE = re.compile(r"^[ \t]*(?:```|~~~)[ \t]*\{?\.?(?:py|ipy)", re.M)


def may_hold_code_block(text: str) -> bool:
    return (
        "code::" in text  # (and ``sourcecode::``)
        or "code-block::" in text
        or _LITERAL_BLOCK.search(text) is not None
        or (("```" in text or "~~~" in text) and _FENCE.search(text) is not None)
    )
