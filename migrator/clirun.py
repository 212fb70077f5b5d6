"""Running a migration for the command line: the files or stdin, the progress bar, the
reports on stdout/stderr, what an interrupted run says, and the exit code."""

from __future__ import annotations

import dataclasses
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Sequence, TextIO, Tuple

import click

from jaxmigrate.migrator import interrupt
from jaxmigrate.migrator.diagnostics import REQUIREMENT_CODE, Diagnostic
from jaxmigrate.migrator.fileio import FileError, SourceFile, read_source, write_source
from jaxmigrate.migrator.interrupt import Interrupted
from jaxmigrate.migrator.linediff import unified_diff
from jaxmigrate.migrator.report import (
    as_json,
    as_sarif,
    dump_json,
    error_line,
    import_note,
    plural,
    summary_line,
    write_github,
    write_text,
)
from jaxmigrate.migrator.runner import (
    CHECK,
    DIFF,
    WRITE,
    FileResult,
    Options,
    migrate_text,
    run,
)
from jaxmigrate.migrator.settings import Settings
from jaxmigrate.migrator.target import Versions, floor_of_results, newest_release, settle_floors
from jaxmigrate.migrator.version import parse_version

if TYPE_CHECKING:  # pragma: no cover
    from jaxmigrate.migrator.project_version import Detected
    from jaxmigrate.migrator.source import SourceRange

EXIT_CLEAN, EXIT_CHANGES, EXIT_ERROR = 0, 1, 2
# What makes a run fail (exit 1), besides errors (exit 2): --fail-on, and --exit-zero.
FAIL_ON_ANY, FAIL_ON_FIXES, FAIL_NEVER = "any", "fixes", "never"
PROGRESS_DELAY = 1.0  # seconds: a run finished sooner shows no progress bar


Labelled = Sequence[Tuple[str, int, Versions]]  # (requirement file or "", files, versions)


def write_report(
    path: Path,
    results: Sequence[FileResult],
    mode: str,
    settings: Settings,
    versions: Versions,
    projects: Labelled = (),
) -> None:
    """The Markdown report; ``projects``: each project's versions, where the files belong to
    several (:mod:`migrator.projects`)."""
    from jaxmigrate.migrator.markdown_report import render

    text = render(results, mode, versions, settings.unsafe_fixes, projects)
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as error:
        raise click.FileError(str(path), hint=str(error.strerror or error)) from None
    click.echo(f"wrote the migration report to {path}", err=True)


def split_run(
    files: List[Path],
    settings: Settings,
    directory: Path,
    results: List[FileResult],
    quiet: bool,
    options: Options = Options(),
) -> int:
    from jaxmigrate.migrator.split import write_patches

    outcome = write_patches(files, settings, directory, options)
    for path, reason in outcome.errors:
        sys.stderr.write(f"{path}: error: {reason}\n")
    for result in results:
        sys.stderr.write(error_line(result) + "\n")
    for name, count in outcome.patches:
        sys.stderr.write(f"wrote {directory / name} ({plural(count, 'file')})\n")
    for path in outcome.not_split:
        sys.stderr.write(
            f"{path}: not split (only .py/.pyi files are); migrate it in a run of its own\n"
        )
    if not quiet:
        patches = plural(len(outcome.patches), "patch", "patches")
        sys.stderr.write(
            f"{patches} in {directory} (apply in the order of {directory / 'series'})\n"
        )
    if outcome.errors or results:
        return EXIT_ERROR
    return EXIT_CHANGES if outcome.patches else EXIT_CLEAN


def run_files(
    files: List[Path],
    settings: Settings,
    mode: str,
    jobs: int,
    cache: Optional[str],
    options: Options = Options(),
) -> List[FileResult]:
    """Every file's result; SIGINT/SIGTERM raise :class:`Interrupted` with the results
    finished by then (no file is left half-written: see migrator.interrupt)."""
    stderr = sys.stderr
    results: List[FileResult] = []
    bar = _Progress(len(files), stderr) if stderr.isatty() and len(files) > 1 else None
    try:
        with interrupt.raising():
            progress = bar.update if bar is not None else None
            results.extend(
                run(files, settings, mode, jobs, progress, cache_dir=cache, options=options)
            )
    except Interrupted as stop:
        stop.results = results + list(stop.results)
        raise
    finally:
        if bar is not None:
            bar.close()
    return results


class _Progress:
    """click's progress bar on a terminal's stderr, shown once a run has lasted
    ``PROGRESS_DELAY`` seconds (a short run prints nothing extra)."""

    def __init__(self, total: int, stream: TextIO) -> None:
        self.total = total
        self.stream = stream
        self.started = time.monotonic()
        self.done = 0
        self.bar: Optional[Any] = None

    def update(self, count: int) -> None:
        self.done += count
        if self.bar is None:
            if time.monotonic() - self.started < PROGRESS_DELAY or self.done >= self.total:
                return
            self.bar = click.progressbar(length=self.total, label="jaxmigrate", file=self.stream)
            self.bar.__enter__()
            self.bar.update(self.done)
        else:
            self.bar.update(count)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)
            self.bar = None


