"""Start-up loads nothing heavy (issue #29): ``--version``, ``--help`` and a run over files that
do not name JAX import neither LibCST, nor the rules (nor the API history they load), nor the
engine.  Checked on ``sys.modules`` in a fresh interpreter, never on time: ``bench/startup.py``
measures the time."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, List, Set, Tuple

import pytest

HEAVY = ("libcst", "jaxmigrate.rules", "jaxmigrate.migrator.engine")

_PROGRAM = """
import json, sys
{setup}
print(json.dumps(sorted(sys.modules)))
"""

_MAIN = """
import contextlib, io
from jaxmigrate.migrator.cli import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    try:
        main({argv!r})
    except SystemExit as stop:
        code = stop.code
"""


def _last_json(program: str, cwd: Path) -> Any:
    """What ``program`` prints last, as JSON, run in a fresh interpreter."""
    env = dict(os.environ, JAXMIGRATE_CACHE_DIR=str(cwd / "cache"))
    done = subprocess.run(
        [sys.executable, "-c", program],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def _loaded(setup: str, cwd: Path) -> Set[str]:
    """The modules imported once ``setup`` has run in a fresh interpreter."""
    return set(_last_json(_PROGRAM.format(setup=setup), cwd))


def _heavy(modules: Set[str]) -> List[str]:
    return sorted(m for m in modules if m in HEAVY or m.startswith(tuple(h + "." for h in HEAVY)))


def _run(tmp_path: Path, *argv: str) -> Set[str]:
    return _loaded(_MAIN.format(argv=list(argv)), tmp_path)


def test_importing_the_package_and_the_command_line_loads_nothing_heavy(tmp_path):
    assert _heavy(_loaded("import jaxmigrate, jaxmigrate.migrator.cli", tmp_path)) == []


@pytest.mark.parametrize("argv", [("--version",), ("--help",), ("migrate", "--help")])
def test_version_and_help_load_nothing_heavy(tmp_path, argv: Tuple[str, ...]):
    assert _heavy(_run(tmp_path, *argv)) == []


@pytest.mark.parametrize("flags", [("--target-version", "0.4.30"), ()])
def test_a_run_over_files_that_do_not_name_jax_loads_nothing_heavy(tmp_path, flags):
    (tmp_path / "a.py").write_text("x = 1\n", encoding="utf-8")
    (tmp_path / "b.py").write_text("import os\n\nprint(os.getcwd())\n", encoding="utf-8")
    assert _heavy(_run(tmp_path, "a.py", "b.py", "-j", "1", *flags)) == []


def test_a_file_that_names_jax_loads_the_engine(tmp_path):
    """(The test above is not vacuous: the same run over a file with a trigger word does.)"""
    (tmp_path / "a.py").write_text("import jax\n\nx = jax.numpy.DeviceArray\n", encoding="utf-8")
    heavy = _heavy(_run(tmp_path, "a.py", "--target-version", "0.4.30", "--diff"))
    assert "libcst" in heavy and "jaxmigrate.rules" in heavy


_REPORT = """
import contextlib, io, json, sys
from jaxmigrate.migrator.cli import main
out = io.StringIO()
with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
    try:
        main({argv!r})
    except SystemExit:
        pass
print(json.dumps([out.getvalue(), sorted(sys.modules)]))
"""


def _report(tmp_path: Path, *argv: str) -> Tuple[str, Set[str]]:
    """What a run printed, and the modules it imported, in a fresh interpreter."""
    printed, modules = _last_json(_REPORT.format(argv=list(argv)), tmp_path)
    return printed, set(modules)


@pytest.mark.parametrize("flags", [("--target-version", "0.4.30"), ()])
def test_a_findings_only_run_reports_without_loading_libcst(tmp_path, flags):
    """A file whose rules answer from CPython's ``ast`` (a finding, nothing to rewrite) runs
    the rules and the engine, never LibCST: the rules read it through
    :mod:`migrator.lazycst`, and nothing reads a LibCST name at import."""
    (tmp_path / "a.py").write_text(
        "from jax._src import core\n\np = core.Primitive('p')\n", encoding="utf-8"
    )
    (tmp_path / "b.py").write_text("import jax\n\ny = jax.numpy.zeros(3)\n", encoding="utf-8")
    printed, modules = _report(tmp_path, "a.py", "b.py", "--check", "-j", "1", *flags)
    assert "a.py:1:" in printed and "JAX902" in printed, printed
    heavy = _heavy(modules)
    assert "jaxmigrate.rules" in heavy and "jaxmigrate.migrator.engine" in heavy
    assert [m for m in heavy if m == "libcst" or m.startswith("libcst.")] == []


def test_importing_every_rule_leaves_libcst_unloaded(tmp_path):
    """A rule module reads LibCST only when it runs (``from jaxmigrate.migrator import
    lazycst as cst``; a visitor class inside the function that visits): the registry, the
    gates and the ``ast`` answers never pay for LibCST's import."""
    setup = "from jaxmigrate.migrator.rule import all_rules\nassert len(all_rules()) > 40\n"
    assert "libcst" not in _loaded(setup, tmp_path)


