"""Property tests: on any program the tool never crashes, its output parses, and a second run
changes nothing.  Programs come from hypothesmith (generated from Python's grammar), alone and
with legacy JAX snippets from the fixtures spliced in."""

from __future__ import annotations

import ast
import os
from pathlib import Path

import hypothesmith
from hypothesis import given, strategies as st

from jaxmigrate.migrator import MigrationError, Settings, migrate_source
from jaxmigrate.migrator.errors import SourceSyntaxError
from tests.fixture_support import FIXTURES, property_profile

SNIPPETS = sorted(p.read_text() for p in FIXTURES.glob("*/*.before.py"))
ALL_RULES = Settings(unsafe_fixes=True)
EXAMPLES = int(os.environ.get("JAXMIGRATE_PROPERTY_EXAMPLES", "40"))
PROFILE = property_profile(EXAMPLES)


def check(text: str) -> None:
    try:
        result = migrate_source(text, ALL_RULES)
    except SourceSyntaxError:
        return  # hypothesmith can emit programs LibCST rejects; that is reported, not a crash
    except MigrationError as error:
        if "does not parse" in error.message or "internal error" in error.message:
            raise
        return
    if result.changed:
        ast.parse(result.output)
        again = migrate_source(result.output, ALL_RULES)
        assert again.output == result.output


@PROFILE
@given(hypothesmith.from_grammar())
def test_generated_programs(text):
    check(text)


@PROFILE
@given(hypothesmith.from_node())
def test_generated_syntax_trees(text):
    check(text)


@PROFILE
@given(hypothesmith.from_node(), st.sampled_from(SNIPPETS), st.booleans())
def test_generated_programs_with_legacy_snippets(text, snippet, before):
    check(snippet + "\n" + text if before else text + "\n" + snippet)


def test_a_block_written_where_the_first_indent_mixes_whitespace():
    """A rule's new block (JAX304's loop) took LibCST's default indent, the module's first one:
    here two spaces, a tab and form feeds, which mixed with the function's four spaces does not
    parse.  Found by the test above; a new block keeps four spaces there."""
    text = "try:\n  \t \x0c \x0c pass\nfinally:\n  pass\n\n"
    snippet = next(s for s in SNIPPETS if "from_batched_callback_with_devices(" in s)
    result = migrate_source(text + snippet, ALL_RULES)
    assert "JAX304" in {d.code for d in result.fixes}
    ast.parse(result.output)
    assert "\n        arr_groups.setdefault(" in result.output


def _corpus_files():
    """Real code no one here wrote: the installed jax and numpy sources."""
    import jax
    import numpy

    for package in (jax, numpy):
        root = Path(package.__file__).parent
        yield from sorted(root.rglob("*.py"))


def test_installed_packages_migrate_cleanly():
    crashed, unparsable, unstable = [], [], []
    for path in _corpus_files():
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
        try:
            result = migrate_source(text, ALL_RULES)
        except SourceSyntaxError:
            continue
        except MigrationError as error:
            crashed.append(f"{path}: {error.message}")
            continue
        if result.changed:
            try:
                ast.parse(result.output)
            except SyntaxError as error:
                unparsable.append(f"{path}: {error}")
                continue
            if migrate_source(result.output, ALL_RULES).output != result.output:
                unstable.append(str(path))
    assert not crashed, crashed[:5]
    assert not unparsable, unparsable[:5]
    assert not unstable, unstable[:5]
