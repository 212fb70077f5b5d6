"""How the ``jaxmigrate`` command leaves its process: at once, without tearing the interpreter
down, where nothing is left to finish.

Python's shutdown frees every object one at a time: LibCST's modules, the rules and JAX's API
history cost about 0.1 s of a ``--check`` over flax and orbax, 7% of the run, and more over
bigger trees (``docs/measurements.md``, the eighteenth round).  By the time the command
returns, everything it wrote is closed (files are replaced atomically, reports written whole),
so only the standard streams hold buffered output; they are flushed here.  Where that fails (a
closed pipe), or a worker process or a thread that is not a daemon is still alive, the process
leaves as Python does, which reports or waits for them.  Only the command leaves so:
:func:`migrator.cli.main` raises ``SystemExit`` for a library caller, as click does.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import NoReturn, Optional, Union


def leave(code: Optional[Union[int, str]]) -> NoReturn:
    """Exit with ``code`` as ``sys.exit(code)`` would (None: 0; a message: printed, then 1),
    skipping the interpreter's teardown where nothing is left running."""
    if code is not None and not isinstance(code, int):
        sys.exit(code)  # (a message: Python prints it)
    if _still_running():
        sys.exit(code)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed pipe or stream: Python reports it as it exits
        sys.exit(code)
    os._exit(code or 0)


def _still_running() -> bool:
    """Is a thread that is not a daemon, or a child process, still alive?  Python's shutdown
    would wait for the thread, and join or end the children it started."""
    main = threading.main_thread()
    if any(t is not main and not t.daemon and t.is_alive() for t in threading.enumerate()):
        return True
    processes = sys.modules.get("multiprocessing")  # (loaded only where workers ran)
    return processes is not None and bool(processes.active_children())
