"""What goes to stdout and what to stderr, in every mode, as the README says: messages
(``rewrote path``, ``would rewrite path``, the summary line, notes, errors) on stderr;
findings, diffs and JSON/SARIF on stdout (but the diff beside SARIF, on stderr), each once; with
``-`` and neither ``--diff`` nor ``--check``, stdout is the migrated text and the rest goes to
stderr.  And what ``--diff`` prints is a patch: ``git apply`` and ``patch -p1`` run where
jaxmigrate ran take it and leave the tree an in-place run writes, for every kind of file it
shows (line endings, no final newline, a BOM, a requirements file, a notebook).  And
``--split-by-rule``'s patches add up to what one run writes."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

from tests.test_cli import LEGACY, MIGRATED, REPORT_ONLY, invoke

DATA = Path(__file__).parent / "data"
TARGET = ("--target-version", "0.4.30", "--no-cache")
FINDING = re.compile(r"^(pkg/review\.py|-):\d+:\d+: JAX101 ")
BOTH = LEGACY + "\n\ndef g(x):\n    return type(x) is jnp.DeviceArray\n"  # a fix and a finding
BOTH_MIGRATED = (
    "import jax\nimport jax.numpy as jnp\n\n\ndef is_arr(x):\n    return isinstance(x, jax.Array)\n"
    "\n\ndef g(x):\n    return type(x) is jnp.DeviceArray\n"
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()  # a project root: nothing above it is read
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "legacy.py").write_text(LEGACY)
    (tmp_path / "pkg" / "review.py").write_text(REPORT_ONLY)
    return tmp_path


def _run(project: Path, *args: object, input: bytes | None = None) -> Tuple[int, str, str]:
    result = invoke(*args, *TARGET, input=input, cwd=project)
    return result.exit_code, result.stdout, result.stderr


def _once(*streams: str) -> None:
    """No finding, diff header or message is printed twice, on one stream or across both."""
    keys = ("--- ", "+++ ", "rewrote ", "would rewrite ", "pkg/", "-:", "::", "wrote ")
    lines = [x for s in streams for x in s.splitlines() if x.startswith(keys)]
    assert len(lines) == len(set(lines)), lines


def _findings(text: str) -> List[str]:
    return [x for x in text.splitlines() if FINDING.match(x)]


# ---------------------------------------------------------------- files


def test_write_findings_on_stdout_messages_on_stderr(project):
    code, out, err = _run(project, "pkg")
    assert code == 1
    assert out.splitlines() == _findings(out) and len(_findings(out)) == 1
    assert "rewrote pkg/legacy.py\n" in err and "1 file changed" in err
    assert not _findings(err) and "--- " not in out + err
    _once(out, err)


def test_check_findings_on_stdout_would_rewrite_on_stderr(project):
    code, out, err = _run(project, "pkg", "--check")
    assert code == 1
    assert out.splitlines() == _findings(out) and len(_findings(out)) == 1
    assert "would rewrite pkg/legacy.py\n" in err and "1 file would change" in err
    assert not _findings(err)
    _once(out, err)


def test_diff_and_findings_on_stdout(project):
    code, out, err = _run(project, "pkg", "--diff")
    assert code == 1
    assert out.startswith("--- a/pkg/legacy.py\n+++ b/pkg/legacy.py\n@@ ")
    assert out.count("--- a/pkg/legacy.py\n") == 1 and len(_findings(out)) == 1
    assert out.index("--- a/") < out.index("pkg/review.py:")  # the diff first, then findings
    assert "--- " not in err and not _findings(err) and "rewrote" not in err
    assert "1 file would change" in err  # the summary line
    assert (project / "pkg" / "legacy.py").read_text() == LEGACY
    _once(out, err)


@pytest.mark.parametrize("mode", [[], ["--check"], ["--diff"]], ids=["write", "check", "diff"])
def test_json_is_stdout_alone(project, mode):
    code, out, err = _run(project, "pkg", "--format", "json", *mode)
    data = json.loads(out)  # one document, nothing beside it
    assert code == 1 and data["summary"]["findings"] == 1
    diffs = [f["diff"] for f in data["files"] if f.get("diff")]
    assert len(diffs) == (1 if mode == ["--diff"] else 0)
    assert "--- " not in err and "JAX101" not in err and "rewrote" not in err


def test_sarif_on_stdout_its_diff_on_stderr(project):
    code, out, err = _run(project, "pkg", "--format", "sarif", "--diff")
    data = json.loads(out)
    assert code == 1 and data["runs"][0]["results"]
    assert err.count("--- a/pkg/legacy.py\n") == 1  # README: with SARIF the diff goes to stderr
    _once(out, err)


def test_github_annotations_and_diff_on_stdout(project):
    code, out, err = _run(project, "pkg", "--format", "github", "--diff")
    assert code == 1
    assert out.count("--- a/pkg/legacy.py\n") == 1
    assert "::warning file=pkg/review.py,line=5" in out
    assert "::" not in err and "--- " not in err
    _once(out, err)


def test_report_file_and_its_message(project):
    code, out, err = _run(project, "pkg", "--report", "r.md")
    assert code == 1 and (project / "r.md").is_file()
    assert out.splitlines() == _findings(out)
    assert "wrote the migration report to r.md\n" in err
    _once(out, err)


def test_a_file_that_cannot_be_read_is_a_message(project):
    code, out, err = _run(project, "pkg", "missing.py", "--diff")
    assert code == 2
    assert "missing.py: error: no such file or directory" in err
    assert "missing.py" not in out
    _once(out, err)


# ---------------------------------------------------------------- stdin


def test_stdin_migrated_text_on_stdout_the_rest_on_stderr(project):
    code, out, err = _run(project, "-", input=BOTH.encode())
    assert code == 1
    assert out == BOTH_MIGRATED  # the text alone: findings go beside it
    assert len(_findings(err)) == 1 and not _findings(out)
    assert err.count("-:10:23: JAX101 ") == 1
    code, out, err = _run(project, "-", "--format", "json", "-q", input=BOTH.encode())
    assert out == BOTH_MIGRATED and json.loads(err)["summary"]["findings"] == 1


def test_stdin_diff_printed_once_with_its_findings(project):
    code, out, err = _run(project, "-", "--diff", input=BOTH.encode())
    assert code == 1
    assert out.count("--- a/-\n+++ b/-\n") == 1
    assert len(_findings(out)) == 1 and not _findings(err) and "--- " not in err
    _once(out, err)
    named = invoke("-", "--diff", "--stdin-filename", "pkg/x.py", *TARGET, input=BOTH.encode())
    assert named.stdout.count("--- a/pkg/x.py\n+++ b/pkg/x.py\n") == 1


def test_stdin_check_findings_on_stdout(project):
    code, out, err = _run(project, "-", "--check", input=BOTH.encode())
    assert code == 1
    assert out.splitlines() == _findings(out) and len(_findings(out)) == 1
    assert not _findings(err)


@pytest.mark.parametrize("output_format", ["json", "sarif"])
def test_stdin_diff_machine_formats(project, output_format):
    code, out, err = _run(project, "-", "--diff", "--format", output_format, input=BOTH.encode())
    data = json.loads(out)
    if output_format == "json":
        assert data["files"][0]["diff"].startswith("--- a/-\n")
        assert "--- " not in err
    else:
        assert err.count("--- a/-\n") == 1


@pytest.mark.skipif(os.name != "posix", reason="a real process's streams")
def test_stdin_diff_in_a_process():
    """The same through real file descriptors (no test runner in between)."""
    done = subprocess.run(
        [sys.executable, "-m", "jaxmigrate", "-", "--diff", *TARGET],
        input=BOTH.encode(),
        capture_output=True,
        check=False,
    )
    out, err = done.stdout.decode(), done.stderr.decode()
    assert done.returncode == 1, err
    assert out.count("--- a/-\n") == 1 and len(_findings(out)) == 1
    assert "--- " not in err and not _findings(err)


# ---------------------------------------------------------------- --diff applies


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def _tree(root: Path) -> Dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(root).parts
    }


def _kinds(root: Path) -> None:
    """A small project with every kind of file --diff shows."""
    (root / "src" / "deep").mkdir(parents=True)
    (root / "src" / "plain.py").write_text(LEGACY)
    (root / "src" / "deep" / "nested.py").write_text(BOTH)
    (root / "src" / "crlf.py").write_bytes(LEGACY.replace("\n", "\r\n").encode())
    (root / "src" / "no_newline.py").write_bytes(LEGACY.rstrip("\n").encode())
    (root / "src" / "bom.py").write_bytes(b"\xef\xbb\xbf" + LEGACY.encode())
    # a form feed inside a line: a line break for str.splitlines, not for git or patch
    (root / "src" / "form_feed.py").write_bytes(
        LEGACY.replace("\n\n\ndef", "\n\x0c\n\ndef").replace("(x):", "(x):  # a\x0cb").encode()
    )
    (root / "src" / "clean.py").write_text(MIGRATED)
    shutil.copy(DATA / "notebooks" / "seed_tutorial.ipynb", root / "tutorial.ipynb")
    (root / "requirements.txt").write_text("numpy\njax==0.3.16\n")


def _jaxmigrate(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "jaxmigrate", *args, "--target-version", "0.4.30"],
        cwd=cwd,
        capture_output=True,
        check=False,
        env={**os.environ, "JAXMIGRATE_CACHE_DIR": str(cwd.parent / "cache")},
    )


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_the_diff_applies_with_git_apply_and_patch(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    _kinds(repo)
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "before")
    before = _tree(repo)
    written = tmp_path / "written"
    shutil.copytree(repo, written)
    done = _jaxmigrate(written, ".", "--update-requirements")
    assert done.returncode == 1, done.stderr
    expected = _tree(written)
    changed = {name for name in expected if expected[name] != before[name]}
    assert changed == {
        "requirements.txt",
        "tutorial.ipynb",
        *(f"src/{n}.py" for n in ("plain", "crlf", "no_newline", "bom", "form_feed")),
        "src/deep/nested.py",
    }
    assert expected["src/crlf.py"].count(b"\r\n") == MIGRATED.count("\n")  # endings kept

    diff = _jaxmigrate(repo, ".", "--diff", "--update-requirements")
    assert diff.returncode == 1, diff.stderr
    patch = tmp_path / "migration.patch"
    patch.write_bytes(diff.stdout)  # all of stdout, findings included, as a user saves it
    assert _tree(repo) == before  # --diff wrote nothing
    text = diff.stdout.decode("utf-8")
    assert "--- a/tutorial.ipynb\n+++ b/tutorial.ipynb\n" in text  # the file, not its cells
    assert "--- a/requirements.txt\n" in text and "+jax>=0.4.30\n" in text
    assert text.count("\\ No newline at end of file\n") == 2  # no_newline.py, both sides
    # the same patch from an absolute path to the tree (its findings name the path as given)
    absolute = _jaxmigrate(repo, str(repo), "--diff", "--update-requirements").stdout.decode()
    assert [x for x in absolute.splitlines() if not x.startswith(str(repo))] == [
        x for x in text.splitlines() if not re.match(r"(src|tutorial)\S*:(\d|cell )", x)
    ]

    dry = subprocess.run(
        ["patch", "-p1", "--dry-run", "-i", str(patch)], cwd=repo, capture_output=True, text=True
    )
    if shutil.which("patch") is not None:
        assert dry.returncode == 0, dry.stdout + dry.stderr
    _git(repo, "apply", "--check", str(patch))
    _git(repo, "apply", str(patch))
    assert _tree(repo) == expected
    _git(repo, "checkout", "--", ".")
    assert _tree(repo) == before
    if shutil.which("patch") is not None:
        subprocess.run(["patch", "-p1", "-s", "-i", str(patch)], cwd=repo, check=True)
        assert _tree(repo) == expected


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_a_diff_run_from_elsewhere_names_the_files_from_there(tmp_path):
    """Paths are named from the directory jaxmigrate ran in (a subdirectory of the project, or
    outside it: an absolute path then, after a/, as git diff --no-index writes it)."""
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "plain.py").write_text(LEGACY)
    _git(repo, "init", "-q")
    inside = _jaxmigrate(repo / "src", "plain.py", "--diff").stdout.decode()
    assert inside.startswith("--- a/plain.py\n+++ b/plain.py\n")
    (tmp_path / "p.patch").write_text(inside)
    _git(repo / "src", "apply", str(tmp_path / "p.patch"))  # git apply from src/
    assert (repo / "src" / "plain.py").read_text() == MIGRATED
    (repo / "src" / "plain.py").write_text(LEGACY)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    outside = _jaxmigrate(elsewhere, str(repo / "src" / "plain.py"), "--diff").stdout.decode()
    name = str(repo / "src" / "plain.py").lstrip("/")
    assert outside.startswith(f"--- a/{name}\n+++ b/{name}\n")
    (repo / "top.py").write_text(LEGACY)  # above the current directory: named like outside
    up = _jaxmigrate(repo / "src", "../top.py", "--diff").stdout.decode()
    name = str(repo / "top.py").lstrip("/")
    assert up.startswith(f"--- a/{name}\n+++ b/{name}\n")
    here = _jaxmigrate(repo / "src", "../src/./plain.py", "--diff").stdout.decode()
    assert here.startswith("--- a/plain.py\n")  # a path that comes back: normalised


def test_notebook_cell_view_is_an_option(tmp_path):
    shutil.copy(DATA / "notebooks" / "seed_tutorial.ipynb", tmp_path / "nb.ipynb")
    cells = invoke("nb.ipynb", "--diff", "--diff-cells", *TARGET, cwd=tmp_path)
    assert "--- a/nb.ipynb:cell 8\n+++ b/nb.ipynb:cell 8\n" in cells.stdout
    file = invoke("nb.ipynb", "--diff", *TARGET, cwd=tmp_path)
    assert ":cell" not in file.stdout.split("nb.ipynb:cell 9:line")[0]  # only in the finding
    data = json.loads(
        invoke("nb.ipynb", "--diff", "--format", "json", *TARGET, cwd=tmp_path).stdout
    )
    assert data["files"][0]["diff"].startswith("--- a/nb.ipynb\n")


# ---------------------------------------------------------------- --split-by-rule


SPLIT_A = (
    "import jax\nimport jax.numpy as jnp\n\n\n"
    "def f(params, grads, learning_rate, x):\n"
    "    short = jax.tree_map(lambda p, g: p - learning_rate * g * 0.25, params, grads)\n"
    "    return short, isinstance(x, jnp.DeviceArray)\n"
)
SPLIT_B = (
    'import jax\n\n\ndef g(x):\n    """Leaves.\n\n    >>> jax.tree_map(abs, [1])\n    [1]\n'
    '    """\n    return jax.tree_map(abs, x)\n'
)


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
@pytest.mark.parametrize("extra", [(), ("--no-doctests",)], ids=["doctests", "no-doctests"])
@pytest.mark.parametrize("line_length", [None, 100], ids=["default-length", "length-100"])
def test_split_by_rule_adds_up_to_one_run(tmp_path, extra, line_length):
    """The split migrates each file as one run does: with the line length its project sets
    (a line a rewrite made longer than it is wrapped) and the run's --no-doctests."""
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "a.py").write_text(SPLIT_A)
    (repo / "src" / "b.py").write_text(SPLIT_B)
    if line_length:
        (repo / "pyproject.toml").write_text(f"[tool.ruff]\nline-length = {line_length}\n")
    _git(repo, "init", "-q")
    full = tmp_path / "full"
    shutil.copytree(repo, full)
    args = (*extra, "--target-version", "0.4.13", "--no-cache")
    invoke("src", *args, cwd=full)
    wrapped = "jax.tree_util.tree_map(\n" in (full / "src" / "a.py").read_text()
    assert wrapped == (line_length is None)  # 92 columns: past 88, not past 100
    assert ("jax.tree_map(abs, [1])" in (full / "src" / "b.py").read_text()) == bool(extra)
    patches = tmp_path / "patches"
    result = invoke("src", *args, "--split-by-rule", patches, cwd=repo)
    assert result.exit_code == 1, result.stderr
    series = (patches / "series").read_text().split()
    assert "zz-remaining.patch" not in series
    for name in series:
        _git(repo, "apply", str(patches / name))
    assert _tree(repo / "src") == _tree(full / "src")
