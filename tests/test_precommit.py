"""The shipped pre-commit hooks, installed from this checkout by the real ``pre-commit``.

``pre-commit try-repo`` clones this checkout (with the uncommitted changes of tracked files),
builds the hook's virtual environment (pip installs jaxmigrate and its dependencies) and runs
the hook on the staged files, exactly as a git pre-commit hook does.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_cli import FINDING_ONLY, LEGACY, MIGRATED

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(
    shutil.which("git") is None or shutil.which("pre-commit") is None,
    reason="needs git and the pre-commit package",
)


def _run(cwd: Path, env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    home = tmp_path_factory.mktemp("pre-commit-home")
    environment = dict(os.environ)
    environment.update(
        PRE_COMMIT_HOME=str(home),
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.invalid",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.invalid",
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,  # no user git config (hooksPath, signing, ...)
    )
    # the hook's virtualenv is built with the python running the tests
    environment["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), environment["PATH"]])
    return environment


def _repo(tmp_path: Path, env: dict) -> Path:
    repo = tmp_path / "project"
    repo.mkdir()
    assert _run(repo, env, "git", "init", "-q").returncode == 0
    _run(repo, env, "git", "config", "commit.gpgsign", "false")
    return repo


def test_hook_rewrites_fails_then_passes(tmp_path, env):
    repo = _repo(tmp_path, env)
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text(f"#!/bin/sh\nexec pre-commit try-repo '{ROOT}' jaxmigrate\n")
    hook.chmod(0o755)
    (repo / "legacy.py").write_text(LEGACY)
    (repo / "notes.txt").write_text("jnp.DeviceArray in a text file is not Python\n")
    _run(repo, env, "git", "add", "legacy.py", "notes.txt")
    first = _run(repo, env, "git", "commit", "-q", "-m", "legacy")
    assert first.returncode != 0, first.stdout + first.stderr
    output = first.stdout + first.stderr  # git shows the hook's output on stderr
    assert "Failed" in output and "files were modified by this hook" in output
    assert "rewrote legacy.py" in output
    assert (repo / "legacy.py").read_text() == MIGRATED
    assert (repo / "notes.txt").read_text().startswith("jnp.DeviceArray")
    _run(repo, env, "git", "add", "legacy.py")
    second = _run(repo, env, "git", "commit", "-q", "-m", "migrated")
    assert second.returncode == 0, second.stdout + second.stderr
    assert "Passed" in second.stdout + second.stderr
    log = _run(repo, env, "git", "log", "--format=%s").stdout.split()
    assert log == ["migrated"]


def test_check_hook_batches_and_zero_files(tmp_path, env):
    repo = _repo(tmp_path, env)
    names = [f"pkg/module_{index:03d}.py" for index in range(60)]
    (repo / "pkg").mkdir()
    for name in names:
        (repo / name).write_text(LEGACY)
    _run(repo, env, "git", "add", "pkg")
    check = _run(
        repo,
        env,
        "pre-commit",
        "try-repo",
        str(ROOT),
        "jaxmigrate-check",
        "--all-files",
        "--verbose",
    )
    assert check.returncode != 0, check.stdout + check.stderr
    assert all((repo / name).read_text() == LEGACY for name in names)  # check writes nothing
    assert all(f"would rewrite {name}" in check.stdout for name in names)
    fix = _run(repo, env, "pre-commit", "try-repo", str(ROOT), "jaxmigrate", "--all-files")
    assert fix.returncode != 0
    # every batch pre-commit handed to the hook was rewritten
    assert all((repo / name).read_text() == MIGRATED for name in names)
    _run(repo, env, "git", "add", "pkg")
    again = _run(repo, env, "pre-commit", "try-repo", str(ROOT), "jaxmigrate", "--all-files")
    assert again.returncode == 0, again.stdout + again.stderr
    # no Python file at all: the hook is skipped, the run passes
    (repo / "README.txt").write_text("nothing to migrate\n")
    empty = _run(
        repo, env, "pre-commit", "try-repo", str(ROOT), "jaxmigrate", "--files", "README.txt"
    )
    assert empty.returncode == 0 and "no files to check" in empty.stdout.lower()


def test_cli_with_no_files_succeeds():
    from tests.test_cli import invoke

    result = invoke("--check")
    assert result.exit_code == 0 and "No paths given" in result.stderr


def _readme_snippet() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("### pre-commit") :]
    return section[section.index("```yaml\n") + len("```yaml\n") : section.index("```\n", 1)]


def test_the_readme_snippet_works_as_written(tmp_path, env):
    """The README's .pre-commit-config.yaml, with its two placeholders (where the repository
    is hosted, a commit SHA of it) filled in, installs and runs the hook: it fails where a fix
    remains and passes where only findings do."""
    hosted = tmp_path / "hosted"
    assert _run(tmp_path, env, "git", "clone", "-q", str(ROOT), str(hosted)).returncode == 0
    sha = _run(hosted, env, "git", "rev-parse", "HEAD").stdout.strip()
    snippet = _readme_snippet()
    # the rev it shows is the form the text says to pin: a full commit SHA, or a tag that exists
    revs = [line for line in snippet.splitlines() if line.strip().startswith("rev:")]
    rev = revs[0].split(":", 1)[1].split("#")[0].strip()
    tags = _run(hosted, env, "git", "tag", "--list").stdout.split()
    assert re.fullmatch(r"[0-9a-f]{40}", rev) or rev in tags, rev
    lines = []
    for line in snippet.splitlines():
        key = line.strip().split(":", 1)[0]
        if key in ("- repo", "rev"):
            indent = line[: len(line) - len(line.lstrip())]
            line = f"{indent}{key}: {hosted if key == '- repo' else sha}"
        lines.append(line)
    config = "\n".join(lines) + "\n"
    assert sha in config and str(hosted) in config
    repo = _repo(tmp_path, env)
    (repo / ".pre-commit-config.yaml").write_text(config)
    (repo / "legacy.py").write_text(LEGACY)
    _run(repo, env, "git", "add", ".")
    first = _run(repo, env, "pre-commit", "run", "--all-files")
    output = first.stdout + first.stderr
    assert first.returncode != 0 and "files were modified by this hook" in output, output
    assert "mutable reference" not in output
    assert "jax.Array" in (repo / "legacy.py").read_text()
    # the documented arguments (--fail-on fixes): findings a person has seen do not fail it
    (repo / "findings.py").write_text(FINDING_ONLY)
    _run(repo, env, "git", "add", ".")
    second = _run(repo, env, "pre-commit", "run", "--all-files")
    assert second.returncode == 0, second.stdout + second.stderr
    assert (repo / "findings.py").read_text() == FINDING_ONLY
