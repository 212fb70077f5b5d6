"""Whole legacy programs: migrate with ``--unsafe-fixes``, run both sides, compare stdout.

A program is ``tests/programs/cases/<name>.py``, a complete legacy script that prints
deterministic results.  Its header comments say how it runs and what the migration leaves::

    # legacy: 0.4.13          real old JAX (tests/runtime/venvs.py), or ``shim``
    # processes: 2            optional: two processes x 4 CPU devices, gloo, on loopback
    # findings: JAX203 JAX607 codes of the findings left after migration (``none``)
    # target: 0.4.34          optional: ``--target-version`` of the migration (default: none)
    # xfail: <reason>         optional: the missing migration that makes it fail today

* legacy side: the program on that JAX (``launch.py legacy``; ``shim``: the newest JAX with the
  test-only shim).  Its output is cached by content (program, launcher, shim, JAX version) in
  ``~/.cache/jaxmigrate/programs``: old JAX does not change.
* modern side: the program migrated by the CLI (``jaxmigrate FILES --unsafe-fixes --format json``,
  default target, or the header's), run on the newest JAX with ``-W error::DeprecationWarning``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from tests.runtime import harness as runtime_harness, venvs

HERE = Path(__file__).resolve().parent
CASES = HERE / "cases"
LAUNCH = HERE / "launch.py"
SHIM = HERE.parent / "runtime" / "shim"
REPO = HERE.parents[1]
TIMEOUT = float(os.environ.get("JAXMIGRATE_PROGRAM_TIMEOUT", 180))
_HEADER = re.compile(r"^#\s*(legacy|processes|findings|xfail|target):\s*(.*?)\s*$")


@dataclass
class Program:
    name: str
    path: Path
    legacy: str  # a venv version, or "shim"
    processes: int
    findings: List[str]
    xfail: Optional[str]
    target: Optional[str] = None

    @property
    def text(self) -> str:
        return self.path.read_text()


def read_program(path: Path) -> Program:
    fields: Dict[str, str] = {}
    for line in path.read_text().splitlines()[:12]:
        match = _HEADER.match(line)
        if match:
            fields[match.group(1)] = match.group(2)
    if "legacy" not in fields or "findings" not in fields:
        raise ValueError(f"{path}: header needs '# legacy:' and '# findings:'")
    findings = [] if fields["findings"] == "none" else sorted(fields["findings"].split())
    return Program(
        path.stem,
        path,
        fields["legacy"],
        int(fields.get("processes", 1)),
        findings,
        fields.get("xfail"),
        fields.get("target"),
    )


def programs() -> List[Program]:
    return [read_program(p) for p in sorted(CASES.glob("*.py"))]


@dataclass
class Run:
    ok: bool
    stdout: str
    stderr: str = ""

    def __post_init__(self) -> None:
        # gloo's native logging writes to stdout in whatever order its threads run
        self.stdout = "".join(
            line for line in self.stdout.splitlines(keepends=True) if not line.startswith("[Gloo]")
        )


def migrate(progs: Sequence[Program], out_dir: Path) -> Dict[str, List[str]]:
    """Copy the programs to ``out_dir`` and migrate them there with the CLI.

    Returns program name -> the codes of its findings.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    for prog in progs:
        shutil.copyfile(prog.path, out_dir / prog.path.name)
    entries = []
    for target in sorted({p.target for p in progs}, key=str):
        paths = [str(out_dir / p.path.name) for p in progs if p.target == target]
        entries += _migrate_files(paths, [] if target is None else ["--target-version", target])
    found = {}
    for entry in entries:
        codes = sorted(f["code"] for f in entry["findings"])
        if entry["error"]:  # a file (or one site) the tool could not migrate: never expected
            codes.append(f"error: {entry['error']['message']}")
        found[Path(entry["path"]).stem] = codes
    return {p.name: found.get(p.name, []) for p in progs}


def _migrate_files(paths: List[str], options: List[str]) -> List[dict]:
    """The JSON report's file entries of one ``jaxmigrate --unsafe-fixes`` run over ``paths``."""
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from jaxmigrate.migrator.cli import command; command()",
            *paths,
            "--unsafe-fixes",
            *options,
            "--format",
            "json",
            "-j",
            "2",
        ],
        capture_output=True,
        text=True,
        cwd=str(REPO),
        env=dict(os.environ, PYTHONPATH=str(REPO)),
    )
    try:
        return json.loads(done.stdout)["files"]
    except ValueError:
        raise RuntimeError(f"jaxmigrate failed ({done.returncode}):\n{done.stderr}") from None


def _env(devices: int) -> Dict[str, str]:
    env = runtime_harness.base_env(devices)
    env["JAX_CPU_COLLECTIVES_IMPLEMENTATION"] = "gloo"
    env["PYTHONHASHSEED"] = "0"
    return env


