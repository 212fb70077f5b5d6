"""The gates only over-approximate, on the full bench corpora: every file is migrated twice, with
the engine's gates (text prefilter, text gate, ``ast`` gate) and without them
(``Settings(gates=False)``: every active rule on every file LibCST parses), and the two runs
must give the same output, fixes, findings and errors.  Also prints what the gates save.

The corpora are built by ``bench/corpus.py`` (``bench/.corpus``), ``bench/legacy_corpus.py``
(``/tmp/jaxmigrate-legacy-corpus``) and ``bench/modern_corpus.py``
(``/tmp/jaxmigrate-modern-corpus``); the ones that exist are used, or the directories given.
``tests/test_gate_equivalence.py`` runs the same comparison on the fixtures and on generated
programs.  Exit status 1 when any file differs.

Usage: python bench/gates.py [DIR ...] [-j N] [--target-version X] [--source-version X]
       [--safe-only]

``--source-version`` states the JAX the code was written for, so that the rules that act only
on older code (JAX503) and the behaviour rules' fixes run too.
"""

from __future__ import annotations

import argparse
import dataclasses
import multiprocessing
import os
import sys
import time
from pathlib import Path
from typing import List, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DIRS = (
    ROOT / "bench" / ".corpus",
    Path("/tmp/jaxmigrate-legacy-corpus"),
    Path("/tmp/jaxmigrate-modern-corpus"),
)
SKIP_PARTS = {"venvs", "sdists", "legacy-sdists", "modern-sdists", ".git"}


def _outcome(text: str, settings: object) -> Tuple[Tuple[object, ...], float]:
    from jaxmigrate.migrator import MigrationError, migrate_source

    start = time.perf_counter()
    try:
        result = migrate_source(text, settings)  # type: ignore[arg-type]
    except MigrationError as error:
        found: Tuple[object, ...] = ("error", type(error).__name__, error.message, error.line)
    else:
        found = (
            result.output,
            sorted(map(repr, result.fixes)),
            sorted(map(repr, result.findings)),
            sorted(map(repr, result.errors)),
        )
    return found, time.perf_counter() - start


def compare(
    job: Tuple[str, Optional[str], bool, Optional[str]],
) -> Tuple[str, Optional[str], float, float]:
    """(path, what differs or None, gated seconds, ungated seconds) for one file."""
    from jaxmigrate.migrator import Settings

    path, target, unsafe, source = job
    text = Path(path).read_text(encoding="utf-8", errors="surrogateescape")
    settings = Settings(unsafe_fixes=unsafe)
    if target:
        settings = dataclasses.replace(settings, target_version=target)
    if source:
        settings = dataclasses.replace(settings, source_version=source, source_explicit=True)
    gated, gated_s = _outcome(text, settings)
    ungated, ungated_s = _outcome(text, dataclasses.replace(settings, gates=False))
    if gated == ungated:
        return path, None, gated_s, ungated_s
    names = ("output", "fixes", "findings", "errors")
    parts = [
        f"{n}: gated {g!r:.300} / ungated {u!r:.300}"
        for n, g, u in zip(names, gated, ungated)
        if g != u
    ]
    return path, "; ".join(parts), gated_s, ungated_s


def files_under(dirs: Sequence[Path]) -> List[str]:
    found = []
    for directory in dirs:
        for path in sorted(directory.rglob("*.py")):
            if not SKIP_PARTS.intersection(path.relative_to(directory).parts):
                found.append(str(path))
    return found


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", nargs="*", type=Path)
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--target-version", default=None)
    parser.add_argument("--source-version", default=None)
    parser.add_argument("--safe-only", action="store_true", help="without --unsafe-fixes")
    args = parser.parse_args(argv)
    dirs = args.dirs or [d for d in DEFAULT_DIRS if d.is_dir()]
    if not dirs:
        print(
            "no corpus: build one with bench/corpus.py, bench/legacy_corpus.py "
            "or bench/modern_corpus.py"
        )
        return 2
    files = files_under(dirs)
    jobs = [(f, args.target_version, not args.safe_only, args.source_version) for f in files]
    print(f"{len(files)} files under {', '.join(map(str, dirs))}", flush=True)
    start = time.perf_counter()
    differ, gated_total, ungated_total = [], 0.0, 0.0
    with multiprocessing.Pool(args.jobs) as pool:
        for path, found, gated_s, ungated_s in pool.imap_unordered(compare, jobs, chunksize=4):
            gated_total += gated_s
            ungated_total += ungated_s
            if found is not None:
                differ.append(f"{path}: {found}")
                print(differ[-1], flush=True)
    print(
        f"{len(files)} files, {len(differ)} differ; gated {gated_total:.0f} s, "
        f"ungated {ungated_total:.0f} s (CPU seconds in workers), "
        f"wall {time.perf_counter() - start:.0f} s"
    )
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
