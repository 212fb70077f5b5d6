"""The engine's handling of what a rule does, shown with throwaway rules registered for one
test: a rule that never settles, one that raises, one that writes code that does not parse,
an unsafe fix (a finding unless enabled), and an edit that starts using an import."""

from __future__ import annotations

import libcst as cst
import pytest

from jaxmigrate.migrator import MigrationError, Settings, migrate_source
from jaxmigrate.migrator.rule import REGISTRY, Rule, Safety


@pytest.fixture
def temporary_rule():
    added = []

    def register(cls):
        added.append(cls.code)
        return REGISTRY[cls.code]

    yield register
    for code in added:
        REGISTRY.pop(code, None)


def test_non_converging_rule_is_an_error(temporary_rule):
    class Flip(Rule):
        code = "JAX990"
        name = "test-flip"
        summary = "flips a name back and forth"
        safety = Safety.SAFE
        names = frozenset({"mod.a", "mod.b"})

        def visit_name(self, site, ctx):
            if not site.is_import:
                other = "b" if site.qualname == "mod.a" else "a"
                ctx.replace(site.node, cst.Attribute(cst.Name("mod"), cst.Name(other)), "flip")

    temporary_rule(Flip)
    with pytest.raises(MigrationError, match="did not settle"):
        migrate_source("import mod\nmod.a\n", Settings(select=("JAX990",)))


def test_crashing_rule_is_an_internal_error(temporary_rule):
    class Crash(Rule):
        code = "JAX991"
        name = "test-crash"
        summary = "raises"
        safety = Safety.SAFE
        names = frozenset({"mod.a"})

        def visit_name(self, site, ctx):
            raise RuntimeError("boom")

    temporary_rule(Crash)
    result = migrate_source("import mod\nmod.a\n", Settings(select=("JAX991",)))
    assert result.output == "import mod\nmod.a\n"  # the site is lost, not the file
    assert [(e.code, e.line, e.message) for e in result.errors] == [
        ("JAX991", 2, "RuntimeError: boom")
    ]


def test_unparsable_output_is_refused(temporary_rule):
    class Broken(Rule):
        code = "JAX992"
        name = "test-broken"
        summary = "produces invalid code"
        safety = Safety.SAFE
        names = frozenset({"mod.a"})

        def visit_name(self, site, ctx):
            if not site.is_import:
                ctx.replace(site.node, cst.Name("class"), "break it")  # a keyword

    temporary_rule(Broken)
    with pytest.raises(MigrationError, match="does not parse"):
        migrate_source("import mod\nmod.a\n", Settings(select=("JAX992",)))


def test_unsafe_fixes_are_findings_unless_enabled(temporary_rule):
    class Risky(Rule):
        code = "JAX993"
        name = "test-risky"
        summary = "an unsafe rename"
        safety = Safety.UNSAFE
        names = frozenset({"mod.a"})

        def visit_name(self, site, ctx):
            if not site.is_import:
                ctx.replace(site.node, cst.Attribute(cst.Name("mod"), cst.Name("b")), "a -> b")

    temporary_rule(Risky)
    source = "import mod\nmod.a\n"
    reported = migrate_source(source, Settings(select=("JAX993",)))
    assert reported.output == source
    assert [(f.line, f.code, f.safety) for f in reported.findings] == [(2, "JAX993", "unsafe")]
    assert "--unsafe-fixes" in reported.findings[0].message
    fixed = migrate_source(source, Settings(select=("JAX993",), unsafe_fixes=True))
    assert fixed.output == "import mod\nmod.b\n"
    assert not fixed.findings


def test_an_import_an_edit_starts_to_use_is_not_removed(temporary_rule):
    class UseIt(Rule):
        code = "JAX994"
        name = "test-use-it"
        summary = "rewrites mod.a to the otherwise unused name helper"
        safety = Safety.SAFE
        names = frozenset({"mod.a", "lib.helper"})  # an unused lib.helper import is dead

        def visit_name(self, site, ctx):
            if not site.is_import and site.qualname == "mod.a":
                ctx.replace(site.node, cst.Name("helper"), "a -> helper")

    temporary_rule(UseIt)
    # The unused ``helper`` import would be cleaned up, but this round's edit starts using it.
    out = migrate_source(
        "import mod\nfrom lib import helper\nx = mod.a\n", Settings(select=("JAX994",))
    )
    assert out.output == "from lib import helper\nx = helper\n"
