"""The README's commands work as written: the newcomer path, checked where a test can.

Every ``jaxmigrate ...`` line of the code blocks of the README and of ``docs/*.md`` (the
install check, the example the development set-up runs, the usage summary, the sections on
notebooks, documentation pages, reports and patches) runs here, as written, in a small
project that has the files the pages name.  A command the CLI no longer accepts (a renamed
option, a path that moved) fails, as it would for a user copying it.

Where a ``console`` block shows what a ``$ jaxmigrate ...`` line prints (the README's
before/after example, how to read a finding), the command runs from the checkout's root and
the lines shown must be what it prints: each run of lines between ``...`` lines is a run of
consecutive lines of its stdout or of its stderr, in order.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
from pathlib import Path
from typing import List, Optional, Tuple

import pytest
from click.testing import CliRunner

from jaxmigrate.migrator.cli import cli

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCS = sorted((ROOT / "docs").glob("*.md"))
PAGES = {"README.md": README}
PAGES.update({f"docs/{page.name}": page.read_text(encoding="utf-8") for page in DOCS})
LEGACY = "import jax.numpy as jnp\n\n\ndef f(x) -> jnp.DeviceArray:\n    return x\n"
NOTEBOOK = {
    "cells": [
        {
            "cell_type": "code",
            "execution_count": None,
            "metadata": {},
            "outputs": [],
            "source": ["import jax\n", "y = jax.tree_map(abs, [1])\n"],
        }
    ],
    "metadata": {},
    "nbformat": 4,
    "nbformat_minor": 5,
}


def _words(command: str) -> Tuple[List[str], Optional[str]]:
    """A ``jaxmigrate ...`` command's arguments, and the file it reads on stdin."""
    words = shlex.split(command, comments=True)[1:]
    stdin = None
    if "<" in words:  # jaxmigrate - < old.py > new.py
        at = words.index("<")
        stdin = words[at + 1]
        words = words[:at]
    return words, stdin


def _commands() -> List[Tuple[str, List[str], Optional[str]]]:
    """(the page and line, its arguments, the file it reads on stdin) per ``jaxmigrate`` line
    of a fenced code block of the README or of ``docs/*.md``; a ``pip install ... &&
    jaxmigrate ...`` line gives its second part."""
    found = []
    for page, text in PAGES.items():
        fenced = False
        for line in text.splitlines():
            if line.startswith("```"):
                fenced = not fenced
                continue
            if not fenced:
                continue
            command = line.split("&& ", 1)[1] if "&& jaxmigrate " in line else line
            command = command.strip()
            command = command[2:] if command.startswith("$ ") else command
            if not command.startswith("jaxmigrate "):
                continue
            words, stdin = _words(command)
            found.append((f"{page}: {line.strip()}", words, stdin))
    return found


COMMANDS = _commands()


def test_the_readme_has_the_commands_a_newcomer_needs():
    lines = [line for line, _words, _stdin in COMMANDS]
    assert any(words == ["--version"] for _line, words, _stdin in COMMANDS), lines
    assert any("--diff" in words and words[0].endswith(".py") for _l, words, _s in COMMANDS)
    assert any(words[:1] == ["explain"] for _line, words, _stdin in COMMANDS), lines
    # the development set-up's first command: install, then run on an example that exists
    setup = re.search(r"pip install -e \. && jaxmigrate (\S+)", README)
    assert setup is not None and (ROOT / setup.group(1)).is_file()


def _project(tmp: Path) -> None:
    """The files the pages' commands name, each with something to migrate."""
    for name in ("src/old.py", "train.py", "old.py"):
        path = tmp / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(LEGACY, encoding="utf-8")
    (tmp / "tutorial.ipynb").write_text(json.dumps(NOTEBOOK, indent=1) + "\n", encoding="utf-8")
    (tmp / "docs").mkdir()
    (tmp / "docs" / "guide.md").write_text(
        "# Guide\n\n```python\n" + LEGACY + "```\n", encoding="utf-8"
    )
    shutil.copytree(ROOT / "fixtures" / "projects", tmp / "fixtures" / "projects")
    for _line, words, _stdin in COMMANDS:  # the fixtures a command names, as they are
        for word in words:
            if word.startswith("fixtures/") and (ROOT / word).is_file():
                (tmp / word).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(ROOT / word, tmp / word)


