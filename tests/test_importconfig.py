"""The first-party names of the project a folder is in (:mod:`migrator.importconfig`): read
from the nearest folder, walking up, that looks like a project root."""

from __future__ import annotations

from pathlib import Path

from jaxmigrate.migrator import importconfig


def _tree(root: Path) -> None:
    (root / "proj" / "pkg" / "sub" / "deep").mkdir(parents=True)
    (root / "proj" / "pyproject.toml").write_text(
        '[tool.isort]\nknown_first_party = ["helpers"]\n', encoding="utf-8"
    )
    (root / "proj" / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    (root / "proj" / "tool.py").write_text("", encoding="utf-8")
    # a nested project (its own root): its names, not the outer project's
    (root / "proj" / "vendored" / "inner").mkdir(parents=True)
    (root / "proj" / "vendored" / "setup.py").write_text("", encoding="utf-8")
    (root / "proj" / "vendored" / "inner" / "__init__.py").write_text("", encoding="utf-8")


def test_every_folder_under_a_root_reads_that_root(tmp_path: Path) -> None:
    _tree(tmp_path)
    expected = ("helpers", "pkg", "tool")
    deep = tmp_path / "proj" / "pkg" / "sub" / "deep"
    # deepest first, then the folders above it: each answers from the same root
    for folder in (deep, deep.parent, deep.parent.parent, tmp_path / "proj"):
        assert importconfig.first_party_in(str(folder)) == expected
    assert importconfig.first_party_in(str(tmp_path / "proj" / "vendored" / "inner")) == ("inner",)


def test_no_root_above_gives_nothing(tmp_path: Path) -> None:
    lone = tmp_path / "a" / "b"
    lone.mkdir(parents=True)
    (lone / "mod.py").write_text("", encoding="utf-8")
    # (a temporary folder has no project root above it, unless the machine's does)
    above = [p for p in lone.parents if any((p / m).exists() for m in importconfig._ROOT_MARKERS)]
    if not above:
        assert importconfig.first_party_in(str(lone)) == ()
    else:
        assert importconfig.first_party_in(str(lone)) == importconfig._for_root(str(above[0]))
