"""``--docs``: old JAX snippets in documentation.

* Markdown (``.md``): fenced blocks whose info string is ``python``, ``py``, ``python3``,
  ``pycon`` or ``ipython`` (backticks or tildes, indented fences too).
* reStructuredText (``.rst``): ``.. code-block:: python`` / ``.. code:: python`` /
  ``.. sourcecode:: python`` directives (also ``py``, ``pycon``, ``ipython``), and ``::``
  literal blocks when their text is Python (doctest or code that parses).
* Doctest examples (``>>> `` lines with their ``... `` continuations), in any of those blocks
  and in the docstrings of ``.py`` files.  Expected output lines are never touched; an example
  whose code grows a statement (an added import) becomes one ``>>>`` example per statement.

All the snippets of one page (of one docstring, for ``.py`` files) are one program, migrated
together through :mod:`migrator.segments`: an import in the first block resolves names in
later ones.  A block that is not valid Python is left alone.  A doctest inside a ``.py``
docstring sees only the imports of its own docstring (the module's imports are not
assumed), and examples containing a backslash are skipped (string escapes).
"""

from __future__ import annotations

import ast
import dataclasses
import re
from typing import List, Sequence, Tuple

from jaxmigrate.migrator.diagnostics import Diagnostic
from jaxmigrate.migrator.segments import migrate_segments
from jaxmigrate.migrator.settings import Settings

