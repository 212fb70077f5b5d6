"""Fixes without LibCST: a file whose only fixes each replace one name's text, written from
CPython's ``ast`` positions (issue #29).

Most legacy files with a fix have only renames in them (``jax.tree_map(...)`` ->
``jax.tree.map(...)``: 103 of the 234 legacy-corpus files with a fix), where LibCST's parse
and rounds cost many times the ``ast`` parse gate 2 already made.  A rule that can tell such a
fix from the :class:`migrator.astview.AstView` says so (:meth:`migrator.rule.Rule.ast_edits`);
the engine then writes the new text here, and answers the file only where the LibCST path
would give the same output, fixes and findings:

- every other candidate rule answers on ``ast`` (:mod:`migrator.astfirst`): none has a fix;
- no edit moves what LibCST lays out: a replacement of another length is not the callee of a
  call with a continuation line at or right of its parenthesis (realigned,
  :mod:`migrator.layout`), and no line an edit touches is longer than the file's limit (it
  would be wrapped, :mod:`migrator.wrap`);
- nothing the rounds tidy or fold is around an edit (:func:`_left_alone`);
- the new text parses, and is a fixed point: the rules the gates pass on it (every active
  rule, as LibCST's later rounds read) all answer on ``ast``, and their findings are the
  file's, at the new text's positions, as LibCST's last round reports them.  What the file
  was written for is read from the text as read (:attr:`AstView.as_read`), as the rounds do.

Anything else is None, and LibCST decides.  ``tests/test_gate_equivalence.py`` and
``bench/gates.py`` check both paths give the same on the fixtures, programs and corpora.
"""

from __future__ import annotations

import ast
import bisect
import re
from typing import TYPE_CHECKING, Callable, Dict, List, NamedTuple, Optional, Sequence, Set, Tuple

from jaxmigrate.migrator.astfacts import Facts, ast_facts, dotted
from jaxmigrate.migrator.continuation import moving_lines
from jaxmigrate.migrator.diagnostics import Diagnostic
from jaxmigrate.migrator.linemap import line_map

if TYPE_CHECKING:  # pragma: no cover
    from jaxmigrate.migrator.astview import AstView
    from jaxmigrate.migrator.rule import Rule
    from jaxmigrate.migrator.settings import Settings