def interrupted(stop: Interrupted, total: int, mode: str) -> int:
    """What an interrupted run prints: the files it rewrote, and that it stopped."""
    written = [r for r in stop.results if getattr(r, "written", False)]
    for result in written:
        sys.stderr.write(f"rewrote {result.path}\n")  # type: ignore[attr-defined]
    if mode != WRITE:
        what = "no file was changed"
    elif written:
        rewritten = plural(len(written), "file")
        what = f"{rewritten} rewritten (listed above), every other file left as it was"
    else:
        what = "no file was rewritten"
    done = f"{len(stop.results)} of {plural(total, 'file')}"
    sys.stderr.write(f"jaxmigrate: stopped by {stop.name} after {done}; {what}\n")
    return stop.exit_code


def requirement_results(
    detected: Optional[Detected],
    versions: Versions,
    mode: str,
    apply: bool,
    needed: bool = True,
) -> List[FileResult]:
    """The project's packaging files (beside the requirement found) with every ``jax`` /
    ``jaxlib`` requirement raised to admit the target (``apply``), as results of the run like
    any migrated file: diffed, written or listed by ``mode``.  Without ``apply``, a note on
    stderr says which requirement excludes the target and how to raise it: as what the
    migrated code needs where it is ``needed``, else as what the migration targets (the first
    jax.Array release, where the survey found nothing that needs more and no fix needs it)."""
    if detected is None:
        return []
    floor = versions.target_lower
    why = "the migrated code needs" if needed else "the migration targets"
    from jaxmigrate.migrator.project_version import packaging_files, shown
    from jaxmigrate.migrator.requirement_edit import raise_requirement

    newest = versions.target_upper or newest_release()
    results: List[FileResult] = []
    edited = False
    for path in packaging_files(detected.source.parent):
        path = Path(shown(path))
        try:
            source = read_source(path)
        except FileError as error:
            results.append(FileResult(str(path), error=str(error)))
            continue
        raised = raise_requirement(path.name, source.text, floor, newest)
        if raised is None:
            continue
        output, changes = raised
        edited = edited or detected.source.name == path.name
        if not apply:
            for change in changes:
                old, _, new = change.split(": ", 1)[-1].partition(" -> ")
                sys.stderr.write(
                    f"jaxmigrate: {path} has {old}; {why} {new} (--update-requirements writes it)\n"
                )
            continue
        result = FileResult(str(path), changed=True)
        result.fixes = [
            Diagnostic(
                REQUIREMENT_CODE,
                change.split(": ", 1)[-1],
                _line_of(source.text, change),
                1,
                "safe",
            )
            for change in changes
        ]
        if mode == DIFF:
            result.diff = unified_diff(str(path), source.text, output)
        elif mode == WRITE:
            try:
                write_source(source, output)
                result.written = True
            except FileError as error:
                result.error = str(error)
        results.append(result)
    if not edited and detected.source.name == "setup.py":
        _note_built_requirement(detected, floor, newest, why)
    return results


def needs_the_target(results: Sequence[FileResult], lower: str) -> bool:
    """Does a fix of the files a run changed (``Options.changed_floor``) need ``lower``?"""
    return any(
        result.changed and result.floor and parse_version(result.floor[0]) >= parse_version(lower)
        for result in results
    )


def _note_built_requirement(detected: Detected, floor: str, newest: str, why: str) -> None:
    """The requirement was read from a string the file builds (``f"jax=={JAX}"``), which no
    edit can raise: say what it must become."""
    from jaxmigrate.migrator.project_version import shown
    from jaxmigrate.migrator.requirement_edit import raise_requirement

    raised = raise_requirement("requirements.txt", detected.requirement, floor, newest)
    if raised is not None:
        new, where = raised[0].strip(), shown(detected.source)
        sys.stderr.write(
            f"jaxmigrate: {where} builds its requirement {detected.requirement} in code; "
            f"{why} {new}: raise it by hand\n"
        )


def _line_of(text: str, change: str) -> int:
    """The line of the requirement a change message names (1 when it cannot be found)."""
    old = change.split(": ", 1)[-1].split(" -> ", 1)[0].split()[0]
    for number, line in enumerate(text.splitlines(), start=1):
        if old in line:
            return number
    return 1


def floor_of_survey(
    results: Sequence[FileResult],
    low: Optional[str] = None,
    source: Optional["SourceRange"] = None,
) -> Optional[Tuple[str, str, str]]:
    """The floor a survey (from ``low``, its lower bound) over files found
    (:func:`floor_of_results`), once the floors it left open that may set it are read from the
    files again (as code written for ``source``)."""
    settle_floors(results, _text_of, low, source)
    return floor_of_results(results)


def _text_of(path: str) -> Optional[str]:
    try:
        return read_source(Path(path)).text
    except (FileError, MemoryError):
        return None


