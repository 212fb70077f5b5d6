"""JAX309 host-id: ``jax.host_id`` / ``host_count`` / ``host_ids`` -> ``jax.process_index`` /
``process_count`` / ``process_indices``.

Safe.  jax 0.2.13's release notes renamed ``host_id`` to ``jax.process_index`` and
``host_count`` to ``jax.process_count``, keeping the old names as aliases "that will
eventually be removed".  They are still there in the newest release, and each call warns
("jax.host_id has been renamed to jax.process_index ...", ``jax/_src/xla_bridge.py``).  Each
alias calls its replacement with the same ``backend`` argument, so the value is the same,
without the warning.  ``host_ids`` calls ``jax.process_indices`` (added in 0.4.33; the 0.2.13
notes offered ``range(jax.process_count())``, a range, not the list it returns): it is renamed
only where every release of the target range has ``process_indices``, and reported elsewhere.
"""

from __future__ import annotations

from jaxmigrate.migrator import references as refs
from jaxmigrate.migrator.rule import Example, Lifecycle, Safety
from jaxmigrate.rules._renames import Move, RenameRule, names_of

INDICES_SINCE = "0.4.33"  # jax.process_indices (the API history)
MOVES = (
    Move("jax.host_id", "jax.process_index", "0.2.13", legacy_stays=True),
    Move("jax.host_count", "jax.process_count", "0.2.13", legacy_stays=True),
    Move(
        "jax.host_ids",
        "jax.process_indices",
        INDICES_SINCE,
        note=(
            f"jax.process_indices exists from JAX {INDICES_SINCE}; before it, "
            "list(range(jax.process_count())) gives the same list"
        ),
        fix="use list(range(jax.process_count()))",
        legacy_stays=True,
    ),
)


class HostId(RenameRule, code="JAX309", safety=Safety.SAFE):
    """jax.host_id / host_count / host_ids -> jax.process_index / process_count /
    process_indices

    **What it does.** Renames references and imports of `jax.host_id`, `jax.host_count` and
    `jax.host_ids` to `jax.process_index`, `jax.process_count` and `jax.process_indices`
    (`from jax import host_id` becomes `from jax import process_index`, and its uses
    follow).  `jax.process_indices` exists from 0.4.33: where the target range starts
    earlier, `host_ids` is reported instead.

    **Why.** JAX renamed the three in 0.2.13 ("host" became "process": one host may run
    several JAX processes).  The old names stayed as aliases that call the new ones, but
    every call warns that the alias will be removed, once per call: in a data loader or a
    logging helper that is a warning per batch.

    **Use instead.** `jax.process_index()`, `jax.process_count()`, `jax.process_indices()`
    (same `backend` argument, same values).
    """

    lifecycle = Lifecycle(deprecated=("0.2.13", "host_id, host_count and host_ids renamed"))
    references = (
        refs.api("jax.process_index"),
        refs.api("jax.process_count"),
        refs.api("jax.process_indices"),
    )
    moves = MOVES
    names = names_of(MOVES)
    examples = (
        Example(
            title="a per-process seed and a log line (jaxline's train loop)",
            before="""
            import jax
            import numpy as np

            np.random.seed(20201473 + jax.host_id())
            if jax.host_id() == 0:
                print("processes:", jax.host_count())
            """,
            after="""
            import jax
            import numpy as np

            np.random.seed(20201473 + jax.process_index())
            if jax.process_index() == 0:
                print("processes:", jax.process_count())
            """,
        ),
        Example(
            title="a name imported from jax is renamed with its uses",
            before="""
            from jax import host_ids

            hosts = host_ids()
            """,
            after="""
            from jax import process_indices

            hosts = process_indices()
            """,
        ),
        Example.reported(
            title="a target from before 0.4.33 has no process_indices",
            code="""
            import jax

            hosts = jax.host_ids()
            """,
            target_version="0.4.13",
        ),
    )
