"""The projects a run's files belong to, each migrated for its own ``jax`` requirement.

Each path the run is given is read for its requirement as a run over it alone reads it
(:func:`migrator.project_version.detect`); a path under none (a monorepo's root, whose packages
declare their own) has each of its files read from its package up (the nearest folder with a
packaging file; without one, the file's own folder).  Paths and files under
the same requirement are one project; a run over one project reads its requirement from the
paths it is given, as it always did.  Before, a run over the paths of several projects (two
packages named at once, the pre-commit hook handed files of two packages) read one requirement
from the folder the paths shared, above every package: it found none, or a root's, and a file
was migrated from another source depending on which files came with it.  Now each project is
surveyed, migrated and has its requirement raised as a run over it alone would.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from jaxmigrate.migrator.linelength import resolved_folder
from jaxmigrate.migrator.project_version import Detected, FolderWalk, detect, requirements


@dataclasses.dataclass
class Project:
    """Some of a run's files (their indexes in the run's order) and their requirement."""

    detected: Optional[Detected]
    files: List[int]


def by_project(files: Sequence[Path], anchors: Sequence[Path]) -> List[Project]:
    """``files`` (found under ``anchors``, the paths given) grouped by requirement, in the
    order each group's first file comes; one group (or none found): its requirement read from
    the ``anchors`` as before."""
    given = detect(anchors)  # (what a run over the paths always read)
    if len(anchors) < 2 and (given is not None or not anchors):
        return [Project(given, list(range(len(files))))]  # (one path, under a requirement)
    nearest = requirements()  # (one walk up each folder, for the paths and the files alike)
    of_anchor = {anchor: _resolved(anchor) for anchor in anchors}
    found = {
        anchor: nearest.of(resolved if resolved.is_dir() else resolved.parent)
        for anchor, resolved in of_anchor.items()
    }
    anchored = {resolved: anchor for anchor, resolved in of_anchor.items()}
    # a package's files read its requirement, not one a folder of theirs declares for itself
    # (an example's pinned requirements.txt, usually as old as the example)
    packages = FolderWalk(_package)
    groups: Dict[Optional[Path], Project] = {}
    named = any(not resolved.is_dir() for resolved in anchored)  # (files named: pre-commit's)
    folders: Dict[Path, Tuple[Path, Optional[Detected]]] = {}  # as named -> resolved, its own
    for position, path in enumerate(files):
        known = folders.get(path.parent)
        if known is None:
            folder = Path(resolved_folder(os.path.abspath(path.parent)))
            known = folders[path.parent] = (
                folder,
                _of_folder(folder, anchored, found, packages, nearest),
            )
        folder, detected = known
        anchor = anchored.get(folder / path.name) if named else None
        if anchor is not None:
            detected = found[anchor]
        key = None if detected is None else detected.source
        groups.setdefault(key, Project(detected, [])).files.append(position)
    if len(groups) < 2:
        return [Project(given, list(range(len(files))))]
    return list(groups.values())


def _of_folder(
    folder: Path,
    anchors: Dict[Path, Path],
    found: Dict[Path, Optional[Detected]],
    packages: "FolderWalk[Path]",
    nearest: "FolderWalk[Detected]",
) -> Optional[Detected]:
    """The requirement of the files of ``folder`` (resolved) not named themselves: the deepest
    path given that holds it says it; under none, its package's (or its own folder's)."""
    detected = _folder_requirement(folder, anchors, found)
    if detected is None:
        package = packages.of(folder)
        detected = nearest.of(folder if package is None else package)
    return detected


def _folder_requirement(
    folder: Path, anchors: Dict[Path, Path], found: Dict[Path, Optional[Detected]]
) -> Optional[Detected]:
    """The requirement of the deepest path given (``anchors``: each resolved -> as given) that
    is ``folder`` (resolved) or holds it."""
    directory = folder
    while True:
        anchor = anchors.get(directory)
        if anchor is not None:
            return found[anchor]
        if directory.parent == directory:
            return None
        directory = directory.parent


_PACKAGE_FILES = ("pyproject.toml", "setup.py", "setup.cfg")


def _package(directory: Path) -> Optional[Path]:
    """``directory``, where it holds a packaging file."""
    return directory if any((directory / name).is_file() for name in _PACKAGE_FILES) else None


def _resolved(path: Path) -> Path:
    return Path(os.path.realpath(os.path.abspath(path)))
