"""Bad input: each case gets a clear message and exit code, and no other file is affected."""

from __future__ import annotations

import ast
import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import jaxmigrate.migrator.fileio as fileio
import jaxmigrate.migrator.runner as runner
from tests.test_cli import LEGACY, MIGRATED, invoke


@pytest.fixture
def tree(tmp_path):
    """A directory with one good legacy file next to whatever the test adds."""
    (tmp_path / "good.py").write_text(LEGACY)
    return tmp_path


def run_tree(tree, *args):
    result = invoke(tree, "--no-cache", *args)
    assert (tree / "good.py").read_text() == MIGRATED, "the good file is still migrated"
    return result


@pytest.mark.parametrize(
    "name,raw,message",
    [
        (
            "syntax.py",
            b"import jax.numpy as jnp\ndef f(:\n    jnp.DeviceArray\n",
            "not valid Python",
        ),
        ("py2.py", b"import jax.numpy as jnp\nprint 'x', jnp.DeviceArray\n", "not valid Python"),
        ("nul.py", b"import jax.numpy as jnp\x00\njnp.DeviceArray\n", "contains NUL bytes"),
        (
            "undecodable.py",
            b"import jax.numpy as jnp\nx = '\xff'  # DeviceArray\n",
            "cannot decode",
        ),
        (
            "cookie.py",
            b"# -*- coding: ascii -*-\nimport jax.numpy as jnp\nx = '\xe9'  # DeviceArray\n",
            "cannot decode with the declared encoding ascii",
        ),
        ("badcookie.py", b"# -*- coding: klingon -*-\nx = 1  # DeviceArray\n", "cannot decode"),
    ],
    ids=["syntax", "python2", "nul", "undecodable", "undecodable-with-cookie", "unknown-cookie"],
)
def test_bad_file_is_reported_and_untouched(tree, name, raw, message):
    path = tree / name
    path.write_bytes(raw)
    result = run_tree(tree)
    assert result.exit_code == 2
    lines = [line for line in result.stderr.splitlines() if str(path) in line]
    assert lines and message in lines[0], result.stderr
    assert path.read_bytes() == raw


def test_tabs_are_kept(tree):
    path = tree / "tabs.py"
    path.write_text("import jax.numpy as jnp\nif True:\n\tX = jnp.DeviceArray\n\tY = jnp.ones(1)\n")
    assert run_tree(tree).exit_code == 1
    assert (
        path.read_text()
        == "import jax\nimport jax.numpy as jnp\nif True:\n\tX = jax.Array\n\tY = jnp.ones(1)\n"
    )


def test_empty_file(tree):
    (tree / "empty.py").write_bytes(b"")
    assert run_tree(tree).exit_code == 1
    assert (tree / "empty.py").read_bytes() == b""


