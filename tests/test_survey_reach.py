"""The survey passes over a file whose floor cannot pass the newest one found so far
(``migrator.surveyorder``): its bound, ``migrator.target.survey_reach``, must be no older than
the floor the survey finds in any file, and the run must say and do the same with and without
passing over, whatever order the files are surveyed in."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path
from typing import List

import pytest
from click.testing import CliRunner

from jaxmigrate.migrator import MigrationError, Settings, migrate_source, runner, surveyorder
from jaxmigrate.migrator.cli import cli
from jaxmigrate.migrator.codewords import read_code
from jaxmigrate.migrator.plan import make_plan
from jaxmigrate.migrator.rule import Rule, with_follow_ups
from jaxmigrate.migrator.target import ARRAY_FLOOR, file_floor, survey_reach
from jaxmigrate.migrator.version import parse_version
from jaxmigrate.rules._renames import RenameRule
from tests.fixture_support import fixture_cases, fixture_settings


def _surveyed_floor(text: str, settings: Settings):  # noqa: ANN202
    """The floor the survey with ``settings`` finds in ``text`` (None: none, or an error)."""
    try:
        result = migrate_source(text, settings)
    except MigrationError:
        return None
    floor = file_floor(result.output, result.fixes)
    return None if floor is None else parse_version(floor[0])


def _reach(text: str, settings: Settings):  # noqa: ANN202
    return survey_reach(text, None, settings.active_rules(), settings.target)


BEFORE = [case[1] for case in fixture_cases() if case[1].parent.name != "noop"]


@pytest.mark.parametrize("before", BEFORE, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_reach_bounds_the_floor_the_survey_finds(before: Path):
    text = before.read_text(encoding="utf-8")
    own = dataclasses.replace(fixture_settings(text), target_upper=None, survey=True)
    for low in (own.target_version, ARRAY_FLOOR):  # its target; the survey with no requirement
        settings = dataclasses.replace(own, target_version=low, locate_fixes=False)
        floor = _surveyed_floor(text, settings)
        assert floor is None or floor <= _reach(text, settings), low


def test_the_reach_holds_a_rename_newer_than_every_rules_needs(monkeypatch):
    """JAX903 writes ``jax.extend.core.DropVar`` (JAX 0.10.0) in the survey, newer than any
    rule's ``needs_jax``: only the words its table may write there (``survey_writes``) make
    the reach cover it."""
    text = "from jax.core import DropVar\n\n\ndef f(v):\n    return isinstance(v, DropVar)\n"
    settings = Settings(survey=True, target_version=ARRAY_FLOOR, locate_fixes=False)
    floor = _surveyed_floor(text, settings)
    assert floor == parse_version("0.10.0")
    assert floor <= _reach(text, settings)
    monkeypatch.setattr(RenameRule, "survey_writes", Rule.survey_writes)
    assert _reach(text, settings) < floor  # the check fails without it


def test_a_rename_the_newest_jax_still_has_writes_only_what_the_file_spells(monkeypatch):
    """``jax.host_ids`` still exists on the newest JAX; its replacement
    ``jax.process_indices`` (0.4.33) counts in a file that spells it, not in one that only
    spells ``jax.host_id`` (trax's data modules: their floor 0.2.13 was read as 0.4.33, so the
    survey rewrote them with LibCST for nothing).  A rule that follows another may have that
    one write the legacy name, so there every replacement counts."""
    settings = Settings(survey=True, target_version=ARRAY_FLOOR, locate_fixes=False)
    host_id = "import jax\n\n\ndef first():\n    return jax.host_id() == 0\n"
    host_ids = host_id.replace("jax.host_id() == 0", "jax.host_ids()")
    assert _surveyed_floor(host_id, settings) == parse_version("0.2.13")
    assert _gated_reach(host_id, settings) < parse_version("0.4.33")
    assert _surveyed_floor(host_ids, settings) == parse_version("0.4.33")
    assert _gated_reach(host_ids, settings) >= parse_version("0.4.33")
    monkeypatch.setattr(RenameRule, "follows", frozenset({"JAX101"}))
    assert _gated_reach(host_id, settings) >= parse_version("0.4.33")


def _gated_reach(text: str, settings: Settings):  # noqa: ANN202
    """The reach the engine checks (``surveyorder.check_reach``): the rules gate 1 passes and
    those that follow them, and the names the module's code can spell."""
    rules = make_plan(tuple(settings.active_rules())).candidates(text)
    rules = with_follow_ups(rules, settings.active_rules())
    return survey_reach(text, None, rules, settings.target, read_code(ast.parse(text)))


