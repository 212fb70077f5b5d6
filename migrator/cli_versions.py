"""The versions a command-line run migrates from and to: the source the settings lack (the
project's requirement), the target given or found by the survey (:mod:`migrator.target`),
and the one note that says both on stderr."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Optional, Sequence, Tuple

import click

from jaxmigrate.migrator.project_version import Detected, source_of
from jaxmigrate.migrator.settings import Settings, find_config, load_config
from jaxmigrate.migrator.source import SourceRange
from jaxmigrate.migrator.target import Versions, default_target, survey_lower


def target_given(
    target_version: Optional[str], config_path: Optional[Path], anchors: Sequence[Path]
) -> Optional[str]:
    """Where the target was given (``--target-version`` or a configuration file), or None."""
    if target_version:
        return "--target-version"
    config = config_path or find_config([p for p in anchors if p.exists()] or [Path.cwd()])
    if config is not None and (load_config(config) or {}).get("target_version"):
        return f"target-version in {config}"
    return None


def versions_for(
    settings: Settings, given: Optional[str], detected: Optional[Detected]
) -> Tuple[Settings, Optional[Versions]]:
    """The source the settings lack, from the project's requirement; and, where the target was
    given, the :class:`Versions` of the run (None: the default target, found by a survey)."""
    if settings.source_version is None:
        found = source_of(detected)
        if found.known:
            open_above = detected is not None and detected.upper is None
            settings = dataclasses.replace(
                settings, source_version=found.describe(), source_open=open_above
            )
    if given is None:
        return settings, None
    return settings, Versions(
        settings.target_version, settings.target_upper, given, _source(settings, detected)
    )


def _source(settings: Settings, detected: Optional[Detected]) -> SourceRange:
    origin = (
        "--source-version or [tool.jaxmigrate]"
        if settings.source_explicit
        else source_of(detected).origin
    )
    return dataclasses.replace(settings.source, origin=origin)


def survey_settings(settings: Settings, detected: Optional[Detected]) -> Settings:
    """The settings of the survey that finds the floor of the default target.  It reads only
    what the fixes need and the names of the migrated text, so it lays nothing out again
    (``line_length=0``: no realigning, rewrapping or import layout, which move no name)."""
    return dataclasses.replace(
        settings,
        target_version=survey_lower(detected),
        target_upper=None,
        survey=True,
        locate_fixes=False,
        line_length=0,
    )


def surveyed(
    found: Optional[Tuple[str, str, str]], settings: Settings, detected: Optional[Detected]
) -> Versions:
    """The default target, from the floor the survey ``found``."""
    return default_target(detected, _source(settings, detected), found)


def with_target(settings: Settings, versions: Versions) -> Settings:
    return dataclasses.replace(
        settings, target_version=versions.target_lower, target_upper=versions.target_upper
    )


def say(versions: Optional[Versions], settings: Settings, quiet: bool) -> Versions:
    """The run's versions, said on stderr once (unless ``quiet``)."""
    if versions is None:  # no survey ran (nothing to migrate): the settings' own target
        versions = Versions(
            settings.target_version, settings.target_upper, "default", settings.source
        )
    if not versions.note:
        source = versions.source
        said = f"{source.describe()} ({source.origin})" if source.known else "unknown"
        versions = dataclasses.replace(
            versions,
            note=f"source {said}; target {versions.target_span()} ({versions.target_origin})",
        )
    if not quiet:
        click.echo(f"jaxmigrate: {versions.note}", err=True)
    return versions


def check_known(settings: Settings, target_given: Optional[str]) -> None:
    """A version the user gave must be one the API history can answer for: a target from its
    oldest to its newest release, a source no newer than the newest (``9.9`` or ``0.1.0`` are
    typos, not targets).  Raises ConfigError naming the known range."""
    from jaxmigrate.migrator.rule_index import releases
    from jaxmigrate.migrator.settings import ConfigError
    from jaxmigrate.migrator.version import parse_version

    oldest, newest = releases()[0], releases()[-1]  # the API history's, without loading it
    known = f"the API history knows JAX {oldest}..{newest}"
    versions = []
    if target_given is not None:
        versions += [("target", settings.target_version), ("target", settings.target_upper)]
    if settings.source_explicit:
        versions += [("source", v) for v in (settings.source_version or "").split("..")]
    for kind, version in versions:
        if not version:
            continue
        parsed = parse_version(version)
        if parsed > parse_version(newest):
            raise ConfigError(f"{kind} version {version} is newer than any JAX release: {known}")
        if kind == "target" and parsed < parse_version(oldest):
            raise ConfigError(f"target version {version} is older than the oldest release: {known}")