DOC_SUFFIXES = (".md", ".markdown", ".rst")
LANGUAGES = ("python", "py", "python3", "pycon", "ipython", "ipython3")
_FENCE_RE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*\{?\.?(?P<info>[\w+-]*)")
_DIRECTIVE_RE = re.compile(
    r"^(?P<indent>[ \t]*)\.\.[ \t]+(?:code-block|code|sourcecode)::[ \t]*(?P<lang>[\w+-]*)"
)
_PROMPT_RE = re.compile(r"^(?P<indent>[ \t]*)>>>(?: |$)")
_CONTINUATION_RE = re.compile(r"^(?P<indent>[ \t]*)\.\.\.(?: |$)")


@dataclasses.dataclass
class Piece:
    start: int  # 0-based index of the first line
    end: int  # one past the last line
    indent: str
    code: str
    doctest: bool = False
    trailing_ellipsis: bool = False


def _parses(code: str) -> bool:
    try:
        ast.parse(code)
    except (SyntaxError, ValueError):
        return False
    return True


def _line_body(line: str) -> str:
    return line.rstrip("\r\n")


def _dedent(lines: Sequence[str]) -> Tuple[str, str]:
    bodies = [_line_body(line) for line in lines]
    indents = [b[: len(b) - len(b.lstrip(" \t"))] for b in bodies if b.strip()]
    if not indents:
        return "", ""
    common = indents[0]
    for indent in indents[1:]:
        while not indent.startswith(common):
            common = common[:-1]
    code = "".join((b[len(common) :] if b.strip() else "") + "\n" for b in bodies)
    return common, code


def _doctest_pieces(lines: Sequence[str], start: int, end: int) -> List[Piece]:
    pieces: List[Piece] = []
    index = start
    while index < end:
        body = _line_body(lines[index])
        match = _PROMPT_RE.match(body)
        if not match:
            index += 1
            continue
        indent = match.group("indent")
        code_lines = [body[len(indent) + 4 :] if len(body) > len(indent) + 3 else ""]
        last = index + 1
        ellipsis = False
        while last < end:
            follow = _line_body(lines[last])
            cont = _CONTINUATION_RE.match(follow)
            if not cont or cont.group("indent") != indent:
                break
            code_lines.append(follow[len(indent) + 4 :] if len(follow) > len(indent) + 3 else "")
            last += 1
        if code_lines and len(code_lines) > 1 and not code_lines[-1].strip():
            ellipsis = True
            code_lines = code_lines[:-1]
        code = "\n".join(code_lines) + "\n"
        if "\\" not in code and _parses(code):
            pieces.append(Piece(index, last, indent, code, doctest=True, trailing_ellipsis=ellipsis))
        index = last
    return pieces


def _block_pieces(lines: Sequence[str], start: int, end: int) -> List[Piece]:
    """A code block's content: doctest examples, or the whole block as code."""
    if any(_PROMPT_RE.match(_line_body(lines[i])) for i in range(start, end)):
        return _doctest_pieces(lines, start, end)
    indent, code = _dedent(lines[start:end])
    if not code.strip() or not _parses(code):
        return []
    return [Piece(start, end, indent, code)]


def markdown_pieces(lines: Sequence[str]) -> List[Piece]:
    pieces: List[Piece] = []
    index = 0
    while index < len(lines):
        match = _FENCE_RE.match(_line_body(lines[index]))
        if not match:
            index += 1
            continue
        fence = match.group("fence")
        close = index + 1
        while close < len(lines):
            body = _line_body(lines[close]).strip()
            if body.startswith(fence[0] * len(fence)) and not body.strip(fence[0]):
                break
            close += 1
        if match.group("info").lower() in LANGUAGES:
            pieces += _block_pieces(lines, index + 1, close)
        index = close + 1
    return pieces


def _indent_width(body: str) -> int:
    return len(body) - len(body.lstrip(" \t"))


def rst_pieces(lines: Sequence[str]) -> List[Piece]:
    pieces: List[Piece] = []
    index = 0
    while index < len(lines):
        body = _line_body(lines[index])
        directive = _DIRECTIVE_RE.match(body)
        literal = not directive and body.rstrip().endswith("::") and not body.lstrip().startswith("..")
        if not directive and not literal:
            index += 1
            continue
        if directive and directive.group("lang").lower() not in LANGUAGES:
            index += 1
            continue
        base = _indent_width(body)
        first = index + 1
        # directive options (":linenos:") come right after the directive line
        while directive and first < len(lines) and _line_body(lines[first]).strip().startswith(":"):
            first += 1
        last = first
        while last < len(lines):
            current = _line_body(lines[last])
            if current.strip() and _indent_width(current) <= base:
                break
            last += 1
        while last > first and not _line_body(lines[last - 1]).strip():
            last -= 1
        content_start = first
        while content_start < last and not _line_body(lines[content_start]).strip():
            content_start += 1
        if content_start < last:
            pieces += _block_pieces(lines, content_start, last)
        index = max(last, index + 1)
    return pieces


def docstring_pieces(text: str, lines: Sequence[str]) -> List[List[Piece]]:
    """Doctest examples per docstring of a Python module."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    groups: List[List[Piece]] = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        body = getattr(node, "body", [])
        if not body or not isinstance(body[0], ast.Expr):
            continue
        value = body[0].value
        if not (isinstance(value, ast.Constant) and isinstance(value.value, str)):
            continue
        if ">>>" not in value.value:
            continue
        start, end = value.lineno - 1, (value.end_lineno or value.lineno)
        pieces = _doctest_pieces(lines, start, end)
        # the docstring's first and last lines also hold the quotes: only whole lines inside
        pieces = [p for p in pieces if p.start > start and p.end < end]
        if pieces:
            groups.append(pieces)
    return groups


def _render(piece: Piece, code: str) -> List[str]:
    newline_code = code if code.endswith("\n") else code + "\n"
    if not piece.doctest:
        return [
            (piece.indent + line if line.strip() else "") + "\n"
            for line in newline_code.splitlines()
        ]
    try:
        tree = ast.parse(newline_code)
    except SyntaxError:  # pragma: no cover (the engine only returns code that parses)
        return []
    code_lines = newline_code.splitlines()
    out: List[str] = []
    statements = tree.body
    for number, statement in enumerate(statements):
        first = statement.lineno - 1
        for decorator in getattr(statement, "decorator_list", ()):
            first = min(first, decorator.lineno - 1)
        last = statement.end_lineno or statement.lineno
        if number + 1 < len(statements):
            following = statements[number + 1]
            limit = following.lineno - 1
            for decorator in getattr(following, "decorator_list", ()):
                limit = min(limit, decorator.lineno - 1)
            last = max(last, limit)
        else:
            last = len(code_lines)
        chunk = list(code_lines[first:last])
        while chunk and not chunk[-1].strip():
            chunk.pop()
        for position, line in enumerate(chunk):
            prompt = ">>>" if position == 0 else "..."
            out.append(f"{piece.indent}{prompt}{' ' + line if line else ''}\n")
        if piece.trailing_ellipsis and isinstance(statement, (ast.FunctionDef, ast.ClassDef, ast.For, ast.While, ast.If, ast.With, ast.Try, ast.AsyncFunctionDef)):
            out.append(f"{piece.indent}...\n")
    return out


def apply_pieces(
    text: str, pieces: Sequence[Piece], settings: Settings, cache=None  # noqa: ANN001
) -> Tuple[str, List[Diagnostic], List[Diagnostic]]:
    """Migrate the pieces as one program; the new text and diagnostics on its lines."""
    if not pieces:
        return text, [], []
    lines = text.splitlines(keepends=True)
    result = migrate_segments([p.code for p in pieces], settings, cache)
    newline = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
    out: List[str] = []
    starts: List[int] = []  # 1-based line in the new text where each piece's rendering starts
    position = 0
    for piece, code in zip(pieces, result.outputs):
        out.extend(lines[position : piece.start])
        starts.append(len(out) + 1)
        if code == piece.code:
            out.extend(lines[piece.start : piece.end])
        else:
            rendered = _render(piece, code)
            out.extend(r[:-1] + newline if newline != "\n" else r for r in rendered)
        position = piece.end
    out.extend(lines[position:])

    def located(entry: Tuple[int, Diagnostic], finding: bool = True) -> Diagnostic:
        # Fixes point at the lines they changed (input), findings at the migrated text.
        index, diagnostic = entry
        offset = starts[index] - 1 if finding else pieces[index].start
        end = diagnostic.end_line + offset if diagnostic.end_line else 0
        return dataclasses.replace(diagnostic, line=diagnostic.line + offset, end_line=end)

    new_text = "".join(out)
    return new_text, [located(e, False) for e in result.fixes], [located(e) for e in result.findings]


def migrate_document(
    text: str, suffix: str, settings: Settings, cache=None  # noqa: ANN001
) -> Tuple[str, List[Diagnostic], List[Diagnostic]]:
    """A Markdown or reStructuredText page with its Python snippets migrated."""
    lines = text.splitlines(keepends=True)
    pieces = rst_pieces(lines) if suffix == ".rst" else markdown_pieces(lines)
    return apply_pieces(text, pieces, settings, cache)


def migrate_docstrings(
    text: str, settings: Settings, cache=None  # noqa: ANN001
) -> Tuple[str, List[Diagnostic], List[Diagnostic]]:
    """A Python module with the doctest examples of its docstrings migrated."""
    fixes: List[Diagnostic] = []
    findings: List[Diagnostic] = []
    lines = text.splitlines(keepends=True)
    groups = docstring_pieces(text, lines)
    # Bottom-up, so an earlier docstring's line numbers stay valid.
    for group in sorted(groups, key=lambda g: -g[0].start):
        before_lines = len(text.splitlines())
        new_text, new_fixes, new_findings = apply_pieces(text, group, settings, cache)
        delta = len(new_text.splitlines()) - before_lines
        if delta:
            boundary = group[-1].end
            fixes = [_moved(d, boundary, delta) for d in fixes]
            findings = [_moved(d, boundary, delta) for d in findings]
        text = new_text
        fixes += new_fixes
        findings += new_findings
    return text, fixes, findings


def _moved(diagnostic: Diagnostic, boundary: int, delta: int) -> Diagnostic:
    if diagnostic.line <= boundary:
        return diagnostic
    end = diagnostic.end_line + delta if diagnostic.end_line else 0
    return dataclasses.replace(diagnostic, line=diagnostic.line + delta, end_line=end)
