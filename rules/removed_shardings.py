"""JAX609 removed-shardings: ``GSPMDSharding`` and ``PmapSharding`` are gone; use NamedSharding.

``jax.sharding.GSPMDSharding``: deprecated 0.6.0, removed 0.7.0 (recorded in jax/sharding.py at
those releases, not in the changelog); ``jax.sharding.PmapSharding``: deprecated 0.8.1, removed
0.10.0 (release notes of both).  Both need a person: a GSPMDSharding wraps an OpSharding proto
with no mesh, and a PmapSharding's shards are rank-reducing while a NamedSharding's are not, so
the replacement needs a person.
"""

from __future__ import annotations

from jaxmigrate.migrator import references as refs
from jaxmigrate.migrator.context import Context, NameSite
from jaxmigrate.migrator.rule import Example, Lifecycle, Rule, Safety
from jaxmigrate.migrator.version import parse_version

REMOVED = {
    "jax.sharding.GSPMDSharding": (
        "0.7.0",
        "GSPMDSharding was removed in JAX 0.7.0; use NamedSharding(mesh, PartitionSpec(...))",
        "Describe the layout as NamedSharding(mesh, PartitionSpec(...)) over a Mesh of the same "
        "devices.",
    ),
    "jax.sharding.PmapSharding": (
        "0.10.0",
        "PmapSharding was removed in JAX 0.10.0; use NamedSharding(Mesh(devices, ('x',)), P('x'))",
        "Use NamedSharding(Mesh(devices, ('x',)), P('x')) over a stacked leading axis (shards "
        "keep a leading axis of size 1; see the pmap migration guide).",
    ),
}


class RemovedShardings(Rule, code="JAX609", safety=Safety.MANUAL):
    """GSPMDSharding (gone in 0.7.0) and PmapSharding (gone in 0.10.0): report, with the
    NamedSharding recipe

    **What it does.** Reports every use and import of `jax.sharding.GSPMDSharding` (for targets
    from 0.7.0, where it no longer exists) and `jax.sharding.PmapSharding` (from 0.10.0).

    **Why.** Both classes were removed (GSPMDSharding in 0.7.0 without a changelog entry,
    PmapSharding in 0.10.0), so the import fails.  Neither has a mechanical replacement: a
    GSPMDSharding carries an XLA OpSharding and no mesh, and a PmapSharding's shards drop the
    mapped axis while NamedSharding shards keep it with size 1.

    **Use instead.** `NamedSharding(mesh, PartitionSpec(...))`: for a former PmapSharding, a
    one-axis mesh over the same devices with `P('x')` on a stacked leading axis.
    """

    whole_module = False  # hooks read their sites and the names those resolve to

    unsafe_fixes_only = True  # (the survey skips it without --unsafe-fixes)

    lifecycle = Lifecycle(deprecated="0.6.0", removed="0.7.0")
    references = (
        refs.source_at("0.6.0", "jax/sharding.py", "GSPMDSharding deprecated"),
        refs.source_at("0.7.0", "jax/sharding.py", "GSPMDSharding removed"),
        refs.release_notes("0.8.1", "PmapSharding deprecated"),
        refs.release_notes("0.10.0", "PmapSharding removed"),
        refs.module("jax.sharding"),
    )
    names = frozenset(REMOVED)
    examples = (
        Example.reported(
            code="""
            from jax.sharding import GSPMDSharding

            def is_gspmd(s):
                return isinstance(s, GSPMDSharding)
            """,
        ),
    )

    def visit_name(self, site: NameSite, ctx: Context) -> None:
        removed_in, message, detail = REMOVED[site.qualname]
        if ctx.reaches(parse_version(removed_in)):
            ctx.report(site.node, message, detail)
