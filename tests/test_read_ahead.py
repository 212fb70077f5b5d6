"""The survey's bounds read every file's identifiers before the run reads the file again
(``migrator.surveyorder``): the distinct identifiers are kept, packed, and the run's gate 1
takes them instead of reading the text again (``migrator.plan.read_ahead``)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import FrozenSet, List

import pytest
from click.testing import CliRunner
from hypothesis import given, strategies as st

from jaxmigrate.migrator import plan
from jaxmigrate.migrator.cli import cli
from jaxmigrate.migrator.plan import forget_ahead, identifier_tokens, read_ahead, read_tokens
from tests.fixture_support import FIXTURES

TEXT = "import jax\n\nx = jax.tree_map(f, y)  # tree_map\nz_1 = 2e5 + 0x1f\n"
OTHER = "import jax.numpy as jnp\n\n\ndef f(x: jnp.DeviceArray):\n    return x\n"


def _copy(text: str) -> str:
    """An equal text that is another object (as the run reads a file again)."""
    return "".join(list(text))


_PATTERN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def test_the_tokens_are_those_the_pattern_finds_in_every_fixture():
    """:func:`read_tokens` splits ASCII text in C; it must give what the pattern finds (gate 1
    and gate 1b read their words from these tokens), on every fixture, before and after."""
    paths = sorted(FIXTURES.glob("*/*.py"))
    assert len(paths) > 100
    for path in paths:
        text = path.read_text(encoding="utf-8")
        assert read_tokens(text) == frozenset(_PATTERN.findall(text)), path


# What cuts or starts a token, and what only looks like one: digits before letters (a number,
# ``0x1f``, ``2e5``), underscores, every ASCII punctuation and blank, a non-ASCII letter.
_PIECES = st.sampled_from(
    ["a", "Z", "_", "0", "9", "x1", "2e5", "0x1f", "__", "1_0", "é", "ß", "\u00b2", "\u2028"]
    + [chr(c) for c in range(128) if not chr(c).isalnum()]
)


@given(st.lists(_PIECES, max_size=40))
def test_the_tokens_are_those_the_pattern_finds_in_any_text(pieces: List[str]):
    text = "".join(pieces)
    assert read_tokens(text) == frozenset(_PATTERN.findall(text))


def test_a_text_read_ahead_gives_its_distinct_identifiers_once():
    forget_ahead()
    read_ahead(TEXT, set(identifier_tokens(TEXT)))
    again = _copy(TEXT)
    assert again is not TEXT
    tokens = identifier_tokens(again)
    assert sorted(tokens) == sorted(set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", TEXT)))
    assert not plan._AHEAD  # given once: a later text with the same words reads them itself
    assert set(identifier_tokens(_copy(TEXT))) == set(tokens)


def test_only_an_equal_text_takes_what_was_read_ahead():
    forget_ahead()
    read_ahead(TEXT, {"not", "these"})  # (what another text would have: never asked for)
    assert identifier_tokens(_copy(OTHER)) == set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", OTHER))
    assert identifier_tokens(_copy(TEXT)) == {"not", "these"}
    forget_ahead()


def test_settling_a_floor_peeks_at_what_was_read_ahead():
    """``tokens_ahead`` (the floors the survey settles read the words of files it did not
    migrate) gives the tokens without using them up: the run's gate 1 still takes them."""
    forget_ahead()
    assert plan.tokens_ahead(_copy(OTHER)) is None
    read_ahead(TEXT, {"not", "these"})
    assert plan.tokens_ahead(_copy(TEXT)) == {"not", "these"}
    assert plan.tokens_ahead(_copy(TEXT)) == {"not", "these"}
    assert identifier_tokens(_copy(TEXT)) == {"not", "these"}
    forget_ahead()


def test_a_text_with_no_identifier_read_ahead():
    forget_ahead()
    read_ahead("1 + 2\n", set())
    assert identifier_tokens(_copy("1 + 2\n")) == frozenset()


def test_nothing_is_read_ahead_beyond_the_limit(monkeypatch):
    forget_ahead()
    monkeypatch.setattr(plan, "AHEAD_LIMIT_CHARS", 0)
    read_ahead(TEXT, {"import", "jax"})
    read_ahead(OTHER, {"jnp"})
    assert list(plan._AHEAD.values()) == ["import\0jax"] or list(plan._AHEAD.values()) == [
        "jax\0import"
    ]
    forget_ahead()


def _runner() -> CliRunner:
    try:
        return CliRunner(mix_stderr=False)  # type: ignore[call-arg]  # click < 8.2
    except TypeError:
        return CliRunner()


@pytest.mark.usefixtures("fixes_through_libcst")  # (no read of the new text's words either)
def test_what_the_bounds_read_is_not_read_again(tmp_path: Path, monkeypatch):
    """A default-target run over two files (the survey's bounds, its migration of the file
    that names a JAX newer than the first jax.Array release, then the run): every reader of
    each text after its bound, in the survey and the run, takes what the bound read, and says
    and finds the same as reading the text again."""
    newer = TEXT + "t = jax.typeof\n"  # (the other file's floor cannot pass its)
    (tmp_path / "a.py").write_text(newer, encoding="utf-8")
    (tmp_path / "b.py").write_text(OTHER, encoding="utf-8")
    args = [str(tmp_path), "--check", "--no-cache", "-j", "1"]
    read: List[str] = []
    real = plan.read_tokens

    def counting(text: str) -> FrozenSet[str]:
        read.append(text)
        return real(text)

    monkeypatch.setattr(plan, "read_tokens", counting)
    ahead = _runner().invoke(cli, args)
    # the bounds alone: the survey's migration of a file leaves what its bound read for the
    # run (plan.identifier_tokens), and the other's run takes its bound's
    assert sorted(read) == sorted([newer, OTHER])
    read.clear()
    monkeypatch.setattr(plan, "read_ahead", lambda text, distinct: None)
    again = _runner().invoke(cli, args)
    # the survey's migration, its narrowed reaches and the run read them again
    assert sorted(read) == sorted([newer] * 4 + [OTHER] * 3)
    assert (ahead.exit_code, ahead.stdout) == (again.exit_code, again.stdout)
    assert ahead.exit_code == 1 and "2 files would change" in ahead.stdout + ahead.stderr
