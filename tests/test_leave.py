"""The command leaves its process without the interpreter's teardown (:mod:`migrator.leave`):
with its exit code, its whole output, and not before a thread or a worker is done."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

# (buffered, as a command's output to a pipe or a file is: the flush is what is tested)
_ENV = {name: value for name, value in os.environ.items() if name != "PYTHONUNBUFFERED"}


def _python(program: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", program, *args],
        cwd=cwd,
        env=_ENV,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize(
    "code, status, stderr",
    [("None", 0, ""), ("0", 0, ""), ("2", 2, ""), ("True", 1, ""), ("'no luck'", 1, "no luck\n")],
)
def test_the_exit_code_is_sys_exits(tmp_path, code, status, stderr):
    program = f"from jaxmigrate.migrator.leave import leave; print('out', end=''); leave({code})"
    done = _python(program, cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (status, "out", stderr)


def test_a_thread_still_running_is_waited_for(tmp_path):
    """A thread that is not a daemon finishes its work before the process ends."""
    program = (
        "import threading, time, pathlib\n"
        "from jaxmigrate.migrator.leave import leave\n"
        "def late():\n"
        "    time.sleep(0.5)\n"
        "    pathlib.Path('late.txt').write_text('done')\n"
        "threading.Thread(target=late).start()\n"
        "leave(3)\n"
    )
    done = _python(program, cwd=tmp_path)
    assert done.returncode == 3
    assert (tmp_path / "late.txt").read_text() == "done"


def test_a_child_process_still_alive_is_joined(tmp_path):
    """A worker process still alive is left to Python's shutdown, which joins it: its work is
    done when the command's process ends (no pipe of the test's keeps the run waiting)."""
    program = (
        "import multiprocessing, time, pathlib\n"
        "from jaxmigrate.migrator.leave import leave\n"
        "def late():\n"
        "    time.sleep(0.5)\n"
        "    pathlib.Path('child.txt').write_text('done')\n"
        "if __name__ == '__main__':\n"
        "    multiprocessing.get_context('fork').Process(target=late).start()\n"
        "    leave(0)\n"
    )
    script = tmp_path / "child.py"
    script.write_text(program)
    quiet = subprocess.DEVNULL
    done = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, env=_ENV, stdout=quiet, stderr=quiet
    )
    assert done.returncode == 0
    assert (tmp_path / "child.txt").read_text() == "done"


def test_the_command_prints_its_whole_diff_through_a_pipe(tmp_path):
    """Output past the pipe's buffer, and its last partial block, all reach the reader; the
    exit code is the command's (1: a diff was shown)."""
    lines = [f"y{i} = jax.tree_map(abs, [{i}])\n" for i in range(3000)]
    (tmp_path / "old.py").write_text("import jax\n" + "".join(lines))
    done = _python(
        "from jaxmigrate.migrator.cli import command; command()",
        "old.py",
        "--diff",
        "-q",
        "--no-cache",
        "--target-version",
        "0.4.25",
        cwd=tmp_path,
    )
    assert done.returncode == 1, done.stderr
    added = [line for line in done.stdout.splitlines() if line.startswith("+y")]
    assert len(added) == 3000 and added[-1] == "+y2999 = jax.tree.map(abs, [2999])"
