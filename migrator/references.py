"""The public sources a rule cites: JAX release notes, migration guides, documentation pages.

A rule lists them in its ``references`` (see :class:`migrator.rule.Rule`); ``jaxmigrate
explain``, the text and Markdown reports, ``--format json`` and SARIF all read them from
there, so a rule's sources are stated once.  Every address is a public page: a JAX release's
notes (the changelog entry of that version), a section of a JAX guide, an API page.
"""

from __future__ import annotations

import dataclasses
import re
import unicodedata

DOCS = "https://docs.jax.dev/en/latest/"
CHANGELOG = DOCS + "changelog.html"
RELEASES = "https://github.com/jax-ml/jax/releases/tag/"
SOURCE = "https://github.com/jax-ml/jax/blob/"


@dataclasses.dataclass(frozen=True)
class Reference:
    """A titled link to a public document."""

    title: str
    url: str

    def as_dict(self) -> dict:
        return {"title": self.title, "url": self.url}

    @property
    def is_release_notes(self) -> bool:
        return self.url.startswith(RELEASES) or self.url.startswith(CHANGELOG)


def release_notes(version: str, what: str = "", package: str = "jax") -> Reference:
    """The changelog entry of one JAX (or jaxlib) release, on the release's own page."""
    title = f"{package} {version} release notes" + (f": {what}" if what else "")
    return Reference(title, f"{RELEASES}{package}-v{version}")


def source_at(version: str, path: str, what: str = "") -> Reference:
    """A file of JAX's source at a release tag (for facts the changelog does not record)."""
    title = f"{path} in jax {version}" + (f": {what}" if what else "")
    return Reference(title, f"{SOURCE}jax-v{version}/{path}")


def section_id(title: str) -> str:
    """The HTML id Sphinx gives a section titled ``title`` (docutils' ``make_id``)."""
    text = unicodedata.normalize("NFKD", title.lower()).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^a-z0-9]+", "-", " ".join(text.split()))
    return re.sub(r"^[-0-9]+|-+$", "", text)


def _guide(page: str, name: str):  # noqa: ANN202
    def section(title: str = "") -> Reference:
        if not title:
            return Reference(name, DOCS + page)
        return Reference(f"{name}: {title}", f"{DOCS}{page}#{section_id(title)}")

    return section


# The guides a migration needs, by section title as JAX's documentation spells it.
array_migration = _guide("jax_array_migration.html", "jax.Array migration guide")
pmap_migration = _guide("migrate_pmap.html", "Migrating to the new jax.pmap")
shard_map_guide = _guide("notebooks/shard_map.html", "JAX guide to shard_map")
explicit_sharding = _guide("notebooks/explicit-sharding.html", "JAX guide to explicit sharding")
pytrees = _guide("working-with-pytrees.html", "Working with pytrees")
aot = _guide("aot.html", "Ahead-of-time lowering and compilation")
api_compatibility = _guide("api_compatibility.html", "JAX API compatibility policy")


def api(name: str) -> Reference:
    """The API page of a public JAX name (``jax.make_mesh``)."""
    return Reference(f"{name} API documentation", f"{DOCS}_autosummary/{name}.html")


def commit(sha: str, what: str) -> Reference:
    """A JAX commit, for a change no changelog entry records."""
    return Reference(f"JAX commit {sha}: {what}", f"https://github.com/jax-ml/jax/commit/{sha}")


def module(name: str) -> Reference:
    """The page of a public JAX module (``jax.sharding``)."""
    return Reference(f"{name} module documentation", f"{DOCS}{name}.html")


CHANGELOG_PAGE = Reference("JAX changelog", CHANGELOG)
