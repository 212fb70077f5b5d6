"""The README's commands work as written: the newcomer path, checked where a test can.

Every ``jaxmigrate ...`` line of the README's code blocks (the install check, the example the
development set-up runs, the usage summary, the sections on notebooks, documentation pages,
reports and patches) runs here, as written, in a small project that has the files the
README names.  A command the CLI no longer accepts (a renamed option, a path that moved)
fails, as it would for a user copying it.
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


def _commands() -> List[Tuple[str, List[str], Optional[str]]]:
    """(the README line, its arguments, the file it reads on stdin) per ``jaxmigrate`` line of
    a fenced code block; a ``pip install ... && jaxmigrate ...`` line gives its second part."""
    found = []
    fenced = False
    for line in README.splitlines():
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
        words = shlex.split(command, comments=True)[1:]
        stdin = None
        if "<" in words:  # jaxmigrate - < old.py > new.py
            at = words.index("<")
            stdin = words[at + 1]
            words = words[:at]
        found.append((line.strip(), words, stdin))
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
    """The files the README's commands name, each with something to migrate."""
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
    example = ROOT / "fixtures" / "device-array" / "all_spellings.before.py"
    (tmp / "fixtures" / "device-array").mkdir(parents=True)
    shutil.copy2(example, tmp / "fixtures" / "device-array" / example.name)


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
