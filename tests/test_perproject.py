"""JAX503's change of every jax.random draw is said once per project (migrator.perproject):
at the first file of the project that makes a key, with how many others do and which."""

from __future__ import annotations

import json

from jaxmigrate.migrator.perproject import ONCE_PER_PROJECT
from jaxmigrate.migrator.rule import all_rules
from tests.test_cli import invoke

KEYS = "import jax\n\nkey = jax.random.PRNGKey(0)\n"


def test_the_codes_kept_are_the_rules_that_say_so():
    """A run answered from the result cache imports no rule: the codes are kept apart."""
    wanted = {code for code, rule in all_rules().items() if rule.once_per_project}
    assert ONCE_PER_PROJECT == wanted


def _project(root, name, files):
    project = root / name
    project.mkdir()
    (project / ".git").mkdir()
    (project / "requirements.txt").write_text("jax==0.4.13\n")  # written before 0.5.0
    for file in files:
        (project / file).write_text(KEYS)
    return project


def test_said_at_the_first_file_with_the_others_counted_and_named(tmp_path):
    _project(tmp_path, "one", ["a.py", "b.py", "c.py"])
    _project(tmp_path, "two", ["d.py"])
    for jobs in ("1", "2"):
        text = invoke("one", "two", "--check", "--no-cache", "-j", jobs, cwd=tmp_path)
        said = [line for line in text.stdout.splitlines() if "JAX503" in line]
        assert len(said) == 2, text.stdout
        assert said[0].startswith("one/a.py:3:7: JAX503 ") and said[0].endswith("(2 more files)")
        assert said[1].startswith("two/d.py:3:7: JAX503 ") and "more file" not in said[1]
        report = json.loads(
            invoke("one", "--check", "--no-cache", "--format", "json", cwd=tmp_path).stdout
        )
        by_path = {entry["path"]: entry["findings"] for entry in report["files"]}
        assert by_path["one/b.py"] == [] and by_path["one/c.py"] == []
        (kept,) = by_path["one/a.py"]
        assert kept["detail"].endswith(
            "The same holds in 2 more files of this project: one/b.py, one/c.py."
        )


def test_a_cached_run_says_the_same(tmp_path):
    _project(tmp_path, "one", ["a.py", "b.py"])
    cache = str(tmp_path / "cache")
    first = invoke("one", "--check", "--cache-dir", cache, cwd=tmp_path)
    again = invoke("one", "--check", "--cache-dir", cache, cwd=tmp_path)
    assert first.stdout == again.stdout and "(1 more file)" in first.stdout


def test_no_marker_is_written_for_it(tmp_path):
    """--add-todos marks the sites of findings; JAX503's is undone at program start, by one
    flag, at no line of a file: no file gets a marker for it, the report still says it."""
    project = _project(tmp_path, "one", ["a.py", "b.py"])
    (project / "c.py").write_text(KEYS + "from jax._src import dtypes\n\nd = dtypes.float0\n")
    run = invoke("one", "--add-todos", "--no-cache", cwd=tmp_path)
    assert "JAX503" in run.stdout
    assert "TODO(jaxmigrate)" not in (project / "a.py").read_text()
    assert "TODO(jaxmigrate)" not in (project / "b.py").read_text()
    assert "TODO(jaxmigrate): JAX" in (project / "c.py").read_text()  # (another finding's)


def test_said_at_a_module_of_the_project_before_its_examples(tmp_path):
    """mctx 0.0.2: its examples sort first, but its tests hold the draws a seed fixes."""
    project = _project(tmp_path, "one", [])
    for folder in ("examples", "pkg"):
        (project / folder).mkdir()
    (project / "examples" / "demo.py").write_text(KEYS)
    (project / "pkg" / "model_test.py").write_text(KEYS)
    text = invoke("one", "--check", "--no-cache", cwd=tmp_path)
    said = [line for line in text.stdout.splitlines() if "JAX503" in line]
    assert len(said) == 1 and said[0].startswith("one/pkg/model_test.py:3:7: JAX503 "), said
    assert said[0].endswith("(1 more file)")
