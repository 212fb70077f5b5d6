"""Jupyter notebooks: migrating the code cells of an ``.ipynb`` file.

* Only code cells change; markdown/raw cells, cell ids, metadata, outputs and execution counts
  are left as they are.  A notebook whose kernel is not Python is left alone.
* The code cells are migrated together (see :mod:`migrator.segments`): an import in cell 1
  resolves a name used in cell 5, and an import a fix needs is added after the last top-level
  import, i.e. in the cell that already imports (otherwise at the top of the first code cell).
* IPython syntax is masked before parsing and restored afterwards: line magics (``%timeit``),
  shell escapes (``!pip``), ``x = %time ...`` / ``x = !ls`` assignments and ``obj?`` help.
  A cell magic whose body is Python (``%%time``, ``%%timeit``, ``%%capture``, ``%%prun``, ...)
  keeps its first line; any other cell magic (``%%bash``, ``%%writefile``, ...) is not Python
  and its cell is skipped.
* The file is written back in its own JSON layout (:mod:`migrator.nbjson`): only the
  ``source`` of a changed cell is re-spelled, everything else keeps its bytes (indentation or
  a compact layout, key order, ``\u00b5``-style escapes); a cell's ``source`` keeps its form
  (a list of lines or one string).
* Findings name the cell: ``nb.ipynb:cell 3:line 2`` (cells counted from 1 over all cells, as
  they appear in the notebook; lines counted within the cell).
* A run reads a notebook as one file (:func:`migrate_as_file`): its diff is the .ipynb file's,
  or with ``--diff-cells`` each changed cell's source; a finding not reported on the migrated
  text moves to its line in the cell as read.
"""

from __future__ import annotations

import dataclasses
import io
import json
import re
import tokenize
from collections import OrderedDict
from typing import Any, Dict, List, Optional, Tuple

from jaxmigrate.migrator import linemap, nbjson
from jaxmigrate.migrator.diagnostics import Diagnostic
from jaxmigrate.migrator.errors import NotebookError
from jaxmigrate.migrator.linediff import unified_diff
from jaxmigrate.migrator.segments import SegmentDiagnostic, migrate_segments
from jaxmigrate.migrator.settings import Settings

MAGIC = "__jaxmigrate_magic__"
_PLACEHOLDER_RE = re.compile(r"^([ \t]*)" + MAGIC + r"\((\d+)\)[ \t]*$")
# Cell magics whose body is ordinary Python.
PYTHON_CELL_MAGICS = frozenset(
    {"time", "timeit", "capture", "prun", "debug", "python", "python3", "pypy", "snakeviz", "memit"}
)
_ASSIGNED_MAGIC_RE = re.compile(r"^\s*[A-Za-z_][\w.,\s]*=\s*[%!]")


def _is_magic(line: str) -> bool:
    stripped = line.strip()
    if not stripped:
        return False
    if stripped[0] in "%!":
        return True
    if _ASSIGNED_MAGIC_RE.match(line) and not stripped.startswith("#"):
        return True
    # ``obj?`` / ``obj??`` help (but not a comment that ends in a question mark)
    return stripped.endswith("?") and "#" not in stripped and not stripped.endswith(("'?", '"?'))


def _inside_statement(text: str) -> bool:
    """Whether ``text`` ends inside an open bracket, string or backslash continuation."""
    if not text.strip():
        return False
    if text.rstrip("\r\n").endswith("\\"):
        return True
    try:
        for _token in tokenize.generate_tokens(io.StringIO(text).readline):
            pass
    except tokenize.TokenError:
        return True  # EOF in a multi-line statement or string
    except (IndentationError, SyntaxError):
        return False
    return False


def mask(source: str) -> Optional[Tuple[str, List[str]]]:
    """Source with IPython lines replaced by placeholders, and the original lines; None: skip."""
    lines = source.splitlines(keepends=True)
    first = lines[0].strip() if lines else ""
    if first.startswith("%%"):
        name = first[2:].split(None, 1)[0] if first[2:].strip() else ""
        if name not in PYTHON_CELL_MAGICS:
            return None
    masked: List[str] = []
    originals: List[str] = []
    continuation = False
    for line in lines:
        body = line.rstrip("\r\n")
        ending = line[len(body) :]
        if not continuation and _is_magic(body) and not _inside_statement("".join(masked)):
            indent = body[: len(body) - len(body.lstrip())]
            masked.append(f"{indent}{MAGIC}({len(originals)}){ending}")
            originals.append(body)
            continuation = body.endswith("\\")
            continue
        if continuation:  # a magic continued with a backslash: keep the piece with it
            originals[-1] += ending + body
            continuation = body.endswith("\\")
            continue
        masked.append(line)
    return "".join(masked), originals


def unmask(text: str, originals: List[str]) -> Optional[str]:
    lines = text.splitlines(keepends=True)
    seen = set()
    out = []
    for line in lines:
        body = line.rstrip("\r\n")
        match = _PLACEHOLDER_RE.match(body)
        if match:
            number = int(match.group(2))
            if number >= len(originals) or number in seen:
                return None
            seen.add(number)
            out.append(originals[number] + line[len(body) :])
        else:
            out.append(line)
    if len(seen) != len(originals):
        return None  # a magic line got lost: never write such a cell
    return "".join(out)


@dataclasses.dataclass
class CellChange:
    cell: int  # 1-based
    before: str
    after: str


