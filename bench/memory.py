"""Peak memory of jaxmigrate on one big file, against LibCST's own parse + codegen.

Each size gets a file with one legacy line (``x = jax.tree_map(f, y)``) followed by ordinary
Python functions up to that size.  Four child processes run on it, each measured by the
kernel (``os.wait4``: the child's own peak RSS, as ``resource.getrusage`` reports it):

- ``python``: an interpreter that imports jaxmigrate and does nothing (the fixed cost);
- ``ast``: ``ast.parse(text)``, CPython's own parse (gate 2 of the engine makes it);
- ``libcst``: ``libcst.parse_module(text).code``, what a whole-module LibCST rewrite costs;
- ``jaxmigrate``: the command line, ``jaxmigrate --diff --no-cache -j 1 FILE``.

Its files go piecewise (``migrator.piecewise``; JAX701, the only rule they wake, reads only
its sites): LibCST parses only the statements that may change, so the tool's peak is to be
read against ``ast.parse``'s (``tool/ast``); LibCST's parser alone needs about 740 bytes per
source byte.

Usage: python bench/memory.py [--sizes 1,2,4] (sizes in MB)
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import List, Tuple

LEGACY_HEAD = "import jax\n\nx = jax.tree_map(f, y)\n\n"

_FUNCTION = '''
def function_{n}(a, b, c=None, *args, **kwargs):
    """Docstring for function {n}."""
    result = []
    for i in range(a):
        if i % 2 == 0 and b is not None:
            result.append((i * b + {n}) // 3)
        else:
            result.append({{"key": i, "value": [a, b, c]}})
    return sum(x if isinstance(x, int) else len(x) for x in result)

'''


def big_file(size: int) -> str:
    """One legacy line, then ordinary functions until ``size`` characters."""
    parts, total, n = [LEGACY_HEAD], len(LEGACY_HEAD), 0
    while total < size:
        chunk = _FUNCTION.format(n=n)
        parts.append(chunk)
        total += len(chunk)
        n += 1
    return "".join(parts)


def peak_of(command: List[str]) -> Tuple[float, float, int]:
    """(peak RSS in MB, seconds, exit status) of one child process."""
    start = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _pid, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - start
    if child.stderr is not None:
        child.stderr.close()
    # ru_maxrss is in KiB on Linux, in bytes on macOS
    scale = 1 if sys.platform == "darwin" else 1024
    return usage.ru_maxrss * scale / 1e6, seconds, child.returncode


def main(argv: List[str] = None) -> None:  # type: ignore[assignment]
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1,2,4", help="file sizes in MB, comma-separated")
    args = parser.parse_args(argv)
    sizes = [float(s) for s in args.sizes.split(",") if s.strip()]
    python = sys.executable
    idle = [python, "-c", "import libcst, jaxmigrate.migrator.engine"]
    print(
        f"{'size MB':>8} {'python':>8} {'ast MB':>8} {'s':>6} {'libcst MB':>10} {'s':>6}"
        f" {'jaxmigrate MB':>14} {'s':>6} {'tool/ast':>9} {'40x+150':>8}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for size_mb in sizes:
            path = Path(tmp) / f"big_{size_mb:g}mb.py"
            path.write_text(big_file(int(size_mb * 1e6)), encoding="utf-8")
            size = path.stat().st_size / 1e6
            base_idle, _, _ = peak_of(idle)
            parse, parse_s, _ = peak_of(
                [python, "-c", "import ast, sys; ast.parse(open(sys.argv[1]).read())", str(path)]
            )
            floor, floor_s, _ = peak_of(
                [
                    python,
                    "-c",
                    "import sys, libcst; libcst.parse_module(open(sys.argv[1]).read()).code",
                    str(path),
                ]
            )
            tool, tool_s, status = peak_of(
                [python, "-m", "jaxmigrate", "--diff", "--no-cache", "-j", "1", "-q", str(path)]
            )
            note = "" if status in (0, 1) else f"  (exit {status})"
            print(
                f"{size:8.2f} {base_idle:8.0f} {parse:8.0f} {parse_s:6.1f} {floor:10.0f}"
                f" {floor_s:6.1f} {tool:14.0f} {tool_s:6.1f} {tool / parse:9.2f}"
                f" {40 * size + 150:8.0f}{note}",
                flush=True,
            )


if __name__ == "__main__":
    main()
