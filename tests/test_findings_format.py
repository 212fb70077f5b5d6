"""Findings read like ruff's: one line of at most 100 characters, what is wrong and the fix in
a few words (the rest is the finding's ``detail``), and one finding per file and module for
the "this module is internal/removed" reports, with the count of the uses."""

from __future__ import annotations

import dataclasses
import json

import pytest

from jaxmigrate.migrator import Settings, migrate_source
from jaxmigrate.migrator.diagnostics import MESSAGE_LIMIT, Diagnostic
from jaxmigrate.migrator.report import as_json, as_sarif
from jaxmigrate.migrator.runner import FileResult
from tests.fixture_support import fixture_cases, fixture_settings


def _fixture_findings():
    """Every finding and fix of every fixture, as its settings run it and, where they apply
    unsafe fixes, without them too (the held-back fixes are findings then)."""
    for case, source, _expected in fixture_cases():
        text = source.read_text(encoding="utf-8")
        settings = fixture_settings(text)
        variants = [settings]
        if settings.unsafe_fixes:
            variants.append(dataclasses.replace(settings, unsafe_fixes=False))
        for variant in variants:
            result = migrate_source(text, variant)
            for finding in result.findings:
                yield case, finding, False
            for fix in result.fixes:  # a fix's message is printed the same way (--show-fixes)
                yield case, fix, True


@pytest.fixture(scope="module")
def fixture_findings():
    return list(_fixture_findings())


def test_every_fixture_finding_is_one_short_line(fixture_findings):
    long = {}
    for case, finding, _fix in fixture_findings:
        message = finding.message
        assert "\n" not in message and "\r" not in message, (case, finding)
        if len(message) > MESSAGE_LIMIT:
            long.setdefault(finding.code, []).append((case, finding.line, message))
    assert not long


def test_an_unsafe_fix_held_back_says_so_briefly(fixture_findings):
    unsafe = [f for _case, f, fix in fixture_findings if f.safety == "unsafe" and not fix]
    assert unsafe and all(f.message.endswith(" [unsafe fix]") for f in unsafe)


PXLA = """\
from jax.interpreters import pxla

spec = pxla.ShardingSpec
chunks = pxla.Chunked([2])
axis = pxla.ShardedAxis(0)
"""
ONE_USE = "from jax.interpreters import pxla\n\nspec = pxla.ShardingSpec\n"


def _findings(text: str, code: str):
    return [d for d in migrate_source(text, Settings()).findings if d.code == code]


def test_a_removed_internal_module_is_reported_once_per_file_with_its_uses():
    found = _findings(PXLA, "JAX805")
    assert [(d.line, d.message.endswith("(3 uses)")) for d in found] == [(3, True)]
    assert "no public replacement" in found[0].detail
    # the other uses are counted in it: the backstop (JAX901) does not speak on their lines
    assert [d.line for d in migrate_source(PXLA, Settings()).findings] == [3]


def test_a_suppressed_use_is_neither_reported_nor_counted():
    text = PXLA.replace("ShardingSpec\n", "ShardingSpec  # jaxmigrate: ignore[JAX805]\n")
    found = _findings(text, "JAX805")
    assert [(d.line, d.message.endswith("(2 uses)")) for d in found] == [(4, True)]


def test_one_use_has_no_count():
    (found,) = _findings(ONE_USE, "JAX805")
    assert "uses)" not in found.message


def test_a_held_back_deletion_is_the_one_finding_of_its_private_import():
    """Without ``--unsafe-fixes`` the deletion of an unused private import is reported, with
    the privacy in its detail; the module is not reported again on the same import."""
    text = "from jax._src.lax.lax import remaining\n\n\ndef f(x):\n    return x\n"
    settings = Settings(source_version="0.2.21", target_version="0.4.13")
    (found,) = [d for d in migrate_source(text, settings).findings if d.code == "JAX902"]
    assert found.message.startswith("deleted unused private import"), found
    assert found.message.endswith(" [unsafe fix]") and "private" in found.detail
    unsafe = dataclasses.replace(settings, unsafe_fixes=True)
    assert migrate_source(text, unsafe).output == "def f(x):\n    return x\n"


def test_a_private_module_is_reported_once_per_file_with_its_uses():
    text = (
        "from jax._src import core\n"
        "import jax._src.core\n\n"
        "def f(x):\n"
        "    return isinstance(x, core.Tracer) or core.get_aval(x)\n"
    )
    found = _findings(text, "JAX902")
    assert len(found) == 1 and found[0].line == 1, found
    assert found[0].message.startswith("jax._src.core is private JAX API")
    assert found[0].message.endswith(" uses)") and "compatibility promise" in found[0].detail


def test_the_detail_goes_into_json_and_sarif_not_into_the_message():
    (finding,) = _findings(ONE_USE, "JAX805")
    assert finding.detail and len(finding.message) <= MESSAGE_LIMIT
    result = FileResult("m.py", findings=[finding])
    data = json.loads(json.dumps(as_json([result], "check", "0.4.1")))
    assert data["files"][0]["findings"][0]["detail"] == finding.detail
    (sarif,) = as_sarif([result], "check")["runs"][0]["results"]
    assert sarif["message"]["text"] == finding.message
    assert sarif["properties"]["detail"] == finding.detail
    assert Diagnostic(**data["files"][0]["findings"][0]) == finding  # the cache reads it back


XLA_CALL = "import jax\n\nprimitive = jax.interpreters.xla.xla_call_p\n"


@pytest.mark.parametrize(
    "target, upper, message, detail",
    [
        # JAX's message names jax.experimental.pjit.pjit_p, which JAX 0.7.0 renamed jit_p
        ("0.4.30", None, "see the JAX 0.4.11 changelog", "not every release from 0.4.30 has"),
        # on a range that has pjit_p throughout, JAX's own words stand
        ("0.4.13", "0.4.30", "use jax.experimental.pjit.pjit_p", "JAX says"),
    ],
)
def test_a_finding_never_names_a_replacement_the_range_lacks(target, upper, message, detail):
    """haiku 0.0.5's ``xla_call_p``: JAX's deprecation message names a name JAX removed later;
    the finding names what the target range has, or the changelog."""
    result = migrate_source(XLA_CALL, Settings(target_version=target, target_upper=upper))
    (finding,) = [d for d in result.findings if "xla_call_p" in d.message]
    assert message in finding.message and detail in finding.detail, finding


@pytest.mark.parametrize(
    "target, upper, named",
    [
        ("0.4.1", None, "jax.tree_util.tree_leaves"),  # the alternative every release has
        ("0.4.25", None, "jax.tree.leaves"),
        ("0.4.1", "0.4.20", "jax.tree_util.tree_leaves"),
    ],
)
def test_of_the_names_jax_offers_the_one_the_range_has_is_named(target, upper, named):
    """``jax.tree_leaves was removed in JAX v0.6.0: use jax.tree.leaves (jax v0.4.25 or
    newer) or jax.tree_util.tree_leaves (any JAX version).``"""
    from jaxmigrate.migrator.version import parse_version
    from jaxmigrate.rules import missing_api
    from jaxmigrate.rules._api_history import history

    said = history().lookup("jax.tree_leaves").message
    use = missing_api._USE.search(said)
    range_ = dataclasses.make_dataclass("Range", ["target", "upper"])
    within = range_(parse_version(target), upper and parse_version(upper))
    assert missing_api._named_now(said, use, within) == named