def _command(python: str, mode: str, path: Path) -> List[str]:
    warn = ["-W", "error::DeprecationWarning"] if mode == "modern" else []
    return [python, *warn, str(LAUNCH), mode, str(path)]


def run_program(python: str, mode: str, path: Path, processes: int) -> Run:
    """Run ``path`` (1 process x 8 devices, or ``processes`` x 4); stdout of every process."""
    if processes == 1:
        try:
            done = subprocess.run(
                _command(python, mode, path),
                capture_output=True,
                text=True,
                env=_env(8),
                cwd=str(REPO),
                timeout=TIMEOUT,
            )
        except subprocess.TimeoutExpired:
            return Run(False, "", f"timed out after {TIMEOUT:.0f}s")
        return Run(done.returncode == 0, done.stdout, done.stderr[-4000:])
    return _run_processes(python, mode, path, processes)


def _run_processes(python: str, mode: str, path: Path, processes: int) -> Run:
    coordinator = f"127.0.0.1:{runtime_harness.free_port()}"
    procs = []
    with tempfile.TemporaryDirectory(prefix="jaxmigrate-prog-") as tmp:
        for pid in range(processes):
            env = dict(
                _env(4),
                COORDINATOR_ADDRESS=coordinator,
                NUM_PROCESSES=str(processes),
                PROCESS_ID=str(pid),
            )
            out = open(Path(tmp) / f"{pid}.out", "w")
            err = open(Path(tmp) / f"{pid}.err", "w")
            procs.append(
                (
                    subprocess.Popen(
                        _command(python, mode, path),
                        stdout=out,
                        stderr=err,
                        text=True,
                        env=env,
                        cwd=str(REPO),
                        start_new_session=True,
                    ),
                    out,
                    err,
                )
            )
        deadline = time.monotonic() + TIMEOUT
        for proc, _, _ in procs:
            try:
                proc.wait(timeout=max(deadline - time.monotonic(), 1))
            except subprocess.TimeoutExpired:
                pass
        ok = True
        stdout, stderr = [], []
        for pid, (proc, out, err) in enumerate(procs):
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)
            out.close()
            err.close()
            ok = ok and proc.returncode == 0
            stdout.append(f"== process {pid} ==\n" + (Path(tmp) / f"{pid}.out").read_text())
            stderr.append(
                f"== process {pid} (exit {proc.returncode}) ==\n"
                + (Path(tmp) / f"{pid}.err").read_text()[-3000:]
            )
    return Run(ok, "".join(stdout), "".join(stderr))


def _legacy_key(prog: Program, python: str) -> str:
    digest = hashlib.sha256()
    for part in (prog.legacy, str(prog.processes), python, prog.text, LAUNCH.read_text()):
        digest.update(part.encode() + b"\0")
    for path in sorted(SHIM.glob("*.py")):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:24]


def legacy_python(version: str) -> str:
    if version == "shim":
        return sys.executable
    return str(venvs.ensure(version))


def run_legacy(prog: Program) -> Run:
    """The program on its legacy JAX; successful runs are cached by content."""
    python = legacy_python(prog.legacy)
    cache = venvs.cache_dir().parent / "programs"
    entry = cache / f"{prog.name}-{_legacy_key(prog, python)}.json"
    if entry.exists():
        return Run(**json.loads(entry.read_text()))
    mode = "shim" if prog.legacy == "shim" else "legacy"
    run = run_program(python, mode, prog.path, prog.processes)
    if run.ok:
        cache.mkdir(parents=True, exist_ok=True)
        tmp = entry.with_suffix(".tmp")
        tmp.write_text(json.dumps(run.__dict__))
        tmp.replace(entry)
    return run


def run_all(
    progs: Sequence[Program], migrated_dir: Path, workers: int = 2
) -> Dict[str, Dict[str, Run]]:
    """name -> {"legacy": Run, "modern": Run}; programs run ``workers`` at a time."""

    def legacy(prog: Program) -> Run:
        try:
            return run_legacy(prog)
        except venvs.VenvUnavailable as exc:
            return Run(False, "", f"legacy environment unavailable: {exc}")

    def modern(prog: Program) -> Run:
        return run_program(sys.executable, "modern", migrated_dir / prog.path.name, prog.processes)

    # Two-process programs first: they take longest and use both cores anyway.
    order = sorted(progs, key=lambda p: -p.processes)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        legacy_runs = {p.name: pool.submit(legacy, p) for p in order}
        modern_runs = {p.name: pool.submit(modern, p) for p in order}
        return {
            p.name: {"legacy": legacy_runs[p.name].result(), "modern": modern_runs[p.name].result()}
            for p in progs
        }
