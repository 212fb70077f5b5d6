"""Old JAX snippets in documentation: doctests in docstrings (by default) and, with
``--docs``, Markdown and reStructuredText pages.

* Markdown (``.md``): fenced blocks whose info string is ``python``, ``py``, ``python3``,
  ``pycon`` or ``ipython`` (backticks or tildes, indented fences too).
* reStructuredText (``.rst``): ``.. code-block:: python`` / ``.. code:: python`` /
  ``.. sourcecode:: python`` directives (also ``py``, ``pycon``, ``ipython``), and ``::``
  literal blocks when their text is Python (doctest or code that parses).
* Doctest examples (``>>> `` lines with their ``... `` continuations), in any of those blocks
  and in the docstrings of ``.py`` files (always: the examples are code users copy, and
  doctest runs them; ``--no-doctests`` leaves them).  Expected output is left, except the
  reprs of the removed array types, rewritten where today's repr is certain
  (:mod:`migrator.doctest_output`).  An example whose code grows a statement (an added
  import) becomes one ``>>>`` example per statement.

All the snippets of one page (of one docstring, for ``.py`` files) are one program, migrated
together through :mod:`migrator.segments`: an import in the first block resolves names in
later ones.  A block that is not valid Python is left alone.  A doctest inside a ``.py``
docstring runs in its module's globals (doctest's rule), so the module's imports of the
names the examples use are given to the migration as a prelude that is not written back;
an import a fix needs that the module lacks goes into the first example.  Examples
containing a backslash are skipped unless the docstring is raw (else it is an escape).
Prose is never changed.  The snippets are found by :mod:`migrator.docpieces`, and a module's
docstrings are gated before it is parsed for them by :mod:`migrator.docgate`.
"""

from __future__ import annotations

import ast
import dataclasses
from typing import Dict, List, Optional, Sequence, Set, Tuple

from jaxmigrate.migrator.diagnostics import Diagnostic
from jaxmigrate.migrator.docgate import CONVENTIONAL, may_change
from jaxmigrate.migrator.docpieces import (
    PROMPT_RE,
    Piece,
    docstring_pieces,
    line_body,
    markdown_pieces,
    rst_pieces,
)
from jaxmigrate.migrator.doctest_output import rewrite_output
from jaxmigrate.migrator.linelength import for_style
from jaxmigrate.migrator.plan import Plan
from jaxmigrate.migrator.segments import (
    added_lines,
    bindings,
    loads,
    migrate_segments,
    prelude_only,
)
from jaxmigrate.migrator.settings import Settings
from jaxmigrate.migrator.source import note_floor

DOC_SUFFIXES = (".md", ".markdown", ".rst")
# The rule whose type an old repr names: its code is on the fix, and select/ignore apply.
REPR_RULES: Dict[str, str] = {"DeviceArray": "JAX101", "ShardedDeviceArray": "JAX102"}


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
        if piece.trailing_ellipsis and isinstance(
            statement,
            (
                ast.FunctionDef,
                ast.ClassDef,
                ast.For,
                ast.While,
                ast.If,
                ast.With,
                ast.Try,
                ast.AsyncFunctionDef,
            ),
        ):
            out.append(f"{piece.indent}...\n")
    return out


def apply_pieces(
    text: str,
    pieces: Sequence[Piece],
    settings: Settings,
    cache=None,
    prelude: str = "",  # noqa: ANN001
    gates: Optional[Plan] = None,
) -> Tuple[str, List[Diagnostic], List[Diagnostic]]:
    """Migrate the pieces as one program; the new text and diagnostics on its lines.

    ``prelude``: import statements the pieces run after (a docstring's module imports), given
    to the migration as a first segment that is not written back; an import the migration
    adds to it goes to the top of the first piece instead.  ``gates``: as for
    :func:`migrator.segments.migrate_segments`."""
    if not pieces:
        return text, [], []
    lines = text.splitlines(keepends=True)
    out, fixes, findings = apply_to_lines(lines, pieces, settings, cache, prelude, gates)
    return (text if out is lines else "".join(out)), fixes, findings


