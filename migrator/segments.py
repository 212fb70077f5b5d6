"""Migrating code that lives in pieces: notebook cells, documentation code blocks, doctests.

The pieces of one document are one program (a notebook's cells run top to bottom; a page's
snippets build on each other), so they are migrated together: the segments are joined into
one module, separated by marker statements, and split again afterwards.  Name resolution
therefore sees ``import jax.numpy as jnp`` in cell 1 when cell 5 uses ``jnp.DeviceArray``,
and an import a fix needs goes where the engine puts imports in a module: after the last
top-level import (which is in the cell or block that imports), otherwise at the top of the
first segment.  Each segment keeps its own boundaries; a segment the migration did not touch
comes back byte for byte.

If the joined text does not parse (one broken snippet) the segments are migrated one by one
and the ones that do not parse are left alone.
"""

from __future__ import annotations

import ast
import dataclasses
import difflib
import re
from typing import TYPE_CHECKING, Dict, List, Optional, Sequence, Set, Tuple

from jaxmigrate.migrator.astfacts import iter_nodes
from jaxmigrate.migrator.diagnostics import Diagnostic
from jaxmigrate.migrator.errors import MigrationError
from jaxmigrate.migrator.settings import Settings

if TYPE_CHECKING:  # pragma: no cover
    from jaxmigrate.migrator.engine import Result
    from jaxmigrate.migrator.plan import Plan

MARKER = "__jaxmigrate_segment__"
_MARKER_RE = re.compile(r"^" + MARKER + r"\((\d+)\)\r?\n", re.MULTILINE)


def migrate_source(text: str, settings: Settings, cache=None) -> "Result":  # noqa: ANN001
    """:func:`migrator.engine.migrate_source`, imported on the first call (with LibCST and the
    rules): a module whose examples no rule can act on never loads them."""
    from jaxmigrate.migrator.engine import migrate_source as migrate

    return migrate(text, settings, cache)


@dataclasses.dataclass(frozen=True)
class SegmentDiagnostic(Diagnostic):
    """A diagnostic inside a segment: ``where`` names it (``cell 3``), ``line`` counts in it."""

    where: str = ""


@dataclasses.dataclass
class SegmentResult:
    outputs: List[str]
    fixes: List[Tuple[int, Diagnostic]]  # (segment index, diagnostic with a segment line)
    findings: List[Tuple[int, Diagnostic]]
    skipped: List[int]  # segments that could not be parsed, left as they were


def _with_newline(text: str) -> str:
    return text if text.endswith("\n") or not text else text + "\n"


def migrate_segments(
    segments: Sequence[str],
    settings: Settings,
    cache=None,  # noqa: ANN001
    gates: Optional[Plan] = None,
) -> SegmentResult:
    """Migrate the segments as one program; returns the new segments and located diagnostics.
    ``gates``: the plan of the kept gates of ``settings`` (:mod:`migrator.gateplan`): where
    they pass no rule, the engine is not asked (it would give the program back as it is)."""
    if not segments:
        return SegmentResult([], [], [], [])
    joined = _joined(segments)
    if gates is not None and not gates.candidates(joined):  # the engine's gates 1 and 1b
        return SegmentResult(list(segments), [], [], [])
    try:
        result = migrate_source(joined, settings, cache)
    except MigrationError:
        return _without_broken(segments, settings, cache)
    if not result.changed and not result.findings and not result.fixes:
        return SegmentResult(list(segments), [], [], [])
    split = _split(result.output, len(segments))
    if split is None:  # a marker went missing: never guess
        return _one_by_one(segments, settings, cache)
    texts, starts = split
    insertions: Dict[int, Tuple[int, int]] = {}
    # (findings alone: every segment comes back as it was, and writes no new name)
    hoisted = (
        _hoist_imports([_with_newline(x) for x in segments], texts, insertions)
        if result.changed
        else None
    )
    if hoisted is not None:  # an import was copied into an earlier segment
        texts = hoisted
    outputs = []
    for original, text in zip(segments, texts):
        text = _ends_as(text, _with_newline(original))
        if text == _with_newline(original):
            outputs.append(original)
        elif not original.endswith("\n") and text.endswith("\n"):
            outputs.append(text[:-1])
        else:
            outputs.append(text)

    input_starts = [1]
    for segment in segments[:-1]:
        input_starts.append(input_starts[-1] + _with_newline(segment).count("\n") + 1)

    def locate(diagnostic: Diagnostic, finding: bool) -> Tuple[int, Diagnostic]:
        # Fixes point at the lines they changed (input), findings at the migrated text.
        table = starts if finding else input_starts
        index = 0
        for position, start in enumerate(table):
            if diagnostic.line >= start:
                index = position
        offset = table[index] - 1
        position, count = insertions.get(index, (0, 0)) if finding else (0, 0)

        def moved(line: int) -> int:
            line -= offset
            return line + count if count and line > position else line

        end = moved(diagnostic.end_line) if diagnostic.end_line else 0
        return index, dataclasses.replace(diagnostic, line=moved(diagnostic.line), end_line=end)

    return SegmentResult(
        outputs,
        [locate(d, False) for d in result.fixes],
        [locate(d, True) for d in result.findings],
        [],
    )


