"""Each rule's own documentation examples are tests, so docs cannot drift from behaviour."""

from __future__ import annotations

import ast

import pytest

from jaxmigrate.migrator import Settings, migrate_source
from jaxmigrate.migrator.explain import render
from jaxmigrate.migrator.rule import Safety, all_rules
from jaxmigrate.migrator.version import LATEST_KNOWN_JAX, parse_version

RULES = all_rules()
EXAMPLES = [
    pytest.param(rule, example, id=f"{code}-{number}")
    for code, rule in RULES.items()
    for number, example in enumerate(rule.examples, start=1)
]


@pytest.mark.parametrize("rule,example", EXAMPLES)
def test_documentation_example(rule, example):
    settings = Settings(
        select=(rule.code,),
        target_version=example.target_version or Settings().target_version,
        unsafe_fixes=example.unsafe_fixes,
        source_version=example.source_version,
        source_explicit=example.source_version is not None,
    )
    result = migrate_source(example.before, settings)
    assert result.output == example.after
    ast.parse(result.output)
    if example.after == example.before:
        assert result.findings, "a report-only example must produce a finding"
    assert migrate_source(result.output, settings).output == result.output


@pytest.mark.parametrize("code", list(RULES))
def test_rule_metadata(code):
    rule = RULES[code]
    assert rule.summary and rule.doc.strip(), "every rule documents itself"
    assert rule.examples, "every rule has at least one before/after example"
    assert isinstance(rule.safety, Safety)
    for version in (rule.needs_jax, rule.deprecated_in, rule.removed_in):
        if version is not None:
            parse_version(version)
    running = rule.for_target(parse_version(LATEST_KNOWN_JAX))  # what it looks for on a target
    # (the words gate 1 looks for: from what it declares, or declared as such, JAX106's)
    assert running.trigger_words, "a rule must declare triggers"
    text = render(rule)
    assert rule.code in text and "Before:" in text
