"""The settings and exclude patterns a ``jaxmigrate migrate`` command line makes, with the
project's ``[tool.jaxmigrate]`` configuration under them."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional, Sequence, Tuple, Union

from jaxmigrate.migrator.discovery import Exclude
from jaxmigrate.migrator.settings import Settings, find_config, load_config


def codes(values: Tuple[str, ...]) -> Tuple[str, ...]:
    return tuple(
        code.strip().upper() for value in values for code in value.split(",") if code.strip()
    )


def settings_for(
    paths: Sequence[str],
    stdin_filename: Optional[str],
    config_path: Optional[Path],
    select: Tuple[str, ...],
    ignore: Tuple[str, ...],
    target_version: Optional[str],
    unsafe_fixes: Optional[bool],
    exclude: Tuple[str, ...],
    extend_exclude: Tuple[str, ...],
    source_version: Optional[str] = None,
) -> Settings:
    anchors = [Path(p) for p in paths if p != "-"]
    if stdin_filename:
        anchors.append(Path(stdin_filename))
    config = config_path or find_config([p for p in anchors if p.exists()] or [Path.cwd()])
    values = (load_config(config) or {}) if config else {}
    if select:
        values["select"] = codes(select)
    if ignore:
        values["ignore"] = codes(ignore)
    if target_version:
        values["target_version"] = target_version
    if ".." in values.get("target_version", ""):  # a range: 0.4.13..0.4.38
        values["target_version"], upper = values["target_version"].split("..", 1)
        if upper:
            values["target_upper"] = upper
    if source_version:
        values["source_version"] = source_version
        values["source_explicit"] = True
    if unsafe_fixes is not None:
        values["unsafe_fixes"] = unsafe_fixes
    values["exclude"] = tuple(values.get("exclude", ())) + exclude
    values["extend_exclude"] = tuple(values.get("extend_exclude", ())) + extend_exclude
    return Settings(**values)


def excludes_for(
    paths: Sequence[str],
    stdin_filename: Optional[str],
    config_path: Optional[Path],
    given: Tuple[str, ...],
) -> List[Union[str, Exclude]]:
    """The exclude patterns: the configuration's, read from the directory that holds it; the
    command line's, read from each path given and from the current directory."""
    anchors = [Path(p) for p in paths if p != "-"] + (
        [Path(stdin_filename)] if stdin_filename else []
    )
    config = config_path or find_config([p for p in anchors if p.exists()] or [Path.cwd()])
    values = (load_config(config) or {}) if config else {}
    patterns: List[Union[str, Exclude]] = []
    if config is not None:
        base = Path(config).resolve().parent
        patterns += [
            Exclude(p, base)
            for p in (*values.get("exclude", ()), *values.get("extend_exclude", ()))
        ]
    patterns += list(given)
    patterns += [Exclude(p, Path.cwd()) for p in given]
    return patterns