# jax.get_mesh: JAX 0.11.1; the fix gives the survey a tree, so its floor is read at once
FIRST = (
    "import jax\nimport jax.numpy as jnp\n\n\n"
    "def mesh(x: jnp.DeviceArray):\n    return jax.get_mesh()\n"
)
LEGACY = (
    "import jax.numpy as jnp\n\n\ndef f(x: jnp.DeviceArray) -> jnp.DeviceArray:\n    return x\n"
)


def _runner() -> CliRunner:
    try:
        return CliRunner(mix_stderr=False)  # type: ignore[call-arg]  # click < 8.2
    except TypeError:
        return CliRunner()


def _project(root: Path) -> List[str]:
    files = {"a.py": FIRST, "b.py": LEGACY, "c.py": FIRST.replace("def mesh", "def other")}
    for name, text in files.items():
        (root / name).write_text(text, encoding="utf-8")
    return [str(root / name) for name in sorted(files)]


def _surveying(monkeypatch) -> List[str]:  # noqa: ANN001
    """The texts the survey migrates, from now on, in the order it migrates them (not those
    the engine passes over, or sends back to wait for a later turn: ``PassedOver``)."""
    surveyed: List[str] = []
    real = runner.migrate_source

    def recording(text: str, settings: Settings, cache=None, style_of=None, kept=None):  # noqa: ANN001, ANN202
        result = real(text, settings, cache, style_of, kept)
        if settings.survey:
            surveyed.append(text)
        return result

    monkeypatch.setattr(runner, "migrate_source", recording)
    return surveyed


def _surveyed_both_ways(tmp_path, monkeypatch, first: str, second: str, without):  # noqa: ANN001, ANN202
    """a.py and b.py hold ``first`` and ``second``; a ``--diff`` run in one process, then one
    with ``without(monkeypatch)`` applied, must say and write the same.  The first run, and
    the texts each survey migrated (in order)."""
    (tmp_path / "a.py").write_text(first, encoding="utf-8")
    (tmp_path / "b.py").write_text(second, encoding="utf-8")
    surveyed = _surveying(monkeypatch)
    args = [str(tmp_path), "--diff", "--no-cache", "-j", "1"]
    result = _runner().invoke(cli, args)
    before = list(surveyed)
    surveyed.clear()
    without(monkeypatch)
    assert _said(_runner().invoke(cli, args)) == _said(result)
    return result, before, list(surveyed)


def _unbounded(monkeypatch) -> None:  # noqa: ANN001
    """Every file's reach unknown: the survey migrates every file, in the order given."""
    monkeypatch.setattr(surveyorder, "survey_reach_of", lambda path, settings, options: None)
    monkeypatch.setattr(runner, "check_reach", lambda *args: None)


def _said(result) -> tuple:  # noqa: ANN001
    return result.exit_code, result.stdout, result.stderr


def test_a_file_that_cannot_pass_the_floor_is_not_surveyed(tmp_path, monkeypatch):
    """a.py sets the floor (0.11.1); b.py's fixes need no newer JAX, and c.py's are a.py's:
    the survey passes over both, and the run says and writes what it says and writes
    when the survey migrates every file (a.py still names the floor)."""
    paths = _project(tmp_path)
    surveyed = _surveying(monkeypatch)
    args = [*paths, "--diff", "--no-cache", "-j", "1"]
    passed_over = _runner().invoke(cli, args)
    assert surveyed == [FIRST]
    surveyed.clear()
    _unbounded(monkeypatch)
    every = _runner().invoke(cli, args)
    assert len(surveyed) == 3
    assert _said(passed_over) == _said(every)
    assert "jax.get_mesh in a.py" in every.stderr.replace(str(tmp_path) + "/", "")
    assert "+def f(x: jax.Array) -> jax.Array:" in every.stdout