def _joined(segments: Sequence[str]) -> str:
    """The program of ``segments``: each after a marker statement naming its index."""
    parts = []
    for index, segment in enumerate(segments):
        if index:
            parts.append(f"{MARKER}({index})\n")
        parts.append(_with_newline(segment))
    return "".join(parts)


def prelude_only(
    prelude: str, segments: Sequence[str], settings: Settings, gates: Optional["Plan"] = None
) -> bool:
    """Can the program of ``prelude`` then ``segments`` (:func:`migrate_segments`) change or
    report something only in the prelude?  True when every rule that passes gates 1 and 1b
    on it says so (:meth:`migrator.rulegate.RuleGate.prelude_only`); a caller that drops the
    prelude's fixes and findings (a docstring's examples, run with their module's imports)
    then need not migrate it.  ``gates``: as for :func:`migrate_segments`."""
    from jaxmigrate.migrator.plan import make_plan

    plan = gates or make_plan(tuple(settings.active_rules()))
    examples = "".join(_with_newline(segment) for segment in segments)
    return all(
        rule.prelude_only(examples, prelude)
        for rule in plan.every_candidate(_joined([prelude, *segments]))
    )


def added_lines(before: str, after: str) -> Optional[List[str]]:
    """The lines ``after`` has in addition to ``before``'s, or None if it changed one (an
    import the migration dropped from the prelude stays in the module: that is no change)."""
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    old = [line if line.endswith("\n") else line + "\n" for line in old]
    new = [line if line.endswith("\n") else line + "\n" for line in new]
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    added: List[str] = []
    for tag, _i1, _i2, j1, j2 in matcher.get_opcodes():
        if tag == "insert":
            added += new[j1:j2]
        elif tag == "replace":
            return None
    return added


def bindings(tree: ast.Module) -> Dict[str, str]:
    """Top-level import bindings: name -> the statement that binds only it."""
    found: Dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    found.setdefault(alias.asname, f"import {alias.name} as {alias.asname}")
                else:
                    found.setdefault(alias.name.split(".")[0], f"import {alias.name}")
        elif (
            isinstance(node, ast.ImportFrom)
            and node.module is not None
            or isinstance(node, ast.ImportFrom)
            and node.level
        ):
            module = "." * node.level + (node.module or "")
            for alias in node.names:
                if alias.name == "*":
                    continue
                bound = alias.asname or alias.name
                spelled = alias.name + (f" as {alias.asname}" if alias.asname else "")
                found.setdefault(bound, f"from {module} import {spelled}")
    return found


def loads(tree: ast.AST) -> Set[str]:
    """Every name ``tree`` reads or binds (a ``Name`` node's id), walked the cheap way."""
    return {n.id for n in iter_nodes(tree) if type(n) is ast.Name}


