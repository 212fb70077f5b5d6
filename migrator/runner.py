"""Running the engine over many files, serially or in worker processes."""

from __future__ import annotations

import dataclasses
import difflib
import multiprocessing
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Callable, Dict, Iterator, List, Optional, Sequence, Tuple

from migrator.cache import ResultCache
from migrator.context import Diagnostic
from migrator.engine import MigrationError, migrate_source
from migrator.fileio import FileError, SourceFile, read_source, write_source
from migrator.settings import Settings

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


def unified_diff(path: str, before: str, after: str) -> str:
    lines = []
    for line in difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=f"a/{path}" if not path.startswith("/") else path,
        tofile=f"b/{path}" if not path.startswith("/") else path,
    ):
        if not line.endswith(("\n", "\r")):
            line += "\n\\ No newline at end of file\n"
        lines.append(line)
    return "".join(lines)


def migrate_text(
    source: SourceFile,
    display: str,
    settings: Settings,
    mode: str,
    cache: Optional[ResultCache] = None,
) -> FileResult:
    result = FileResult(display)
    try:
        migrated = migrate_source(source.text, settings, cache)
    except MigrationError as error:
        result.error, result.error_line, result.error_column = error.message, error.line, error.column
        return result
    result.changed = migrated.changed
    result.fixes, result.findings = migrated.fixes, migrated.findings
    if migrated.changed:
        if mode == DIFF:
            result.diff = unified_diff(display, migrated.source, migrated.output)
        elif mode == WRITE:
            try:
                write_source(source, migrated.output)
                result.written = True
            except FileError as error:
                result.error = str(error)
        result.output = migrated.output
    return result


_CACHES: Dict[Tuple[str, str], ResultCache] = {}


def _cache(cache_dir: Optional[str], settings: Settings) -> Optional[ResultCache]:
    if cache_dir is None:
        return None
    key = (cache_dir, settings.cache_key())
    if key not in _CACHES:
        _CACHES[key] = ResultCache(Path(cache_dir), key[1])
    return _CACHES[key]


def process_file(
    path: Path, settings: Settings, mode: str, cache_dir: Optional[str] = None
) -> FileResult:
    try:
        source = read_source(path)
    except FileError as error:
        return FileResult(str(path), error=str(error))
    result = migrate_text(source, str(path), settings, mode, _cache(cache_dir, settings))
    result.output = None  # not worth sending back from a worker
    return result


def _process_star(args: tuple) -> FileResult:
    return process_file(*args)


def run(
    files: Sequence[Path],
    settings: Settings,
    mode: str,
    jobs: int,
    progress: Optional[Callable[[int], None]] = None,
    cache_dir: Optional[str] = None,
) -> Iterator[FileResult]:
    """Yield one result per file, in the order of ``files`` whatever ``jobs`` is."""
    tasks = [(path, settings, mode, cache_dir) for path in files]
    if jobs <= 1 or len(files) < 2:
        for task in tasks:
            yield _process_star(task)
            if progress:
                progress(1)
        return
    context = multiprocessing.get_context("fork") if sys.platform == "linux" else None
    chunksize = max(1, min(64, len(tasks) // (jobs * 8)))
    with ProcessPoolExecutor(max_workers=min(jobs, len(files)), mp_context=context) as pool:
        for result in pool.map(_process_star, tasks, chunksize=chunksize):
            yield result
            if progress:
                progress(1)


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))  # type: ignore[attr-defined]
    except AttributeError:  # pragma: no cover (not on Linux)
        return os.cpu_count() or 1
