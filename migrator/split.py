"""``--split-by-rule DIR``: one patch per rule, so a big migration lands as reviewable commits.

Each file is migrated rule by rule, in rule-code order, each rule (``select=(code,)``, with
the same target version and ``--unsafe-fixes`` setting) running on the text the previous
rules produced; the difference each step makes is that rule's contribution, written to
``DIR/JAX101-device-array.patch`` and so on (unified diffs with ``a/`` and ``b/`` prefixes,
for ``git apply`` or ``patch -p1``).  Imports a rule's change leaves unused are removed in
that rule's patch.

Applying the patches in the order listed in ``DIR/series`` reproduces exactly what a single
full run produces: each file is migrated with the settings such a run gives it (the line
length its project configures, ``--no-doctests``, ``--docs``).  When rules interact (one
rule's output is another's input, so that the single run differs from the rule-by-rule
result), the remaining difference is written to ``DIR/zz-remaining.patch``, last in the
series.  Notebooks and documentation are not split (only ``.py``/``.pyi`` files are).
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

from jaxmigrate.migrator.errors import MigrationError
from jaxmigrate.migrator.fileio import FileError, read_source
from jaxmigrate.migrator.importconfig import first_party_for
from jaxmigrate.migrator.linediff import unified_diff
from jaxmigrate.migrator.linelength import line_length_for
from jaxmigrate.migrator.runner import Options, _migrate_python
from jaxmigrate.migrator.settings import Settings

REMAINING = "zz-remaining.patch"
SERIES = "series"


@dataclasses.dataclass
class SplitResult:
    patches: List[Tuple[str, int]]  # (file name, number of source files it touches)
    errors: List[Tuple[str, str]]  # (path, reason)
    not_split: List[str] = dataclasses.field(default_factory=list)  # notebooks, pages


def _display(path: Path) -> str:
    text = str(path)
    if os.path.isabs(text):
        try:
            text = os.path.relpath(text)
        except ValueError:  # pragma: no cover (another drive on Windows)
            pass
    return text.replace(os.sep, "/")


def split_file(
    text: str, settings: Settings, options: Options = Options()
) -> Tuple[List[Tuple[str, str, str]], str, str]:
    """[(code, before, after)] per rule that changed something; the sequential and full outputs."""
    steps: List[Tuple[str, str, str]] = []
    current = text
    for rule in sorted(settings.active_rules(), key=lambda r: r.code):
        single = dataclasses.replace(settings, select=(rule.code,), ignore=())
        output = _migrated(current, single, options)
        if output != current:
            steps.append((rule.code, current, output))
            current = output
    full = _migrated(text, settings, options)
    return steps, current, full


def _migrated(text: str, settings: Settings, options: Options) -> str:
    """The file as a run migrates it: its code, then the code in its docstrings."""
    return _migrate_python(text, settings, options, None)[0]


def write_patches(
    files: Sequence[Path], settings: Settings, directory: Path, options: Options = Options()
) -> SplitResult:
    """The patches of ``files`` in ``directory``; ``options`` as the run has them (a run that
    splits adds no TODO markers)."""
    options = dataclasses.replace(options, add_todos=False)
    rules = {rule.code: rule for rule in settings.active_rules()}
    per_rule: Dict[str, List[str]] = {}
    remaining: List[str] = []
    errors: List[Tuple[str, str]] = []
    not_split: List[str] = []
    for path in files:
        if path.suffix not in (".py", ".pyi"):
            not_split.append(_display(path))
            continue
        display = _display(path)
        # the line length a run finds for the file (runner.process_file): it decides wrapping
        try:
            source = read_source(path)
            found = settings.line_length or line_length_for(path, source.text)
            steps, sequential, full = split_file(
                source.text,
                dataclasses.replace(
                    settings,
                    line_length=found,
                    first_party=settings.first_party
                    if settings.first_party is not None
                    else first_party_for(path),
                ),
                options,
            )
        except (FileError, MigrationError) as error:
            errors.append((display, getattr(error, "message", str(error))))
            continue
        bom = "\ufeff" if source.encoding == "utf-8-sig" else ""  # in the bytes patches compare
        for code, before, after in steps:
            per_rule.setdefault(code, []).append(unified_diff(display, bom + before, bom + after))
        if sequential != full:
            remaining.append(unified_diff(display, bom + sequential, bom + full))
    directory.mkdir(parents=True, exist_ok=True)
    for old in directory.glob("*.patch"):  # a previous split of the same directory
        old.unlink()
    written: List[Tuple[str, int]] = []
    for code in sorted(per_rule):
        name = f"{code}-{rules[code].name}.patch"
        (directory / name).write_text("".join(per_rule[code]), encoding="utf-8", newline="")
        written.append((name, len(per_rule[code])))
    if remaining:
        (directory / REMAINING).write_text("".join(remaining), encoding="utf-8", newline="")
        written.append((REMAINING, len(remaining)))
    (directory / SERIES).write_text("".join(name + "\n" for name, _ in written), encoding="utf-8")
    return SplitResult(written, errors, not_split)
