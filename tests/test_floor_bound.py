"""The default target's survey reads the floor of a file's JAX names only where it may decide:
each file gets a bound from its words (``migrator.floorbound.floor_bound``), and the run parses a
file again only while its bound reaches the newest floor found (``settle_floors``).  The bound
must never be below the floor, and settling must give the floor, file and reason that reading
every file gives."""

from __future__ import annotations

import copy
import dataclasses
import random
import shutil
from pathlib import Path
from typing import Dict, List, Optional

import pytest

from jaxmigrate.migrator.floorbound import floor_bound, may_name_from
from jaxmigrate.migrator.plan import identifier_tokens
from jaxmigrate.migrator.runner import CHECK, FileResult, Options, process_file
from jaxmigrate.migrator.settings import Settings
from jaxmigrate.migrator.source import floor_of
from jaxmigrate.migrator.target import (
    ARRAY_FLOOR,
    file_floor,
    floor_of_results,
    settle_floors,
    survey_floor,
)
from jaxmigrate.migrator.textscan import spells_chain
from jaxmigrate.migrator.version import parse_version
from tests.fixture_support import FIXTURES

PROGRAMS = Path(__file__).resolve().parent / "programs" / "cases"


def _texts() -> List[Path]:
    paths = sorted(FIXTURES.rglob("*.py")) + sorted(PROGRAMS.glob("*.py"))
    jax_sources = Path(__import__("jax").__file__).parent  # names from every release
    return paths + sorted(jax_sources.rglob("*.py"))[::7]