@pytest.mark.parametrize(
    ("line", "words", "stdin"), COMMANDS, ids=[" ".join(c[1])[:60] for c in COMMANDS]
)
def test_a_readme_command_runs_as_written(tmp_path, line, words, stdin):
    _project(tmp_path)
    try:
        runner = CliRunner(mix_stderr=False)  # click < 8.2
    except TypeError:
        runner = CliRunner()
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        text = (tmp_path / stdin).read_text(encoding="utf-8") if stdin else None
        result = runner.invoke(cli, words, input=text, catch_exceptions=False)
    finally:
        os.chdir(old)
    # 0: nothing to change; 1: changed, would change or findings (README: exit codes)
    assert result.exit_code in (0, 1), f"{line}\n{result.stdout}\n{result.stderr}"
    if "--diff" in words or "--check" in words:
        assert (tmp_path / "src" / "old.py").read_text(encoding="utf-8") == LEGACY
    if stdin:
        assert "jax.Array" in result.stdout


def _shown_outputs() -> List[Tuple[str, List[str], List[List[str]]]]:
    """(the page and command line, its arguments, the runs of output lines shown under it) per
    ``$ jaxmigrate ...`` line of a ``console`` block that shows output lines after it."""
    found = []
    for page, text in PAGES.items():
        for block in re.findall(r"^```console\n(.*?)^```$", text, re.M | re.S):
            command: Optional[str] = None
            shown: List[str] = []
            for line in block.splitlines() + ["$ end"]:
                if line.startswith("$ "):
                    if command is not None and shown:
                        runs: List[List[str]] = [[]]
                        for out in shown:
                            if out == "...":
                                runs.append([])
                            else:
                                runs[-1].append(out)
                        found.append((f"{page}: {command}", _words(command[2:])[0], runs))
                    command, shown = line, []
                elif command is not None:
                    shown.append(line)
    return found


SHOWN = _shown_outputs()


def test_the_readme_shows_a_before_after_example_and_findings():
    shown = {line.split(": ", 1)[1]: runs for line, _words, runs in SHOWN}
    diff = shown.get("$ jaxmigrate fixtures/projects/pin_0_3_16/before --diff")
    assert diff and diff[0][0].startswith("--- a/"), sorted(shown)
    assert any(line.startswith("README.md: ") and "--check" in line for line, _w, _r in SHOWN)


def _contains_in_order(lines: List[str], runs: List[List[str]]) -> bool:
    at = 0
    for run in runs:
        for start in range(at, len(lines) - len(run) + 1):
            if lines[start : start + len(run)] == run:
                at = start + len(run)
                break
        else:
            return False
    return True


@pytest.mark.parametrize(("line", "words", "runs"), SHOWN, ids=[" ".join(c[1])[:60] for c in SHOWN])
def test_shown_output_is_what_the_command_prints(line, words, runs):
    assert "--diff" in words or "--check" in words, f"{line}: must write nothing to run here"
    try:
        runner = CliRunner(mix_stderr=False)  # click < 8.2
    except TypeError:
        runner = CliRunner()
    old = os.getcwd()
    os.chdir(ROOT)
    try:
        result = runner.invoke(cli, words, catch_exceptions=False)
    finally:
        os.chdir(old)
    assert result.exit_code in (0, 1), f"{line}\n{result.stdout}\n{result.stderr}"
    assert _contains_in_order(result.stdout.splitlines(), runs) or _contains_in_order(
        result.stderr.splitlines(), runs
    ), f"{line}\nprints:\n{result.stdout}\n{result.stderr}"
