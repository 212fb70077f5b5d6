"""Create and cache the virtual environments that run legacy fixtures on a real old JAX.

Where: ``$JAXMIGRATE_VENV_DIR`` if set, else ``~/.cache/jaxmigrate/venvs`` (survives between CI
runs on the same machine), else ``<repo>/.cache/jaxmigrate-venvs`` when the home cache is not
writable.  Each environment is built in ``<name>.tmp`` and renamed into place only after its
``import jax`` check passed, under an exclusive file lock, so concurrent test sessions never see
a half-built environment.  Creation is bounded in time (``$JAXMIGRATE_VENV_TIMEOUT`` seconds,
default 900); on this machine (2 cores) each environment takes about 20-30 s from the registry
(jax 0.6.2: 22 s measured).

If an environment cannot be created (registry unreachable, timeout), ``VenvUnavailable`` is
raised; the tests turn it into a failure when ``CI`` is set and into a skip locally.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List, Optional

REPO = Path(__file__).resolve().parents[2]

# version -> pip requirements.  The pins are what installs on Python 3.11: jax 0.4.13 needs
# numpy<2, scipy<1.13 and ml_dtypes<0.5 to import cleanly.
REQUIREMENTS: Dict[str, List[str]] = {
    "0.4.13": ["jax==0.4.13", "jaxlib==0.4.13", "numpy<2", "scipy<1.13", "ml_dtypes<0.5"],
    "0.4.30": ["jax==0.4.30", "jaxlib==0.4.30", "numpy<2"],
    # jax 0.6.2: the newest JAX that has all of jax.lax.pvary (0.6.0-0.9.x),
    # jax.sharding.use_mesh (0.5.0-0.7.0) and bare jax.make_mesh with Auto axes (before 0.9.0).
    "0.6.2": ["jax==0.6.2", "jaxlib==0.6.2"],
}


class VenvUnavailable(RuntimeError):
    """The legacy environment could not be created or does not work."""


def cache_dir() -> Path:
    override = os.environ.get("JAXMIGRATE_VENV_DIR")
    if override:
        return Path(override)
    home = Path(os.path.expanduser("~")) / ".cache" / "jaxmigrate" / "venvs"
    try:
        home.mkdir(parents=True, exist_ok=True)
        probe = home / ".writable"
        probe.touch()
        return home
    except OSError:
        return REPO / ".cache" / "jaxmigrate-venvs"


def venv_python(venv: Path) -> Path:
    if os.name == "nt":  # pragma: no cover - CI is Linux
        return venv / "Scripts" / "python.exe"
    return venv / "bin" / "python"


def _ok(python: Path, version: str) -> bool:
    if not python.exists():
        return False
    try:
        out = subprocess.run(
            [str(python), "-c", "import jax, numpy; print(jax.__version__)"],
            capture_output=True,
            text=True,
            timeout=120,
            env=dict(os.environ, JAX_PLATFORMS="cpu"),
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0 and out.stdout.strip().splitlines()[-1:] == [version]


class _Lock:
    """An exclusive lock file (fcntl on POSIX), waited for at most ``timeout`` seconds."""

    def __init__(self, path: Path, timeout: float) -> None:
        self.path, self.timeout, self.handle = path, timeout, None

    def __enter__(self) -> "_Lock":
        import fcntl

        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.handle = open(self.path, "w")
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                fcntl.flock(self.handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return self
            except OSError:
                if time.monotonic() > deadline:
                    self.handle.close()
                    raise VenvUnavailable(f"timed out waiting for lock {self.path}") from None
                time.sleep(1)

    def __exit__(self, *exc: object) -> None:
        import fcntl

        fcntl.flock(self.handle, fcntl.LOCK_UN)
        self.handle.close()


def ensure(version: str, timeout: Optional[float] = None) -> Path:
    """Return the python executable of the cached environment for ``version``, creating it."""
    if version not in REQUIREMENTS:
        raise VenvUnavailable(f"no recipe for jax {version}")
    timeout = float(timeout or os.environ.get("JAXMIGRATE_VENV_TIMEOUT", 900))
    root = cache_dir()
    venv = root / f"jax-{version}"
    python = venv_python(venv)
    if _ok(python, version):
        return python
    with _Lock(root / f"jax-{version}.lock", timeout):
        if _ok(python, version):  # another session built it while we waited
            return python
        tmp = root / f"jax-{version}.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(venv, ignore_errors=True)
        deadline = time.monotonic() + timeout
        steps = [
            [sys.executable, "-m", "venv", str(tmp)],
            [
                str(venv_python(tmp)),
                "-m",
                "pip",
                "install",
                "-q",
                "--disable-pip-version-check",
                *REQUIREMENTS[version],
            ],
        ]
        for step in steps:
            left = deadline - time.monotonic()
            try:
                done = subprocess.run(step, capture_output=True, text=True, timeout=max(left, 1))
            except subprocess.TimeoutExpired:
                shutil.rmtree(tmp, ignore_errors=True)
                raise VenvUnavailable(
                    f"creating the jax {version} environment took over {timeout:.0f}s"
                ) from None
            if done.returncode != 0:
                shutil.rmtree(tmp, ignore_errors=True)
                raise VenvUnavailable(
                    f"creating the jax {version} environment failed: {' '.join(step)}\n"
                    + (done.stderr or done.stdout)[-2000:]
                )
        if not _ok(venv_python(tmp), version):
            shutil.rmtree(tmp, ignore_errors=True)
            raise VenvUnavailable(f"jax {version} installed but does not import")
        tmp.rename(venv)
    if not _ok(python, version):
        raise VenvUnavailable(f"jax {version} environment at {venv} does not work")
    return python


if __name__ == "__main__":  # python tests/runtime/venvs.py [VERSION...]: build ahead of time
    for name in sys.argv[1:] or sorted(REQUIREMENTS):
        started = time.monotonic()
        print(name, ensure(name), f"{time.monotonic() - started:.1f}s")
