"""Findings said once per project.

A change of JAX's behaviour that a whole program meets at once, not a spelling to change
where it stands (JAX503: from 0.5.0 every ``jax.random`` draw differs; one flag set at program
start keeps the old ones), is found in every file that makes a key: 278 of the legacy
corpus's 424 findings.  A run reports it at the first file of each project that has it (of
its own modules and tests, where it has any, before its examples, pages and benchmarks: a
fixed seed's expected draws are kept there), with how many other files do (its message) and
which (its detail); the others' are dropped.
Rules say so with :attr:`migrator.rule.Rule.once_per_project`; the codes are kept here too,
so that a run answered from the result cache, which imports no rule, reports the same
(``tests/test_perproject.py`` keeps the two equal).
"""

from __future__ import annotations

import dataclasses
import re
from typing import TYPE_CHECKING, Dict, List, Sequence

from jaxmigrate.migrator.diagnostics import MESSAGE_LIMIT, Diagnostic

if TYPE_CHECKING:  # pragma: no cover
    from jaxmigrate.migrator.runner import FileResult

ONCE_PER_PROJECT = frozenset({"JAX503"})
SHOWN = 10  # the other files the detail names
_USES = re.compile(r" \(\d+ uses\)$")


# Path parts of code that only shows the package (its examples, documentation, benchmarks):
# a project's own modules and tests come first, where a fixed seed's expected draws are kept.
_SHOWCASE = frozenset({"example", "examples", "demo", "demos", "doc", "docs", "benchmarks"})


def _rank(path: str) -> int:
    """0 for a project's own module or test, 1 for an example's, a page's or a benchmark's."""
    parts = re.split(r"[\\/]", path.lower())[:-1]
    return 1 if _SHOWCASE.intersection(parts) else 0


def gather(results: Sequence["FileResult"]) -> None:
    """Keep, of each once-per-project finding of ``results`` (one project's files, in order),
    the first file's (the first of its own modules and tests, where it has any before its
    examples), saying how many other files have it; drop the others' (in place)."""
    having: Dict[str, List["FileResult"]] = {}
    for result in results:
        for code in sorted({d.code for d in result.findings if d.code in ONCE_PER_PROJECT}):
            having.setdefault(code, []).append(result)
    for code, found in having.items():
        first = min(found, key=lambda result: _rank(result.path))  # (the first of its rank)
        paths = [result.path for result in found if result is not first]
        for result in found:
            if result is not first:
                result.findings = [d for d in result.findings if d.code != code]
        if paths:
            first.findings = [said(d, paths) if d.code == code else d for d in first.findings]


def said(finding: Diagnostic, paths: List[str]) -> Diagnostic:
    """``finding`` at the first file, saying the other files (``paths``) have it too."""
    more = f"{len(paths)} more file" + ("s" if len(paths) > 1 else "")
    message = f"{_USES.sub('', finding.message)} ({more})"
    if len(message) > MESSAGE_LIMIT:
        message = finding.message
    named = ", ".join(paths[:SHOWN]) + (", ..." if len(paths) > SHOWN else "")
    detail = f"{finding.detail} The same holds in {more} of this project: {named}.".lstrip()
    return dataclasses.replace(finding, message=message, detail=detail)
