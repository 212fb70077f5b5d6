"""Find runtime fixtures, run them in worker subprocesses, compare summaries.

A runtime case is a fixture pair ``<case>.before.py``/``<case>.after.py`` with a driver
``<case>.run.py`` (see fixtures/README.md), or a rule documentation example with a driver in
``tests/runtime/examples/<CODE>_<n>[.<variant>].run.py`` (n = 1-based index in
``Rule.examples``; the example's before/after text is written to
``.cache/jaxmigrate-examples/`` and run like a fixture).

Sides:
* modern: the after-file on the installed (newest) JAX, 8 CPU devices, JAX deprecations = errors.
* legacy: the before-file on real old JAX (driver constant
  ``LEGACY = "0.4.13"``/``"0.4.30"``/``"0.6.2"``).
* shim: the before-file on the installed JAX with ``tests.runtime.shim`` installed (``SHIM = True``;
  opt-in legacy models: ``SHIM_FLAVOURS = ("sda-pre-0.4.1",)``, see the shim's docstring).
* ``PROCESSES = 2``: every side runs as 2 real processes x 4 CPU devices on loopback.
"""

from __future__ import annotations

import ast
import difflib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "fixtures"
EXAMPLE_DRIVERS = Path(__file__).resolve().parent / "examples"
EXAMPLE_FILES = REPO / ".cache" / "jaxmigrate-examples"
WORKER = Path(__file__).resolve().parent / "worker.py"
MARKER = "JAXMIGRATE-RESULT "
JOB_TIMEOUT = float(os.environ.get("JAXMIGRATE_JOB_TIMEOUT", 60))


@dataclass
class Case:
    id: str
    rule: str  # fixture directory name, or rule code for doc examples
    before: Path
    after: Path
    driver: Path
    legacy: Optional[str] = None
    shim: bool = False
    processes: int = 1
    allow: Tuple[str, ...] = ()
    flavours: Tuple[str, ...] = ()
    constants: Dict[str, Any] = field(default_factory=dict)

    def job(self, side: str) -> Dict[str, Any]:
        module = self.after if side == "modern" else self.before
        return {
            "id": self.id,
            "module": str(module),
            "driver": str(self.driver),
            "timeout": JOB_TIMEOUT,
            "allow": list(self.allow),
            "flavours": list(self.flavours),
        }


def driver_constants(path: Path) -> Dict[str, Any]:
    """Module-level ``NAME = literal`` assignments of a driver, read without importing it."""
    found: Dict[str, Any] = {}
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name) and target.id.isupper():
                try:
                    found[target.id] = ast.literal_eval(node.value)
                except ValueError:
                    pass
    return found


def _case(case_id: str, rule: str, before: Path, after: Path, driver: Path) -> Case:
    constants = driver_constants(driver)
    return Case(
        id=case_id,
        rule=rule,
        before=before,
        after=after,
        driver=driver,
        legacy=constants.get("LEGACY"),
        shim=bool(constants.get("SHIM", False)),
        processes=int(constants.get("PROCESSES", 1)),
        allow=tuple(constants.get("MODERN_DEPRECATIONS", ())),
        flavours=tuple(constants.get("SHIM_FLAVOURS", ())),
        constants=constants,
    )


def fixture_cases() -> List[Case]:
    cases = []
    for driver in sorted(FIXTURES.glob("*/*.run.py")):
        stem = driver.name[: -len(".run.py")]
        before = driver.with_name(stem + ".before.py")
        after = driver.with_name(stem + ".after.py")
        if not after.exists():  # a driver beside a noop case runs the same file on both sides
            before = after = driver.with_name(stem + ".noop.py")
        cases.append(
            _case(f"{driver.parent.name}/{stem}", driver.parent.name, before, after, driver)
        )
    return cases


def example_cases() -> List[Case]:
    """Doc examples with a driver ``tests/runtime/examples/<CODE>_<n>.run.py``.

    ``n`` counts from 1, as in the test ids of tests/test_rules.py (``JAX101-1``).  The example's
    before/after text is written to ``.cache/jaxmigrate-examples/`` and run like a fixture pair.
    """
    from jaxmigrate.migrator.rule import all_rules

    rules = all_rules()
    cases = []
    for driver in sorted(EXAMPLE_DRIVERS.glob("JAX*_*.run.py")):
        stem = driver.name[: -len(".run.py")]  # CODE_n or CODE_n.variant
        code, _, rest = stem.partition("_")
        number, _, variant = rest.partition(".")
        rule = rules.get(code)
        if rule is None or not number.isdigit() or not 1 <= int(number) <= len(rule.examples):
            raise LookupError(f"{driver}: rule {code} has no example {number}")
        example = rule.examples[int(number) - 1]
        EXAMPLE_FILES.mkdir(parents=True, exist_ok=True)
        before = EXAMPLE_FILES / f"{code}_{number}.before.py"
        after = EXAMPLE_FILES / f"{code}_{number}.after.py"
        for path, text in ((before, example.before), (after, example.after)):
            if not path.exists() or path.read_text() != text:
                path.write_text(text)
        label = f"example/{code}-{number}" + (f".{variant}" if variant else "")
        cases.append(_case(label, code, before, after, driver))
    return cases


def all_cases() -> List[Case]:
    return fixture_cases() + example_cases()