@pytest.mark.parametrize("path", _texts(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_bound_is_never_below_the_floor(path):
    text = path.read_text(encoding="utf-8", errors="surrogateescape")
    floor = floor_of(text)
    if floor is not None:
        bound = floor_bound(text)
        assert bound is not None and bound >= floor[0], (floor, bound)
        tokens = identifier_tokens(text)  # gate 1's, as the survey hands them on
        from_tokens = floor_bound(text, tokens)
        assert from_tokens is not None and from_tokens >= floor[0], (floor, from_tokens)
        assert may_name_from(text, floor[0])  # (settling reads it)
        assert may_name_from(text, floor[0], tokens)  # (with the tokens read ahead)


@pytest.mark.parametrize(
    "text, name",
    [
        ("import jax\njax.tree.map(f, x)\n", "jax.tree"),
        ("from jax import tree as t\nt.map(f, x)\n", "jax.tree"),
        ("import jax.random as jr\nk = jr.key(0)\n", "jax.random.key"),
        ("from jax.random import key\n", "jax.random.key"),
        (
            "import jax\nk = (jax\n     .random  # a comment between\n     .key(0))\n",
            "jax.random.key",
        ),
        ("import jax\nk = ｊａｘ.random.ｋｅｙ(0)\n", "jax.random.key"),  # NFKC, as Python reads it
        ("import ｊａｘ.random as jr\nk = jr.key(0)\n", "jax.random.key"),  # and in an import
        ("from \\\n    jax import tree as t\nt.map(f, x)\n", "jax.tree"),  # a module read late
        ("def f():\n    import jax.random as jr\n    return jr.key(0)\n", "jax.random.key"),
        ("x = 1; from jax.random import key as k\n", "jax.random.key"),
        ("import jax\nk = (jax).random.key(0)\n", "jax.random.key"),
        ("import jax\nk = ((jax.random  # a comment\n  )).key(0)\n", "jax.random.key"),
        ("import jax\nk = jax \\\n    .random.key(0)\n", "jax.random.key"),
        # a banner of '#' before a chain that is not there, and then the chain
        (
            "import jax\nk = (jax  " + "#" * 60 + "\n  .nothing)\nk = jax.random.key(0)\n",
            "jax.random.key",
        ),
    ],
)
def test_every_spelling_of_a_name_reaches_the_bound(text, name):
    floor = floor_of(text)
    assert floor is not None and floor[1] == name
    assert floor_bound(text) == floor[0]
    # from gate 1's ASCII tokens, the words around other characters read from the text
    assert floor_bound(text, identifier_tokens(text)) == floor[0]


@pytest.mark.parametrize(
    "text",
    [
        "aébü×üc = 1\n",  # a run of other characters that starts in one word, ends in the next
        "x = 'é' + ｊａｘ.random.ｋｅｙ  # ×\n",
        "é\né_1 = ü2\n",
        "ascii only\n",
    ],
)
def test_the_words_read_around_other_characters_are_every_word_of_the_text(text):
    """:func:`words_of` from gate 1's tokens holds every word a full reading finds (but one
    that starts with a digit, which no name does)."""
    from jaxmigrate.migrator.floorbound import words_of

    every = {word for word in words_of(text) if not word[0].isdigit()}
    assert every <= words_of(text, identifier_tokens(text))


@pytest.mark.parametrize(
    "text, spelled",
    [
        ("jax.random.key(0)", True),
        ("(jax).random.key", True),
        ("((jax . random  # a comment\n  )).key", True),
        ("jax \\\n  .random.key", True),
        ("(jax  " + "#" * 60 + "\n  .random.key)", True),
        ("x.jax.random.key", False),  # an attribute, not the head
        ("ajax.random.key", False),
        ("jax.random.keys", False),
        ("jax.random", False),
        ("jax[0].random.key", False),
        ("# jax random key\n", False),
        ("x.jax.random.key + jax.random.key", True),
    ],
)
def test_a_chain_is_read_as_code_writes_it(text, spelled):
    assert spells_chain(text, "jax", "random.key") is spelled


def test_settling_parses_only_where_a_name_that_new_is_spelled():
    newest = parse_version("0.11.2")  # jax.experimental.hijax.HiPrim
    assert not may_name_from("import jax\n# HiPrim, in jax's experimental hijax\n", newest)
    assert may_name_from("import jax\n# jax.experimental.hijax.HiPrim\n", newest)
    assert may_name_from("from jax.experimental.hijax import HiPrim\n", newest)
    assert may_name_from("from jax.experimental import hijax as h\nh.HiPrim\n", newest)
    assert not may_name_from("from jax.experimental import hijax as h\nHiPrim\n", newest)
    assert may_name_from("import ｊａｘ\n# HiPrim hijax experimental\n", newest)  # not ASCII


def test_the_bound_counts_only_names_below_what_the_imports_bind():
    # the words spell jax.tree.map, but no import binds jax: no chain can reach it
    text = "from jax._src import core\n# jax.tree.map\nx = core.tree.map\n"
    assert floor_of(text) is None and floor_bound(text) is None
    assert floor_bound(text.replace("from jax._src import core", "import jax")) is not None
    # a name imported from a module counts, and what is below it
    assert floor_bound("from jax import tree\n") is not None
    assert floor_bound("from jax import numpy\n# tree map\n") is None


def test_a_text_without_late_names_has_no_bound_and_look_alikes_only_raise_it():
    assert floor_bound("import jax\nx = jax.numpy.ones(3)\n") is None
    # the words alone: a comment naming jax.tree counts, which only costs a parse
    text = "import jax\n# see jax.tree.map\nx = jax.tree_util.tree_map(f, y)\n"
    assert floor_of(text) is None and floor_bound(text) is not None


# Files whose floors the survey leaves open (a bound past the first jax.Array release, and no
# tree in hand): a newer name in a comment only, and one in the code.
OPEN_BOUNDS = {
    "zz_comment.py": "import jax\n# see jax.experimental.hijax.HiPrim\nx = jax.numpy.ones(3)\n",
    "zz_code.py": "import jax\nx = jax.experimental.mosaic.gpu.TMA_INDICES_4_LAYOUT\n",
}


def _survey(tmp_path: Path) -> Dict[str, object]:
    """The survey of every fixture and program, lazily (its bounds left open) and with every
    floor read: ``{"lazy": [...], "exact": [...], "texts": {path: text}}``."""
    root = tmp_path / "project"
    paths: List[Path] = []
    for number, source in enumerate(
        sorted(FIXTURES.rglob("before*.py")) + sorted(PROGRAMS.glob("*.py"))
    ):
        copied = root / f"f{number:04d}_{source.name}"
        copied.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, copied)
        paths.append(copied)
    for name, text in OPEN_BOUNDS.items():  # (the fixtures' floors are all read or under it)
        (root / name).write_text(text)
        paths.append(root / name)
    settings = dataclasses.replace(Settings(), survey=True, locate_fixes=False, first_party=())
    options = Options(floor=True, keep_output=True)
    lazy = [process_file(path, settings, CHECK, options=options) for path in paths]
    texts = {str(path): path.read_text(encoding="utf-8") for path in paths}
    exact = [  # (an unchanged file's output is its text)
        dataclasses.replace(r, floor=file_floor(_output(r, texts), r.fixes), floor_bound=None)
        if r.error is None
        else r
        for r in lazy
    ]
    return {"lazy": lazy, "exact": exact, "texts": texts}


def _output(result: FileResult, texts: Dict[str, str]) -> Optional[str]:
    return result.output if result.changed else texts[result.path]


def test_settling_the_bounds_gives_the_floor_of_reading_every_file(tmp_path):
    survey = _survey(tmp_path)
    lazy: List[FileResult] = survey["lazy"]  # type: ignore[assignment]
    exact: List[FileResult] = survey["exact"]  # type: ignore[assignment]
    texts: Dict[str, str] = survey["texts"]  # type: ignore[assignment]
    open_bounds = [r for r in lazy if r.floor_bound]
    assert open_bounds, "no file left its floor open: the test compares nothing"
    for result in lazy:  # a floor left unread cannot set the target: not above the fixes'
        if result.floor_bound is None and not result.changed and result.error is None:
            named = floor_of(texts[result.path])  # nor above the first jax.Array release
            low = max(parse_version(ARRAY_FLOOR), parse_version((result.floor or ("0",))[0]))
            assert result.floor is None or named is None or named[0] <= low
    chooser = random.Random(29)
    for size in [len(lazy)] + [3, 8, 40, 200] * 5:  # projects of many sizes and orders
        picked = sorted(chooser.sample(range(len(lazy)), min(size, len(lazy))))
        if size != len(lazy):
            chooser.shuffle(picked)
        mine = [copy.deepcopy(lazy[i]) for i in picked]
        settle_floors(mine, texts.get)
        assert not any(r.floor_bound for r in mine)
        assert _found(mine) == _found([exact[i] for i in picked])


def _found(results: List[FileResult]):  # noqa: ANN202
    """What the default target reads of a survey: its floor, when above the first jax.Array
    release, with what sets it and where."""
    found = floor_of_results(results)
    if found is None or parse_version(found[0]) <= parse_version(ARRAY_FLOOR):
        return None
    return found


def test_a_migrated_text_is_read_at_once_and_a_file_later():
    text = "import jax\nk = jax.random.key(0)\n"
    floor = floor_of(text)
    assert floor is not None
    shown = ".".join(map(str, floor[0]))
    assert survey_floor(text, [], settle=False) == (None, shown)
    assert survey_floor(text, [], settle=True) == ((shown, "jax.random.key"), None)


def test_a_tie_is_read_so_that_the_first_file_names_the_floor_and_a_lower_bound_is_not():
    key = "import jax\nk = jax.random.key(0)\n"
    version = ".".join(map(str, floor_of(key)[0]))  # type: ignore[index]
    texts = {"a.py": key, "b.py": key, "c.py": "import jax\n# jax.random.key\n"}
    read: List[str] = []

    def reader(path: str) -> str:
        read.append(path)
        return texts[path]

    results = [
        FileResult("c.py", floor_bound=version),  # a bound only: the name is in a comment
        FileResult("a.py", floor_bound=version),
        FileResult("b.py", floor=(version, "jax.random.key")),  # read at once (migrated)
        FileResult("d.py", floor_bound="0.4.2"),  # below the floor found: never read
    ]
    settle_floors(results, reader)
    assert floor_of_results(results) == (version, "jax.random.key", "a.py")
    assert sorted(read) == ["a.py", "c.py"]
    assert results[0].floor is None and results[3].floor is None


def test_a_tie_after_the_file_that_names_the_floor_is_not_read():
    key = "import jax\nk = jax.random.key(0)\n"
    version = ".".join(map(str, floor_of(key)[0]))  # type: ignore[index]
    texts = {name: key for name in ("a.py", "c.py", "e.py")}
    read: List[str] = []

    def reader(path: str) -> str:
        read.append(path)
        return texts[path]

    results = [
        FileResult("a.py", floor_bound=version),
        FileResult("b.py", floor=(version, "jax.random.key")),  # read at once (migrated)
        FileResult("c.py", floor_bound=version),  # after b: it could only tie
        FileResult("d.py", floor_bound="0.4.2"),
        FileResult("e.py", floor_bound=version),
    ]
    settle_floors(results, reader)
    assert floor_of_results(results) == (version, "jax.random.key", "a.py")
    assert read == ["a.py"]  # a names it first: c and e cannot come before it
    assert not any(r.floor_bound for r in results)


def test_a_file_the_survey_parsed_has_its_floor_at_once_and_another_a_bound(tmp_path):
    # ``.mesh`` of a value that may be a GDA: the engine reads it on ``ast`` (no fix)
    parsed = "import jax\nk = jax.random.key(0)\narr = f()\nm = arr.mesh\n"
    skipped = "import jax\nk = jax.random.key(0)\n"  # gate 1 stops it: nothing was parsed
    settings = dataclasses.replace(Settings(), survey=True, locate_fixes=False, first_party=())
    results = []
    for name, text in (("parsed.py", parsed), ("skipped.py", skipped)):
        (tmp_path / name).write_text(text, encoding="utf-8")
        results.append(process_file(tmp_path / name, settings, CHECK, options=Options(floor=True)))
    floor = file_floor(skipped, [])
    assert floor is not None and floor == file_floor(parsed, [])
    assert (results[0].floor, results[0].floor_bound) == (floor, None)
    assert (results[1].floor, results[1].floor_bound) == (None, floor[0])


def test_the_survey_reads_the_bound_from_gate_1s_tokens_past_the_doctests(tmp_path, monkeypatch):
    from jaxmigrate.migrator import target

    asked = []
    real = target.floor_bound

    def spy(text, tokens=None):  # noqa: ANN001, ANN202
        asked.append(tokens)
        return real(text, tokens)

    monkeypatch.setattr(target, "floor_bound", spy)
    text = (
        'import jax\n"""Keys.\n\n>>> import jax\n>>> k = jax.random.key(0)\n"""\n'
        "k = jax.random.key(0)\nt = jax.tree_util.tree_map\n"
    )
    (tmp_path / "m.py").write_text(text, encoding="utf-8")
    settings = dataclasses.replace(Settings(), survey=True, locate_fixes=False, first_party=())
    result = process_file(tmp_path / "m.py", settings, CHECK, options=Options(floor=True))
    assert result.floor_bound is not None and not result.changed
    assert asked and asked[-1] is not None  # the module's tokens, not a docstring program's
    assert set(asked[-1]) == set(identifier_tokens(text))


def test_a_run_skips_the_floors_that_an_earlier_file_outranks(tmp_path, monkeypatch):
    """In one process the survey does not read, from the tree in hand, the floor of an unchanged
    file whose bound is older than a floor an earlier file has: settling never reads it, and
    the floor, file and reason found are the ones reading every floor gives."""
    from jaxmigrate.migrator import runner, surveyorder
    from jaxmigrate.migrator.clirun import floor_of_survey

    root = tmp_path / "project"
    paths: List[Path] = []
    for number, source in enumerate(_texts()):
        copied = root / f"f{number:04d}_{source.name}"
        copied.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, copied)
        paths.append(copied)
    for name, text in OPEN_BOUNDS.items():  # (the fixtures' floors are all read or under it)
        (root / name).write_text(text)
        paths.append(root / name)
    settings = dataclasses.replace(Settings(), survey=True, locate_fixes=False, first_party=())
    options = Options(floor=True)
    asked = []
    real = runner._may_set_floor

    def counted(text: str) -> bool:
        asked.append(real(text))
        return asked[-1]

    monkeypatch.setattr(runner, "_may_set_floor", counted)
    # every file surveyed, in order (none passed over: see tests/test_survey_reach.py)
    monkeypatch.setattr(surveyorder, "survey_reach_of", lambda path, settings, options: None)
    skipping = list(runner.run(paths, settings, CHECK, 1, options=options))
    assert surveyorder.Seen.floor is None  # (nothing kept for the next run)
    assert asked.count(False) > 10, asked.count(False)
    monkeypatch.setattr(runner, "_may_set_floor", lambda text: True)
    reading = list(runner.run(paths, settings, CHECK, 1, options=options))
    assert floor_of_survey(skipping) == floor_of_survey(reading)
    assert floor_of_survey(reading) is not None


