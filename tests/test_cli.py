"""The command line: flags, exit codes, stdin, configuration, reporting formats (the files a
run reads and writes, and the content cache: test_cli_files.py)."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from jaxmigrate.migrator.cli import cli

LEGACY = textwrap.dedent(
    """\
    import jax.numpy as jnp


    def is_arr(x):
        return isinstance(x, jnp.DeviceArray)
    """
)
MIGRATED = textwrap.dedent(
    """\
    import jax


    def is_arr(x):
        return isinstance(x, jax.Array)
    """
)
REPORT_ONLY = "import jax.numpy as jnp\n\n\ndef f(x):\n    return type(x) is jnp.DeviceArray\n"
MODERN = "import jax\n\n\ndef f(x):\n    return isinstance(x, jax.Array)\n"


def invoke(*args, input=None, cwd=None):
    try:
        runner = CliRunner(mix_stderr=False)  # click < 8.2
    except TypeError:
        runner = CliRunner()
    old = os.getcwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        return runner.invoke(cli, [str(a) for a in args], input=input, catch_exceptions=False)
    finally:
        os.chdir(old)


@pytest.fixture
def project(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "legacy.py").write_text(LEGACY)
    (tmp_path / "pkg" / "modern.py").write_text(MODERN)
    (tmp_path / "pkg" / "review.py").write_text(REPORT_ONLY)
    return tmp_path


def test_rewrites_in_place_and_exits_1(project):
    result = invoke(project / "pkg")
    assert result.exit_code == 1
    assert (project / "pkg" / "legacy.py").read_text() == MIGRATED
    assert (project / "pkg" / "modern.py").read_text() == MODERN
    assert f"rewrote {project / 'pkg' / 'legacy.py'}" in result.stderr
    assert "review.py:5:" in result.stdout and "JAX101" in result.stdout
    assert "1 file changed, 2 fixes, 1 finding needs review" in result.stderr


def test_second_run_is_clean(project):
    (project / "pkg" / "review.py").unlink()
    assert invoke(project / "pkg").exit_code == 1
    again = invoke(project / "pkg")
    assert again.exit_code == 0, again.stderr
    assert "0 files changed" in again.stderr


def test_diff_writes_nothing(project):
    result = invoke(project / "pkg" / "legacy.py", "--diff")
    assert result.exit_code == 1
    assert (project / "pkg" / "legacy.py").read_text() == LEGACY
    assert "-    return isinstance(x, jnp.DeviceArray)" in result.stdout
    assert "+    return isinstance(x, jax.Array)" in result.stdout
    # outside the current directory: the absolute path after a/ (git diff --no-index's form)
    outside = str(project / "pkg" / "legacy.py").lstrip("/")
    assert result.stdout.startswith(f"--- a/{outside}\n+++ b/{outside}\n")
    relative = invoke("pkg/legacy.py", "--diff", cwd=project)
    assert relative.stdout.startswith("--- a/pkg/legacy.py\n+++ b/pkg/legacy.py\n")
    # an absolute path inside it: from the current directory, for git apply run there
    absolute = invoke(project / "pkg" / "legacy.py", "--diff", cwd=project)
    assert absolute.stdout == relative.stdout


def test_check_lists_files_and_writes_nothing(project):
    result = invoke(project / "pkg", "--check")
    assert result.exit_code == 1
    assert f"would rewrite {project / 'pkg' / 'legacy.py'}" in result.stderr
    assert "modern.py" not in result.stderr
    assert (project / "pkg" / "legacy.py").read_text() == LEGACY


def test_clean_tree_exits_0(project):
    result = invoke(project / "pkg" / "modern.py", "--check")
    assert result.exit_code == 0
    assert result.stdout == ""


def test_zero_files_is_not_an_error(tmp_path):
    (tmp_path / "empty").mkdir()
    assert invoke(tmp_path / "empty").exit_code == 0
    assert invoke().exit_code == 0


def test_missing_path_exits_2(tmp_path):
    result = invoke(tmp_path / "nope.py")
    assert result.exit_code == 2
    assert "nope.py: error: no such file or directory" in result.stderr


def test_usage_errors_exit_2(project):
    assert invoke(project, "--select", "XYZ9").exit_code == 2
    assert invoke(project, "--target-version", "banana").exit_code == 2
    assert invoke(project, "--jobs", "0").exit_code == 2
    assert invoke(project, "-", "other.py").exit_code == 2


def test_select_and_ignore(project):
    path = project / "pkg" / "legacy.py"
    assert invoke(path, "--check", "--ignore", "JAX101").exit_code == 0
    assert invoke(path, "--check", "--select", "JAX2").exit_code == 0
    assert invoke(path, "--check", "--select", "JAX1").exit_code == 1
    assert invoke(path, "--check", "--select", "JAX201,JAX101").exit_code == 1


def test_target_version_gates_rules(tmp_path):
    path = tmp_path / "p.py"
    path.write_text("from jax.experimental.pjit import pjit\nf = pjit(g, in_axis_resources=None)\n")
    assert invoke(path, "--check", "--select", "JAX201", "--target-version", "0.4.2").exit_code == 0
    assert invoke(path, "--check", "--select", "JAX201", "--target-version", "0.4.4").exit_code == 1


def test_stdin_to_stdout():
    result = invoke("-", "--select", "JAX101", input=LEGACY.encode())
    assert result.exit_code == 1
    assert result.stdout == MIGRATED


def test_stdin_unchanged_echoes_input():
    result = invoke("-", input=MODERN.encode())
    assert result.exit_code == 0
    assert result.stdout == MODERN


def test_stdin_findings_name_the_stdin_filename():
    result = invoke("-", "--stdin-filename", "src/x.py", input=REPORT_ONLY.encode())
    assert result.exit_code == 1
    assert result.stdout == REPORT_ONLY
    assert "src/x.py:5:" in result.stderr


def test_stdin_diff_and_check():
    assert (
        "+    return isinstance(x, jax.Array)"
        in invoke("-", "--diff", input=LEGACY.encode()).stdout
    )
    result = invoke("-", "--check", input=LEGACY.encode())
    assert result.exit_code == 1 and result.stdout == ""


def test_stdin_syntax_error():
    result = invoke("-", input=b"import jax.numpy as jnp\njnp.DeviceArray(\n")
    assert result.exit_code == 2
    assert "error: not valid Python" in result.stderr


def test_json_format(project):
    result = invoke(project / "pkg", "--check", "--format", "json")
    data = json.loads(result.stdout)
    assert data["summary"] == {
        "files": 3,
        "changed": 1,
        "fixes": 2,
        "findings": 1,
        "errors": 0,
        "stop_at_import": 0,
    }
    by_name = {Path(f["path"]).name: f for f in data["files"]}
    assert by_name["legacy.py"]["changed"] and not by_name["legacy.py"]["written"]
    assert [f["code"] for f in by_name["legacy.py"]["fixes"]] == ["JAX101", "JAX000"]
    assert by_name["review.py"]["findings"][0]["line"] == 5
    assert data["target_version"]


def test_sarif_format(project):
    result = invoke(project / "pkg", "--check", "--format", "sarif")
    data = json.loads(result.stdout)
    assert data["version"] == "2.1.0"
    run = data["runs"][0]
    ids = {r["id"] for r in run["tool"]["driver"]["rules"]}
    assert {"JAX101", "JAX201"} <= ids
    levels = sorted(r["level"] for r in run["results"])
    assert levels == ["note", "note", "warning"]  # two pending fixes, one finding
    assert all(r["ruleId"] in ids for r in run["results"])


def test_github_format(project):
    result = invoke(project / "pkg", "--check", "--format", "github")
    lines = result.stdout.splitlines()
    assert any(line.startswith("::warning file=") and "title=JAX101" in line for line in lines)
    assert any(line.startswith("::notice file=") for line in lines)


def test_show_fixes(project):
    result = invoke(project / "pkg" / "legacy.py", "--check", "--show-fixes")
    assert "legacy.py:5:26: JAX101 [fixable] jnp.DeviceArray -> jax.Array" in result.stdout


def test_quiet_drops_summary(project):
    result = invoke(project / "pkg", "--check", "-q")
    assert "review" not in result.stderr


def test_unsafe_fixes_flag_is_accepted(project):
    assert invoke(project / "pkg", "--check", "--unsafe-fixes").exit_code == 1


HELD_BACK = """\
from jax.experimental import host_callback as hcb


