"""What a user is pointed at: every rule cites public sources, and nothing shipped cites the
private research notebook the facts were collected in (``../shared/jax_api_catalog.md``)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from jaxmigrate.migrator.explain import render
from jaxmigrate.migrator.references import RELEASES, Reference, section_id
from jaxmigrate.migrator.rule import all_rules

ROOT = Path(__file__).resolve().parent.parent
CATALOG = ROOT.parent / "shared" / "jax_api_catalog.md"

# The catalog's id scheme: table rows ``| ARR-1 | ...`` (prefix, dash, number), the citation
# marks of its legend (``PROBE``, ``MIG``, ``PMAPDOC``, ``CL 0.4.7``, ``F path@tag``) and its
# numbered list of surprises ("gotcha 2", "12.5").  These prefixes are the ones it had when
# this test was written; when the catalog is beside the checkout, its current ones are added.
KNOWN_PREFIXES = {"ARR", "GDA", "PJ", "MH", "DEV", "CFG", "MESH", "SM", "TREE", "OTH"}


def _prefixes() -> set:
    prefixes = set(KNOWN_PREFIXES)
    if CATALOG.exists():
        text = CATALOG.read_text(encoding="utf-8")
        prefixes |= set(re.findall(r"^\| ([A-Z]+)-\d+ \|", text, re.M))
    return prefixes


def catalog_citation() -> re.Pattern:
    ids = "|".join(sorted(_prefixes()))
    return re.compile(
        rf"\b(?:{ids})-\d+\b"  # a row id
        r"|\b(?:PROBE|PMAPDOC|MIG)\b"  # its citation marks
        r"|\bCL (?:jaxlib )?\d+\.\d+"  # "CL 0.4.7": its changelog shorthand
        r"|\bF jax(?:lib)?/\S*@"  # "F jax/x.py@0.4.8": a file at a tag, its way
        r"|\b[Gg]otchas? \d+"  # its list of surprises
        r"|\bcatalog\b"  # the notebook itself
        r"|jax_api_catalog"
    )


def shipped_files():
    for folder in ("migrator", "rules", "tests", "fixtures", "bench", "scripts"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if any(part.startswith(".") for part in path.relative_to(ROOT).parts):
                continue  # generated and ignored (bench/.corpus)
            if path.name != Path(__file__).name:  # this file spells the patterns out
                yield path
    for name in ("README.md", "pyproject.toml", ".pre-commit-hooks.yaml", "fixtures/README.md"):
        if (ROOT / name).exists():
            yield ROOT / name
    yield from sorted((ROOT / "docs").glob("*.md"))  # what moved out of the README


def test_the_pattern_finds_the_catalogs_ids():
    pattern = catalog_citation()
    for cited in (
        "catalog row ARR-1",
        "(PROBE 0.10.2)",
        "MIG",
        "CL 0.4.7",
        "gotcha 2",
        "TREE-5",
        "F jax/experimental/pjit.py@0.4.8",
        "PMAPDOC",
        "MESH-11",
    ):
        assert pattern.search(cited), cited
    for fine in ("jax 0.4.7 release notes", "JAX101", "SHA-256", "MIGRATION.md", "clock 3"):
        assert not pattern.search(fine), fine


@pytest.mark.parametrize("path", list(shipped_files()), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_file_of_the_project_cites_the_private_catalog(path):
    pattern = catalog_citation()
    hits = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if pattern.search(line)
    ]
    assert not hits, (
        "cite the public source (release notes, guide, API page) instead:\n" + "\n".join(hits)
    )


@pytest.mark.parametrize("code", sorted(all_rules()))
def test_explain_pages_cite_public_sources_only(code):
    rule = all_rules()[code]
    pattern = catalog_citation()
    for markdown in (False, True):
        page = render(rule, markdown=markdown)
        assert not pattern.search(page), page
        for reference in rule.references:
            assert reference.url in page


@pytest.mark.parametrize("code", sorted(all_rules()))
def test_every_rule_cites_the_releases_it_names(code):
    rule = all_rules()[code]
    assert rule.references, "a rule says where its facts come from"
    for reference in rule.references:
        assert isinstance(reference, Reference) and reference.title
        assert re.match(
            r"https://(docs\.jax\.dev/en/latest/|github\.com/jax-ml/jax/)", reference.url
        )
        if reference.url.startswith(RELEASES):
            assert re.fullmatch(r"jax(lib)?-v\d+\.\d+\.\d+", reference.url[len(RELEASES) :])
    titles = " ".join(r.title for r in rule.references)
    for version in (rule.deprecated_in, rule.removed_in):
        if version is not None:
            assert re.search(rf"\b{re.escape(version)}\b", titles), (
                f"nothing cited for JAX {version}"
            )


def test_guide_anchors_are_the_ids_sphinx_gives_the_sections():
    # both ids as JAX's own documentation and changelog link them
    assert section_id("Handling of host local inputs to pjit like batch, etc") == (
        "handling-of-host-local-inputs-to-pjit-like-batch-etc"
    )
    assert section_id("jax.Array migration") == "jax-array-migration"
    assert section_id("GDA’s API name changes") == "gdas-api-name-changes"


def _imports(path: Path) -> set:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_the_reporters_do_not_import_each_other():
    """The references live on the rules, so the reporters need nothing from each other."""
    report = _imports(ROOT / "migrator" / "report.py")
    markdown = _imports(ROOT / "migrator" / "markdown_report.py")
    assert "jaxmigrate.migrator.markdown_report" not in report
    assert "jaxmigrate.migrator.report" in markdown  # one way only
    assert not {
        m for m in _imports(ROOT / "migrator" / "references.py") if m.startswith("jaxmigrate")
    }
