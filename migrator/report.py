"""Reporting results: text, JSON, SARIF 2.1.0 and GitHub Actions annotations."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Dict, List, Optional, Sequence, TextIO, Tuple

from jaxmigrate.migrator import __version__
from jaxmigrate.migrator.diagnostics import (
    CLEANUP_CODE,
    CLEANUP_SUMMARY,
    INTERNAL_ERROR_CODE,
    REQUIREMENT_CODE,
    REQUIREMENT_SUMMARY,
    UNSAFE_NOTE,
    Diagnostic,
)
from jaxmigrate.migrator.references import CHANGELOG
from jaxmigrate.migrator.runner import FileResult

if TYPE_CHECKING:  # pragma: no cover
    from jaxmigrate.migrator.rule import Rule

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def plural(count: int, noun: str, nouns: str = "") -> str:
    """``1 file``, ``2 files``, ``0 fixes``: a count with its noun in the right number."""
    return f"{count} {noun if count == 1 else (nouns or noun + 's')}"


def summary_counts(results: Sequence[FileResult], mode: str = "check") -> Dict[str, int]:
    """Files, changed files, fixes, findings and errors.  When files are written, a file
    that could not be written (read-only, changed meanwhile) changed nothing: neither it
    nor its fixes count."""

    def landed(r: FileResult) -> bool:
        return mode != "write" or r.written

    return {
        "files": len(results),
        "changed": sum(r.changed and landed(r) for r in results),
        "fixes": sum(len(r.fixes) for r in results if landed(r)),
        "findings": sum(len(r.findings) for r in results),
        "errors": sum(r.error is not None for r in results),
        "stop_at_import": sum(bool(r.blockers) for r in results),
    }


def summary_line(results: Sequence[FileResult], mode: str) -> str:
    counts = summary_counts(results, mode)
    verb = "changed" if mode == "write" else "would change"
    need = "needs" if counts["findings"] == 1 else "need"
    line = (
        f"{plural(counts['changed'], 'file')} {verb}, {plural(counts['fixes'], 'fix', 'fixes')}, "
        f"{plural(counts['findings'], 'finding')} {need} review"
    )
    held = sum(d.message.endswith(UNSAFE_NOTE) for r in results for d in r.findings)
    if held:  # (as ruff counts its hidden fixes: the flag that applies them, named once)
        line += f", {held} of them {'an unsafe fix' if held == 1 else 'unsafe fixes'}"
        line += " that --unsafe-fixes applies"
    if counts["errors"]:
        line += f", {plural(counts['errors'], 'file')} could not be processed"
    return f"{line} ({plural(counts['files'], 'file')} checked)"


def import_note(results: Sequence[FileResult], shown: int = 3) -> str:
    """One line for the files the migration leaves stopping at import on some release of the
    target range (:mod:`migrator.importtime`), naming the first ``shown`` lines; empty where
    none does."""
    stopped = [r for r in results if r.blockers]
    if not stopped:
        return ""
    places = []
    for result in stopped[:shown]:
        line, name, releases = result.blockers[0]
        lacks = f"not in JAX {releases}" if releases else "in no JAX of the target"
        places.append(f"{result.path}:{line} ({name}: {lacks})")
    more = f"; and {plural(len(stopped) - shown, 'more file')}" if len(stopped) > shown else ""
    verb = "stops" if len(stopped) == 1 else "stop"
    return f"{plural(len(stopped), 'module')} still {verb} at import: " + "; ".join(places) + more


def error_line(result: FileResult) -> str:
    where = result.path
    if result.error_line:
        where += f":{result.error_line}:{result.error_column or 1}"
    return f"{where}: error: {result.error}"


def write_text(results: Sequence[FileResult], out: TextIO, show_fixes: bool, mode: str) -> None:
    for result in results:
        entries = [(d, "") for d in result.findings]
        if show_fixes:
            tag = "[fixed] " if mode == "write" else "[fixable] "
            entries += [(d, tag) for d in result.fixes]
        for diagnostic, tag in sorted(entries, key=_order):
            out.write(
                f"{location(result.path, diagnostic)}: {diagnostic.code} "
                f"{tag}{diagnostic.message}\n"
            )


def _cell_number(diagnostic: Diagnostic) -> int:
    where = getattr(diagnostic, "where", "")
    return int(where.split()[-1]) if where.startswith("cell ") else 0


def _order(entry: tuple) -> tuple:
    diagnostic = entry[0]
    return (_cell_number(diagnostic), diagnostic.line, diagnostic.column, diagnostic.code)


def location(path: str, diagnostic: Diagnostic) -> str:
    """``path:line:col``, or ``nb.ipynb:cell 3:line 2:col 5`` inside a notebook cell."""
    where = getattr(diagnostic, "where", "")
    if where:
        return f"{path}:{where}:line {diagnostic.line}:col {diagnostic.column}"
    return f"{path}:{diagnostic.line}:{diagnostic.column}"


# The engine's own codes: (name, summary).
ENGINE_CODES = {
    CLEANUP_CODE: ("unused-import", CLEANUP_SUMMARY),
    REQUIREMENT_CODE: ("jax-requirement", REQUIREMENT_SUMMARY),
}


def rule_info(codes: Sequence[str]) -> Dict[str, dict]:
    """Name, safety, summary and references of the rules that produced diagnostics."""
    from jaxmigrate.migrator.rule import all_rules  # (the rules: only for what reports them)

    rules = all_rules()
    info: Dict[str, dict] = {}
    for code in sorted(set(codes)):
        rule = rules.get(code)
        if rule is None:
            if code in ENGINE_CODES:
                name, summary = ENGINE_CODES[code]
                info[code] = {"name": name, "safety": "safe", "summary": summary, "references": []}
            continue
        info[code] = {
            "name": rule.name,
            "safety": rule.safety.value,
            "summary": rule.summary,
            "references": [reference.as_dict() for reference in rule.references],
        }
    return info


def as_json(
    results: Sequence[FileResult],
    mode: str,
    target_version: str,
    versions: Optional[Dict[str, object]] = None,
) -> dict:
    """The run as JSON.  ``versions``: what it migrated from and to
    (``migrator.target.Versions.as_dict``): ``source_range`` (what the code was written for,
    with its ``origin``), ``target_range`` (what the result must run on: the oldest and the
    newest JAX, null: the newest), where the target came from, the floor and the note."""
    codes = [d.code for r in results for d in (*r.fixes, *r.findings)]
    facts = dict(versions or {})
    facts.setdefault("target_range", {"lower": target_version, "upper": None})
    return {
        "tool": "jaxmigrate",
        "version": __version__,
        "mode": mode,
        "target_version": target_version,
        **facts,
        "summary": summary_counts(results, mode),
        "rules": rule_info(codes),
        "files": [
            {
                "path": r.path,
                "changed": r.changed,
                "written": r.written,
                "fixes": [d.as_dict() for d in r.fixes],
                "findings": [d.as_dict() for d in r.findings],
                "stops_at_import": [
                    {"line": line, "name": name, "releases": releases or "all"}
                    for line, name, releases in r.blockers
                ],
                "error": None
                if r.error is None
                else {"message": r.error, "line": r.error_line, "column": r.error_column},
                **({"diff": r.diff} if mode == "diff" else {}),
            }
            for r in results
        ],
    }


def _sarif_result(
    path: str, code: str, level: str, message: str, line: int, column: int, detail: str = ""
) -> dict:
    """One result; a diagnostic's ``detail`` follows its one-line message in ``markdown`` and
    stands alone in the result's ``properties``."""
    region = {"startLine": max(line, 1), "startColumn": max(column, 1)}
    text: Dict[str, str] = {"text": message}
    if detail:
        text["markdown"] = f"{message}\n\n{detail}"
    return {
        "ruleId": code,
        "level": level,
        "message": text,
        "locations": [{"physicalLocation": {"artifactLocation": {"uri": path}, "region": region}}],
        **({"properties": {"detail": detail}} if detail else {}),
    }