def test_huge_files(tmp_path):
    modern = tmp_path / "modern.py"
    chunk = "def f(x):\n    return x + 1\n" * 1000
    modern.write_text(chunk * (50 * 10**6 // len(chunk) + 1))
    assert modern.stat().st_size > 50 * 10**6
    assert invoke(modern, "--no-cache").exit_code == 0  # the prefilter never parses it
    legacy = tmp_path / "legacy.py"
    legacy.write_text(
        "import jax.numpy as jnp\nX = jnp.DeviceArray\n" + chunk * (25 * 10**6 // len(chunk))
    )
    result = invoke(legacy, "--no-cache")
    assert result.exit_code == 2
    assert "MB of source is over the 20 MB" in result.stderr


def test_directory_named_like_a_python_file(tree):
    (tree / "pkg.py").mkdir()
    (tree / "pkg.py" / "inner.py").write_text(LEGACY)
    assert run_tree(tree).exit_code == 1
    assert (tree / "pkg.py" / "inner.py").read_text() == MIGRATED
    assert invoke(tree / "pkg.py", "--no-cache").exit_code == 0


def test_symlink_loop(tree):
    (tree / "a.py").symlink_to(tree / "b.py")
    (tree / "b.py").symlink_to(tree / "a.py")
    result = invoke(tree / "a.py", "--no-cache")
    assert result.exit_code == 2 and "symbolic link loop" in result.stderr
    assert run_tree(tree).exit_code == 1  # a walk skips links


def test_reading_says_why_a_path_cannot_be_read(tree):
    from jaxmigrate.migrator.fileio import FileError, read_source

    (tree / "pkg.py").mkdir()
    (tree / "gone.py").symlink_to(tree / "missing.py")
    (tree / "to_dir.py").symlink_to(tree / "pkg.py", target_is_directory=True)
    (tree / "a.py").symlink_to(tree / "b.py")
    (tree / "b.py").symlink_to(tree / "a.py")
    expected = {
        "pkg.py": "is a directory",
        "to_dir.py": "is a directory",
        "gone.py": "dangling symbolic link",
        "a.py": "dangling symbolic link",  # (a loop: the command line names it first)
        "absent.py": "cannot read: No such file or directory",
    }
    for name, reason in expected.items():
        with pytest.raises(FileError) as raised:
            read_source(tree / name)
        assert str(raised.value) == reason, name


def test_directory_symlink_loop_is_not_followed(tree):
    (tree / "sub").mkdir()
    (tree / "sub" / "up").symlink_to(tree, target_is_directory=True)
    assert run_tree(tree).exit_code == 1


@pytest.mark.skipif(
    not shutil.which("setpriv") or os.geteuid() != 0, reason="needs root and setpriv"
)
def test_unreadable_file():
    # root reads everything, so run the tool as an unprivileged user, in a directory it can reach
    import tempfile

    tmp_path = Path(tempfile.mkdtemp(prefix="jaxmigrate-perm-", dir="/tmp"))
    bad = tmp_path / "secret.py"
    bad.write_text(LEGACY)
    bad.chmod(0o000)
    good = tmp_path / "good.py"
    good.write_text(LEGACY)
    good.chmod(0o666)
    tmp_path.chmod(0o777)
    as_nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable]
    env = dict(os.environ, HOME=str(tmp_path))
    # A virtualenv made by `mktemp -d` is mode 0700: the unprivileged user then runs the base
    # interpreter without the venv's packages.  That is this machine's limit, not the tool's.
    probe = subprocess.run(
        [*as_nobody, "-c", "import jaxmigrate.migrator.cli"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        cwd="/",
    )
    if probe.returncode != 0:
        pytest.skip(f"the unprivileged user cannot import the tool here: {probe.stderr[-200:]}")
    command = [
        *as_nobody,
        "-c",
        "from jaxmigrate.migrator.cli import command; command()",
        str(tmp_path),
        "--no-cache",
    ]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120, cwd="/")
    if "Permission denied" in done.stderr and "secret" not in done.stderr:
        pytest.skip(f"the unprivileged user cannot run this interpreter: {done.stderr[-200:]}")
    assert done.returncode == 2, done.stderr
    assert f"{bad}: error: permission denied (cannot read)" in done.stderr
    assert good.read_text() == MIGRATED
    shutil.rmtree(tmp_path)


def test_file_changed_between_read_and_write(tree, monkeypatch):
    path = tree / "racy.py"
    path.write_text(LEGACY)
    real = runner.migrate_source

    def migrate_while_someone_edits(text, settings, cache=None, style_of=None, kept=None):
        result = real(text, settings, cache, style_of, kept)
        path.write_text(LEGACY + "# edited meanwhile\n")  # another program saves the file
        return result

    monkeypatch.setattr(runner, "migrate_source", migrate_while_someone_edits)
    # an explicit target: no survey reads the file before the run that writes it
    result = invoke(path, "--no-cache", "-j", "1", "--target-version", "0.4.30")
    assert result.exit_code == 2
    assert "changed on disk while it was being migrated; not overwritten" in result.stderr
    assert path.read_text() == LEGACY + "# edited meanwhile\n"


def test_disk_full_keeps_the_original(tree, monkeypatch):
    path = tree / "full.py"
    path.write_text(LEGACY)

    def no_space(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(fileio.os, "fsync", no_space)
    result = invoke(path, "--no-cache", "-j", "1")
    assert result.exit_code == 2
    assert "cannot write (original kept): No space left on device" in result.stderr
    assert path.read_text() == LEGACY
    assert sorted(p.name for p in tree.iterdir()) == ["full.py", "good.py"], "temp file removed"


def test_crlf_and_mixed_line_endings_survive_a_full_rewrite(tmp_path):
    source = textwrap.dedent(
        """\
        from jax.interpreters.xla import DeviceArray
        from jax.experimental.pjit import pjit
        f = pjit(g, in_axis_resources=None)
        def h(x: DeviceArray):
            return x
        """
    )
    path = tmp_path / "c.py"
    path.write_bytes(source.replace("\n", "\r\n").encode())
    invoke(path, "--no-cache")
    data = path.read_bytes()
    assert b"\n" not in data.replace(b"\r\n", b"")
    assert b"jax.Array" in data and b"in_shardings" in data


# -- one file's trouble stays in that file ("safe means safe") ----------------------------------
TREE = "import jax\n\nx = jax.tree_map(f, y)\n"
TREE_MIGRATED = "import jax\n\nx = jax.tree_util.tree_map(f, y)\n"  # the default target's floor


def _error_lines(result, path):
    return [line for line in result.stderr.splitlines() if line.startswith(f"{path}:")]


@pytest.mark.parametrize(
    "name,tail",
    [
        ("sum", "z = " + " + ".join(["a"] * 500) + "\n"),
        ("strings", "z = (\n" + "".join(f"    'part {i}'\n" for i in range(600)) + ")\n"),
        (
            "elifs",
            "if a == 0:\n    pass\n"
            + "".join(f"elif a == {i}:\n    pass\n" for i in range(1, 1000)),
        ),
        ("deep site", "z = " + "-" * 1000 + "jax.tree_map(g, w)\n"),
    ],
)
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_deeply_nested_files_are_migrated(tree, name, tail, jobs):
    """Past the interpreter's default recursion limit, within the documented nesting limit."""
    path = tree / "deep.py"
    path.write_text(TREE + tail)
    result = run_tree(tree, "-j", jobs)
    assert result.exit_code == 1, result.stderr
    migrated = path.read_text()
    assert migrated.startswith(TREE_MIGRATED) and "jax.tree_map" not in migrated
    ast.parse(migrated)


@pytest.mark.parametrize(
    "name,tail,message",
    [
        (
            "sum",
            "z = " + " + ".join(["a"] * 3000) + "\n",
            "too deeply nested to analyse (limit 1,500 levels)",
        ),
        (
            "elifs",
            "if a == 0:\n    pass\n"
            + "".join(f"elif a == {i}:\n    pass\n" for i in range(1, 2000)),
            "limit 1,500 levels",
        ),
        ("and-chain", "z = " + " and ".join(["a"] * 3000) + "\n", "limit 1,500 levels"),
        (
            "unary",
            "z = " + "-" * 5000 + "a\n",
            "limit 1,500 levels",
        ),  # (too deep for CPython's parser too)
        ("brackets", "z = " + "[" * 300 + "]" * 300 + "\n", "more than 200 nested brackets"),
    ],
)
@pytest.mark.usefixtures("fixes_through_libcst")  # (LibCST's guard: TREE's rename reaches it)
def test_too_deeply_nested_files_are_refused_cleanly(tree, name, tail, message):
    path = tree / "deep.py"
    path.write_text(TREE + tail)
    result = run_tree(tree, "-j", "1")
    assert result.exit_code == 2
    assert (
        _error_lines(result, path) == [f"{path}: error: {message}"]
        or message in _error_lines(result, path)[0]
    )
    assert path.read_text() == TREE + tail
    assert "1 file changed" in result.stderr  # the summary, with the good file


def test_the_nesting_limit_is_the_documented_one():
    from jaxmigrate.migrator import guard

    assert guard.MAX_NESTING == 1500 and guard.MAX_BRACKETS == 200
    design = Path(__file__).resolve().parent.parent / "docs" / "design.md"
    assert "1,500 levels" in design.read_text()  # "When a file goes wrong"


def _deep_cases(directory: Path) -> dict:
    cases = {
        "parens.py": TREE + "z = " + "(" * 5000 + "1" + ")" * 5000 + "\n",
        "lists.py": TREE + "z = " + "[" * 5000 + "]" * 5000 + "\n",
        "sum.py": TREE + "z = " + "+".join(["a"] * 100_000) + "\n",
        "lambdas.py": TREE + "z = " + "lambda: " * 20_000 + "1\n",
        # (the site's statement: CPython's tree is shallow, LibCST's 20,000 deep)
        "strings.py": TREE + "z = jax.tree_map(f, (\n" + "'s'\n" * 20_000 + "))\n",
    }
    for name, text in cases.items():
        (directory / name).write_text(text)
    return cases


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_pathological_nesting_never_crashes_the_process(tree, jobs):
    """LibCST's native parser would overflow its stack on these (a SIGSEGV no ``except``
    catches): run the real command in a subprocess and require clean per-file errors."""
    cases = _deep_cases(tree)
    command = [
        sys.executable,
        "-c",
        "from jaxmigrate.migrator.cli import command; command()",
        str(tree),
        "--no-cache",
        "-j",
        jobs,
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 2, done.stderr[-2000:]
    # Renames alone are written from CPython's tree (migrator.astfixes), which both of these
    # keep shallow enough to read; LibCST's parser, which the others need, would overflow.
    written = {"sum.py", "strings.py"}
    for name, text in cases.items():
        lines = [line for line in done.stderr.splitlines() if line.startswith(f"{tree / name}:")]
        if name in written:
            new = text.replace("jax.tree_map", "jax.tree_util.tree_map")
            assert (tree / name).read_text() == new, name
            continue
        assert len(lines) == 1 and ": error: " in lines[0], (name, done.stderr[-2000:])
        assert (tree / name).read_text() == text
    assert (tree / "good.py").read_text() == MIGRATED
    assert (
        "3 files changed, 5 fixes, 0 findings need review, 3 files could not be processed"
        in done.stderr
    )


def test_a_statement_too_deep_for_libcst_that_holds_no_site_is_left_as_it_is(tree):
    """20,000 strings CPython joins into one constant, LibCST nests 20,000 deep: where the
    statement holds no site, the piecewise path leaves it out of LibCST's parse, and the
    file is migrated around it, the statement kept byte for byte."""
    deep = "z = (\n" + "'s'\n" * 20_000 + ")\n"
    path = tree / "deep.py"
    path.write_text(TREE + deep)
    result = run_tree(tree, "-j", "1")
    assert result.exit_code == 1, result.stderr
    assert path.read_text() == TREE_MIGRATED + deep


@pytest.fixture
def failing_site(monkeypatch, fixes_through_libcst):  # noqa: ANN001
    """JAX701 raises on ``jax.tree_leaves`` (after recording an edit there), in its LibCST
    hook (the only one a rule bug can be in: its renames are not written from ``ast``)."""
    import libcst as cst

    from jaxmigrate.migrator.rule import all_rules

    rule = all_rules()["JAX701"]
    real = type(rule).visit_name

    def visit_name(self, site, ctx):
        if (site.qualname or "").endswith("tree_leaves") and not site.is_import:
            ctx.replace(site.node, cst.Name("HALF_DONE"), "a half-made edit")
            raise ValueError("a rule bug\nwith a second line")
        return real(self, site, ctx)

    monkeypatch.setattr(type(rule), "visit_name", visit_name)


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_rule_that_raises_loses_its_site_not_the_file(tree, failing_site, jobs):
    path = tree / "mixed.py"
    path.write_text(LEGACY + "\n\nimport jax\nx = jax.tree_map(f, y)\nz = jax.tree_leaves(y)\n")
    result = run_tree(tree, "-j", jobs)
    assert result.exit_code == 2
    migrated = path.read_text()
    assert "jax.Array" in migrated and "jax.tree_util.tree_map(f, y)" in migrated  # the other fixes
    assert "z = jax.tree_leaves(y)" in migrated and "HALF_DONE" not in migrated
    ast.parse(migrated)
    line = migrated.splitlines().index("z = jax.tree_leaves(y)") + 1
    assert _error_lines(result, path) == [
        f"{path}: error: internal error in JAX701 at line {line}: "
        "ValueError: a rule bug with a second line; other fixes kept"
    ]
    assert f"rewrote {path}" in result.stderr
    assert "2 files changed" in result.stderr and "1 file could not be processed" in result.stderr


def test_a_rule_that_raises_is_reported_in_check_mode_and_json(tree, failing_site):
    path = tree / "mixed.py"
    text = "import jax\nx = jax.tree_map(f, y)\nz = jax.tree_leaves(y)\n"
    path.write_text(text)
    result = invoke(path, "--no-cache", "--check", "--format", "json")
    assert result.exit_code == 2
    data = json.loads(result.stdout)
    (entry,) = data["files"]
    assert entry["changed"] and entry["error"]["message"].startswith(
        "internal error in JAX701 at line 3:"
    )
    assert path.read_text() == text


@pytest.mark.parametrize(
    "failure,message",
    [
        (
            RuntimeError("engine bug"),
            "internal error: RuntimeError: engine bug (a bug: please report it); "
            "file left unchanged",
        ),
        (RecursionError("deep"), "too deeply nested to analyse (limit 1,500 levels)"),
        (MemoryError(), "out of memory while analysing this file"),
    ],
)
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_an_engine_failure_costs_one_file(tree, monkeypatch, failure, message, jobs):
    import jaxmigrate.migrator.rounds as rounds  # (the engine imports it where it rewrites)

    real = rounds.run_rounds

    def flaky(module, text, *args, **kwargs):
        if "broken" in text:
            raise failure
        return real(module, text, *args, **kwargs)

    monkeypatch.setattr(rounds, "run_rounds", flaky)
    path = tree / "broken.py"
    path.write_text(LEGACY + "# broken\n")
    result = run_tree(tree, "-j", jobs)
    assert result.exit_code == 2
    assert _error_lines(result, path) == [f"{path}: error: {message}"]
    assert path.read_text() == LEGACY + "# broken\n"
    assert "1 file changed" in result.stderr


@pytest.mark.parametrize("deaths,expected", [(1, "migrated"), (2, "error")])
def test_a_worker_process_that_dies_costs_one_file(tree, monkeypatch, deaths, expected):
    """A worker killed on a file (a native crash, the OOM killer) is replaced; the file is tried
    once more alone, and reported if that kills a worker too; the run goes on."""
    real = runner.process_file
    main = os.getpid()
    counter = tree.parent / f"{tree.name}-deaths"

    def dying(path, *args, **kwargs):
        if os.getpid() != main and Path(path).name == "doomed.py":
            died = len(counter.read_text()) if counter.exists() else 0
            if died < deaths:
                with counter.open("a") as handle:
                    handle.write("x")
                os.kill(os.getpid(), signal.SIGKILL)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(runner, "process_file", dying)
    for index in range(6):
        (tree / f"other{index}.py").write_text(LEGACY)
    doomed = tree / "doomed.py"
    doomed.write_text(LEGACY)
    result = run_tree(tree, "-j", "2", "--target-version", "0.4.30")  # one run: no survey
    assert all((tree / f"other{index}.py").read_text() == MIGRATED for index in range(6))
    if expected == "migrated":
        assert result.exit_code == 1 and doomed.read_text() == MIGRATED
    else:
        assert result.exit_code == 2 and doomed.read_text() == LEGACY
        assert _error_lines(result, doomed) == [
            f"{doomed}: error: the worker process died while migrating this file "
            "(killed by SIGKILL); it was left unchanged"
        ]
        assert "7 files changed" in result.stderr


def test_a_read_only_file_is_not_counted_as_changed(tree):
    path = tree / "locked.py"
    path.write_text(LEGACY)
    path.chmod(0o444)
    result = run_tree(tree, "-j", "1")
    assert result.exit_code == 2
    assert _error_lines(result, path) == [f"{path}: error: file is read-only; not modified"]
    assert f"rewrote {path}" not in result.stderr
    assert (
        "1 file changed, 2 fixes, 0 findings need review, 1 file could not be processed"
        in result.stderr
    )
    path.chmod(0o644)
    path.write_text(LEGACY)
    path.chmod(0o444)
    (tree / "good.py").write_text(LEGACY)
    data = json.loads(invoke(tree, "--no-cache", "--format", "json").stdout)
    assert data["summary"] == {
        "files": 2,
        "changed": 1,
        "fixes": 2,
        "findings": 0,
        "errors": 1,
        "stop_at_import": 0,
    }
    path.chmod(0o644)


def test_a_deep_file_answered_on_ast_is_reported_not_refused(tree):
    """The nesting limit guards LibCST's parser; a file whose findings CPython's ``ast``
    answers (a private import) never reaches it, so it gets its findings, not an error."""
    path = tree / "deep.py"
    path.write_text(
        "import jax\nfrom jax._src import core\n\nz = " + " + ".join(["a"] * 3000) + "\n"
    )
    result = run_tree(tree, "-j", "1", "--target-version", "0.4.30")
    assert result.exit_code == 1, result.stderr
    assert "JAX902" in result.stdout and "too deeply nested" not in result.stderr
