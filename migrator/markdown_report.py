"""``--report FILE.md``: a migration report a maintainer can paste into a pull request.

Per rule: how many sites were changed (or would be) and where; the findings that need a
person, each with its message and, below it, its detail (the recipe); a link to
the JAX changelog section of the rule's deprecation/removal and to the migration guide that
covers it.  The header names what the code was written for (the source) and the target, with
where each came from.  The same
data, for tools, is ``--format json``.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING, Dict, List, Sequence, Tuple

from jaxmigrate.migrator import __version__
from jaxmigrate.migrator.diagnostics import (
    CLEANUP_CODE,
    CLEANUP_SUMMARY,
    REQUIREMENT_CODE,
    Diagnostic,
)
from jaxmigrate.migrator.report import location, plural, summary_counts
from jaxmigrate.migrator.rule import all_rules
from jaxmigrate.migrator.runner import FileResult

if TYPE_CHECKING:  # pragma: no cover
    from jaxmigrate.migrator.target import Versions

MAX_SITES = 50  # per rule; the rest are counted


def _need_a_person(count: int) -> str:
    return f"{plural(count, 'finding')} {'needs' if count == 1 else 'need'} a person"


def _site(path: str, diagnostic: Diagnostic) -> str:
    return f"`{location(path, diagnostic)}`"


def _versions_said(versions: "Versions") -> str:
    source = versions.source
    written = (
        f"JAX {source.describe()} ({source.origin})"
        if source.known
        else "an unknown JAX (`--source-version` states it)"
    )
    return (
        f"code written for {written}, migrated to run on JAX {versions.target_span()} "
        f"(`--target-version {versions.target_lower}`: {versions.target_origin})"
    )


def render(
    results: Sequence[FileResult],
    mode: str,
    versions: "Versions",
    unsafe_fixes: bool = False,
    projects: Sequence[Tuple[str, int, "Versions"]] = (),
) -> str:
    """The report; ``projects``: where the files belong to several projects, each one's
    requirement file, count of files and versions (``versions`` is then the first's)."""
    rules = all_rules()
    changed: Dict[str, List[Tuple[str, Diagnostic]]] = OrderedDict()
    review: Dict[str, List[Tuple[str, Diagnostic]]] = OrderedDict()
    for result in results:
        if mode != "write" or result.written:  # an unwritten file's fixes did not happen
            for d in result.fixes:
                changed.setdefault(d.code, []).append((result.path, d))
        for d in result.findings:
            review.setdefault(d.code, []).append((result.path, d))
    counts = summary_counts(results, mode)
    verb = "changed" if mode == "write" else "to change"
    out: List[str] = ["## JAX migration (jaxmigrate)", ""]
    tool = f"jaxmigrate {__version__}" + (", `--unsafe-fixes`" if unsafe_fixes else "")
    if not projects:
        out.append(f"{tool}: {_versions_said(versions)}.")
    else:
        out.append(f"{tool}, for each project's own `jax` requirement:")
        out.append("")
        for source, count, each in projects:
            where = f"`{source}`" if source else "no requirement found"
            out.append(f"- {where} ({plural(count, 'file')}): {_versions_said(each)}.")
    out.append("")
    out.append(
        f"{counts['changed']} of {plural(counts['files'], 'file')} {verb}; "
        f"{plural(counts['fixes'], 'site')} {verb}; {_need_a_person(counts['findings'])}"
        + (
            f"; {plural(counts['errors'], 'file')} could not be processed."
            if counts["errors"]
            else "."
        )
    )
    out.append("")
    codes = sorted(set(changed) | set(review))
    if codes:
        out += [
            "| rule | safety | sites " + verb + " | need a person |",
            "| --- | --- | ---: | ---: |",
        ]
        for code in codes:
            rule = rules.get(code)
            engine = {CLEANUP_CODE: "unused-import", REQUIREMENT_CODE: "jax-requirement"}
            name = rule.name if rule else engine.get(code, "")
            safety = rule.safety.value if rule else "safe"
            out.append(
                f"| {code} {name} | {safety} | {len(changed.get(code, []))} "
                f"| {len(review.get(code, []))} |"
            )
        out.append("")
    for code in codes:
        rule = rules.get(code)
        title = f"{code} {rule.name}: {rule.summary}" if rule else f"{code}: {CLEANUP_SUMMARY}"
        out += [f"### {title}", ""]
        if rule is not None and rule.references:
            links = (f"[{r.title}]({r.url})" for r in rule.references)
            out += ["See " + ", ".join(links) + ".", ""]
        sites = changed.get(code, [])
        if sites:
            out.append(f"{plural(len(sites), 'site')} {verb}:")
            out.append("")
            for path, d in sites[:MAX_SITES]:
                out.append(f"- {_site(path, d)} {d.message}")
            if len(sites) > MAX_SITES:
                out.append(f"- ... and {len(sites) - MAX_SITES} more")
            out.append("")
        findings = review.get(code, [])
        if findings:
            out.append(f"{_need_a_person(len(findings))}:")
            out.append("")
            for path, d in findings:
                out.append(f"- [ ] {_site(path, d)} ({d.safety}) {d.message}")
                if d.detail:
                    out.append(f"  {d.detail}")
            out.append("")
    errors = [r for r in results if r.error is not None]
    if errors:
        out += ["### Files that could not be processed", ""]
        out += [f"- `{r.path}`: {r.error}" for r in errors]
        out.append("")
    return "\n".join(out).rstrip() + "\n"