def apply_to_lines(
    lines: List[str],
    pieces: Sequence[Piece],
    settings: Settings,
    cache=None,  # noqa: ANN001
    prelude: str = "",
    gates: Optional[Plan] = None,
) -> Tuple[List[str], List[Diagnostic], List[Diagnostic]]:
    """:func:`apply_pieces` on the text's lines (kept ends): the new lines (``lines`` itself
    when nothing changed, so a module's many docstrings do not copy it each time)."""
    if not pieces:
        return lines, [], []
    given = lines
    lines, output_fixes = rewrite_outputs(lines, pieces, settings)
    codes = [p.code for p in pieces]
    if prelude and settings.gates and prelude_only(prelude, codes, settings, gates):
        return lines, output_fixes, []  # (what the prelude alone gives is dropped below)
    result = migrate_segments([prelude, *codes] if prelude else codes, settings, cache, gates)
    outputs, fixes, findings = result.outputs, result.fixes, result.findings
    added: List[str] = []
    if prelude:
        added = added_lines(prelude, outputs[0])  # type: ignore[assignment]
        if added is None:  # the migration rewrote the module's own imports: do without them
            return apply_to_lines(lines, pieces, settings, cache)
        outputs = outputs[1:]
        # a fix without a position (locate_fixes off) counts, on the first piece
        fixes = [(max(i - 1, 0), d) for i, d in fixes if i or not d.line]
        findings = [(i - 1, _shifted(d, len(added)) if i == 1 else d) for i, d in findings if i]
        if added:
            outputs[0] = "".join(added) + outputs[0]
    newline = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
    out: List[str] = []
    starts: List[int] = []  # 1-based line in the new text where each piece's rendering starts
    position = 0
    same = lines is given and all(code == piece.code for piece, code in zip(pieces, outputs))
    for piece, code in zip(pieces, outputs) if not same else ():
        out.extend(lines[position : piece.start])
        starts.append(len(out) + 1)
        if code == piece.code:
            out.extend(lines[piece.start : piece.end])
        else:
            rendered = _render(piece, code)
            out.extend(r[:-1] + newline if newline != "\n" else r for r in rendered)
        position = piece.end
    if same:  # nothing rewritten: every piece where it was
        out, starts = given, [piece.start + 1 for piece in pieces]
    else:
        out.extend(lines[position:])

    def located(entry: Tuple[int, Diagnostic], finding: bool = True) -> Diagnostic:
        # Fixes point at the lines they changed (input), findings at the migrated text.
        index, diagnostic = entry
        offset = starts[index] - 1 if finding else pieces[index].start
        end = diagnostic.end_line + offset if diagnostic.end_line else 0
        piece = pieces[index]
        margin = len(piece.indent) + (4 if piece.doctest else 0)  # the prompt: ">>> "
        column = diagnostic.column + margin if diagnostic.column else 0
        return dataclasses.replace(
            diagnostic, line=diagnostic.line + offset, end_line=end, column=column
        )

    fixed = output_fixes + [located(e, False) for e in fixes]
    return out, fixed, [located(e) for e in findings]


def _shifted(diagnostic: Diagnostic, count: int) -> Diagnostic:
    if not count:
        return diagnostic
    end = diagnostic.end_line + count if diagnostic.end_line else 0
    return dataclasses.replace(diagnostic, line=diagnostic.line + count, end_line=end)


def _output_end(lines: Sequence[str], piece: Piece, following: int) -> int:
    """One past the last expected-output line of a doctest example: output runs to a blank
    line, the next prompt or the end of its docstring or block.  A docstring's last line that
    starts with its closing quotes holds none of it (at the docstring's own indentation, less
    than the examples', it made the last example's output read as not indented as its prompt,
    which left it as it was)."""
    end = piece.end
    limit = min(piece.region_end or len(lines), following)
    while end < limit:
        body = line_body(lines[end])
        if not body.strip() or PROMPT_RE.match(body):
            break
        if end == piece.region_end - 1 and body.lstrip().startswith(('"""', "'''")):
            break
        end += 1
    return end


def rewrite_outputs(
    lines: List[str], pieces: Sequence[Piece], settings: Settings
) -> Tuple[List[str], List[Diagnostic]]:
    """Old array reprs in the expected output of the doctest ``pieces`` (see
    :mod:`migrator.doctest_output`), under the code of the rule of the old type: new lines,
    or ``lines`` itself when there is none."""
    active: Optional[Set[str]] = None  # (the rules: asked only where an old repr is)
    result = lines
    fixes: List[Diagnostic] = []
    for number, piece in enumerate(pieces):
        if not piece.doctest:
            continue
        following = pieces[number + 1].start if number + 1 < len(pieces) else len(lines)
        end = _output_end(lines, piece, following)
        if end == piece.end:
            continue
        bodies = [line_body(line) for line in lines[piece.end : end]]
        new_bodies, rewrites = rewrite_output(bodies, piece.indent)
        if not rewrites:
            continue
        if active is None:
            active = {rule.code for rule in settings.active_rules()}
        if any(REPR_RULES[name] not in active for _l, _c, name in rewrites):
            continue  # a rule left out by select/ignore: all or nothing per example
        if result is lines:
            result = list(lines)
        for offset, (old, new) in enumerate(zip(lines[piece.end : end], new_bodies)):
            result[piece.end + offset] = new + old[len(line_body(old)) :]
        for line, column, name in rewrites:
            fixes.append(
                Diagnostic(
                    REPR_RULES[name],
                    f"doctest output {name}(...) -> Array(...): the repr of every JAX with "
                    "jax.Array (0.4.1 and later; JAX 0.4.1 release notes)",
                    piece.end + line + 1,
                    column,
                    "safe",
                )
            )
    return result, fixes


