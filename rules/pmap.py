"""JAX804 pmap: report ``jax.pmap`` with the jit + shard_map recipe (report only).

Report only.  ``jax.pmap`` is *not* deprecated and still works: from JAX 0.8.0 it is "in
maintenance mode" and re-implemented on ``jax.jit`` + ``jax.shard_map`` (jax 0.8.0 release
notes); the C++ pmap and ``PmapSharding`` were removed in 0.10.0 (release notes).  JAX's
"Migrating to the new jax.pmap" guide recommends ``jax.jit(jax.shard_map(...))``, which changes
block ranks, so a person has to do it.

Noise: the rule runs only for targets >= 0.8.0 (``needs_jax``), where pmap is in maintenance
mode and ``jax.shard_map`` exists; code that must still run on older JAX gets no finding.  It
reports the references to ``jax.pmap`` (a decorator, a call, ``partial(jax.pmap, ...)``) once
per file, at the first, with their count (kfac-jax's ten calls were ten findings); silence it
per line with ``# jaxmigrate: ignore[JAX804]`` or per project with ``ignore = ["JAX804"]``.
"""

from __future__ import annotations

from typing import List, Optional

from jaxmigrate.migrator import lazycst as cst, references as refs
from jaxmigrate.migrator.astview import AstView
from jaxmigrate.migrator.context import Context, NameSite
from jaxmigrate.migrator.diagnostics import Diagnostic
from jaxmigrate.migrator.rule import Example, Lifecycle, Rule, Safety
from jaxmigrate.rules._ast_sites import Resolver, legacy_imports_stay, name_sites
from jaxmigrate.rules._helpers import report_once

MESSAGE = "jax.pmap is in maintenance mode since JAX 0.8.0; consider jax.jit(jax.shard_map(...))"
DETAIL = (
    "jax.pmap still works but is in maintenance mode since JAX 0.8.0 (now built on jit + "
    "shard_map); consider jax.jit(jax.shard_map(f, mesh=jax.make_mesh((n,), ('i',)), "
    "in_specs=P('i'), out_specs=P('i'))): blocks keep the mapped axis ((1, ...) per device "
    "instead of (...)), in_axes=None becomes P(), donate_argnums goes on jax.jit, and "
    "x.addressable_shards[0].data replaces the x[0] 'unreplicate' idiom"
)


class Pmap(Rule, code="JAX804", safety=Safety.MANUAL):
    """jax.pmap is in maintenance mode: report with the jax.jit(jax.shard_map(...)) recipe

    **What it does.** Reports every reference to `jax.pmap` (call, decorator,
    `functools.partial(jax.pmap, ...)`), for targets 0.8.0 and newer only.

    **Why.** `jax.pmap` is not deprecated and keeps working, but since JAX 0.8.0 it is in
    maintenance mode and implemented on top of `jax.jit` and `jax.shard_map`; the C++ pmap and
    `PmapSharding` were removed in 0.10.0.  New features land in `jit`/`shard_map`.

    **Use instead.** `jax.jit(jax.shard_map(f, mesh=mesh, in_specs=P('i'), out_specs=P('i')))`
    with `mesh = jax.make_mesh((n,), ('i',))` (the pmap `axis_name` becomes the mesh axis
    name).  This is not automatic because:
    * pmap is rank-reducing, shard_map is rank-preserving: an `(8, 128)` input gives each
      device a `(1, 128)` block instead of `(128,)`;
    * `in_axes=None` maps to `P()`, other `in_axes` to a `P` with the axis name in that
      position; `donate_argnums` moves to the `jax.jit` wrapper;
    * the `x[0]` "unreplicate" idiom on outputs should become `x.addressable_shards[0].data`;
    * host-local data is stitched with `jax.make_array_from_process_local_data`.

    **Noise.** Below `--target-version 0.8.0` the rule does not run.  Silence single lines
    with `# jaxmigrate: ignore[JAX804]` or the rule with `--ignore JAX804`.
    """

    once_per_file = True  # the first site, with the count of the others

    whole_module = False  # hooks read their sites and the names those resolve to

    unsafe_fixes_only = True  # (the survey skips it without --unsafe-fixes)

    lifecycle = Lifecycle(
        needs=("0.8.0", "jax.pmap in maintenance mode, built on jax.jit and jax.shard_map")
    )
    references = (
        refs.pmap_migration(),
        refs.shard_map_guide(),
    )
    names = frozenset({"jax.pmap"})
    examples = (
        Example.reported(
            title="report only",
            code="""
            import jax

            step = jax.pmap(update, axis_name='batch')
            """,
        ),
    )

    def visit_name(self, site: NameSite, ctx: Context) -> None:
        if site.is_import:
            return  # report the uses, not the import line as well
        ctx.memo((self.code, "uses"), list).append(site.node)

    def visit_module(self, ctx: Context) -> None:
        uses: List[cst.CSTNode] = ctx.memo((self.code, "uses"), list)
        if uses:
            report_once(ctx, uses, MESSAGE, DETAIL)

    def ast_findings(self, view: AstView) -> Optional[List[Diagnostic]]:
        """:meth:`visit_name` and :meth:`visit_module` on ``ast``: one finding for the sites of
        ``jax.pmap`` (:func:`rules._ast_sites.name_sites`); None where the sites could differ,
        or where the engine might drop an unused import of it."""
        if not legacy_imports_stay(view, self.names, self.legacy_modules):
            return None
        sites = name_sites(view, Resolver(view, self.names))
        if sites is None:
            return None
        found = view.report_once(self.code, [node for node, _qualname in sites], MESSAGE, DETAIL)
        return [] if found is None else [found]