def test_the_survey_skips_docstrings_once_no_fix_can_raise_its_floor(tmp_path, monkeypatch):
    from jaxmigrate.migrator import docs, runner
    from tests.test_cli import invoke

    (tmp_path / "a.py").write_text(  # a fix, and a floor (0.10.2) newer than any fix needs;
        # its shim, which the floor does not count, reaches as far as c.py's words
        "import jax\nimport jax.numpy as jnp\n"
        "try:\n    from jax.experimental.hijax import HiPrim\nexcept ImportError:\n    pass\n"
        "x = jax.experimental.mosaic.gpu.TMA_INDICES_4_LAYOUT\n\n\n"
        "def h(v: jnp.DeviceArray) -> jnp.DeviceArray:\n    return v\n"
    )
    (tmp_path / "c.py").write_text(  # read after it: its words reach 0.11.2
        "import jax\n# see jax.experimental.hijax.HiPrim\n\n\ndef f(g, x):\n"
        '    """Maps.\n\n    >>> jax.tree_map(g, x)\n    """\n    return g(x)\n'
    )
    real = docs.migrate_docstrings
    surveyed: List[str] = []

    def recording(text, settings, *args, **kwargs):  # noqa: ANN001, ANN202
        if settings.survey:
            surveyed.append(text)
        return real(text, settings, *args, **kwargs)

    monkeypatch.setattr(docs, "migrate_docstrings", recording)
    skipped = invoke(tmp_path, "--check", "-j", "1", "--no-cache")
    assert surveyed == [], surveyed  # (c.py was read after a.py set the floor)
    monkeypatch.setattr(runner, "_docstrings_cannot_raise_the_floor", lambda settings, text: False)
    read = invoke(tmp_path, "--check", "-j", "1", "--no-cache")
    assert len(surveyed) == 1 and "tree_map" in surveyed[0]
    assert "needs 0.10.2" in skipped.stderr and "a.py" in skipped.stderr
    assert (skipped.exit_code, skipped.stdout, skipped.stderr) == (
        read.exit_code,
        read.stdout,
        read.stderr,
    )


