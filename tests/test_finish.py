"""What makes the tool feel finished: help, explain pages, wording, progress, notebooks
written back in their own layout."""

from __future__ import annotations

import difflib
import io
import json
from collections import OrderedDict
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from jaxmigrate.migrator import clirun
from jaxmigrate.migrator.cli import cli
from jaxmigrate.migrator.diagnostics import Diagnostic
from jaxmigrate.migrator.explain import plain
from jaxmigrate.migrator.markdown_report import render as markdown_report
from jaxmigrate.migrator.notebook import migrate_notebook
from jaxmigrate.migrator.runner import CHECK, FileResult
from jaxmigrate.migrator.settings import Settings
from jaxmigrate.migrator.source import SourceRange
from jaxmigrate.migrator.target import Versions


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


# ---------------------------------------------------------------- help


def test_top_level_help_shows_the_default_commands_options():
    text = invoke("--help").output
    migrate = cli.commands["migrate"]
    for param in migrate.params:
        if isinstance(param, click.Option):
            assert param.opts[-1] in text, param.opts
    assert "explain" in text and "--version" in text


def _all_options():
    for name, command in [("jaxmigrate", cli), *cli.commands.items()]:
        for param in command.params:
            if isinstance(param, click.Option):
                yield f"{name} {param.opts[-1]}", param


@pytest.mark.parametrize(
    "param", [p for _, p in _all_options()], ids=[n for n, _ in _all_options()]
)
def test_every_option_has_help(param):
    assert (param.help or "").strip()


# ---------------------------------------------------------------- explain


def test_plain_text_drops_markup_and_shows_addresses():
    markdown = "**Why.** Use `f(*args, **kw)`; see [the guide](https://example.org/g) *first*."
    assert (
        plain(markdown) == "Why. Use f(*args, **kw); see the guide (https://example.org/g) first."
    )


def test_explain_prints_plain_text_with_reference_addresses():
    text = invoke("explain", "JAX101").output
    assert "**" not in text and "`" not in text
    assert "What it does." in text
    assert "  https://github.com/jax-ml/jax/releases/tag/jax-v0.4.14" in text.splitlines()


def test_explain_markdown_flag():
    text = invoke("explain", "JAX101", "--markdown").output
    assert text.startswith("# JAX101 device-array\n")
    assert "**What it does.**" in text and "```python\n" in text
    assert "(https://github.com/jax-ml/jax/releases/tag/jax-v0.4.14)" in text


# ---------------------------------------------------------------- plurals


def _diagnostic(code="JAX101"):
    return Diagnostic(code, "m", 1, 1, "safe")


@pytest.mark.parametrize(
    "count, expected",
    [
        (
            1,
            "1 file changed, 1 fix, 1 finding needs review, 1 file could not be processed "
            "(2 files checked)",
        ),
        (
            2,
            "2 files changed, 2 fixes, 2 findings need review, 2 files could not be processed "
            "(4 files checked)",
        ),
    ],
)
def test_summary_line_counts_in_the_right_number(count, expected):
    from jaxmigrate.migrator.report import summary_line

    results = [
        FileResult(
            f"f{i}.py", changed=True, written=True, fixes=[_diagnostic()], findings=[_diagnostic()]
        )
        for i in range(count)
    ] + [FileResult(f"bad{i}.py", error="x") for i in range(count)]
    assert summary_line(results, "write") == expected


def test_markdown_report_counts_in_the_right_number():
    results = [FileResult("a.py", changed=True, fixes=[_diagnostic()], findings=[_diagnostic()])]
    versions = Versions(
        "0.4.30", None, "--target-version", SourceRange((0, 3, 16), (0, 3, 16), "x")
    )
    text = markdown_report(results, CHECK, versions)
    assert "code written for JAX 0.3.16 (x), migrated to run on JAX 0.4.30.." in text
    assert "1 of 1 file to change; 1 site to change; 1 finding needs a person." in text
    assert "1 site to change:" in text and "1 finding needs a person:" in text


# ---------------------------------------------------------------- progress


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def _files(tmp_path, count=3):
    paths = []
    for i in range(count):
        path = tmp_path / f"m{i}.py"
        path.write_text("import jax\nx = jax.tree_map(abs, [1])\n")
        paths.append(path)
    return paths


def test_a_long_run_on_a_terminal_shows_a_progress_bar(tmp_path, monkeypatch):
    monkeypatch.setattr(clirun, "PROGRESS_DELAY", 0.0)  # every run counts as long
    terminal = _Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    results = clirun.run_files(_files(tmp_path), Settings(), CHECK, 1, None)
    assert len(results) == 3
    assert "jaxmigrate" in terminal.getvalue() and "100%" in terminal.getvalue()
    assert terminal.getvalue().endswith("\n")