def test_the_public_names_are_there_on_first_use(tmp_path):
    setup = (
        "import jaxmigrate\n"
        "names = {'ConfigError', 'MigrationError', 'Result', 'Settings', 'migrate_source'}\n"
        "assert names <= set(dir(jaxmigrate)), dir(jaxmigrate)\n"
        "from jaxmigrate import Settings, migrate_source, __version__\n"
        "from jaxmigrate.migrator import MigrationError, Result\n"
        "assert migrate_source('x = 1\\n', Settings()).output == 'x = 1\\n'\n"
        "assert jaxmigrate.Result is Result and jaxmigrate.MigrationError is MigrationError\n"
    )
    assert "jaxmigrate.migrator.engine" in _loaded(setup, tmp_path)


def test_a_second_run_over_modern_files_in_one_process_loads_no_rule(tmp_path):
    """The kept gates (:mod:`migrator.gateplan`) answer modern files without the rules, the
    default target's survey included: a file they turn away, docstring examples and all,
    fixes nothing there, so its words alone bound its floor.  The second run over two such
    files (one with an example) in one process imports neither the rules nor the engine."""
    (tmp_path / "a.py").write_text("import jax\n\ny = jax.numpy.zeros(3)\n", encoding="utf-8")
    (tmp_path / "b.py").write_text(
        'import jax\n\n\ndef f(x):\n    """Sum.\n\n    >>> f(jax.numpy.ones(3))\n    """\n'
        "    return x.sum()\n",
        encoding="utf-8",
    )
    argv = ("a.py", "b.py", "--check", "-j", "1")
    assert "jaxmigrate.rules.missing_api" in _run(tmp_path, *argv)  # (it keeps the gates)
    rule_modules = [  # (the kept gates import the light modules of their bases, rules._*)
        m for m in _heavy(_run(tmp_path, *argv)) if not m.startswith("jaxmigrate.rules._")
    ]
    assert rule_modules in ([], ["jaxmigrate.rules"])


def test_workers_inherit_the_rules_only_where_they_need_them(tmp_path):
    """A pool's workers fork from the main process (:mod:`migrator.preload`): where a file
    passes a rule's gates, the main process imports the rules and LibCST first, once, for
    every worker of both pools; where the kept gates pass none (modern code), it imports
    nothing, as one process does."""
    legacy, modern = tmp_path / "legacy", tmp_path / "modern"
    legacy.mkdir()
    modern.mkdir()
    for name in ("a.py", "b.py"):
        (legacy / name).write_text("import jax\n\nx = jax.tree_map(f, y)\n", encoding="utf-8")
        (modern / name).write_text("import jax\n\ny = jax.numpy.zeros(3)\n", encoding="utf-8")
    heavy = _heavy(_run(tmp_path, str(legacy), "--check", "-j", "2"))
    assert "jaxmigrate.rules.tree_functions" in heavy and "libcst" in heavy
    _run(tmp_path, str(modern), "--check", "-j", "2")  # (the first run keeps the gates)
    heavy = _heavy(_run(tmp_path, str(modern), "--check", "-j", "2"))
    assert [m for m in heavy if not m.startswith("jaxmigrate.rules._")] in (
        [],
        ["jaxmigrate.rules"],
    )