def test_the_newest_reach_is_surveyed_first(tmp_path, monkeypatch):
    """The legacy file comes first, but the file that can reach the newer floor is surveyed
    first: the legacy file is then passed over."""
    (tmp_path / "a.py").write_text(LEGACY, encoding="utf-8")
    (tmp_path / "b.py").write_text(FIRST, encoding="utf-8")
    surveyed = _surveying(monkeypatch)
    args = [str(tmp_path), "--check", "--no-cache", "-j", "1"]
    ordered = _runner().invoke(cli, args)
    assert ordered.exit_code == 1 and surveyed == [FIRST]
    surveyed.clear()
    _unbounded(monkeypatch)
    assert _said(_runner().invoke(cli, args)) == _said(ordered)
    assert surveyed == [LEGACY, FIRST]


# jax.tree: JAX 0.4.25, below what some rules' fixes need (JAX602's, 0.8.2): every file's
# reach is at least that until its gates are read
TREE = (
    "import jax\nimport jax.numpy as jnp\n\n\n"
    "def f(x: jnp.DeviceArray):\n    return jax.tree.map(lambda y: y, x)\n"
)
MODERN = "import jax\n\n\ndef total(x):\n    return jax.numpy.sum(x)\n"


def test_a_file_whose_gates_pass_no_rule_is_passed_over_at_its_turn(tmp_path, monkeypatch):
    """The floor a.py sets (0.4.25) is older than what the rules' fixes may need in general,
    which bounds b.py's first reach; at b.py's turn, its reach from the rules its gates pass
    (none) cannot pass that floor: it is passed over, and the run says and writes the same."""
    settings = Settings(survey=True, target_version=ARRAY_FLOOR)
    assert _reach(MODERN, settings) > parse_version("0.4.25")
    (tmp_path / "b.py").write_text(MODERN, encoding="utf-8")
    assert surveyorder.narrowed_reach_of(tmp_path / "b.py", settings) <= parse_version("0.4.25")
    narrowed, surveyed, every = _surveyed_both_ways(
        tmp_path,
        monkeypatch,
        TREE,
        MODERN,
        lambda patch: patch.setattr(surveyorder, "narrowed_reach_of", lambda *args: None),
    )
    assert surveyed == [TREE]
    assert "jax.tree in a.py" in narrowed.stderr.replace(str(tmp_path) + "/", "")
    assert sorted(every) == sorted([TREE, MODERN])