def _hoist_imports(
    inputs: Sequence[str], outputs: List[str], insertions: Dict[int, Tuple[int, int]]
) -> Optional[List[str]]:
    """Copy an import into the first segment whose new code needs it before it is bound.

    The engine sees one module, where an import in a later segment counts as visible; in a
    notebook or a page the later segment has not run yet.  A name a fix introduced into
    segment i that is imported only in a later segment gets that import (one name per
    statement) after segment i's own top-level imports.
    """
    try:
        trees_in = [ast.parse(x) for x in inputs]
        trees_out = [ast.parse(x) for x in outputs]
    except (SyntaxError, ValueError):
        return None
    result = list(outputs)
    changed = False
    bound: Set[str] = set()
    later = [bindings(tree) for tree in trees_out]
    for index, (before, after) in enumerate(zip(trees_in, trees_out)):
        own = bindings(after)
        new_names = loads(after) - loads(before) - bound - set(own)
        missing = []
        for name in sorted(new_names):
            source = next((b[name] for b in later[index + 1 :] if name in b), None)
            if source is not None:
                missing.append(source)
        if missing:
            lines = result[index].splitlines(keepends=True)
            position = 0
            for node in after.body:
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    position = node.end_lineno or node.lineno
                elif position or not (
                    isinstance(node, ast.Expr)
                    and isinstance(getattr(node, "value", None), ast.Constant)
                ):
                    break
            lines[position:position] = [m + "\n" for m in missing]
            insertions[index] = (position, len(missing))
            result[index] = "".join(lines)
            changed = True
            own.update({name: "" for name in new_names})
        bound |= set(own)
    return result if changed else None


def _ends_as(text: str, original: str) -> str:
    """``text`` without blank lines at its end that ``original`` did not have: where a fix
    removed a segment's last statements, the engine gives the next statement (the marker)
    the blank lines that stood above them (:mod:`migrator.gaps`)."""
    extra = (len(text) - len(text.rstrip("\n"))) - (len(original) - len(original.rstrip("\n")))
    return text[: len(text) - extra] if extra > 0 and text.strip() else text


def _split(output: str, count: int) -> Optional[Tuple[List[str], List[int]]]:
    """The segments of a joined output and the joined-text line each starts on."""
    matches = list(_MARKER_RE.finditer(output))
    if [int(m.group(1)) for m in matches] != list(range(1, count)):
        return None
    texts: List[str] = []
    starts = [1]
    position = 0
    for match in matches:
        texts.append(output[position : match.start()])
        position = match.end()
        starts.append(output.count("\n", 0, position) + 1)
    texts.append(output[position:])
    return texts, starts


def _without_broken(segments: Sequence[str], settings: Settings, cache) -> SegmentResult:  # noqa: ANN001
    """The segments that parse, still as one program; the others are left alone."""
    good = []
    for index, segment in enumerate(segments):
        try:
            ast.parse(_with_newline(segment))
        except (SyntaxError, ValueError):
            continue
        good.append(index)
    if len(good) == len(segments) or not good:  # parse errors only when joined: be safe
        return _one_by_one(segments, settings, cache)
    inner = migrate_segments([segments[i] for i in good], settings, cache)
    outputs = list(segments)
    for position, index in enumerate(good):
        outputs[index] = inner.outputs[position]
    return SegmentResult(
        outputs,
        [(good[i], d) for i, d in inner.fixes],
        [(good[i], d) for i, d in inner.findings],
        sorted(set(range(len(segments))) - set(good)) + [good[i] for i in inner.skipped],
    )


def _one_by_one(segments: Sequence[str], settings: Settings, cache) -> SegmentResult:  # noqa: ANN001
    outputs: List[str] = []
    fixes: List[Tuple[int, Diagnostic]] = []
    findings: List[Tuple[int, Diagnostic]] = []
    skipped: List[int] = []
    for index, segment in enumerate(segments):
        try:
            result = migrate_source(_with_newline(segment), settings, cache)
        except MigrationError:
            outputs.append(segment)
            skipped.append(index)
            continue
        text = result.output
        if not segment.endswith("\n") and text.endswith("\n"):
            text = text[:-1]
        outputs.append(text if result.changed else segment)
        fixes += [(index, d) for d in result.fixes]
        findings += [(index, d) for d in result.findings]
    return SegmentResult(outputs, fixes, findings, skipped)
