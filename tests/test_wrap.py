"""Wrapping the lines a rewrite made too long: which line length a project asks for, and
that the command line wraps by it (the layouts themselves are fixtures:
``fixtures/device-put-sharded/wrapped_*``, ``fixtures/removed-types/wrapped_predicate``)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import pytest

from jaxmigrate.migrator import Settings, linelength, migrate_source
from jaxmigrate.migrator.linelength import DEFAULT_LINE_LENGTH, line_length_for, styled
from tests.test_cli import invoke

SOURCE = (
    "import jax\n\n\ndef put(tree, devices):\n    return jax.device_put_replicated(tree, devices)\n"
)


@pytest.mark.parametrize(
    "name,text,expected",
    [
        ("pyproject.toml", "[tool.ruff]\nline-length = 100\n", 100),
        ("pyproject.toml", "[tool.black]\nline-length = 120\n", 120),
        ("pyproject.toml", "[tool.ruff]\nselect = ['E']\n[tool.black]\nline-length = 99\n", 99),
        ("pyproject.toml", "[tool.pylint.format]\nmax-line-length = 80\n", 80),
        ("setup.cfg", "[flake8]\nmax-line-length = 79\n", 79),
        ("tox.ini", "[pycodestyle]\nmax_line_length = 90\n", 90),
        (".pylintrc", "[FORMAT]\nmax-line-length=80\n", 80),
        ("pyproject.toml", "[tool.pyink]\nline-length = 80\npyink-indentation = 2\n", 80),
        ("pyproject.toml", "[tool.yapf]\ncolumn_limit = 100\n", 100),
        ("pyproject.toml", "[tool.yapf]\nbased_on_style = 'google'\n", 80),
        ("setup.cfg", "[yapf]\nbased_on_style = pep8\n", 79),
        ("setup.cfg", "[yapf]\nbased_on_style = google\ncolumn_limit = 90\n", 90),
        (".style.yapf", "[style]\nbased_on_style = yapf\n", 80),
        (".style.yapf", "[style]\nbased_on_style = chromium\n", DEFAULT_LINE_LENGTH),
        ("pyproject.toml", "[project]\nname = 'x'\n", DEFAULT_LINE_LENGTH),
    ],
)
def test_configured_line_length(tmp_path: Path, name: str, text: str, expected: int) -> None:
    (tmp_path / name).write_text(text)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text(SOURCE)
    assert line_length_for(tmp_path / "pkg" / "m.py") == expected


def test_project_root_stops_the_walk(tmp_path: Path) -> None:
    """A project without a setting is not given the setting of a folder above it."""
    (tmp_path / "setup.cfg").write_text("[flake8]\nmax-line-length = 79\n")
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    assert line_length_for(project / "m.py") == DEFAULT_LINE_LENGTH
    assert line_length_for(tmp_path / "other" / "m.py") == 79


def test_engine_without_a_line_length_does_not_wrap() -> None:
    output = migrate_source(SOURCE, Settings(unsafe_fixes=True)).output
    assert max(len(line) for line in output.splitlines()) > 100
    wrapped = migrate_source(SOURCE, Settings(unsafe_fixes=True, line_length=88)).output
    assert max(len(line) for line in wrapped.splitlines()) <= 88
    assert wrapped.count("\n") > output.count("\n")


@pytest.mark.parametrize("length", [60, 250])
def test_cli_wraps_by_the_projects_line_length(tmp_path: Path, length: int) -> None:
    (tmp_path / "pyproject.toml").write_text(f"[tool.ruff]\nline-length = {length}\n")
    path = tmp_path / "m.py"
    path.write_text(SOURCE)
    result = invoke(str(path), "--unsafe-fixes", "--target-version", "0.4.30")
    assert result.exit_code in (0, 1), result.output
    lines = path.read_text().splitlines()
    longest = max(len(line) for line in lines)
    if length == 250:
        assert len(lines) == len(SOURCE.splitlines()) + 1  # one line (and an import) added
        assert longest > 100
    else:
        assert longest <= 60
        assert "jax.tree_util.tree_map(\n" in path.read_text()


def test_a_relative_path_is_looked_up_where_it_points_now(tmp_path: Path, monkeypatch) -> None:
    """The folders' answers are kept for a run's files, by real folder: the same relative path
    from another working directory is another folder (a process that runs twice, as tests and
    library callers do)."""
    for name, length in (("a", 100), ("b", 120)):
        (tmp_path / name / "src").mkdir(parents=True)
        (tmp_path / name / "pyproject.toml").write_text(f"[tool.ruff]\nline-length = {length}\n")
    for name, length in (("a", 100), ("b", 120), ("a", 100)):
        monkeypatch.chdir(tmp_path / name)
        assert line_length_for(Path("src") / "m.py") == length


# A line the rewrite (jax.tree_map -> jax.tree_util.tree_map) takes from 73 to 83 columns at
# two-space indents (77 to 87 at four): over Google's 80, within black's 88.
GOOGLE_STYLE = (
    "import jax\n\n\ndef log(step, values):\n  if step:\n"
    '    print("global_step: %d, %s", step, jax.tree_map(lambda x: x, values))\n'
)
BLACK_STYLE = GOOGLE_STYLE.replace("\n  if", "\n    if").replace("\n    print", "\n        print")
GOOGLE_DOCSTRINGS = (  # four-space code whose docstrings indent their entries by two
    'def f(x):\n    """Doc.\n\n    Args:\n      x: a value.\n\n    Returns:\n      x.\n    """\n'
    "    if x:\n        return x\n    return None\n"
)


def test_a_files_style_says_its_line_length() -> None:
    assert styled(GOOGLE_STYLE) == 80
    assert styled(BLACK_STYLE) is None
    assert styled(GOOGLE_DOCSTRINGS) is None
    assert styled("x = 1\n") is None  # (no block: nothing says)


@pytest.mark.parametrize("config", [None, "[tool.black]\nline-length = 88\n"])
@pytest.mark.parametrize("text", [GOOGLE_STYLE, BLACK_STYLE])
def test_an_unconfigured_project_wraps_by_each_files_style(
    tmp_path: Path, config: Optional[str], text: str
) -> None:
    """Without a configured length, a two-space file is held to Google's 80 columns and a
    four-space one to black's 88; a configured length holds both."""
    (tmp_path / "pyproject.toml").write_text(config or "[project]\nname = 'x'\n")
    path = tmp_path / "m.py"
    path.write_text(text)
    result = invoke(str(path), "--target-version", "0.4.13")
    assert result.exit_code in (0, 1), result.output
    written = path.read_text()
    assert "jax.tree_util.tree_map(" in written
    longest = max(len(line) for line in written.splitlines())
    if text is GOOGLE_STYLE and config is None:
        assert longest <= 80
        assert len(written.splitlines()) > len(text.splitlines())
    else:
        assert 80 < longest <= 88
        assert len(written.splitlines()) == len(text.splitlines())