def survey_text(
    source: SourceFile, name: str, settings: Settings, options: Options
) -> Optional[Tuple[str, str, str]]:
    """The floor of one text (the stdin mode's survey: see :mod:`migrator.target`)."""
    result = migrate_text(
        source, name, settings, CHECK, options=dataclasses.replace(options, floor=True)
    )
    settle_floors([result], lambda _: source.text, settings.target_version, settings.source)
    return floor_of_results([result])


def run_stdin(
    settings: Settings,
    mode: str,
    check: bool,
    name: str,
    output_format: str,
    options: Options = Options(),
    decide: Optional[Callable[[SourceFile], Settings]] = None,
    fail_on: str = FAIL_ON_ANY,
) -> int:
    """Migrate stdin to stdout; ``decide`` gives the settings once the text is read (the
    default target surveys the text first)."""
    raw = sys.stdin.buffer.read()
    try:
        source = SourceFile.from_bytes(Path(name), raw)
    except FileError as error:
        result = FileResult(name, error=str(error))
    else:
        if decide is not None:
            settings = decide(source)
        # the migrated text goes to stdout in place of the input: findings stay located in it
        result = migrate_text(
            source,
            name,
            settings,
            mode if mode != WRITE else CHECK,
            options=options,
            findings_on_output=mode == WRITE,
        )
    if mode == WRITE and result.error is None:
        stdout = sys.stdout.buffer
        output = result.output if result.changed else None
        stdout.write(raw if output is None else source.encode(output))
        stdout.flush()
    # stdout holds the migrated text only in the write mode: the report goes beside it, to
    # stderr; with --diff or --check it goes where a file's would (the diff is written once)
    report(
        [result],
        mode if mode != WRITE else "stdin",
        settings,
        output_format,
        False,
        True,
        False,
        to_stderr=mode == WRITE,
    )
    return exit_code([result], fail_on)


def report(
    results: Sequence[FileResult],
    mode: str,
    settings: Settings,
    output_format: str,
    show_fixes: bool,
    quiet: bool,
    check: bool,
    to_stderr: bool = False,
    versions: Optional[Versions] = None,
    projects: Labelled = (),
) -> None:
    """Findings, diffs and JSON/SARIF to stdout (``to_stderr``: to stderr, when stdout holds
    the migrated text of stdin); messages, errors and the summary line to stderr.  Where the
    files belong to several projects, ``versions`` are the first's and ``projects`` each
    one's (JSON and SARIF list them)."""
    out = sys.stderr if to_stderr else sys.stdout
    err = sys.stderr
    if mode == DIFF and output_format != "json":  # JSON carries each file's diff itself
        # SARIF is one JSON document on stdout: the diff goes beside it, to stderr
        diff_out = sys.stderr if output_format == "sarif" else out
        for result in results:
            if result.diff:
                diff_out.write(result.diff)
    for result in results:
        if result.error is not None:
            err.write(error_line(result) + "\n")
        # (a file can have both: an internal error on one site, the other fixes written)
        if result.changed and output_format == "text":
            if mode == WRITE and result.written:
                err.write(f"rewrote {result.path}\n")
            elif check:
                err.write(f"would rewrite {result.path}\n")
    if output_format == "text":
        write_text(results, out, show_fixes, mode)
    elif output_format == "json":
        facts = _facts(versions, projects) or {}
        dump_json(as_json(results, mode, settings.target_version, facts), out)
    elif output_format == "sarif":
        dump_json(as_sarif(results, mode, _facts(versions, projects)), out)
    else:
        write_github(results, out, mode)
    if not quiet:
        err.write(summary_line(results, mode) + "\n")
        stopped = import_note(results)
        if stopped:
            err.write(f"jaxmigrate: {stopped}\n")


def _facts(versions: Optional[Versions], projects: Labelled) -> Optional[Dict[str, object]]:
    """What a run migrated from and to (:meth:`Versions.as_dict`), and with several projects
    a ``projects`` list: each one's requirement file (null: none found), files and versions."""
    if versions is None:
        return None
    facts = versions.as_dict()
    if projects:
        facts["projects"] = [
            {"requirement": source or None, "files": count, **each.as_dict()}
            for source, count, each in projects
        ]
    return facts


def exit_code(results: Sequence[FileResult], fail_on: str = FAIL_ON_ANY) -> int:
    """2 when a file could not be processed; else 1 when a file changed (or would) and, with
    ``fail_on`` "any", when a finding needs a person; else 0.  "never" (--exit-zero) is 0
    whatever changed."""
    if any(r.error is not None for r in results):
        return EXIT_ERROR
    if fail_on == FAIL_NEVER:
        return EXIT_CLEAN
    if any(r.changed for r in results):
        return EXIT_CHANGES
    if fail_on == FAIL_ON_ANY and any(r.findings for r in results):
        return EXIT_CHANGES
    return EXIT_CLEAN