def step(x):
    hcb.id_print(x)
    hcb.id_tap(print, x)
    return x
"""


def test_summary_counts_the_unsafe_fixes_held_back(tmp_path):
    """The summary names the flag once, with how many findings it would fix; with the flag
    they are fixes, and the count goes."""
    (tmp_path / "taps.py").write_text(HELD_BACK)
    held = invoke(tmp_path / "taps.py", "--check")
    assert "3 findings need review, 2 of them unsafe fixes that --unsafe-fixes applies" in (
        held.stderr
    )
    assert held.stdout.count("[unsafe fix]") == 2
    fixed = invoke(tmp_path / "taps.py", "--check", "--unsafe-fixes")
    assert "4 fixes, 0 findings need review (1 file checked)" in fixed.stderr


def test_rules_and_explain():
    listing = invoke("rules")
    assert listing.exit_code == 0
    assert "JAX101  device-array" in listing.stdout
    data = json.loads(invoke("rules", "--format", "json").stdout)
    assert {"code", "name", "safety", "needs_jax", "summary"} <= set(data["rules"][0])
    explained = invoke("explain", "JAX101")
    assert explained.exit_code == 0
    assert "Before:" in explained.stdout and "After:" in explained.stdout
    assert invoke("explain", "device-array").exit_code == 0
    assert invoke("explain", "JAX999").exit_code == 2


def test_help_and_version():
    assert "rules" in invoke("--help").stdout
    assert "--target-version" in invoke("migrate", "--help").stdout
    assert invoke("--version").exit_code == 0


# -- configuration --------------------------------------------------------------------------
def test_pyproject_configuration(project):
    (project / "pyproject.toml").write_text('[tool.jaxmigrate]\nignore = ["JAX101"]\n')
    assert invoke(project / "pkg" / "legacy.py", "--check").exit_code == 0
    # command-line flags win: --ignore replaces the configured list
    assert invoke(project / "pkg" / "legacy.py", "--check", "--ignore", "JAX201").exit_code == 1
    (project / "pyproject.toml").write_text('[tool.jaxmigrate]\nselect = ["JAX2"]\n')
    assert invoke(project / "pkg" / "legacy.py", "--check").exit_code == 0
    assert invoke(project / "pkg" / "legacy.py", "--check", "--select", "JAX1").exit_code == 1


def test_configuration_found_from_a_subdirectory(project):
    (project / "pyproject.toml").write_text(
        '[tool.jaxmigrate]\ntarget-version = "0.4.2"\nselect = ["JAX201"]\n'
    )
    (project / "pkg" / "p.py").write_text(
        "from jax.experimental.pjit import pjit\nf = pjit(g, in_axis_resources=None)\n"
    )
    assert invoke(project / "pkg" / "p.py", "--check").exit_code == 0
    assert invoke(project / "pkg" / "p.py", "--check", "--target-version", "0.4.30").exit_code == 1


def test_configuration_exclude_and_cli_exclude(project):
    (project / "pyproject.toml").write_text('[tool.jaxmigrate]\nexclude = ["legacy.py"]\n')
    result = invoke(project / "pkg", "--check")
    assert "legacy.py" not in result.stderr
    (project / "pyproject.toml").unlink()
    result = invoke(
        project / "pkg", "--check", "--exclude", "review.py", "--extend-exclude", "legacy*"
    )
    assert result.exit_code == 0


def _layout(root):
    """A project whose configuration excludes by path and by name, files at several depths."""
    (root / "pyproject.toml").write_text(
        '[tool.jaxmigrate]\nexclude = ["src/vendored/*", "generated", "tools/*.py"]\n'
    )
    files = [
        "src/pkg/a.py", "src/vendored/b.py", "src/vendored/deep/c.py", "src/pkg/generated/d.py",
        "tools/e.py", "tools/sub/f.py", "vendored/g.py", "src/tools/h.py",
    ]  # fmt: skip
    for name in files:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(LEGACY)
    return files


def _would_change(result, root, cwd):
    return sorted(
        (cwd / line[len("would rewrite ") :]).resolve().relative_to(root.resolve()).as_posix()
        for line in result.stderr.splitlines()
        if line.startswith("would rewrite ")
    )


KEPT = [
    "src/pkg/a.py",
    "src/tools/h.py",
    "vendored/g.py",
]  # (fnmatch: "tools/*.py" has tools/sub/f.py)


@pytest.mark.parametrize(
    "cwd,paths",
    [
        (".", ["."]),
        (".", ["src", "tools", "vendored"]),
        (".", ["src/", "tools/sub", "vendored/g.py"]),
        ("src", [".", "../tools", "../vendored"]),
        ("src/pkg", ["..", "../../tools", "../../vendored"]),
    ],
)
def test_configuration_excludes_are_relative_to_the_configuration_file(tmp_path, cwd, paths):
    """`jaxmigrate src/` and `jaxmigrate .` (from anywhere) skip the same files."""
    _layout(tmp_path)
    result = invoke(*paths, "--check", "--no-cache", cwd=tmp_path / cwd)
    wanted = sorted(
        p
        for p in KEPT
        if any(
            (tmp_path / p).resolve().is_relative_to((tmp_path / cwd / given).resolve())
            for given in paths
        )
    )
    assert _would_change(result, tmp_path, tmp_path / cwd) == wanted


def test_configuration_excludes_apply_to_the_file_lists_pre_commit_hands_over(tmp_path):
    files = _layout(tmp_path)
    result = invoke(*files, "--check", "--no-cache", cwd=tmp_path)  # as pre-commit runs a hook
    assert _would_change(result, tmp_path, tmp_path) == KEPT
    inside = invoke(
        *[f"../../{f}" for f in files], "--check", "--no-cache", cwd=tmp_path / "src" / "pkg"
    )
    assert _would_change(inside, tmp_path, tmp_path / "src" / "pkg") == KEPT


def test_command_line_excludes_read_from_the_paths_given_and_from_here(tmp_path):
    _layout(tmp_path)
    (tmp_path / "pyproject.toml").unlink()
    from_root = invoke("src", "--check", "--no-cache", "--exclude", "pkg/*", cwd=tmp_path)
    from_here = invoke("src", "--check", "--no-cache", "--exclude", "src/pkg/*", cwd=tmp_path)
    assert _would_change(from_root, tmp_path, tmp_path) == _would_change(
        from_here, tmp_path, tmp_path
    )
    assert "src/pkg/a.py" not in _would_change(from_here, tmp_path, tmp_path)


def test_bad_configuration_is_a_usage_error(project):
    (project / "pyproject.toml").write_text('[tool.jaxmigrate]\nselekt = ["JAX1"]\n')
    result = invoke(project / "pkg")
    assert result.exit_code == 2 and "unknown key 'selekt'" in result.stderr
    (project / "pyproject.toml").write_text("[tool.jaxmigrate]\ntarget-version = 0.10\n")
    assert "must be a string" in invoke(project / "pkg").stderr


def test_explicit_config_file(project, tmp_path):
    config = tmp_path / "other.toml"
    config.write_text('[tool.jaxmigrate]\nignore = ["JAX1"]\n')
    assert invoke(project / "pkg" / "legacy.py", "--check", "--config", config).exit_code == 0


# -- suppression ----------------------------------------------------------------------------
def test_suppression_comments(tmp_path):
    path = tmp_path / "s.py"
    path.write_text(
        "import jax.numpy as jnp\n"
        "a = jnp.DeviceArray  # jaxmigrate: ignore\n"
        "b = jnp.DeviceArray  # jaxmigrate: ignore[JAX2]\n"
        "c = jnp.DeviceArray  # jaxmigrate: ignore[JAX1]\n"
    )
    invoke(path)
    lines = path.read_text().splitlines()
    assert lines[-3] == "a = jnp.DeviceArray  # jaxmigrate: ignore"
    assert lines[-2] == "b = jax.Array  # jaxmigrate: ignore[JAX2]"
    assert lines[-1] == "c = jnp.DeviceArray  # jaxmigrate: ignore[JAX1]"


def test_readme_rule_table_is_current():
    from jaxmigrate.migrator.cli import rules_markdown

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    start = readme.index("<!-- rules-table")
    table = readme[readme.index("\n", start) + 1 : readme.index("<!-- /rules-table -->")]
    assert table.strip() == rules_markdown().strip(), "run `jaxmigrate rules --format markdown`"


def test_split_by_rule_refuses_options_it_would_ignore(project, tmp_path):
    for extra in (["--report", tmp_path / "r.md"], ["--add-todos"], ["--diff"], ["--check"]):
        result = invoke(project / "pkg", "--split-by-rule", tmp_path / "patches", *extra)
        assert result.exit_code == 2 and "--split-by-rule writes patches only" in result.stderr
    assert not (tmp_path / "patches").exists()


FINDING_BELOW_A_REMOVED_LINE = """\
import jax.numpy as jnp
from jax.experimental.pjit import pjit, PartitionSpec
from jax.experimental.maps import Mesh, ResourceEnv