def test_a_name_jax_reintroduced_dates_nothing_through_an_old_member():
    """``jax.ad`` was a module alias up to 0.4.13 and is another namespace from 0.10.0: code
    reading ``jax.ad.zeros_like_p`` (neural-tangents 0.6.0) names the old one, so it does not
    set a floor of 0.10.0 (which raised a legacy project's whole target there)."""
    from jaxmigrate.rules._api_runs import reused

    assert reused("jax.ad") and not reused("jax.tree.map")
    old = "import jax\n\nRULES = {jax.ad.zeros_like_p: None}\n"
    assert floor_of(old) is None
    assert floor_of("import jax\n\nf = jax.tree.map\n") == (parse_version("0.4.25"), "jax.tree")


def test_a_name_jax_brought_back_dates_nothing_in_code_written_before_it():
    """JAX 0.9.0 removed ``batching.batch_subtrace`` and 0.11.1 exports the name again: oryx
    0.2.2 (``jax==0.2.26``) calls the old one, and its default target was raised to 0.11.1
    (Python 3.12 only), hiding the findings 0.10 needs.  Code written for a JAX before the
    return does not name the new one; where nothing says what it was written for, it still
    dates the code."""
    from jaxmigrate.migrator.source import source_range

    text = "from jax.interpreters import batching\n\nf = batching.batch_subtrace(g)\n"
    back = (parse_version("0.11.1"), "jax.interpreters.batching.batch_subtrace")
    assert floor_of(text) == back
    assert floor_of(text, source_range("0.2.26")) is None
    assert floor_of(text, source_range("0.11.1..")) == back
    assert floor_of(text, source_range(None)) == back
