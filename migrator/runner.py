"""Running the engine over many files, serially or in worker processes (:mod:`migrator.pool`).

The engine (and with it LibCST and the rules) is imported by the first file gate 0 does not
settle (:mod:`migrator.quickgate`): a run over files that name no JAX never loads it.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from pathlib import Path
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Dict,
    FrozenSet,
    Iterator,
    List,
    Optional,
    Sequence,
    Tuple,
)

from jaxmigrate.migrator import gateplan, guard, handoff, interrupt, linemap
from jaxmigrate.migrator.cache import ResultCache
from jaxmigrate.migrator.diagnostics import Diagnostic
from jaxmigrate.migrator.discovery import DOC_SUFFIXES, NOTEBOOK_SUFFIX
from jaxmigrate.migrator.docpieces import may_hold_code_block
from jaxmigrate.migrator.errors import (
    MigrationError,
    NotebookError,
    PassedOver,
    collecting_errors,
)
from jaxmigrate.migrator.fileio import FileError, SourceFile, read_source, write_source
from jaxmigrate.migrator.importconfig import first_party_in
from jaxmigrate.migrator.linediff import unified_diff
from jaxmigrate.migrator.linelength import (
    DEFAULT_LINE_LENGTH,
    configured_for,
    for_style,
    resolved_folder,
)
from jaxmigrate.migrator.quickgate import idle
from jaxmigrate.migrator.settings import Settings
from jaxmigrate.migrator.surveyorder import Seen, Survey, check_reach, surveyed
from jaxmigrate.migrator.version import Version

if TYPE_CHECKING:  # pragma: no cover
    from jaxmigrate.migrator.engine import Result


@dataclasses.dataclass(frozen=True)
class Options:
    """What else a run does besides migrating Python files."""

    docs: bool = False  # also Markdown/reST code blocks
    # ``>>>`` examples in the docstrings of Python files: code users copy and doctest runs
    doctests: bool = True
    add_todos: bool = False  # write ``# TODO(jaxmigrate): ...`` above findings
    keep_output: bool = False  # send the migrated text back from workers
    # find each file's floor (migrator.target: the default target's survey)
    floor: bool = False
    # what the fixes of each file the run changes need (migrator.target.fix_floor): whether
    # the migrated code is known to need the target a requirement is raised to
    # (migrator.cli_projects)
    changed_floor: bool = False
    # --diff-cells: a notebook's diff shows each changed cell's source (for reading), not the
    # patch of its .ipynb file that git apply takes
    diff_cells: bool = False
    # Where the gates of the run's settings are kept (migrator.gateplan): the cache directory,
    # with --no-cache too (they hold nothing of any file).  None: neither kept nor read.
    gates_dir: Optional[str] = None


WRITE, DIFF, CHECK = "write", "diff", "check"


@dataclasses.dataclass
class FileResult:
    path: str
    changed: bool = False
    written: bool = False
    fixes: List[Diagnostic] = dataclasses.field(default_factory=list)
    findings: List[Diagnostic] = dataclasses.field(default_factory=list)
    diff: str = ""
    error: Optional[str] = None
    error_line: int = 0
    error_column: int = 0
    output: Optional[str] = None  # the migrated text; kept only for the stdin mode
    # with Options.floor: the oldest JAX the migrated file runs on, and what sets it
    floor: Optional[Tuple[str, str]] = None
    # ... or, for a text left unchanged, what its fixes need and the newest release the floor
    # of its names can be: read later if it may decide (migrator.target.settle_floors)
    floor_bound: Optional[str] = None
    # the survey's, in one process: a reach older than the file's turn was taken at, read from
    # its tree; it waits for its turn there (migrator.surveyorder)
    later: Optional[Version] = None
    # the lines with a finding the module still runs at import, each with the JAX name there
    # some release of the target range lacks, and which releases (migrator.importtime)
    blockers: List[Tuple[int, str, str]] = dataclasses.field(default_factory=list)


def migrate_source(
    text: str,
    settings: Settings,
    cache: Optional[ResultCache] = None,
    style_of: Optional[str] = None,
    kept: Optional[gateplan.Kept] = None,
) -> Result:
    """:func:`migrator.engine.migrate_source`, imported on the first call (with LibCST and the
    rules)."""
    from jaxmigrate.migrator.engine import migrate_source as migrate

    return migrate(text, settings, cache, style_of, kept)


def _migrate_python(text: str, settings: Settings, options: Options, cache):  # noqa: ANN001, ANN202
    base = text  # without jaxmigrate's own TODO markers, and their lines in ``text``:
    unstripped: Dict[int, int] = {}
    if options.add_todos:
        from jaxmigrate.migrator import todos

        base, unstripped = todos.strip_markers(text)
    tree = None  # CPython's tree of ``output``, when the engine has it
    kept = Path(options.gates_dir) if options.gates_dir is not None else None
    unread = settings.gates and idle(base)  # gate 0
    gated = None if unread or kept is None else gateplan.kept_gates(settings, kept)
    if unread or (gated is not None and not gated.plan.candidates(base)):
        # what the engine gives back for it, without the engine (gate 0, or the kept gates)
        output, fixes, findings = base, [], []
    else:
        if Seen.reach is not None:  # (the survey in one process: the engine may pass it over)

            def check(*args: Any) -> None:
                if _module_alone_sets_floor(base, settings, options):
                    check_reach(*args)

            with handoff.checking(base, check):
                migrated = migrate_source(base, settings, cache, style_of=base)
        else:
            migrated = migrate_source(base, settings, cache, style_of=base, kept=gated)
        output, fixes, findings = migrated.output, list(migrated.fixes), list(migrated.findings)
        tree = migrated.tree
        if (
            tree is not None
            and settings.survey
            and "jax" in output
            and (output != base or _may_set_floor(output))
        ):
            from jaxmigrate.migrator.source import note_floor

            # the survey asks for its floor next (migrator.source): from the tree in hand, a
            # seventh of a parse, where settling the floors would parse the file again
            note_floor(output, tree, settings.source)
        del migrated
    if (
        options.doctests
        and (">>>" in output or may_hold_code_block(output))
        and not _docstrings_cannot_raise_the_floor(settings, output)
    ):
        from jaxmigrate.migrator.docs import migrate_docstrings

        gates = None if kept is None else gateplan.kept(settings, kept)
        before = output
        tokens = _tokens_in_hand(output) if settings.survey else None
        output, doc_fixes, doc_findings = migrate_docstrings(
            output, settings, cache, gates, tree, style_of=base
        )
        fixes += doc_fixes
        findings += once_per_file(findings, doc_findings)
        if tokens is not None and output == before:  # for the survey's floor (migrate_text)
            from jaxmigrate.migrator.plan import keep_tokens

            keep_tokens(output, tokens)
    del tree
    if kept is not None:
        gateplan.save(settings, kept)  # (if the rules were loaded) for later runs' files
    if options.docs and options.doctests and "`j" in output:  # documentation text: --docs
        from jaxmigrate.migrator.docliterals import migrate_literals

        output, literal_fixes = migrate_literals(output, settings)
        fixes += literal_fixes
    if options.add_todos:
        from jaxmigrate.migrator import todos
        from jaxmigrate.migrator.perproject import ONCE_PER_PROJECT

        # (a finding said once per project is fixed at no line of a file: no marker)
        marked = [d for d in findings if d.code not in ONCE_PER_PROJECT]
        output, mapping = todos.add_markers(output, marked, _line_length(for_style(settings, base)))
        # fixes point at the lines they changed: lines of the text as read, markers included
        fixes = [todos.shift(d, unstripped) for d in fixes]
        findings = [todos.shift(d, mapping) for d in findings]
    return output, fixes, findings, None


def once_per_file(findings: List[Diagnostic], doc_findings: List[Diagnostic]) -> List[Diagnostic]:
    """``doc_findings`` (of a file's docstring programs), less those of rules that report once
    per file (:attr:`Rule.once_per_file`) where ``findings`` (the file's code) already hold
    one; else only the first in the file of each such rule stays."""
    from jaxmigrate.migrator.rule import REGISTRY

    once = {d.code for d in doc_findings if getattr(REGISTRY.get(d.code), "once_per_file", False)}
    if not once:
        return doc_findings
    first: Dict[str, Diagnostic] = {}
    for found in doc_findings:
        if found.code in once and (
            found.code not in first
            or (found.line, found.column) < (first[found.code].line, first[found.code].column)
        ):
            first[found.code] = found
    reported = {d.code for d in findings}
    return [
        d
        for d in doc_findings
        if d.code not in once or (d.code not in reported and first[d.code] is d)
    ]


def _may_set_floor(text: str) -> bool:
    """Can the floor of the names of ``text``, which the engine left unchanged, set the
    survey's?  Not when its bound (:func:`migrator.floorbound.floor_bound`) is None (it names
    nothing dated) or older than a floor an earlier file has: then no floor need be read from
    its tree (:func:`migrator.target.survey_floor` keeps the bound, which settling the floors
    never reads)."""
    from jaxmigrate.migrator.floorbound import floor_bound

    bound = floor_bound(text, _tokens_in_hand(text))
    return bound is not None and (Seen.floor is None or bound >= Seen.floor)


def _module_alone_sets_floor(text: str, settings: Settings, options: Options) -> bool:
    """Can nothing but the module's code of ``text`` (not its docstrings' examples, nor its
    ``--docs`` literals) raise the survey's floor past the newest found so far?"""
    if options.docs and "`j" in text:
        return False
    return (
        not options.doctests
        or (">>>" not in text and not may_hold_code_block(text))
        or _docstrings_cannot_raise_the_floor(settings, text)
    )


