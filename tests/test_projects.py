"""A run over the files of several projects migrates each for its own ``jax`` requirement, as a
run over that project alone does (``migrator.projects``): the same diffs, notes and target,
whichever other files come with it (a monorepo's packages, the pre-commit hook handed files of
two packages at once)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import List

import pytest

from jaxmigrate.migrator.projects import by_project
from tests.fixture_support import FIXTURES
from tests.test_cli import invoke

# An application pinned to jax==0.3.16 and a library on jax>=0.4.30 (the README's examples).
CASES = ("pin_0_3_16", "library_0_4_30")


@pytest.fixture
def monorepo(tmp_path: Path) -> Path:
    """A repository whose packages each declare their own jax requirement (none at its root)."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "README.md").write_text("two packages\n")
    for case in CASES:
        shutil.copytree(FIXTURES / "projects" / case / "before", tmp_path / case)
    return tmp_path


def _notes(stderr: str) -> List[str]:
    """The notes of the versions a run migrates from and to (one a project)."""
    return [line for line in stderr.splitlines() if " migrating to " in line]


def _files(result) -> dict:  # noqa: ANN001
    """Each file's diff, fixes and findings in a ``--format json`` run."""
    return {entry["path"]: entry for entry in json.loads(result.stdout)["files"]}


def test_each_package_is_migrated_for_its_own_requirement(monorepo: Path) -> None:
    """Both packages at once say and diff what each says and diffs alone: the pin's note and
    target (0.4.4..), the library's (0.4.30..)."""
    json_diff = ("--diff", "--format", "json", "--no-cache")
    both = invoke(*CASES, *json_diff, cwd=monorepo)
    alone = [invoke(case, *json_diff, cwd=monorepo) for case in CASES]
    assert both.exit_code == 1, both.stderr
    assert _files(both) == {**_files(alone[0]), **_files(alone[1])}
    assert _notes(both.stderr) == [note for result in alone for note in _notes(result.stderr)]
    said = " ".join(_notes(both.stderr))
    assert "pin_0_3_16/requirements.txt has jax==0.3.16" in said and "to 0.4.4.." in said
    assert "library_0_4_30/pyproject.toml has jax>=0.4.30: migrating to 0.4.30.." in said
    assert "no jax requirement found" not in both.stderr


def test_the_files_of_two_packages_are_migrated_as_each_alone(monorepo: Path) -> None:
    """The pre-commit hook names files, not folders: a file of each package gives the diff
    each gives alone (before, the folder the two shared was searched, and had no requirement)."""
    files = [f"{case}/train.py" for case in CASES]
    json_diff = ("--diff", "--format", "json", "--no-cache", "-q")
    both = invoke(*files, *json_diff, cwd=monorepo)
    alone = [invoke(path, *json_diff, cwd=monorepo) for path in files]
    assert _files(both) == {**_files(alone[0]), **_files(alone[1])}
    assert all(entry["diff"] for entry in _files(both).values())


def test_a_root_without_a_requirement_reads_each_packages(monorepo: Path) -> None:
    """``jaxmigrate .`` at a monorepo's root, which declares no requirement: each package's
    files are migrated for that package's, as a run over the package does."""
    json_diff = ("--diff", "--format", "json", "--no-cache", "-q")
    root = invoke(".", *json_diff, cwd=monorepo)
    alone = [invoke(case, *json_diff, cwd=monorepo) for case in CASES]
    assert _files(root) == {**_files(alone[0]), **_files(alone[1])}
    assert len(json.loads(root.stdout)["projects"]) == 2


def test_the_json_lists_each_project(monorepo: Path) -> None:
    result = invoke(*CASES, "--check", "--format", "json", "--no-cache", "-q", cwd=monorepo)
    data = json.loads(result.stdout)
    listed = {entry["requirement"]: entry for entry in data["projects"]}
    assert set(listed) == {"pin_0_3_16/requirements.txt", "library_0_4_30/pyproject.toml"}
    pin, library = listed["pin_0_3_16/requirements.txt"], listed["library_0_4_30/pyproject.toml"]
    assert pin["source_range"]["lower"] == "0.3.16" and pin["files"] == 1
    assert pin["target_range"] == {"lower": "0.4.4", "upper": None}
    assert library["target_range"] == {"lower": "0.4.30", "upper": None}
    assert data["target_range"] == pin["target_range"]  # (the first project's, as before)
    alone = invoke(CASES[0], "--check", "--format", "json", "--no-cache", "-q", cwd=monorepo)
    assert "projects" not in json.loads(alone.stdout)


def test_the_report_says_each_projects_versions(monorepo: Path) -> None:
    report = monorepo / "report.md"
    invoke(*CASES, "--check", "--no-cache", "-q", "--report", report, cwd=monorepo)
    text = report.read_text()
    assert "for each project's own `jax` requirement:" in text
    assert "- `pin_0_3_16/requirements.txt` (1 file): code written for JAX 0.3.16" in text
    assert "- `library_0_4_30/pyproject.toml` (1 file): code written for JAX 0.4.30" in text


def test_splitting_by_rule_takes_one_project(monorepo: Path, tmp_path: Path) -> None:
    result = invoke(*CASES, "--split-by-rule", tmp_path / "patches", cwd=monorepo)
    assert result.exit_code == 2
    assert "belong to 2 projects" in result.stderr


def test_packages_under_one_requirement_are_one_project(tmp_path: Path) -> None:
    """A package folder (its own pyproject.toml) that declares no jax requirement is under the
    repository's: one project, said once, as a run over the repository always was."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "requirements.txt").write_text("jax==0.3.16\n")
    for name in ("core", "extra"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "pyproject.toml").write_text(f"[project]\nname = '{name}'\n")
        (tmp_path / name / "m.py").write_text("import jax\ny = jax.tree_map(abs, [1])\n")
    files = [tmp_path / "core" / "m.py", tmp_path / "extra" / "m.py"]
    projects = by_project(files, files)
    assert len(projects) == 1 and projects[0].files == [0, 1]
    assert projects[0].detected is not None and projects[0].detected.version == "0.3.16"
    result = invoke("core", "extra", "--check", "--no-cache", cwd=tmp_path)
    assert len(_notes(result.stderr)) == 1
    assert "requirements.txt has jax==0.3.16" in result.stderr


def test_one_projects_files_find_its_requirement_from_the_paths(tmp_path: Path) -> None:
    """Within one project the requirement is read from the paths given, as before: a folder
    of it with a requirements file of its own (an example's) is read from there."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text(
        "[project]\nname = 'x'\ndependencies = ['jax>=0.4.30']\n"
    )
    example = tmp_path / "examples"
    example.mkdir()
    (example / "requirements.txt").write_text("jax==0.3.16\n")
    (example / "m.py").write_text("import jax\ny = jax.tree_map(abs, [1])\n")
    result = invoke("examples", "--check", "--no-cache", cwd=tmp_path)
    assert "examples/requirements.txt has jax==0.3.16" in result.stderr
    assert len(_notes(result.stderr)) == 1