def migrate_document(
    text: str,
    suffix: str,
    settings: Settings,
    cache=None,  # noqa: ANN001
) -> Tuple[str, List[Diagnostic], List[Diagnostic]]:
    """A Markdown or reStructuredText page with its Python snippets migrated."""
    lines = text.splitlines(keepends=True)
    pieces = rst_pieces(lines) if suffix == ".rst" else markdown_pieces(lines)
    return apply_pieces(text, pieces, settings, cache)


def migrate_docstrings(
    text: str,
    settings: Settings,
    cache=None,  # noqa: ANN001
    gates: Optional[Plan] = None,
    tree: Optional[ast.Module] = None,
    style_of: Optional[str] = None,
) -> Tuple[str, List[Diagnostic], List[Diagnostic]]:
    """A Python module with the doctest examples of its docstrings migrated.  ``gates``: the
    plan of the kept gates of ``settings`` (:mod:`migrator.gateplan`), which gate 1 asks
    instead of the rules.  ``tree``: CPython's tree of ``text``, when the caller has it (it is
    read, not changed).  ``style_of``: the module's text as read, whose style sets the line
    length (:func:`migrator.linelength.for_style`) once an example may change."""
    fixes: List[Diagnostic] = []
    findings: List[Diagnostic] = []
    if settings.gates and not may_change(text, settings, gates=gates):
        return text, fixes, findings
    if style_of is not None:
        settings = for_style(settings, style_of)
    lines = text.splitlines(keepends=True)
    if tree is None:
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            return text, fixes, findings
        if settings.survey and "jax" in text:  # its floor is asked next (migrator.source)
            note_floor(text, tree, settings.source)
    groups = docstring_pieces(text, lines, tree)
    module_imports = bindings(tree)
    del tree
    # Bottom-up, so an earlier docstring's line numbers stay valid.
    line_count = len(text.splitlines())  # carried from group to group, not counted again
    imports = "\n".join(module_imports.values())
    gated = settings.gates and "DeviceArray" not in text  # (old reprs: see may_change)
    for group in sorted(groups, key=lambda g: -g[0].start):
        codes = [piece.code for piece in group]
        if gated and not may_change(_examples_text(lines, group), settings, imports, gates, codes):
            continue  # the same gate, for the program of this docstring's examples
        prelude = module_prelude(group, module_imports)
        new_lines, new_fixes, new_findings = apply_to_lines(
            lines, group, settings, cache, prelude, gates
        )
        new_text = text if new_lines is lines else "".join(new_lines)
        if new_text == text:
            delta = 0
        else:
            lines = new_text.splitlines(keepends=True)
            new_count = len(new_text.splitlines())
            delta, line_count = new_count - line_count, new_count
        if delta:
            boundary = group[-1].end
            fixes = [_moved(d, boundary, delta) for d in fixes]
            findings = [_moved(d, boundary, delta) for d in findings]
        text = new_text
        fixes += new_fixes
        findings += new_findings
    return text, fixes, findings


def _examples_text(lines: Sequence[str], group: Sequence[Piece]) -> str:
    """The lines that hold a docstring's examples (their code is these lines' words)."""
    return "".join(lines[group[0].start : max(piece.end for piece in group)])


def module_prelude(group: Sequence[Piece], module_imports: Dict[str, str]) -> str:
    """The module's imports a docstring's examples run with: doctest runs a module's examples
    in the module's globals, so a name the examples use without binding it (``jax``,
    ``jnp``) is the module's.  Also ``jax`` itself when the module imports it, so that a fix
    that writes ``jax.Array`` needs no new import.  ``jax`` and ``jnp`` used but bound
    nowhere are JAX's (projects put them in doctest's globals, as pytest's
    ``doctest_namespace`` does)."""
    own: Dict[str, str] = {}
    used = set()
    for piece in group:
        tree = piece.tree if piece.tree is not None else ast.parse(piece.code)
        own.update(bindings(tree))
        used |= loads(tree)
    known = {**CONVENTIONAL, **module_imports}
    wanted = {name for name in used if name in known and name not in own}
    if "jax" in module_imports and "jax" not in own:
        wanted.add("jax")
    return "".join(known[name] + "\n" for name in sorted(wanted))


def _moved(diagnostic: Diagnostic, boundary: int, delta: int) -> Diagnostic:
    if diagnostic.line <= boundary:
        return diagnostic
    end = diagnostic.end_line + delta if diagnostic.end_line else 0
    return dataclasses.replace(diagnostic, line=diagnostic.line + delta, end_line=end)