def test_no_progress_bar_when_stderr_is_not_a_terminal(tmp_path, monkeypatch):
    monkeypatch.setattr(clirun, "PROGRESS_DELAY", 0.0)
    stream = io.StringIO()
    monkeypatch.setattr("sys.stderr", stream)
    clirun.run_files(_files(tmp_path), Settings(), CHECK, 1, None)
    assert stream.getvalue() == ""


def test_no_progress_bar_for_a_short_run(tmp_path, monkeypatch):
    monkeypatch.setattr(clirun, "PROGRESS_DELAY", 3600.0)  # nothing is long
    terminal = _Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    clirun.run_files(_files(tmp_path), Settings(), CHECK, 1, None)
    assert terminal.getvalue() == ""


# ---------------------------------------------------------------- notebooks


def _notebook(source_as_list=True):
    code = [
        "import jax.numpy as jnp\n",
        "# 5 \u00b5s per call\n",
        "ok = isinstance(x, jnp.DeviceArray)\n",
    ]
    return OrderedDict(
        [
            ("nbformat_minor", 5),  # keys in an order nbformat would not write
            (
                "cells",
                [
                    OrderedDict(
                        [
                            ("cell_type", "markdown"),
                            ("metadata", {}),
                            ("source", ["Timing: 3 \u00b5s"]),
                        ]
                    ),
                    OrderedDict(
                        [
                            ("source", code if source_as_list else "".join(code)),
                            ("cell_type", "code"),
                            ("execution_count", 1),
                            ("metadata", {}),
                            (
                                "outputs",
                                [
                                    {
                                        "name": "stdout",
                                        "output_type": "stream",
                                        "text": ["4.2 \u00b5s\n"],
                                    }
                                ],
                            ),
                        ]
                    ),
                    OrderedDict(
                        [("cell_type", "code"), ("metadata", {}), ("outputs", []), ("source", [])]
                    ),
                ],
            ),
            ("metadata", {"kernelspec": {"language": "python", "name": "python3"}}),
            ("nbformat", 4),
        ]
    )


LAYOUTS = {
    "nbformat": dict(indent=1, ensure_ascii=False),
    "indent-2-ascii": dict(indent=2, ensure_ascii=True),
    "compact-ascii": dict(ensure_ascii=True),
    "compact-tight": dict(separators=(",", ":"), ensure_ascii=False),
}


@pytest.mark.parametrize("source_as_list", [True, False], ids=["lines", "string"])
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_notebook_keeps_its_layout_and_changes_only_the_cell(layout, source_as_list):
    options = LAYOUTS[layout]
    original = json.dumps(_notebook(source_as_list), **options) + "\n"
    result = migrate_notebook(original, Settings(target_version="0.4.30"))
    assert result.changed and [c.cell for c in result.cells] == [2]
    migrated = json.loads(result.output, object_pairs_hook=OrderedDict)
    assert "jax.Array" in "".join(migrated["cells"][1]["source"])
    # byte for byte what the same writer gives for the migrated notebook: nothing else moved
    assert result.output == json.dumps(migrated, **options) + "\n"
    before = json.loads(original, object_pairs_hook=OrderedDict)
    before["cells"][1]["source"] = migrated["cells"][1]["source"]
    assert migrated == before


def test_unchanged_lines_of_a_changed_cell_keep_their_escapes():
    notebook = _notebook()
    text = json.dumps(notebook, indent=1, ensure_ascii=False)
    # a file with raw non-ASCII characters, where this one line spells its character escaped
    text = text.replace('"# 5 \u00b5s per call\\n"', '"# 5 \\u00b5s per call\\n"')
    assert "\\u00b5s per call" in text and "3 \u00b5s" in text
    result = migrate_notebook(text, Settings(target_version="0.4.30"))
    assert result.changed
    assert '"# 5 \\u00b5s per call\\n"' in result.output and "3 \u00b5s" in result.output


def test_seed_notebook_diff_shows_only_changed_cells():
    seed = Path(__file__).parent / "data" / "notebooks" / "seed_tutorial.ipynb"
    text = seed.read_text(encoding="utf-8")
    result = migrate_notebook(text, Settings(target_version="0.4.30"))
    assert result.changed
    changed = {c.cell - 1 for c in result.cells}
    old_lines, new_lines = text.splitlines(), result.output.splitlines()
    before = json.loads(text)
    after = json.loads(result.output)
    for index, (old, new) in enumerate(zip(before["cells"], after["cells"])):
        if index not in changed:
            assert old == new
    # the diff of the file removes lines of the changed sources only
    removed = [line for line in difflib.ndiff(old_lines, new_lines) if line.startswith("- ")]
    elements = {element for i in changed for element in before["cells"][i]["source"]}
    assert removed
    for line in removed:
        assert json.loads(line[2:].strip().rstrip(",")) in elements
