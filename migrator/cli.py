"""The ``jaxmigrate`` command line: the commands, their options and the settings they make
(running them is :mod:`migrator.clirun`, imported when a command runs, with the engine for the
first file that needs it: ``--version`` and ``--help`` load neither)."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, List, Optional, Sequence, Tuple, TypeVar

import click

from jaxmigrate.migrator import __version__, handoff
from jaxmigrate.migrator.cache import default_cache_dir, sweep
from jaxmigrate.migrator.cli_config import excludes_for, settings_for
from jaxmigrate.migrator.cli_projects import run_projects
from jaxmigrate.migrator.cli_versions import (
    check_known,
    say,
    survey_settings,
    surveyed,
    target_given,
    versions_for,
    with_target,
)
from jaxmigrate.migrator.discovery import DOC_SUFFIXES, SOURCE_SUFFIXES, discover
from jaxmigrate.migrator.fileio import SourceFile
from jaxmigrate.migrator.interrupt import Interrupted
from jaxmigrate.migrator.project_version import detect
from jaxmigrate.migrator.projects import by_project
from jaxmigrate.migrator.settings import ConfigError, Settings

if TYPE_CHECKING:  # pragma: no cover
    from jaxmigrate.migrator.rule import Rule

_F = TypeVar("_F", bound=Callable[..., Any])


class DefaultGroup(click.Group):
    """``jaxmigrate PATHS`` means ``jaxmigrate migrate PATHS``."""

    def parse_args(self, ctx: click.Context, args: List[str]) -> List[str]:
        if not args or (
            args[0] not in self.commands and args[0] not in ("--help", "-h", "--version")
        ):
            args = ["migrate", *args]
        return super().parse_args(ctx, args)

    def format_usage(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        formatter.write_usage("jaxmigrate", "[OPTIONS] PATHS... | rules | explain CODE")

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The default command's options first (as ruff shows ``check``'s), then the group's
        own and the commands."""
        migrate = self.commands["migrate"]
        sub = click.Context(migrate, info_name="migrate", parent=ctx)
        help_option = migrate.get_help_option(sub)
        options = [p for p in migrate.get_params(sub) if isinstance(p, click.Option)]
        records = [p.get_help_record(sub) for p in options if p is not help_option]
        with formatter.section("Options for PATHS (the default command, `migrate`)"):
            formatter.write_dl([r for r in records if r is not None])
        super().format_options(ctx, formatter)


@click.group(cls=DefaultGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="jaxmigrate")
def cli() -> None:
    """Upgrade legacy JAX code (DeviceArray, GDA, pjit, xmap, ...) to the jax.Array world.

    Two versions drive a run.  The source is the JAX the code was written for: the project's
    jax requirement (jax==0.3.16), what each file's JAX names prove, or --source-version.  The
    target is the JAX the result must run on: from the floor the rewrites need (or the
    requirement's lower bound, if higher) to the newest JAX, or --target-version.  An
    application pinned to jax==0.3.16 moves to floor..newest; a library on jax>=0.4.30 keeps
    0.4.30 (jaxmigrate explain versions).

    \b
    jaxmigrate src/            rewrite files in place
    jaxmigrate src/ --diff     show what would change, write nothing
    jaxmigrate src/ --check    list files that would change, write nothing
    jaxmigrate rules           list the rules
    jaxmigrate explain JAX101  document one rule (explain versions: source and target)
    """


def _flag(*decls_and_help: str) -> Callable[[_F], _F]:
    """An on/off option: its names (and parameter name) followed by its help text."""
    *decls, text = decls_and_help
    return click.option(*decls, is_flag=True, help=text)


def _output(flag: str, dest: str, metavar: str, text: str) -> Callable[[_F], _F]:
    """An option naming what the run writes besides the sources: a directory when ``metavar``
    is ``DIR``, else a file."""
    directory = metavar == "DIR"
    kind = click.Path(file_okay=not directory, dir_okay=directory, path_type=Path)
    return click.option(flag, dest, type=kind, metavar=metavar, help=text)