_LINE_END = re.compile(r"\r\n?|\n")
_ODD_LINE_ENDS = re.compile("[\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
# A module up to this many characters may be written from ``ast`` (its tree, and then the new
# text's, both held: a bigger one takes the piecewise path, migrator.piecewise.BIG_CHARS).
WRITTEN_CHARS = 1_000_000


class AstEdit(NamedTuple):
    """A fix a rule reads from the view: ``node``'s whole text becomes ``new``."""

    node: ast.expr
    new: str
    message: str


class Written(NamedTuple):
    """What the fixes written from ``ast`` made of a file."""

    output: str
    fixes: List[Diagnostic]
    findings: List[Diagnostic]
    tree: ast.Module


# The rules left after the gates on a text, and its facts (the engine's gates 1, 1b and 2).
Gate = Callable[[str, Facts], Tuple["Rule", ...]]
# Every finding of the rules on a text as the view reads it (migrator.astfirst), None where
# one of them cannot tell; the view reads what the file was written for from the file as read.
Answer = Callable[
    [str, Facts, Sequence["Rule"], Tuple[str, ast.Module]], Optional[List[Diagnostic]]
]


def written_on_ast(
    view: "AstView",
    edits: Sequence[Tuple["Rule", AstEdit]],
    settings: "Settings",
    gate: Gate,
    answer: Answer,
) -> Optional[Written]:
    """The file with ``edits`` (each rule's, every other candidate answered on ``view``)
    written in, as the LibCST path would give it; None where it might not."""
    text = view.text
    if len(text) > WRITTEN_CHARS:
        return None  # (a big module: the piecewise path parses a few statements with LibCST)
    spans: List[Tuple[int, int, str]] = []
    fixes: List[Diagnostic] = []
    parents = _parents(view.tree, {edit.node.lineno for _rule, edit in edits})
    moved: List[Tuple[int, int]] = []  # the lines realigned (from, to) of each call that moves
    for rule, edit in edits:
        (line, column), (end_line, end_column) = view.start(edit.node), view.end(edit.node)
        if line != end_line:
            return None
        start, end = view.offset(line, column), view.offset(line, end_column)
        call = parents.get(id(edit.node))
        if len(edit.new) != end - start and isinstance(call, ast.Call) and call.func is edit.node:
            last = call.end_lineno or line
            shifts = [] if last == line else _realigned(view, line, last, end_column, edit)
            if shifts is None:
                return None  # (LibCST realigns the call's continuation lines: how, unsure)
            if shifts:
                spans.extend(shifts)
                moved.append((line + 1, last))
        spans.append((start, end, edit.new))
        where = (line, column + 1, end_line) if settings.locate_fixes else (0, 0, 0)
        fixes.append(
            Diagnostic(rule.code, edit.message, where[0], where[1], rule.safety.value, where[2])
        )
    lines = [edit.node.lineno for _rule, edit in edits]
    if len(moved) > 1 or any(low <= number <= high for low, high in moved for number in lines):
        return None  # (one realignment inside another's: LibCST composes them)
    spans.sort()
    if any(a[1] > b[0] for a, b in zip(spans, spans[1:])):
        return None
    renames = {text[start:end]: new for start, end, new in spans if text[start:end].strip()}
    if any(old in new for new in renames.values() for old in renames):
        return None
    if not all(_left_alone(view, edit.node, parents, renames) for _rule, edit in edits):
        return None  # the rounds' tidying may act on what the fix wrote
    pieces, at = [], 0
    for start, end, new in spans:
        pieces.append(text[at:start])
        pieces.append(new)
        at = end
    pieces.append(text[at:])
    output = "".join(pieces)
    if settings.line_length and _too_long(text, output, spans, settings.line_length):
        return None  # LibCST's path wraps it
    facts = ast_facts(output)
    if facts is None or facts.tree is None:
        return None  # (LibCST's path says why)
    findings = answer(output, facts, gate(output, facts), view.as_read)
    if findings is None:
        return None
    return Written(output, fixes, findings, facts.tree)


def _line_starts(text: str) -> List[int]:
    """The offset in ``text`` where each line starts, as ``ast`` counts lines."""
    return [0, *(found.end() for found in _LINE_END.finditer(text))]


def _realigned(
    view: "AstView", line: int, last: int, end: int, edit: AstEdit
) -> Optional[List[Tuple[int, int, str]]]:
    """The new indentation of the continuation lines (``line`` + 1 to ``last``) of the call
    whose callee ``edit`` renames (it ends at ``end`` on ``line``), as
    :func:`migrator.layout.realign` moves them: by the change in width, each line at or right
    of the column after the parenthesis that :func:`moving_lines` says moves; spans of the
    text.  None where the text may not read so (a multi-line string, a backslash, a tab, a
    line that would not move though right of the parenthesis)."""
    rest = view.line(line)[end:]
    after = rest.lstrip(" ")
    if not after.startswith("("):
        return None
    after_paren = end + len(rest) - len(after) + 1
    rows = [view.line(number) for number in range(line, last + 1)]
    segment = "\n".join(rows)
    if any(odd in segment for odd in ("\\", "\t", '"""', "'''")):
        return None
    if len(segment.splitlines()) != len(rows):
        return None  # (a line end that splitlines reads and ast does not)
    numbers = [
        number
        for number, row in enumerate(rows[1:], start=line + 1)
        if row.strip() and not row.lstrip().startswith("#")
    ]
    moves = moving_lines(rows, after_paren)
    if len(moves) != len(numbers):
        return None
    return _shifted(
        view, numbers, moves, after_paren, len(edit.new) - (end - view.start(edit.node)[1])
    )


def _shifted(
    view: "AstView",
    numbers: List[int],
    moves: Tuple[bool, ...],
    after_paren: int,
    delta: int,
) -> Optional[List[Tuple[int, int, str]]]:
    """:func:`_realigned`'s spans: the lines ``numbers`` (each moving or not, ``moves``) at
    or right of ``after_paren`` moved by ``delta``."""
    spans = []
    for number, moving in zip(numbers, moves):
        row = view.line(number)
        lead = len(row) - len(row.lstrip(" "))
        if lead < after_paren:
            continue  # (left of the parenthesis: stays)
        if not moving:
            return None
        at = view.offset(number, 0)
        spans.append((at, at + lead, " " * (lead + delta)))
    return spans


def _parents(tree: ast.Module, lines: Set[int]) -> Dict[int, ast.AST]:
    """id(node) -> its parent, for every node of the top-level statements of ``tree`` that
    span one of ``lines`` (and those statements')."""
    found: Dict[int, ast.AST] = {}
    for statement in tree.body:
        if any(statement.lineno <= line <= (statement.end_lineno or 0) for line in lines):
            found[id(statement)] = tree
            for node in ast.walk(statement):
                for child in ast.iter_child_nodes(node):
                    found[id(child)] = node
    return found


def _left_alone(
    view: "AstView", node: ast.AST, parents: Dict[int, ast.AST], renames: Dict[str, str]
) -> bool:
    """Would the passes that tidy what a fix wrote (:mod:`migrator.tidy`,
    :mod:`migrator.folds`) leave the text around ``node`` as it is?  Not where it sits in a
    ``Union[...]`` (or what may be one), a ``|`` or ``or`` chain, an ``isinstance`` or
    ``issubclass`` call, an ``if`` whose ``else`` may now read the same as its body, or a
    store ``x = ...`` next to another store to ``x`` in its block."""
    child: ast.AST = node
    up = parents.get(id(node))
    while up is not None:
        kind = type(up)
        if isinstance(up, ast.BoolOp) and type(up.op) is ast.Or:  # (an ``and`` only in one)
            return False
        if isinstance(up, ast.Subscript) and _may_be_union(view, up):
            return False
        if kind is ast.BinOp and type(up.op) is ast.BitOr:  # type: ignore[attr-defined]
            return False
        if isinstance(up, ast.Call) and _names_check(up):
            return False
        if kind is ast.If and up.orelse and not _differ(view, up, renames):  # type: ignore
            return False
        if isinstance(up, ast.stmt) and isinstance(child, ast.expr):
            if _next_to_a_store(up, parents.get(id(up))):
                return False
        child, up = up, parents.get(id(up))
    return True


def _may_be_union(view: "AstView", subscript: ast.Subscript) -> bool:
    """Might ``subscript`` be ``typing.Union[...]`` (whose repeated members are tidied)?  Its
    value is a dotted name that ends in ``Union`` or whose head is imported from a module
    named like ``typing``."""
    parts = dotted(subscript.value)
    if parts is None:
        return False  # (``f(x)[0]``: the tidying reads a name's qualified name only)
    return parts[-1] == "Union" or any(
        item.bound == parts[0] and "typing" in item.qualname for item in view.imports
    )


def _names_check(call: ast.Call) -> bool:
    return type(call.func) is ast.Name and call.func.id in ("isinstance", "issubclass")


def _differ(view: "AstView", branch: ast.If, renames: Dict[str, str]) -> bool:
    """Do an ``if``'s body and ``else`` certainly differ once every rename is written (each
    name's every occurrence renamed: branches the same after the fixes are so after that)?"""
    if len(branch.body) != len(branch.orelse):
        return True
    for a, b in zip(branch.body, branch.orelse):
        first, second = (ast.get_source_segment(view.text, s) or "" for s in (a, b))
        for old, new in renames.items():
            first, second = first.replace(old, new), second.replace(old, new)
        if first.strip() != second.strip():
            return True
    return False


def _next_to_a_store(statement: ast.stmt, holder: Optional[ast.AST]) -> bool:
    """Is ``statement`` a store ``x = ...`` right before or after another store to ``x`` in
    its block, the first of the two storing what does nothing and the second not reading
    ``x`` (the first may be dropped as dead: :mod:`migrator.folds`)?"""
    name = _stored(statement)
    if name is None or holder is None:
        return False
    for field in ("body", "orelse", "finalbody"):
        block = getattr(holder, field, None)
        if isinstance(block, list) and any(s is statement for s in block):
            at = next(i for i, s in enumerate(block) if s is statement)
            pairs = zip(block[max(at - 1, 0) : at + 1], block[at : at + 2])
            return any(_dead_store(first, second, name) for first, second in pairs)
    return False


def _dead_store(first: ast.stmt, second: ast.stmt, name: str) -> bool:
    """Might the folding drop ``first`` (``name = A``, ``A`` a constant or a dotted name) as
    overwritten by ``second`` (``name = B``, ``B`` not reading ``name``)?"""
    if first is second or _stored(first) != name or _stored(second) != name:
        return False
    value = first.value  # type: ignore[attr-defined]
    if not isinstance(value, ast.Constant) and dotted(value) is None:
        return False
    later = second.value  # type: ignore[attr-defined]
    return not any(type(n) is ast.Name and n.id == name for n in ast.walk(later))


def _stored(statement: ast.AST) -> Optional[str]:
    if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
        return None
    target = statement.targets[0]
    return target.id if type(target) is ast.Name else None


def _too_long(text: str, output: str, spans: List[Tuple[int, int, str]], limit: int) -> bool:
    """Would LibCST's rounds lay out again a line the edits wrote (:func:`wrap.lines_made_long`:
    over ``limit`` characters, where the line it came from in the file as read was not)?
    (``spans``: the input's offsets, sorted.)"""
    starts = _line_starts(output)
    numbers, shift = set(), 0
    for start, end, new in spans:
        numbers.add(bisect.bisect_right(starts, start + shift))
        shift += len(new) - (end - start)
    ends = starts[1:] + [len(output) + 1]
    long = [
        n for n in numbers if len(output[starts[n - 1] : ends[n - 1] - 1].rstrip("\r\n")) > limit
    ]
    if not long:
        return False
    if _ODD_LINE_ENDS.search(output):
        return True  # (lines that splitlines counts and ``ast`` does not)
    to_before, before = line_map(text, output), text.splitlines()
    return any(
        not (0 < to_before(n) <= len(before) and len(before[to_before(n) - 1]) > limit)
        for n in long
    )