def _docstrings_cannot_raise_the_floor(settings: Settings, text: str) -> bool:
    """In the survey in this process, once a floor is found newer than what any rule's fix
    in ``text`` may need: a docstring is a string, whose names no floor reads, so its
    examples' fixes could only add what they need (:func:`migrator.target.fix_floor`), which
    is older."""
    if not settings.survey or Seen.floor is None:
        return False
    from jaxmigrate.migrator.floorbound import words_of
    from jaxmigrate.migrator.target import newest_fix_needs

    needs = newest_fix_needs(lambda: words_of(text, _tokens_in_hand(text)))
    return needs is None or needs < Seen.floor


def _tokens_in_hand(text: str) -> Optional[FrozenSet[str]]:
    """Gate 1's tokens of ``text``, if kept (imported on use: the plan comes with the rules)."""
    from jaxmigrate.migrator.plan import tokens_in_hand

    return tokens_in_hand(text)


def _line_length(settings: Settings) -> int:
    return settings.line_length or DEFAULT_LINE_LENGTH


def migrate_text(
    source: SourceFile,
    display: str,
    settings: Settings,
    mode: str,
    cache: Optional[ResultCache] = None,
    options: Options = Options(),
    findings_on_output: Optional[bool] = None,
) -> FileResult:
    """Migrates one file's text.  Fixes are located in the text as read.  Findings are
    computed on the migrated text: they stay located there when it replaces the file
    (``findings_on_output``, by default in the write mode), else they are moved to the
    lines of the text as read, the file the user opens."""
    result = FileResult(display)
    suffix = Path(display).suffix.lower()
    on_output = mode == WRITE if findings_on_output is None else findings_on_output
    try:
        with collecting_errors() as internal:
            if suffix == NOTEBOOK_SUFFIX:
                from jaxmigrate.migrator.notebook import migrate_as_file

                output, fixes, findings, diff = migrate_as_file(
                    source.text,
                    display,
                    settings,
                    cache,
                    options.add_todos,
                    as_read=not on_output,
                    cells=options.diff_cells,
                )
            elif options.docs and suffix in DOC_SUFFIXES:
                from jaxmigrate.migrator.docs import migrate_document

                output, fixes, findings = migrate_document(source.text, suffix, settings, cache)
                diff = None
            else:
                output, fixes, findings, diff = _migrate_python(
                    source.text, settings, options, cache
                )
    except PassedOver as over:  # (no floor: as a file the survey passed over at its turn)
        result.later = over.reach
        return result
    except MigrationError as error:
        result.error, result.error_line, result.error_column = (
            error.message,
            error.line,
            error.column,
        )
        return result
    except NotebookError as error:
        result.error = str(error)
        return result
    except RecursionError:  # outside the engine, which reports its own with its limit
        result.error = guard.too_deep_message(guard.MAX_NESTING)
        return result
    except MemoryError:
        result.error = "out of memory while migrating this file"
        return result
    except Exception as error:  # noqa: BLE001  (a bug must cost this file, not the run)
        result.error = (
            f"internal error: {_one_line(error)} (a bug: please report it); file left unchanged"
        )
        return result
    result.changed = output != source.text
    if options.changed_floor and result.changed:
        from jaxmigrate.migrator.target import fix_floor

        result.floor = fix_floor(fixes)
    elif options.floor:
        from jaxmigrate.migrator.target import survey_floor

        python = output if suffix not in (NOTEBOOK_SUFFIX, *DOC_SUFFIXES) else None
        result.floor, result.floor_bound = survey_floor(
            python, fixes, result.changed, _tokens_in_hand(output), settings.source
        )
    if findings and not settings.survey and suffix not in (NOTEBOOK_SUFFIX, *DOC_SUFFIXES):
        from jaxmigrate.migrator.importtime import located

        moved = result.changed and not on_output  # (located as the findings are, below)
        result.blockers = located(source.text, output, findings, settings, moved)
    if result.changed and not on_output and suffix != NOTEBOOK_SUFFIX:
        findings = linemap.as_read(findings, source.text, output)
        internal = linemap.as_read(internal, source.text, output)  # located like findings
    if internal:
        result.error = internal_error_message(internal)
    result.fixes, result.findings = fixes, findings
    if result.changed:
        if mode == DIFF:
            bom = "\ufeff" if source.encoding == "utf-8-sig" else ""  # bytes git apply compares
            result.diff = (
                diff if diff is not None else unified_diff(display, bom + source.text, bom + output)
            )
        elif mode == WRITE:
            try:
                with interrupt.critical():  # a signal waits until this result is reported
                    write_source(source, output)
                    result.written = True
                    interrupt.hold()
            except FileError as error:
                result.error = str(error) if result.error is None else f"{result.error}; {error}"
        result.output = output
    return result