@cli.command("migrate")
@click.argument("paths", nargs=-1, type=click.Path(path_type=str))
@_flag("--diff", "show_diff", "Print a unified diff; write nothing.")
@_flag("--check", "List files that would change; write nothing.")
@_flag(
    "--diff-cells",
    "With --diff: show a notebook's changed cells as diffs of their source, for reading, "
    "instead of the patch of its .ipynb file that git apply takes.",
)
@click.option(
    "--select",
    multiple=True,
    metavar="CODES",
    help="Only these rule codes or prefixes (comma-separated).",
)
@click.option("--ignore", multiple=True, metavar="CODES", help="Skip these rule codes or prefixes.")
@click.option(
    "--target-version",
    metavar="X.Y[.Z][..X.Y.Z]",
    help="The JAX the migrated code must run on: from X (to the newest; X..Y: to Y).  "
    "Default: from the floor the rewrites need (or the project's jax>= if higher) to the newest.",
)
@click.option(
    "--source-version",
    metavar="X.Y[.Z][..X.Y.Z]",
    help="The JAX the code was written for (default: the project's jax requirement, and what "
    "each file's own JAX names prove).",
)
@click.option(
    "--unsafe-fixes/--no-unsafe-fixes",
    default=None,
    help="Also apply fixes that may change behaviour in edge cases.",
)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json", "sarif", "github"]),
    default="text",
    show_default=True,
    help="Findings as 'path:line:col: CODE message' lines, JSON, SARIF 2.1.0 or "
    "GitHub annotations.",
)
@click.option(
    "-j", "--jobs", type=click.IntRange(min=1), help="Worker processes (default: all cores)."
)
@click.option(
    "--exclude", multiple=True, metavar="GLOB", help="Skip paths matching GLOB (repeatable)."
)
@click.option(
    "--extend-exclude",
    multiple=True,
    metavar="GLOB",
    help="Same as --exclude; adds to the configuration's list.",
)
@click.option(
    "--stdin-filename", metavar="PATH", help="Name used in messages when reading from '-'."
)
@click.option(
    "--config",
    "config_path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="A pyproject.toml to read [tool.jaxmigrate] from.",
)
@_flag(
    "--update-requirements",
    "Raise the project's jax requirement to admit the target (also with --unsafe-fixes).",
)
@click.option(
    "--fail-on",
    type=click.Choice(["any", "fixes"]),
    default="any",
    show_default=True,
    help="Exit 1 when anything is left to do (any), or only when a file changed or would "
    "change (fixes: findings alone exit 0).",
)
@_flag("--exit-zero", "Exit 0 even when files changed or findings remain (errors still exit 2).")
@_flag("--show-fixes", "Also list every fix (text format).")
@_flag("-q", "--quiet", "No summary line.")
@_flag(
    "--no-cache",
    "Do not read or write the result cache (what the rules look for is still kept there).",
)
@click.option(
    "--cache-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where results are cached (default: ~/.cache/jaxmigrate, or $JAXMIGRATE_CACHE_DIR).",
)
@_flag(
    "--docs",
    "Also migrate python code blocks (and their doctests) in .md/.rst files, and JAX names "
    "in docstring code literals.",
)
@_flag(
    "--no-doctests",
    "Leave the >>> examples in docstrings alone (migrated by default, like the code).",
)
@_flag(
    "--add-todos", "Write '# TODO(jaxmigrate): CODE ...' above each finding that cannot be fixed."
)
@_output(
    "--report", "report_path", "FILE.md", "Write a Markdown migration report for a pull request."
)
@_output(
    "--split-by-rule",
    "split_dir",
    "DIR",
    "Write one patch per rule into DIR (and a 'series' file); change no source file.",
)
def migrate_command(
    paths: Tuple[str, ...],
    show_diff: bool,
    check: bool,
    select: Tuple[str, ...],
    ignore: Tuple[str, ...],
    target_version: Optional[str],
    source_version: Optional[str],
    unsafe_fixes: Optional[bool],
    output_format: str,
    jobs: Optional[int],
    exclude: Tuple[str, ...],
    extend_exclude: Tuple[str, ...],
    stdin_filename: Optional[str],
    config_path: Optional[Path],
    update_requirements: bool,
    fail_on: str,
    exit_zero: bool,
    show_fixes: bool,
    quiet: bool,
    no_cache: bool,
    cache_dir: Optional[Path],
    docs: bool = False,
    no_doctests: bool = False,
    add_todos: bool = False,
    report_path: Optional[Path] = None,
    split_dir: Optional[Path] = None,
    diff_cells: bool = False,
) -> None:
    """Migrate PATHS (files or directories; '-' reads stdin and writes stdout)."""
    from jaxmigrate.migrator import clirun
    from jaxmigrate.migrator.runner import (
        CHECK,
        DIFF,
        WRITE,
        FileResult,
        Options,
        default_jobs,
    )

    stdin_mode = paths == ("-",)
    if "-" in paths and not stdin_mode:
        raise click.UsageError("'-' (stdin) must be the only path")
    if diff_cells and not show_diff:
        raise click.UsageError("--diff-cells changes what --diff shows: give --diff too")
    if split_dir is not None and (add_todos or report_path is not None or show_diff or check):
        raise click.UsageError(
            "--split-by-rule writes patches only; it does not combine with "
            "--add-todos, --report, --diff or --check"
        )
    try:
        settings = settings_for(
            paths,
            stdin_filename,
            config_path,
            select,
            ignore,
            target_version,
            unsafe_fixes,
            exclude,
            extend_exclude,
            source_version,
        )
    except ConfigError as error:
        raise click.UsageError(str(error)) from None
    anchors = [Path(p) for p in paths if p != "-"] + (
        [Path(stdin_filename)] if stdin_filename else []
    )
    detected = detect([p for p in anchors if p.exists()])
    given = target_given(target_version, config_path, anchors)
    try:
        check_known(settings, given)
    except ConfigError as error:
        raise click.UsageError(str(error)) from None
    mode = DIFF if show_diff else CHECK if check else WRITE
    if output_format == "text" and not show_fixes and report_path is None:
        # Nothing will show where fixes are: skip the position pass for them (findings keep theirs).
        settings = dataclasses.replace(settings, locate_fixes=False)
    plain = settings  # (before the versions: each project of the files gives its own)
    settings, versions = versions_for(settings, given, detected)
    options = Options(
        docs=docs,
        doctests=not no_doctests,
        add_todos=add_todos,
        diff_cells=diff_cells,
        gates_dir=str(cache_dir or default_cache_dir()),
    )
    if stdin_mode:

        def decide(source: SourceFile) -> Settings:
            chosen = versions or surveyed(
                clirun.survey_text(
                    source, stdin_filename or "-", survey_settings(settings, detected), options
                ),
                settings,
                detected,
            )
            handoff.stop_keeping_modules()
            return with_target(settings, say(chosen, settings, quiet))

        # the survey's parses of the text serve the run too (migrator.handoff)
        with handoff.handing_on(modules=versions is None):
            status = clirun.run_stdin(
                settings,
                mode,
                check,
                stdin_filename or "-",
                output_format,
                options,
                decide,
                clirun.FAIL_NEVER if exit_zero else fail_on,
            )  # fmt: skip
        sys.exit(status)
    if not paths:
        click.echo("No paths given: nothing to do.", err=True)
        if report_path is not None:
            clirun.write_report(report_path, [], mode, settings, say(versions, settings, quiet))
        sys.exit(clirun.EXIT_CLEAN)
    suffixes = SOURCE_SUFFIXES + (DOC_SUFFIXES if docs else ())
    excludes = excludes_for(paths, stdin_filename, config_path, exclude + extend_exclude)
    files, missing = discover(paths, excludes, suffixes)
    if not docs:  # a page named on the command line is migrated only with --docs
        files = [f for f in files if f.suffix.lower() not in DOC_SUFFIXES]
    results = [FileResult(path, error=reason) for path, reason in missing]
    cache = None if no_cache else str(cache_dir or default_cache_dir())
    projects = by_project(files, [p for p in anchors if p.exists()])
    if split_dir is not None and len(projects) > 1:
        raise click.UsageError(
            f"--split-by-rule: the files belong to {len(projects)} projects with their own jax "
            "requirements; split each project on its own"
        )
    try:
        run = run_projects(
            files, projects, plain, given, mode, jobs or default_jobs(), cache, options, quiet,
            update_requirements, split_dir, results,
        )  # fmt: skip
    except Interrupted as stop:
        sys.exit(clirun.interrupted(stop, len(files), mode))
    results += run.results
    settings, versions = run.settings, run.versions
    clirun.report(
        results,
        mode,
        settings,
        output_format,
        show_fixes,
        quiet,
        check,
        versions=versions,
        projects=run.labelled(),
    )
    if report_path is not None:
        clirun.write_report(report_path, results, mode, settings, versions, run.labelled())
    if cache is not None:
        sweep(Path(cache))
    elif options.gates_dir is not None:  # --no-cache: the gates kept there (migrator.gateplan)
        sweep(Path(options.gates_dir) / "gates")
    sys.exit(clirun.exit_code(results, clirun.FAIL_NEVER if exit_zero else fail_on))


