"""Findings said once per project.

A change of JAX's behaviour that a whole program meets at once, not a spelling to change
where it stands (JAX503: from 0.5.0 every ``jax.random`` draw differs; one flag set at program
start keeps the old ones), is found in every file that makes a key: 278 of the legacy
corpus's 424 findings.  A run reports it at the first file of each project that has it, with
how many other files do (its message) and which (its detail); the others' are dropped.
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


def gather(results: Sequence["FileResult"]) -> None:
    """Keep, of each once-per-project finding of ``results`` (one project's files, in order),
    the first file's, saying how many other files have it; drop the others' (in place)."""
    first: Dict[str, "FileResult"] = {}
    others: Dict[str, List[str]] = {}
    for result in results:
        codes = {d.code for d in result.findings if d.code in ONCE_PER_PROJECT}
        for code in sorted(codes):
            if code not in first:
                first[code] = result
                continue
            others.setdefault(code, []).append(result.path)
        dropped = {code for code in codes if first[code] is not result}
        if dropped:
            result.findings = [d for d in result.findings if d.code not in dropped]
    for code, paths in others.items():
        result = first[code]
        result.findings = [said(d, paths) if d.code == code else d for d in result.findings]


def said(finding: Diagnostic, paths: List[str]) -> Diagnostic:
    """``finding`` at the first file, saying the other files (``paths``) have it too."""
    more = f"{len(paths)} more file" + ("s" if len(paths) > 1 else "")
    message = f"{_USES.sub('', finding.message)} ({more})"
    if len(message) > MESSAGE_LIMIT:
        message = finding.message
    named = ", ".join(paths[:SHOWN]) + (", ..." if len(paths) > SHOWN else "")
    detail = f"{finding.detail} The same holds in {more} of this project: {named}.".lstrip()
    return dataclasses.replace(finding, message=message, detail=detail)
