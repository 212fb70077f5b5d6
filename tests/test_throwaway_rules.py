"""The engine's handling of what a rule does, shown with throwaway rules registered for one
test: a rule that never settles, one that raises, one that writes code that does not parse,
an unsafe fix (a finding unless enabled), and an edit that starts using an import."""

from __future__ import annotations

from typing import Any, Callable, Tuple

import libcst as cst
import pytest

from jaxmigrate.migrator import MigrationError, Settings, migrate_source
from jaxmigrate.migrator.rule import REGISTRY, Rule, Safety


@pytest.fixture
def throwaway():
    """``throwaway(code, visit, safety=..., names=...)`` registers a rule for this test whose
    ``visit_name`` is ``visit(site, ctx)``; it is unregistered afterwards."""
    added = []

    def register(
        code: str,
        visit: Callable[[Any, Any], None],
        safety: Safety = Safety.SAFE,
        names: Tuple[str, ...] = ("mod.a",),
    ) -> None:
        attributes = {
            "__doc__": "A throwaway rule for one test.\n\nIt visits ``names``.",
            "names": frozenset(names),
            "visit_name": lambda self, site, ctx: visit(site, ctx),
        }
        type(f"Throwaway{code}", (Rule,), attributes, code=code, safety=safety)
        added.append(code)
        assert code in REGISTRY

    yield register
    for code in added:
        REGISTRY.pop(code, None)


def test_non_converging_rule_is_an_error(throwaway):
    def visit(site, ctx):
        if not site.is_import:
            other = "b" if site.qualname == "mod.a" else "a"
            ctx.replace(site.node, cst.Attribute(cst.Name("mod"), cst.Name(other)), "flip")

    throwaway(
        "JAX990",
        visit,
        names=("mod.a", "mod.b"),
    )
    with pytest.raises(MigrationError, match="did not settle"):
        migrate_source("import mod\nmod.a\n", Settings(select=("JAX990",)))


def test_crashing_rule_is_an_internal_error(throwaway):
    def visit(site, ctx):
        raise RuntimeError("boom")

    throwaway("JAX991", visit)
    result = migrate_source("import mod\nmod.a\n", Settings(select=("JAX991",)))
    assert result.output == "import mod\nmod.a\n"  # the site is lost, not the file
    assert [(e.code, e.line, e.message) for e in result.errors] == [
        ("JAX991", 2, "RuntimeError: boom")
    ]


def test_unparsable_output_is_refused(throwaway):
    def visit(site, ctx):
        if not site.is_import:
            ctx.replace(site.node, cst.Name("class"), "break it")  # a keyword

    throwaway("JAX992", visit)
    with pytest.raises(MigrationError, match="does not parse"):
        migrate_source("import mod\nmod.a\n", Settings(select=("JAX992",)))


def test_unsafe_fixes_are_findings_unless_enabled(throwaway):
    def visit(site, ctx):
        if not site.is_import:
            ctx.replace(site.node, cst.Attribute(cst.Name("mod"), cst.Name("b")), "a -> b")

    throwaway("JAX993", visit, safety=Safety.UNSAFE)
    source = "import mod\nmod.a\n"
    reported = migrate_source(source, Settings(select=("JAX993",)))
    assert reported.output == source
    assert [(f.line, f.code, f.safety) for f in reported.findings] == [(2, "JAX993", "unsafe")]
    assert reported.findings[0].message == "a -> b [unsafe fix]"
    assert "--unsafe-fixes applies it" in reported.findings[0].detail
    fixed = migrate_source(source, Settings(select=("JAX993",), unsafe_fixes=True))
    assert fixed.output == "import mod\nmod.b\n"
    assert not fixed.findings


def test_an_import_an_edit_starts_to_use_is_not_removed(throwaway):
    def visit(site, ctx):
        if not site.is_import and site.qualname == "mod.a":
            ctx.replace(site.node, cst.Name("helper"), "a -> helper")

    throwaway(
        "JAX994",
        visit,
        names=("mod.a", "lib.helper"),
    )  # an unused lib.helper import is dead
    # The unused ``helper`` import would be cleaned up, but this round's edit starts using it.
    out = migrate_source(
        "import mod\nfrom lib import helper\nx = mod.a\n", Settings(select=("JAX994",))
    )
    assert out.output == "from lib import helper\nx = helper\n"