@pytest.mark.parametrize("before", BEFORE, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_narrowed_reach_bounds_the_floor_the_survey_finds(before: Path, tmp_path: Path):
    """:func:`surveyorder.narrowed_reach_of` (the rules gate 1 passes) is still no older than
    the floor the survey finds, whatever the file's target."""
    text = before.read_text(encoding="utf-8")
    path = tmp_path / "m.py"
    path.write_text(text, encoding="utf-8")
    own = dataclasses.replace(fixture_settings(text), target_upper=None, survey=True)
    for low in (own.target_version, ARRAY_FLOOR):
        settings = dataclasses.replace(own, target_version=low, locate_fixes=False)
        narrowed = surveyorder.narrowed_reach_of(path, settings, runner.Options(floor=True))
        if narrowed is None:
            continue
        assert narrowed <= _reach(text, settings), low
        output, fixes, _findings, _diff = _migrated(text, settings)
        floor = None if output is None else file_floor(output, fixes)
        assert floor is None or parse_version(floor[0]) <= narrowed, low


def _migrated(text: str, settings: Settings):  # noqa: ANN202
    """What the survey's run makes of ``text`` (engine and docstrings); None: an error."""
    try:
        return runner._migrate_python(text, settings, runner.Options(floor=True), None)
    except MigrationError:
        return None, [], [], None


def test_the_first_file_at_the_floor_still_names_it(tmp_path, monkeypatch):
    """b.py imports a JAX 0.12.0 name (``jax.lax.polynomial``) in a shim, which its floor does
    not count, so its reach is newer than a.py's and it is surveyed first; both have the floor
    0.11.1, and a.py, the first file, still names it: a file whose reach only ties the floor
    found is passed over only when it comes after the file that found it."""
    later = FIRST + "try:\n    from jax.lax import polynomial\nexcept ImportError:\n    pass\n"
    (tmp_path / "a.py").write_text(FIRST, encoding="utf-8")
    (tmp_path / "b.py").write_text(later, encoding="utf-8")
    settings = Settings(survey=True, target_version=ARRAY_FLOOR)
    assert _reach(later, settings) > _reach(FIRST, settings) == parse_version("0.11.1")
    surveyed = _surveying(monkeypatch)
    args = [str(tmp_path), "--check", "--no-cache", "-j", "1"]
    ordered = _runner().invoke(cli, args)
    assert surveyed == [later, FIRST]
    _unbounded(monkeypatch)
    assert _said(_runner().invoke(cli, args)) == _said(ordered)
    assert "jax.get_mesh in a.py" in ordered.stderr.replace(str(tmp_path) + "/", "")


def test_a_file_the_gates_turn_away_is_bounded_by_its_words(monkeypatch):
    """Where the kept gates pass no rule on a file, nor on its docstrings' programs, the survey
    bounds it without the rules (``surveyorder._fixes_nothing``): it then fixes nothing there
    (engine and docstrings, as ``runner._migrate_python`` runs them without kept gates), and
    its words bound the floor it finds.  (The rules' own plan stands for the kept one, which
    answers as they do: tests/test_gateplan.py.)"""
    from jaxmigrate.migrator import gateplan
    from jaxmigrate.migrator.plan import make_plan

    monkeypatch.setattr(
        gateplan, "kept", lambda settings, where: make_plan(tuple(settings.active_rules()))
    )
    kept = runner.Options(floor=True, gates_dir="kept")
    checked = 0
    for case in fixture_cases():
        text = case[1].read_text(encoding="utf-8")
        own = dataclasses.replace(fixture_settings(text), target_upper=None, survey=True)
        for low in (own.target_version, ARRAY_FLOOR):
            settings = dataclasses.replace(own, target_version=low, locate_fixes=False)
            if not surveyorder._fixes_nothing(text, settings, kept):
                continue
            try:
                output, fixes, _findings, _diff = runner._migrate_python(
                    text, settings, runner.Options(floor=True), None
                )
            except MigrationError:
                continue
            checked += 1
            assert not fixes and output == text, (case[1], low)
            floor = file_floor(output, fixes)
            reach = survey_reach(text, None, (), settings.target)
            assert floor is None or parse_version(floor[0]) <= reach, (case[1], low)
    assert checked >= 200, checked  # (274 today)


_RELEASES = ["0.4.1", "0.4.13", "0.4.30", "0.6.0", "0.10.0", "0.11.2"]


def _pool_trial(  # noqa: PLR0913
    reaches: dict,
    floors: dict,
    low: int,
    workers: int,
    draw,
    monkeypatch,  # noqa: ANN001
) -> None:
    """A survey from ``low`` over files of these reaches and floors (indexes into _RELEASES)
    as a pool runs it: each of ``workers`` takes the next file in the survey's order that it
    does not pass over, and the files in flight finish in a random order; against the floor
    and the file that migrating every file gives, where that floor is newer than ``low`` (one
    no newer is not named: either way, no floor newer than ``low`` is found)."""
    from types import SimpleNamespace

    from jaxmigrate.migrator.runner import FileResult
    from jaxmigrate.migrator.target import floor_of_results

    settings = SimpleNamespace(target=parse_version(_RELEASES[low]))
    tasks = [(Path(name), settings, None, None, None) for name in reaches]

    def reach_of(path, settings, options):  # noqa: ANN001, ANN202
        reach = reaches[str(path)]
        return None if reach is None else parse_version(_RELEASES[reach])

    def result(index: int) -> FileResult:
        name = str(tasks[index][0])
        floor = floors[name]
        return FileResult(name, floor=None if floor is None else (_RELEASES[floor], name))

    def narrowed_reach_of(path, settings, options, worth=None):  # noqa: ANN001, ANN202
        reach, floor = reaches[str(path)], floors[str(path)]  # (a narrower reach, still sound)
        if reach is None or draw.random() < 0.3:
            return None
        return parse_version(_RELEASES[draw.randint(floor or 0, reach)])

    monkeypatch.setattr(surveyorder, "survey_reach_of", reach_of)
    monkeypatch.setattr(surveyorder, "narrowed_reach_of", narrowed_reach_of)
    every = floor_of_results([result(index) for index in range(len(tasks))])
    survey = surveyorder.Survey(tasks)
    queue, in_flight, results = list(survey.order), [], {}
    try:
        while queue or in_flight:
            while queue and len(in_flight) < workers:
                index = queue.pop(0)
                if survey.passes_over(index):
                    results[index] = FileResult(str(tasks[index][0]))
                else:
                    in_flight.append(index)
            if not in_flight:
                continue  # (the rest were passed over)
            index = in_flight.pop(draw.randrange(len(in_flight)))
            results[index] = result(index)
            survey.record(index, results[index])
    finally:
        surveyorder.Seen.floor = None
    found = floor_of_results([results[index] for index in range(len(tasks))])
    if every is not None and parse_version(every[0]) > settings.target:
        assert found == every, (reaches, floors, low, workers)
    else:
        assert found is None or parse_version(found[0]) <= settings.target, (reaches, floors)


def test_a_pools_survey_finds_the_floor_and_its_file_one_at_a_time_does(monkeypatch):
    """With workers, a file's turn comes before the floors of the files in flight are read
    (``surveyorder.Survey``, :meth:`migrator.pool.Pool.chosen`): the survey may migrate a file
    one process would pass over, never skip one that could set the floor or name it.  On random
    reaches and floors (each floor no newer than its reach), with 1 to 4 workers finishing in a
    random order, the floor and the file that names it are those migrating every file gives."""
    import random

    draw = random.Random(29)
    for _trial in range(400):
        reaches, floors = {}, {}
        low = draw.randrange(len(_RELEASES) - 1)  # the survey's lower bound: no reach is older
        for number in range(draw.randint(1, 12)):
            name = f"f{number}.py"
            reach = None if draw.random() < 0.1 else draw.randrange(low, len(_RELEASES))
            top = len(_RELEASES) - 1 if reach is None else reach
            reaches[name] = reach
            floors[name] = None if draw.random() < 0.3 else draw.randint(0, top)
        _pool_trial(reaches, floors, low, draw.randint(1, 4), draw, monkeypatch)


def test_a_pools_survey_says_and_writes_what_one_process_does(tmp_path):
    """With workers the survey also goes newest reach first, passing over files (each chosen
    as a worker asks for one): the run says and writes what one process does (the floor, the
    file that names it, the diff)."""
    paths = _project(tmp_path)
    (tmp_path / "d.py").write_text(LEGACY, encoding="utf-8")
    (tmp_path / "e.py").write_text(FIRST + "# not lax.polynomial\n", encoding="utf-8")
    args = [*paths, str(tmp_path / "d.py"), str(tmp_path / "e.py"), "--diff", "--no-cache"]
    one = _runner().invoke(cli, [*args, "-j", "1"])
    pool = _runner().invoke(cli, [*args, "-j", "2"])
    assert _said(pool) == _said(one)
    assert "jax.get_mesh in a.py" in one.stderr.replace(str(tmp_path) + "/", "")
