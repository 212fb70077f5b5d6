"""Run fixture drivers in one JAX environment and print their summaries as JSON lines.

Started by ``tests/runtime/harness.py`` as ``python tests/runtime/worker.py`` with a JSON request
on stdin::

    {"mode": "modern" | "legacy" | "shim",
     "jobs": [{"id": ..., "module": path, "driver": path, "timeout": seconds,
               "allow": [message substrings], "flavours": [shim flavours]}],
     "distributed": null | {"coordinator": "127.0.0.1:PORT", "num_processes": 2, "process_id": 0}}

For each job it prints one line ``JAXMIGRATE-RESULT {"id", "ok", "summary" | "error"}``.

* ``import jax`` (2-3 s) is paid once per worker; each job then runs in a forked child, so one
  fixture's config updates, meshes or shim state cannot leak into the next, and a hung job is
  killed after its timeout.  Distributed workers run their single job in-process.
* ``modern`` mode turns DeprecationWarnings *issued by JAX* into errors: the ones JAX's own code
  raises (filter on the warning's module) and the ones JAX raises on behalf of the caller with
  ``stacklevel`` (module ``__getattr__`` deprecations such as ``jax.experimental.pjit.pjit``,
  which Python attributes to the fixture's module).  NumPy's and other libraries' warnings are
  left alone.  A driver may list message substrings in ``MODERN_DEPRECATIONS`` for an after-file
  that deliberately keeps a legacy call another rule reports.
* ``shim`` mode installs ``tests.runtime.shim`` (re-created removed APIs) before the fixture
  module is imported.

Must keep working on Python 3.9+ and jax 0.4.13 (it also runs in the legacy environments).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import sys
import tempfile
import time
import traceback
import warnings

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MARKER = "JAXMIGRATE-RESULT "
_JAX_MODULE = re.compile(r"^(jax|jaxlib)(\.|$)")


class JaxDeprecationError(Exception):
    """A DeprecationWarning issued by JAX while running the modern side."""


def reported_lines(path):
    """Lines of the statements that carry a ``# expect: CODE`` marker in ``path``.

    A deprecation raised while executing such a statement is the legacy call the tool left in
    place and reported on purpose, so it is allowed.  For a compound statement (``with``,
    ``def``, ...) only its header lines count, not its body.
    """
    import ast

    try:
        with open(path) as handle:
            text = handle.read()
        tree = ast.parse(text)
    except (OSError, SyntaxError):
        return set()
    marked = {n for n, line in enumerate(text.splitlines(), 1) if re.search(r"#\s*expect:", line)}
    if not marked:
        return set()
    lines = set(marked)
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt):
            continue
        end = getattr(node, "end_lineno", node.lineno)
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
            end = body[0].lineno - 1
        span = set(range(node.lineno, end + 1))
        if span & marked:
            lines |= span
    return lines


def install_deprecation_guard(allow=(), module_path=None):
    """Make DeprecationWarnings that come from JAX raise, and nothing else.

    Allowed: messages containing one of ``allow`` (driver's ``MODERN_DEPRECATIONS``), and
    deprecations raised while running a statement of ``module_path`` marked ``# expect:``.
    """
    original_warn = warnings.warn
    marked = reported_lines(module_path) if module_path else set()
    target = os.path.abspath(module_path) if module_path else None

    def _from_reported_statement():
        frame = sys._getframe(2)
        while frame is not None:
            if frame.f_lineno in marked and os.path.abspath(frame.f_code.co_filename) == target:
                return True
            frame = frame.f_back
        return False

    def _is_deprecation(category, message):
        if isinstance(message, Warning):
            category = type(message)
        return isinstance(category, type) and issubclass(category, DeprecationWarning)

    def guarded_warn(message, category=None, stacklevel=1, *args, **kwargs):
        if _is_deprecation(category or UserWarning, message):
            caller = sys._getframe(1).f_globals.get("__name__", "")
            text = str(message)
            if (
                _JAX_MODULE.match(caller)
                and not any(a in text for a in allow)
                and not _from_reported_statement()
            ):
                raise JaxDeprecationError(f"JAX deprecation ({caller}): {text}")
        return original_warn(message, category, stacklevel + 1, *args, **kwargs)

    warnings.warn = guarded_warn  # type: ignore[assignment]
    # Warnings whose location is JAX's own code (stacklevel=1 inside jax).
    warnings.filterwarnings("error", category=DeprecationWarning, module=r"(jax|jaxlib)(\..*)?$")
    for text in allow:
        warnings.filterwarnings(
            "default", message=".*" + re.escape(text), category=DeprecationWarning
        )


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def run_job(job, mode):
    """Import the fixture and its driver, call run(module); return a JSON-able result."""
    if mode == "modern":
        install_deprecation_guard(tuple(job.get("allow") or ()), job["module"])
    elif mode == "shim":
        # In the job (the forked child), not the parent: installing touches the backend, and a
        # parent whose XLA backend is initialised must not fork.
        from tests.runtime.shim import install

        install(tuple(job.get("flavours") or ()))
    safe = re.sub(r"\W", "_", job["id"])
    try:
        driver = load(job["driver"], "jaxmigrate_driver_" + safe)
        module = load(job["module"], "jaxmigrate_fixture_" + safe)
        summary = driver.run(module)
        text = json.dumps(summary, sort_keys=True)  # must be JSON-able
        return {"id": job["id"], "ok": True, "summary": json.loads(text)}
    except BaseException as exc:  # noqa: BLE001 - report everything, including SystemExit
        return {
            "id": job["id"],
            "ok": False,
            "error": f"{type(exc).__name__}: {exc}",
            "traceback": traceback.format_exc()[-4000:],
        }


def _forked(job, mode):
    """Run one job in a forked child with a timeout; the parent keeps the imported JAX."""
    fd, path = tempfile.mkstemp(prefix="jaxmigrate-job-", suffix=".json")
    os.close(fd)
    pid = os.fork()
    if pid == 0:  # child
        code = 0
        try:
            os.dup2(2, 1)  # the fixture's prints must not mix with result lines
            result = run_job(job, mode)
            with open(path, "w") as handle:
                json.dump(result, handle)
        except BaseException:  # noqa: BLE001
            code = 1
        finally:
            os._exit(code)
    deadline = time.monotonic() + float(job.get("timeout", 120))
    status = None
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.02)
    else:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        os.unlink(path)
        return {
            "id": job["id"],
            "ok": False,
            "error": f"timed out after {job.get('timeout', 120)}s",
        }
    try:
        with open(path) as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return {"id": job["id"], "ok": False, "error": f"worker child died (status {status})"}
    finally:
        os.unlink(path)


def main():
    request = json.loads(sys.stdin.read())
    mode = request["mode"]
    if REPO not in sys.path:
        sys.path.insert(0, REPO)
    distributed = request.get("distributed")
    import jax  # noqa: F401  - imported once, shared by the forked children

    if distributed:
        try:
            jax.config.update("jax_cpu_collectives_implementation", "gloo")
        except Exception:  # noqa: BLE001 - older JAX: no such option
            pass
        jax.distributed.initialize(
            distributed["coordinator"],
            num_processes=distributed["num_processes"],
            process_id=distributed["process_id"],
            initialization_timeout=60,
        ) if _accepts_timeout(jax.distributed.initialize) else jax.distributed.initialize(
            distributed["coordinator"],
            num_processes=distributed["num_processes"],
            process_id=distributed["process_id"],
        )
    for job in request["jobs"]:
        if distributed or not hasattr(os, "fork"):
            result = run_job(job, mode)
        else:
            result = _forked(job, mode)
        sys.stdout.write(MARKER + json.dumps(result) + "\n")
        sys.stdout.flush()
    if distributed:
        jax.distributed.shutdown()


def _accepts_timeout(function):
    import inspect

    try:
        return "initialization_timeout" in inspect.signature(function).parameters
    except (TypeError, ValueError):
        return False


if __name__ == "__main__":
    main()