def internal_error_message(errors: Sequence[Diagnostic]) -> str:
    """One line for the rule hooks that raised in a file: the first, and how many more."""
    first = errors[0]
    where = f" at line {first.line}" if first.line else ""
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"internal error in {first.code}{where}{more}: {first.message}; other fixes kept"


def _one_line(error: BaseException) -> str:
    return " ".join(f"{type(error).__name__}: {error}".split())[:200]


_CACHES: Dict[Tuple[str, Settings], ResultCache] = {}


def _cache(cache_dir: Optional[str], settings: Settings) -> Optional[ResultCache]:
    if cache_dir is None:
        return None
    key = (cache_dir, settings)
    if key not in _CACHES:  # its key is computed on first use: a file gate 0 settles needs none
        _CACHES[key] = ResultCache(Path(cache_dir), settings.cache_key)
    return _CACHES[key]


def process_file(
    path: Path,
    settings: Settings,
    mode: str,
    cache_dir: Optional[str] = None,
    options: Options = Options(),
) -> FileResult:
    try:
        source = read_source(path)
    except FileError as error:
        return FileResult(str(path), error=str(error))
    except MemoryError:
        return FileResult(str(path), error="out of memory while reading this file")
    if settings.line_length is None or settings.first_party is None:  # (a file: it was read)
        settings = _for_folder(settings, resolved_folder(os.path.abspath(path.parent)))
    result = migrate_text(source, str(path), settings, mode, _cache(cache_dir, settings), options)
    if not options.keep_output:
        result.output = None  # not worth sending back from a worker
    return result


