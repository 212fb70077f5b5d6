"""What a pool's workers inherit: the rules and LibCST, imported once before they fork.

On Linux a worker of :class:`migrator.pool.Pool` is forked from the main process and imports
what its files need on first use: the rules with their tables for the target (and the API
history), and LibCST when a file is parsed with it, about 0.3 s of CPU in each worker.  A run
with the default target starts two pools (the survey's, then the run's), so a run on two
cores paid that four times.  Imported here once, before the first pool forks, it is shared by
every worker of both (elsewhere workers are spawned, and inherit nothing).

Nothing is imported where the workers may need none of it: where no file names JAX (gate 0
answers those), or where the kept gates of the run's settings (:mod:`migrator.gateplan`)
pass no rule on the first :data:`SCAN_LIMIT` files (modern code: the pre-commit hook's and
the editor's case, answered without the rules), or on fewer of them than there are workers.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:  # pragma: no cover
    from jaxmigrate.migrator.runner import Options
    from jaxmigrate.migrator.settings import Settings

# Files read ahead of the workers for the kept gates' answer: a project that needs the rules
# somewhere mostly shows it early, and a long all-modern one pays no more than this.
SCAN_LIMIT = 64


def before_workers(
    files: Sequence[Path], settings: "Settings", options: "Options", workers: int
) -> None:
    """Before a pool starts ``workers`` on ``files``: import what each of them would import
    for itself, unless they may need none of it."""
    if sys.platform != "linux" or getattr(sys.modules.get("jaxmigrate.rules"), "_LOADED", False):
        return  # (workers started otherwise than by a fork inherit nothing; or all of it)
    if _may_need_the_rules(files, settings, options, workers):
        import jaxmigrate.migrator.engine  # noqa: F401  (the engine and the rules' framework)

        settings.active_rules()  # every rule, and their tables for the target (kept)
        import libcst  # noqa: F401


def _may_need_the_rules(
    files: Sequence[Path], settings: "Settings", options: "Options", workers: int
) -> bool:
    """Without kept gates, some file names JAX; with them, they pass some rule on as many of
    the first :data:`SCAN_LIMIT` files as there are workers (fewer: a worker or two import
    for themselves, beside the others' work, sooner than this process before them all)."""
    from jaxmigrate.migrator import gateplan
    from jaxmigrate.migrator.fileio import FileError, read_source
    from jaxmigrate.migrator.quickgate import idle

    kept = options.gates_dir
    plan = gateplan.kept(settings, Path(kept)) if kept is not None and settings.gates else None
    passed = 0
    for path in files[:SCAN_LIMIT] if plan is not None else files:
        try:
            text = read_source(path).text
        except (FileError, MemoryError):
            continue
        if "jax" not in text and idle(text):
            continue  # (gate 0: no rule)
        if plan is None:
            return True
        passed += bool(plan.candidates(text))
        if passed >= workers:
            return True
    return False
