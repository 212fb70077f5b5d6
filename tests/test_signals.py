"""SIGINT and SIGTERM: a run stops, every file is left whole (the old text or the whole new
one), the files already rewritten are reported, and no worker process is left behind."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import List

import pytest

from tests.test_cli import LEGACY, MIGRATED


def _workers_of(marker: str) -> List[int]:
    """Processes whose command line holds ``marker`` (the run's unique directory)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker in (entry / "cmdline").read_bytes().decode(errors="replace"):
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="looks for leftover processes in /proc")
@pytest.mark.parametrize(
    "signum,code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["SIGINT", "SIGTERM"]
)
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_signal_stops_the_run_and_leaves_every_file_whole(tmp_path, signum, code, jobs):
    root = tmp_path / f"signal-run-{signum}-{jobs}"
    root.mkdir()
    count = 600
    for index in range(count):
        (root / f"m{index:03}.py").write_text(LEGACY + "\n" * index)
    command = [
        sys.executable,
        "-c",
        "from jaxmigrate.migrator.cli import command; command()",
        str(root),
        "--no-cache",
        "-j",
        jobs,
    ]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def migrated():
        return [p for p in sorted(root.glob("*.py")) if not p.read_text().startswith(LEGACY[:20])]

    deadline = time.monotonic() + 300  # (a bound for a broken run, not an assertion)
    while not migrated() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert process.poll() is None, "the run ended before it could be interrupted"
    process.send_signal(signum)
    stdout, stderr = process.communicate(timeout=300)
    assert process.returncode == code, stderr[-2000:]
    changed = migrated()
    reported = [
        Path(line[len("rewrote ") :]) for line in stderr.splitlines() if line.startswith("rewrote ")
    ]
    assert sorted(reported) == changed and 0 < len(changed) < count
    for index in range(count):  # every file is the old one or the whole new one
        text = (root / f"m{index:03}.py").read_text()
        assert text in (LEGACY + "\n" * index, MIGRATED + "\n" * index)
    assert sorted(p.name for p in root.iterdir()) == [
        f"m{index:03}.py" for index in range(count)
    ]  # no temp file
    name = signal.Signals(signum).name
    assert stderr.splitlines()[-1].startswith(f"jaxmigrate: stopped by {name} after ")
    assert "Traceback" not in stderr and "Aborted" not in stderr
    assert _workers_of(str(root)) == []
