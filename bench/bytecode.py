"""The bytecode a timed jaxmigrate process starts with, shared by the benchmarks.

Python compiles a module on import unless its bytecode is cached.  An installed wheel has it
(pip compiles on install), and so has a checkout run once without ``PYTHONDONTWRITEBYTECODE``;
a run with that variable set (as on the machines this project is developed on) compiles
jaxmigrate, LibCST and click on every start: about 0.3 s of a process that imports the rules
and LibCST, which is the tool's cost on no user's machine.

``cached`` (the default of every benchmark that times a process): the process reads and
writes bytecode in a directory of the benchmark's own (``PYTHONPYCACHEPREFIX``), warmed by a
first run that is not timed.  ``none``: no bytecode at all, every module compiled each time.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict

CHOICES = ("cached", "none")


def environment(bytecode: str, pycache: Path) -> Dict[str, str]:
    """The environment of a timed process: this process's, with the bytecode setting
    ``bytecode`` (:data:`CHOICES`), cached under ``pycache``."""
    env = dict(os.environ)
    if bytecode == "cached":
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(pycache)
    elif bytecode == "none":
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env.pop("PYTHONPYCACHEPREFIX", None)
    else:
        raise ValueError(f"bytecode: {bytecode!r} is not one of {', '.join(CHOICES)}")
    return env


def warm(env: Dict[str, str]) -> None:
    """One untimed jaxmigrate run in ``env`` that imports what a timed run imports (the rules,
    LibCST's parser and code generation, the reports), over a file with a fix and one with a
    finding only: their bytecode is then in ``env``'s cache (a failure is the timed runs' to
    report)."""
    with tempfile.TemporaryDirectory(prefix="jaxmigrate-bench-warm-") as name:
        work = Path(name)
        (work / "legacy.py").write_text("import jax\n\nleaves = jax.tree_leaves(x)\n", "utf-8")
        (work / "private.py").write_text("from jax._src import core\n", "utf-8")
        command = [sys.executable, "-m", "jaxmigrate.migrator.cli", str(work), "--diff"]
        subprocess.run([*command, "--no-cache"], env=env, capture_output=True, check=False)
