"""Every fixture: exact output, idempotence, output parses, expected findings (on the
lines of the output, and on the lines of the input for the modes that do not rewrite it).

Adding a fixture file is enough to add a case; no test code changes.
"""

from __future__ import annotations

import ast
import difflib

import pytest

from jaxmigrate.migrator import linemap, migrate_source
from jaxmigrate.migrator.rule import all_rules
from tests.fixture_support import FIXTURES, expected_findings, fixture_cases, fixture_settings

CASES = fixture_cases()


def _diff(expected: str, actual: str) -> str:
    return "".join(
        difflib.unified_diff(
            expected.splitlines(True), actual.splitlines(True), "expected", "actual"
        )
    )


@pytest.mark.parametrize("source,expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_fixture(source, expected):
    text = source.read_text(encoding="utf-8")
    assert expected.exists(), f"{source.name} has no {expected.name}"
    want = expected.read_text(encoding="utf-8")
    settings = fixture_settings(text)

    result = migrate_source(text, settings)
    assert not result.errors, [e.message for e in result.errors]  # a rule that raised on a site
    assert result.output == want, "output differs:\n" + _diff(want, result.output)
    ast.parse(result.output)
    found = {(d.line, d.code) for d in result.findings}
    assert found == expected_findings(want), [d for d in result.findings]
    # --check and --diff leave the file as it is: there the findings point at its own lines
    as_read = {(d.line, d.code) for d in linemap.as_read(result.findings, text, result.output)}
    assert as_read == expected_findings(text), sorted(as_read ^ expected_findings(text))
    if source != expected:
        assert result.fixes, "a before/after pair must record at least one fix"
    else:
        assert not result.fixes

    again = migrate_source(result.output, settings)
    assert again.output == result.output, "second run changed:\n" + _diff(
        result.output, again.output
    )
    assert not again.fixes


def test_every_fixture_directory_is_a_rule():
    names = {rule.name for rule in all_rules().values()}
    directories = {path.name for path in FIXTURES.iterdir() if path.is_dir()}
    # seeds: the seed documents' examples; projects: whole projects with requirement files
    assert directories <= names | {"seeds", "projects"}, directories - names


def test_every_rule_has_fixtures():
    directories = {path.name for path in FIXTURES.iterdir() if path.is_dir()}
    missing = [rule.slug for rule in all_rules().values() if rule.name not in directories]
    assert not missing


def test_every_pair_is_complete():
    for after in FIXTURES.glob("*/*.after.py"):
        assert after.with_name(after.name.replace(".after.py", ".before.py")).exists(), after