@cli.command("rules")
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json", "markdown"]),
    default="text",
    show_default=True,
    help="One line per rule, JSON, or the Markdown table the README carries.",
)
def rules_command(output_format: str) -> None:
    """List every rule: code, name, safety, needed JAX, summary."""
    from jaxmigrate.migrator.report import dump_json
    from jaxmigrate.migrator.rule import all_rules

    rules = all_rules()
    if output_format == "json":
        dump_json({"rules": [_rule_facts(r) for r in rules.values()]}, sys.stdout)
        return
    if output_format == "markdown":
        click.echo(rules_markdown())
        return
    width = max(len(r.name) for r in rules.values())
    for rule in rules.values():
        needs = f"jax>={rule.needs_jax}" if rule.needs_jax else "any jax"
        click.echo(
            f"{rule.code}  {rule.name:<{width}}  {rule.safety.value:<6}  {needs:<12}  "
            f"{rule.summary}"
        )


def _rule_facts(rule: Rule) -> dict:
    return {
        "code": rule.code,
        "name": rule.name,
        "safety": rule.safety.value,
        "needs_jax": rule.needs_jax,
        "deprecated_in": rule.deprecated_in,
        "removed_in": rule.removed_in,
        "references": [reference.as_dict() for reference in rule.references],
        "summary": rule.summary,
    }


