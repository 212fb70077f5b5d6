"""A command-line run over files: each project they belong to (:mod:`migrator.projects`) is
surveyed, migrated and has its requirement raised on its own, as a run over it alone would."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, List, Optional, Sequence, Tuple

from jaxmigrate.migrator import handoff, perproject
from jaxmigrate.migrator.cli_versions import (
    say,
    survey_settings,
    surveyed,
    versions_for,
    with_target,
)
from jaxmigrate.migrator.interrupt import Interrupted
from jaxmigrate.migrator.projects import Project
from jaxmigrate.migrator.settings import Settings
from jaxmigrate.migrator.target import (
    Versions,
    admits_the_array_releases,
    named_past_the_array_floor,
)

if TYPE_CHECKING:  # pragma: no cover
    from jaxmigrate.migrator.runner import FileResult, Options


@dataclasses.dataclass
class Run:
    """What a run over some files did: the results (in the order of the files, each project's
    requirement after them) and, for each project, its settings and versions."""

    results: List["FileResult"]
    projects: List[Tuple[Project, Settings, Versions]]

    @property
    def settings(self) -> Settings:
        return self.projects[0][1]

    @property
    def versions(self) -> Versions:
        return self.projects[0][2]

    def labelled(self) -> List[Tuple[str, int, Versions]]:
        """With several projects, each one's requirement file (as messages name it), count of
        files and versions, for the reports; empty for one."""
        from jaxmigrate.migrator.project_version import shown

        if len(self.projects) < 2:
            return []
        return [
            ("" if p.detected is None else shown(p.detected.source), len(p.files), versions)
            for p, _settings, versions in self.projects
        ]


def run_projects(
    files: Sequence[Path],
    projects: Sequence[Project],
    plain: Settings,
    given: Optional[str],
    mode: str,
    workers: int,
    cache: Optional[str],
    options: "Options",
    quiet: bool,
    raise_requirements: bool,
    split_dir: Optional[Path] = None,
    missing: Sequence["FileResult"] = (),
) -> Run:
    """Each of ``projects`` (their files among ``files``) migrated with ``plain`` (the run's
    settings before its versions) and its own requirement: the source it gives, then the
    target ``given`` or found by a survey of its files.  ``raise_requirements``: as
    ``--update-requirements`` asks.  With ``split_dir`` (one project only), the patches per
    rule are written, with ``missing`` (the paths that were not found), and the process
    exits."""
    from jaxmigrate.migrator import clirun
    from jaxmigrate.migrator.runner import CHECK, in_process

    done: List["FileResult"] = []
    runs: List[Tuple[Project, Settings, Versions]] = []
    by_file: List[Optional["FileResult"]] = [None] * len(files)
    try:
        for project in projects:
            chosen = [files[i] for i in project.files]
            settings, versions = versions_for(plain, given, project.detected)
            detected = project.detected
            # one file: a big module is parsed once; one process: the survey's LibCST trees
            # serve the run (migrator.handoff)
            keep = versions is None and in_process(workers, len(chosen))
            # a requirement from before the jax.Array releases that admits them all is raised
            # to the first, where the survey finds no floor past it: said as what the migration
            # targets, unless a fix needs that release (Options.changed_floor)
            by_default = versions is None and admits_the_array_releases(detected)
            with handoff.handing_on(len(chosen) == 1, modules=keep):
                if versions is None:  # the default target: survey the files for the floor first
                    surveying = survey_settings(settings, detected)
                    survey = clirun.run_files(
                        chosen, surveying, CHECK, workers, cache,
                        dataclasses.replace(options, floor=True, add_todos=False),
                    )  # fmt: skip
                    handoff.stop_keeping_modules()
                    found = clirun.floor_of_survey(
                        survey, surveying.target_version, surveying.source
                    )
                    versions = surveyed(found, settings, detected)
                    by_default = by_default and not named_past_the_array_floor(found)
                settings = with_target(settings, versions)
                versions = say(versions, settings, quiet)
                if split_dir is not None:
                    raise SystemExit(
                        clirun.split_run(chosen, settings, split_dir, list(missing), quiet, options)
                    )
                running = (
                    dataclasses.replace(options, changed_floor=True) if by_default else options
                )
                results = clirun.run_files(chosen, settings, mode, workers, cache, running)
            perproject.gather(results)  # (said once for the project: JAX503's draws)
            for index, result in zip(project.files, results):
                by_file[index] = result
            done += results
            if any(result.changed for result in results):  # (nothing migrated: nothing to require)
                done += clirun.requirement_results(
                    detected,
                    versions,
                    mode,
                    raise_requirements or settings.unsafe_fixes,
                    not by_default or clirun.needs_the_target(results, versions.target_lower),
                )
            runs.append((project, settings, versions))
    except Interrupted as stop:
        stop.results = done + list(stop.results)
        raise
    in_order = [result for result in by_file if result is not None]
    placed = {id(result) for result in in_order}
    return Run(in_order + [r for r in done if id(r) not in placed], runs)