@functools.lru_cache(maxsize=4096)  # (a folder each: its files share one settings object)
def _for_folder(settings: Settings, folder: str) -> Settings:
    """``settings`` with the line length and the first-party names of the project the
    resolved ``folder`` is in, where the command line gave none."""
    changes: Dict[str, object] = {}
    if settings.line_length is None:
        configured = configured_for(folder)
        changes["line_length"] = DEFAULT_LINE_LENGTH if configured is None else configured
        changes["line_length_from_style"] = configured is None
    if settings.first_party is None:
        changes["first_party"] = first_party_in(folder)
    return dataclasses.replace(settings, **changes)  # type: ignore[arg-type]


def _process_star(args: tuple) -> FileResult:
    return process_file(*args)


def run(
    files: Sequence[Path],
    settings: Settings,
    mode: str,
    jobs: int,
    progress: Optional[Callable[[int], None]] = None,
    cache_dir: Optional[str] = None,
    options: Options = Options(),
) -> Iterator[FileResult]:
    """Yield one result per file, in the order of ``files`` whatever ``jobs`` is.

    A signal (see :mod:`migrator.interrupt`) stops the run with :class:`Interrupted`, whose
    ``results`` are the files finished by then that were not yielded yet."""
    tasks = [(path, settings, mode, cache_dir, options) for path in files]
    if in_process(jobs, len(files)) and options.floor and len(files) > 1:
        yield from surveyed(tasks, _process_star, _passed_over, progress)
        return
    if in_process(jobs, len(files)):
        for task in tasks:
            yield _process_star(task)
            interrupt.release()  # the result reached the caller: a signal may act now
            interrupt.checkpoint()
            if progress:
                progress(1)
        return
    from jaxmigrate.migrator import preload
    from jaxmigrate.migrator.pool import Pool

    preload.before_workers(files, settings, options, min(jobs, len(files)))  # (what each would)
    if not options.floor:
        yield from Pool(tasks, min(jobs, len(files)), process_file, _worker_died).results(progress)
        return
    survey = Survey(tasks)  # a file at a time, newest reach first, as each worker asks for one

    def passed_over(index: int) -> Optional[FileResult]:
        return _passed_over(tasks[index]) if survey.passes_over(index) else None

    try:
        pool = Pool(tasks, min(jobs, len(files)), process_file, _worker_died)
        yield from pool.chosen(survey.order, passed_over, survey.record).results(progress)
    finally:
        Seen.floor = None


def _passed_over(task: tuple) -> FileResult:
    return FileResult(str(task[0]))  # (no floor: see migrator.surveyorder)


def in_process(jobs: int, files: int) -> bool:
    """Does :func:`run` migrate ``files`` files in this process (else in worker processes)?"""
    return jobs <= 1 or files < 2


def _worker_died(path: str, message: str) -> FileResult:
    return FileResult(path, error=message)


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover (not on Linux)
        return os.cpu_count() or 1