@dataclasses.dataclass
class NotebookResult:
    output: str
    changed: bool
    fixes: List[SegmentDiagnostic]
    findings: List[SegmentDiagnostic]
    cells: List[CellChange]
    skipped: List[int]


def _indent_of(text: str) -> Optional[int]:
    match = re.match(r"\{\r?\n( +)\"", text)
    return len(match.group(1)) if match else None


def _cell_source(cell: Dict[str, Any]) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def _set_source(cell: Dict[str, Any], text: str) -> None:
    if isinstance(cell.get("source"), list):
        cell["source"] = text.splitlines(keepends=True)
    else:
        cell["source"] = text


def is_python_notebook(notebook: Dict[str, Any]) -> bool:
    metadata = notebook.get("metadata") or {}
    language = (metadata.get("kernelspec") or {}).get("language") or (
        metadata.get("language_info") or {}
    ).get("name")
    return language in (None, "python", "python3", "ipython", "ipython3")


def load(text: str) -> Dict[str, Any]:
    try:
        notebook = json.loads(text, object_pairs_hook=OrderedDict)
    except ValueError as error:
        raise NotebookError(f"not a JSON notebook: {error}") from None
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
        raise NotebookError("not a notebook (nbformat 4 with a 'cells' list expected)")
    return notebook


def dump(notebook: Dict[str, Any], original: str) -> str:
    indent = _indent_of(original)
    text = json.dumps(notebook, indent=1 if indent is None else indent, ensure_ascii=False)
    return text + "\n" if original.endswith("\n") or indent is None else text


def migrate_notebook(
    text: str,
    settings: Settings,
    cache=None,
    add_todos: bool = False,  # noqa: ANN001
) -> NotebookResult:
    """With ``add_todos``, each cell gets ``# TODO(jaxmigrate): ...`` markers as a .py file does."""
    from jaxmigrate.migrator import todos

    notebook = load(text)
    if not is_python_notebook(notebook):
        return NotebookResult(text, False, [], [], [], [])
    cells = notebook["cells"]
    chosen: List[int] = []  # indexes into ``cells``
    segments: List[str] = []
    masks: List[List[str]] = []
    skipped: List[int] = []
    for index, cell in enumerate(cells):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        masked = mask(_cell_source(cell))
        if masked is None:
            skipped.append(index + 1)
            continue
        chosen.append(index)
        segments.append(masked[0])
        masks.append(masked[1])
    originals = list(segments)
    unstripped: List[Dict[int, int]] = [{} for _ in segments]
    if add_todos:
        for position, segment in enumerate(segments):
            segments[position], unstripped[position] = todos.strip_markers(segment)
    result = migrate_segments(segments, settings, cache)
    skipped += [chosen[i] + 1 for i in result.skipped]
    outputs = list(result.outputs)
    if add_todos:
        by_cell: Dict[int, List[Diagnostic]] = {}
        for position, diagnostic in result.findings:
            by_cell.setdefault(position, []).append(diagnostic)
        fixes = [(p, todos.shift(d, unstripped[p])) for p, d in result.fixes]
        findings = []
        for position in range(len(outputs)):
            outputs[position], mapping = todos.add_markers(
                outputs[position], by_cell.get(position, []), settings.line_length or 88
            )
            findings += [(position, todos.shift(d, mapping)) for d in by_cell.get(position, [])]
        result = dataclasses.replace(result, fixes=fixes, findings=findings)
    changes: List[CellChange] = []
    for position, (index, new_masked) in enumerate(zip(chosen, outputs)):
        if new_masked == originals[position]:
            continue
        restored = unmask(new_masked, masks[position])
        if restored is None:
            skipped.append(index + 1)
            continue
        before = _cell_source(cells[index])
        if restored != before:
            changes.append(CellChange(index + 1, before, restored))
            _set_source(cells[index], restored)

    def name(entry: Tuple[int, Diagnostic]) -> SegmentDiagnostic:
        position, diagnostic = entry
        fields = dataclasses.asdict(diagnostic)
        fields.pop("where", None)
        return SegmentDiagnostic(**fields, where=f"cell {chosen[position] + 1}")

    output = text
    if changes:
        sources = {change.cell - 1: cells[change.cell - 1]["source"] for change in changes}
        output = nbjson.rewrite(text, sources) or dump(notebook, text)
    return NotebookResult(
        output,
        output != text,
        [name(e) for e in result.fixes],
        [name(e) for e in result.findings],
        changes,
        sorted(skipped),
    )


def migrate_as_file(
    text: str,
    display: str,
    settings: Settings,
    cache,
    add_todos: bool = False,
    as_read: bool = False,
    cells: bool = False,
):
    """The migrated notebook, its fixes and findings, and (``cells``) the cell view of its
    diff; without ``cells`` the diff is the .ipynb file's, made like any file's."""
    result = migrate_notebook(text, settings, cache, add_todos)
    diff = None
    if cells:
        diff = "".join(
            unified_diff(display, _nl(change.before), _nl(change.after), f":cell {change.cell}")
            for change in result.cells
        )
    findings = result.findings
    if as_read:  # each changed cell's findings to the lines of the cell as read (one diff a cell)
        moved = {}
        for change in result.cells:
            where = f"cell {change.cell}"
            in_cell = [f for f in result.findings if f.where == where]
            moved[where] = iter(linemap.as_read(in_cell, change.before, change.after))
        findings = [next(moved[f.where]) if f.where in moved else f for f in result.findings]
    return result.output, result.fixes, findings, diff


def _nl(text: str) -> str:
    return text if not text or text.endswith("\n") else text + "\n"