# A docstring example the rewrite takes from 80 to 85 columns in its program: over Google's 80,
# within black's 88; the module around it is indented by two spaces.
GOOGLE_EXAMPLES = (
    '"""Helpers.\n\n  >>> import jax\n'
    '  >>> out = jax.tree_map(lambda leaf: leaf, {"first_value": 1, "second_value": 22})\n"""\n'
    "import jax\n\n\ndef log(step, values):\n  if step:\n    return values\n"
)


def test_docstring_examples_wrap_by_the_modules_style(tmp_path: Path) -> None:
    """The examples' programs are laid out by the style of the module they are in (not their
    own, which has no blocks): a two-space module's example is held to 80 columns."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    path = tmp_path / "m.py"
    path.write_text(GOOGLE_EXAMPLES)
    result = invoke(str(path), "--target-version", "0.4.13")
    assert result.exit_code in (0, 1), result.output
    written = path.read_text()
    assert "  >>> out = jax.tree_util.tree_map(\n  ...     lambda leaf" in written, written


def test_a_files_style_is_read_only_where_a_fix_is_laid_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reading a file's indentation costs a pass over its text: a run reads it only for the
    files that reach LibCST (the layout of what a fix writes is all it decides), not for the
    many the gates or CPython's tree answer."""
    read = []
    real = linelength.styled
    monkeypatch.setattr(linelength, "styled", lambda text: read.append(text) or real(text))
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    modern = "import jax\n\n\ndef total(x):\n  if x is not None:\n    return jax.numpy.sum(x)\n"
    private = "from jax._src import core\n\n\ndef f(x):\n  if x:\n    return core\n"
    for name, text in (("modern.py", modern), ("private.py", private)):
        (tmp_path / name).write_text(text)
    result = invoke(str(tmp_path), "--target-version", "0.4.13", "--check", "--no-cache", "-j", "1")
    assert "JAX902" in result.output  # (a finding, answered from CPython's tree)
    assert read == []
    (tmp_path / "legacy.py").write_text(GOOGLE_STYLE)
    result = invoke(str(tmp_path), "--target-version", "0.4.13", "--no-cache", "-j", "1")
    assert result.exit_code in (0, 1), result.output
    assert read == [GOOGLE_STYLE]
    assert max(len(line) for line in (tmp_path / "legacy.py").read_text().splitlines()) <= 80
