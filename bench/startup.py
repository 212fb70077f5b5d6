"""Start-up time of the command line, against the bare interpreter measured in the same run.

Runs, round-robin (so that a machine that slows down affects every command alike), each of:

- ``python -c pass``: the bare interpreter, the baseline;
- ``jaxmigrate --version``;
- a no-op run over one file (``x = 1``), with ``--target-version 0.4.30`` and without it (the
  default target: the run surveys the file first);
- a run over one file that imports JAX and holds modern code only (the pre-commit hook's and
  the editor's case), with ``--target-version 0.4.30`` and without it: the run that warms the
  caches loads the rules and keeps their gates (:mod:`migrator.gateplan`), the timed runs
  answer the file from them without importing the rules, LibCST or the API history;
- the hooks' own runs (``--check --no-cache``, no cache to answer from) over one file with a
  finding only (a private ``jax._src`` import: the rules answer it from CPython's ``ast``,
  without LibCST) and over one file with a legacy spelling to rewrite (LibCST parses it);

and prints the median wall time of each, and the milliseconds above the bare interpreter.
The acceptance (issue #29): ``--version`` and the no-op run each under 150 ms above it, and
the single-file runs (the pre-commit case) under it too; a file with something to rewrite
needs LibCST, whose import alone is about 0.1 s.

Python files are compiled on import unless their bytecode is cached (:mod:`bench.bytecode`).
``--bytecode cached`` (the default) measures with a warm bytecode cache in a temporary
directory, as an installed wheel has one, ``--bytecode none`` with none at all, ``--bytecode
both`` both.  The runs use a temporary result cache (``JAXMIGRATE_CACHE_DIR``), warmed by a
first run that is not timed (the kept gates live there too).  Numbers only: nothing is asserted.

Usage::

    python bench/startup.py [-n RUNS] [--bytecode cached|none|both] [--jaxmigrate PATH]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.bytecode import environment  # noqa: E402

NO_OP = "x = 1\n"
MODERN = """\
import jax
import jax.numpy as jnp


def f(x: jax.Array) -> jax.Array:
    return jnp.sin(x) * 2


y = jax.jit(f)(jnp.ones(3))
"""
FINDING = """\
from jax._src import core

p = core.Primitive("p")
"""
LEGACY = """\
import jax

leaves = jax.tree_leaves({"a": 1})
"""


def _jaxmigrate(given: str) -> List[str]:
    """The command that starts the tool: the console script beside this interpreter (what users
    run), else ``python -m jaxmigrate``."""
    if given:
        return [given]
    script = Path(sys.executable).with_name("jaxmigrate")
    if script.exists():
        return [str(script)]
    found = shutil.which("jaxmigrate")
    return [found] if found else [sys.executable, "-m", "jaxmigrate"]


def _commands(tool: List[str], work: Path) -> List[Tuple[str, List[str]]]:
    noop, modern = work / "noop.py", work / "modern.py"
    finding, legacy = work / "finding.py", work / "legacy.py"
    noop.write_text(NO_OP, encoding="utf-8")
    modern.write_text(MODERN, encoding="utf-8")
    finding.write_text(FINDING, encoding="utf-8")
    legacy.write_text(LEGACY, encoding="utf-8")
    hook = ["--check", "--no-cache"]
    return [
        ("python -c pass", [sys.executable, "-c", "pass"]),
        ("jaxmigrate --version", [*tool, "--version"]),
        ("no-op file, --target-version", [*tool, str(noop), "--target-version", "0.4.30"]),
        ("no-op file, default target", [*tool, str(noop)]),
        ("import-jax file, --target-version", [*tool, str(modern), "--target-version", "0.4.30"]),
        ("import-jax file, default target", [*tool, str(modern)]),
        ("finding-only file, hook run", [*tool, str(finding), *hook]),
        ("file to rewrite, hook run", [*tool, str(legacy), *hook]),
    ]


def _environment(bytecode: str, work: Path) -> Dict[str, str]:
    env = environment(bytecode, work / "pycache")
    env["JAXMIGRATE_CACHE_DIR"] = str(work / "result-cache")
    return env


def _time(command: Sequence[str], env: Dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return (time.perf_counter() - started) * 1000


def measure(tool: List[str], runs: int, bytecode: str) -> List[Tuple[str, float]]:
    """(label, median ms) of each command, the bare interpreter first."""
    with tempfile.TemporaryDirectory(prefix="jaxmigrate-startup-") as name:
        work = Path(name)
        commands = _commands(tool, work)
        env = _environment(bytecode, work)
        for label, command in commands:  # the warm-up run: checks the command, fills caches
            done = subprocess.run(command, env=env, capture_output=True, text=True)
            if done.returncode not in (0, 1):
                sys.exit(f"{label}: exit {done.returncode}\n{done.stderr}")
        times: Dict[str, List[float]] = {label: [] for label, _ in commands}
        for _ in range(runs):
            for label, command in commands:
                times[label].append(_time(command, env))
        return [(label, statistics.median(times[label])) for label, _ in commands]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", "--runs", type=int, default=20, help="timed runs of each command")
    parser.add_argument("--bytecode", choices=["cached", "none", "both"], default="cached")
    parser.add_argument("--jaxmigrate", default="", help="the command to time (a path)")
    args = parser.parse_args()
    tool = _jaxmigrate(args.jaxmigrate)
    print(f"{' '.join(tool)}; median of {args.runs} runs each")
    for bytecode in ("cached", "none") if args.bytecode == "both" else (args.bytecode,):
        results = measure(tool, args.runs, bytecode)
        bare = results[0][1]
        print(f"\nbytecode: {bytecode}")
        print(f"  {'command':<36} {'median ms':>9} {'above bare':>10}")
        for label, median in results:
            above = "" if label == results[0][0] else f"{median - bare:+10.0f}"
            print(f"  {label:<36} {median:9.0f} {above:>10}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