def base_env(devices: int = 8) -> Dict[str, str]:
    env = dict(os.environ)
    env["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={devices}"
    env["JAX_PLATFORMS"] = "cpu"
    env["PYTHONPATH"] = str(REPO)
    env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    env.pop("JAX_ENABLE_X64", None)
    return env


def _parse(stdout: str) -> Dict[str, Dict[str, Any]]:
    results = {}
    for line in stdout.splitlines():
        if line.startswith(MARKER):
            result = json.loads(line[len(MARKER) :])
            results[result["id"]] = result
    return results


def run_batch(
    python: str, mode: str, cases: Sequence[Case], side: str
) -> Dict[str, Dict[str, Any]]:
    """Run many single-process cases in one worker; id -> result."""
    if not cases:
        return {}
    request = {"mode": mode, "jobs": [c.job(side) for c in cases], "distributed": None}
    budget = 60 + JOB_TIMEOUT * len(cases)
    for _attempt in range(2):
        try:
            done = subprocess.run(
                [python, str(WORKER)],
                input=json.dumps(request),
                capture_output=True,
                text=True,
                env=base_env(),
                cwd=str(REPO),
                timeout=budget,
            )
            stdout, stderr = done.stdout, f"(exit status {done.returncode})\n" + done.stderr
        except subprocess.TimeoutExpired as exc:
            stdout = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
            stderr = f"worker timed out after {budget:.0f}s"
            break
        if MARKER in stdout:
            break
        # The worker died before running anything (e.g. could not start): try once more.
    results = _parse(stdout)
    for case in cases:
        results.setdefault(
            case.id,
            {
                "id": case.id,
                "ok": False,
                "error": "worker produced no result",
                "stderr": stderr[-3000:],
            },
        )
    return results


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def run_multiprocess(
    python: str, mode: str, case: Case, side: str, attempts: int = 2
) -> Dict[str, Any]:
    """Run one case as ``case.processes`` processes x 4 CPU devices on loopback.

    Result: {"ok": bool, "summary": {"process 0": ..., "process 1": ...}} or an error.  Every
    wait is bounded; stragglers are killed with their process group.  A port taken between
    picking and binding, or a process that died without a word (a signal: no result, no
    traceback, nothing on stderr; seen once in a full local run, not reproduced in three
    reruns), is retried once; the exit code is in the error either way.
    """
    last: Dict[str, Any] = {}
    for _ in range(attempts):
        last = _run_multiprocess_once(python, mode, case, side)
        error = last.get("error", "").lower()
        if last.get("ok") or not ("address" in error or "no output" in error):
            return last
    return last


def _run_multiprocess_once(python: str, mode: str, case: Case, side: str) -> Dict[str, Any]:
    import tempfile

    n = case.processes
    coordinator = f"127.0.0.1:{free_port()}"
    env = base_env(devices=4)
    procs = []
    with tempfile.TemporaryDirectory(prefix="jaxmigrate-mp-") as tmp:
        files = []
        for pid in range(n):
            request = {
                "mode": mode,
                "jobs": [case.job(side)],
                "distributed": {"coordinator": coordinator, "num_processes": n, "process_id": pid},
            }
            base = Path(tmp) / f"p{pid}"
            base.with_suffix(".in").write_text(json.dumps(request))
            stdin = open(base.with_suffix(".in"))
            stdout = open(base.with_suffix(".out"), "w")
            stderr = open(base.with_suffix(".err"), "w")
            files.append((base, stdin, stdout, stderr))
            procs.append(
                subprocess.Popen(
                    [python, str(WORKER)],
                    stdin=stdin,
                    stdout=stdout,
                    stderr=stderr,
                    text=True,
                    env=env,
                    cwd=str(REPO),
                    start_new_session=True,
                )
            )
        deadline = time.monotonic() + JOB_TIMEOUT + 60
        timed_out = False
        for proc in procs:
            try:
                proc.wait(timeout=max(deadline - time.monotonic(), 1))
            except subprocess.TimeoutExpired:
                timed_out = True
        for proc in procs:  # kill stragglers and their children
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except OSError:
                    pass
                proc.wait(timeout=10)
        outputs: List[Tuple[str, str]] = []
        for base, stdin, stdout, stderr in files:
            for handle in (stdin, stdout, stderr):
                handle.close()
            outputs.append(
                (base.with_suffix(".out").read_text(), base.with_suffix(".err").read_text())
            )
    summary = {}
    for index, (out, err) in enumerate(outputs):
        result = _parse(out).get(case.id)
        if result is None or not result.get("ok"):
            detail = (
                result.get("error")
                if result
                else (err[-3000:] or f"no output (exit code {procs[index].returncode})")
            )
            return {
                "ok": False,
                "error": f"process {index}{' (timed out)' if timed_out else ''}: {detail}",
                "traceback": (result or {}).get("traceback", ""),
            }
        summary[f"process {index}"] = result["summary"]
    return {"ok": True, "summary": summary}


def describe_failure(result: Dict[str, Any], side: str) -> str:
    text = f"{side} side failed: {result.get('error')}"
    if result.get("traceback"):
        text += "\n" + result["traceback"]
    if result.get("stderr"):
        text += "\n--- worker stderr ---\n" + result["stderr"]
    return text


def diff_summaries(legacy: Any, modern: Any, legacy_label: str) -> str:
    """A readable unified diff of two summaries (empty when they are equal)."""
    if legacy == modern:
        return ""
    left = json.dumps(legacy, indent=1, sort_keys=True).splitlines()
    right = json.dumps(modern, indent=1, sort_keys=True).splitlines()
    return "\n".join(
        difflib.unified_diff(
            left, right, f"before-file on {legacy_label}", "after-file on modern JAX", lineterm=""
        )
    )


def python_for_modern() -> str:
    return sys.executable