def rules_markdown() -> str:
    """The rule table the README carries (a test keeps the two identical)."""
    from jaxmigrate.migrator.rule import all_rules

    lines = [
        "| code | name | safety | needs JAX | deprecated / removed | summary |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for rule in all_rules().values():
        history = " / ".join(v or "-" for v in (rule.deprecated_in, rule.removed_in))
        summary = rule.summary.replace("|", "\\|")
        lines.append(
            f"| {rule.code} | {rule.name} | {rule.safety.value} | {rule.needs_jax or 'any'} "
            f"| {history} | {summary} |"
        )
    return "\n".join(lines)


@cli.command("explain")
@click.argument("code")
@click.option(
    "--markdown", is_flag=True, help="Print the documentation as Markdown instead of plain text."
)
def explain_command(code: str, markdown: bool) -> None:
    """Print a rule's documentation with before/after examples and references (CODE or name;
    'versions': how the source and target versions are chosen)."""
    from jaxmigrate.migrator.explain import VERSIONS, render
    from jaxmigrate.migrator.report import ENGINE_CODES
    from jaxmigrate.migrator.rule import all_rules

    rules = all_rules()
    wanted = code.strip()
    if wanted.lower() in ("versions", "source", "target"):
        click.echo(VERSIONS, nl=False)
        return
    if wanted.upper() in ENGINE_CODES:  # the engine's own housekeeping, shown by --show-fixes
        name, summary = ENGINE_CODES[wanted.upper()]
        click.echo(f"{wanted.upper()} {name}: {summary} (the engine's own fix, not a rule)")
        return
    rule = rules.get(wanted.upper()) or next((r for r in rules.values() if r.name == wanted), None)
    if rule is None:
        raise click.UsageError(f"no rule {code!r}; `jaxmigrate rules` lists them")
    click.echo(render(rule, markdown=markdown), nl=False)


# The cyclic garbage collector's thresholds for a run (the process is the command's own; the
# library leaves the caller's alone).  By default CPython scans every tracked object of the
# oldest generation each time it has grown by a quarter: with LibCST's trees, the rules and
# JAX's API history alive, that was a sixth of a run over many files.  The engine breaks the
# cycles it makes (tests/test_garbage.py), so a file's trees are freed by reference counting
# and collecting seldom costs no memory; a young generation of a million objects, more than
# most files' trees, is then rarely walked while one is alive (docs/measurements.md).
# Forked workers inherit them.
GC_THRESHOLDS = (1_000_000, 20, 100)


def main(argv: Optional[Sequence[str]] = None) -> None:
    import gc

    gc.set_threshold(*GC_THRESHOLDS)
    cli.main(args=list(argv) if argv is not None else None, prog_name="jaxmigrate")


def command() -> None:
    """The ``jaxmigrate`` command (the console script, ``python -m jaxmigrate``): :func:`main`,
    then out of the process without the interpreter's teardown (:mod:`migrator.leave`)."""
    from jaxmigrate.migrator.leave import leave

    try:
        main()
    except SystemExit as done:
        leave(done.code)
    leave(0)


if __name__ == "__main__":  # pragma: no cover
    command()