def spec():
    return PartitionSpec("data"), Mesh, pjit, ResourceEnv
"""


@pytest.mark.parametrize("mode", [[], ["--check"], ["--diff"]], ids=["write", "check", "diff"])
def test_findings_point_at_the_lines_of_the_file_the_user_opens(tmp_path, mode):
    """The fixes above the findings add and remove lines: after a rewrite the findings are
    on the rewritten file's lines; with --check or --diff, on the untouched file's."""
    path = tmp_path / "mod.py"
    path.write_text(FINDING_BELOW_A_REMOVED_LINE)
    result = invoke(path, "--format", "json", "--target-version", "0.4.30", *mode)
    findings = json.loads(result.stdout)["files"][0]["findings"]
    lines = path.read_text().splitlines()
    assert (path.read_text() == FINDING_BELOW_A_REMOVED_LINE) == bool(mode)
    where = {f["code"]: lines[f["line"] - 1] for f in findings}
    assert "ResourceEnv" in where["JAX806"] and "import" in where["JAX806"]
    assert where["JAX202"].lstrip().startswith("return PartitionSpec")
    moved = {f["code"]: f["line"] for f in findings}
    assert moved == ({"JAX806": 4, "JAX202": 9} if not mode else {"JAX806": 3, "JAX202": 7})


def test_line_map_follows_the_diff():
    from jaxmigrate.migrator.diagnostics import Diagnostic
    from jaxmigrate.migrator.linemap import as_read, line_map

    before = "a\nb\nc\nd\ne\n"
    after = "a\nB1\nB2\nB3\nc\ne\nf\n"  # b -> three lines, d deleted, f appended
    to_before = line_map(before, after)
    assert [to_before(line) for line in range(1, 8)] == [1, 2, 2, 2, 3, 5, 5]
    finding = Diagnostic("JAX999", "m", line=6, column=3, safety="manual", end_line=7)
    [moved] = as_read([finding], before, after)
    assert (moved.line, moved.column, moved.end_line) == (5, 3, 5)
    assert as_read([finding], before, before) == [finding]


@pytest.mark.parametrize("output_format", ["json", "sarif"])
def test_diff_with_a_machine_format_keeps_stdout_one_json_document(project, output_format):
    result = invoke(project / "pkg", "--diff", "--format", output_format)
    data = json.loads(result.stdout)  # no diff text before or after it
    if output_format == "json":
        by_name = {Path(f["path"]).name: f for f in data["files"]}
        assert (
            by_name["legacy.py"]["diff"].startswith("--- ")
            and "+import jax" in by_name["legacy.py"]["diff"]
        )
        assert by_name["review.py"]["diff"] == ""
    else:
        assert data["runs"][0]["results"]


FINDING_ONLY = (
    "from jax.experimental.maps import ResourceEnv\n\n"
    "def is_env(value):\n    return isinstance(value, ResourceEnv)\n"
)


@pytest.mark.parametrize("mode", [[], ["--check"], ["--diff"]], ids=["write", "check", "diff"])
def test_the_exit_policy_a_ci_chooses(tmp_path, mode):
    """--fail-on fixes: 1 only while a fix remains, 0 for findings alone; --exit-zero: 0 for
    both; errors stay 2 whatever the policy."""
    (tmp_path / ".git").mkdir()
    findings = tmp_path / "findings.py"
    findings.write_text(FINDING_ONLY)
    target = ["--target-version", "0.4.30", "--no-cache"]
    assert invoke(findings, *target, *mode).exit_code == 1
    assert invoke(findings, *target, *mode, "--fail-on", "fixes").exit_code == 0
    assert invoke(findings, *target, *mode, "--exit-zero").exit_code == 0
    fixable = tmp_path / "fixable.py"
    fixable.write_text(LEGACY)
    assert invoke(fixable, *target, *mode, "--fail-on", "fixes").exit_code == 1
    assert invoke(fixable, *target, *["--check"], "--exit-zero").exit_code == 0
    broken = tmp_path / "broken.py"
    broken.write_text("import jax.numpy as jnp\nx = jnp.DeviceArray(\n")  # parsed: legacy
    assert invoke(broken, *target, *mode, "--exit-zero").exit_code == 2