def _in_cell(d: Diagnostic) -> str:
    where = getattr(d, "where", "")
    return f"{where}, line {d.line}: {d.message}" if where else d.message


def _region(d: Diagnostic) -> Tuple[int, int]:
    # A notebook is JSON: cell lines are not file lines, so point at the file's first line.
    return (1, 1) if getattr(d, "where", "") else (d.line, d.column)


def _help_uri(rule: Rule) -> str:
    """The guide or API page of a rule if it cites one, else its first release notes."""
    guides = [r.url for r in rule.references if not r.is_release_notes]
    return (guides or [r.url for r in rule.references] or [CHANGELOG])[0]


def _help(rule: Rule) -> dict:
    lines = [f"{rule.code} {rule.name}: {rule.summary}", "", "References:"]
    lines += [f"- {r.title}: {r.url}" for r in rule.references]
    markdown = [f"**{rule.code} {rule.name}**: {rule.summary}", "", "References:", ""]
    markdown += [f"- [{r.title}]({r.url})" for r in rule.references]
    return {"text": "\n".join(lines), "markdown": "\n".join(markdown)}


def as_sarif(
    results: Sequence[FileResult], mode: str, versions: Optional[Dict[str, object]] = None
) -> dict:
    """The run as SARIF 2.1.0; ``versions`` (what it migrated from and to) goes into the run's
    ``properties``."""
    from jaxmigrate.migrator.rule import all_rules  # (the rules: only for what reports them)

    rules = all_rules()
    driver_rules = [
        {
            "id": rule.code,
            "name": rule.name,
            "shortDescription": {"text": rule.summary},
            "fullDescription": {"text": " ".join(rule.doc.split())[:1000] or rule.summary},
            "helpUri": _help_uri(rule),
            "help": _help(rule),
            "properties": {"safety": rule.safety.value},
        }
        for rule in rules.values()
    ]
    sarif_results: List[dict] = []
    for r in results:
        path = r.path.replace("\\", "/")
        for d in r.findings:
            sarif_results.append(
                _sarif_result(path, d.code, "warning", _in_cell(d), *_region(d), detail=d.detail)
            )
        if mode != "write":
            for d in r.fixes:
                sarif_results.append(
                    _sarif_result(
                        path,
                        d.code,
                        "note",
                        f"[fixable] {_in_cell(d)}",
                        *_region(d),
                        detail=d.detail,
                    )
                )
        if r.error is not None:
            sarif_results.append(
                _sarif_result(
                    path, INTERNAL_ERROR_CODE, "error", r.error, r.error_line, r.error_column
                )
            )
    driver_rules += [
        {"id": code, "name": name, "shortDescription": {"text": summary}}
        for code, (name, summary) in ENGINE_CODES.items()
    ]
    driver_rules += [
        {
            "id": INTERNAL_ERROR_CODE,
            "name": "file-error",
            "shortDescription": {"text": "file could not be processed"},
        },
    ]
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "jaxmigrate",
                        "version": __version__,
                        "rules": driver_rules,
                    }
                },
                "results": sarif_results,
                **({"properties": dict(versions)} if versions else {}),
            }
        ],
    }


def _escape_github(text: str, property_value: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if property_value:
        text = text.replace(":", "%3A").replace(",", "%2C")
    return text


def write_github(results: Sequence[FileResult], out: TextIO, mode: str) -> None:
    for r in results:
        file = _escape_github(r.path, True)
        entries = [("warning", d) for d in r.findings]
        if mode != "write":
            entries += [("notice", d) for d in r.fixes]
        for level, d in entries:
            line, column = _region(d)
            out.write(
                f"::{level} file={file},line={line},col={column},"
                f"title={d.code}::{_escape_github(_with_detail(d))}\n"
            )
        if r.error is not None:
            out.write(
                f"::error file={file},line={max(r.error_line, 1)},title=jaxmigrate::"
                f"{_escape_github(r.error)}\n"
            )


def _with_detail(d: Diagnostic) -> str:
    """An annotation's text: the message, and the detail on the lines below it."""
    return f"{_in_cell(d)}\n{d.detail}" if d.detail else _in_cell(d)


def dump_json(data: dict, out: TextIO) -> None:
    json.dump(data, out, indent=2)
    out.write("\n")
