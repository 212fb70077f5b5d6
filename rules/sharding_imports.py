"""JAX205 sharding-imports: PartitionSpec, Mesh and the sharding classes move to ``jax.sharding``.

PartitionSpec from ``jax.experimental``, ``.pjit``, ``jax.interpreters.pxla`` and the GDA module
(release notes of 0.4.1, 0.4.4, 0.4.11); ``jax.experimental.pjit.NamedSharding`` and
``jax.sharding.MeshPspecSharding`` (removed 0.4.12); ``OpShardingSharding`` -> ``GSPMDSharding``
(itself gone from 0.7.0); ``XLACompatibleSharding`` -> ``Sharding`` (deprecated 0.4.29, removed
0.4.34); ``jax.experimental.maps.Mesh``, ``jax.interpreters.pxla.Mesh`` and the lowercase
``maps.mesh(devices, names)`` context manager (removed 0.3.8).  Only these names are touched:
the rest of ``jax.experimental.maps`` (``xmap``, ``thread_resources``) belongs to other rules.
"""

from __future__ import annotations

from jaxmigrate.migrator import references as refs
from jaxmigrate.migrator.rule import Example, Lifecycle, Safety
from jaxmigrate.rules._renames import Move, RenameRule, names_of

_GSPMD_NOTE = (
    "build a NamedSharding(mesh, PartitionSpec(...)) instead (GSPMDSharding was removed in "
    "JAX 0.7.0)"
)
_GSPMD_FIX = "use NamedSharding(mesh, P(...))"

MOVES = (
    # PartitionSpec (jax 0.4.1 release notes: out of experimental)
    Move("jax.experimental.PartitionSpec", "jax.sharding.PartitionSpec", "0.4.1"),
    Move("jax.experimental.pjit.PartitionSpec", "jax.sharding.PartitionSpec", "0.4.1"),
    Move("jax.interpreters.pxla.PartitionSpec", "jax.sharding.PartitionSpec", "0.4.1"),
    Move(
        "jax.experimental.global_device_array.PartitionSpec", "jax.sharding.PartitionSpec", "0.4.1"
    ),
    # Mesh, and the lowercase maps.mesh context manager
    Move("jax.experimental.maps.Mesh", "jax.sharding.Mesh", "0.4.1"),
    Move("jax.interpreters.pxla.Mesh", "jax.sharding.Mesh", "0.4.1"),
    Move("jax.experimental.maps.mesh", "jax.sharding.Mesh", "0.4.1"),
    # NamedSharding and its old name
    Move("jax.experimental.pjit.NamedSharding", "jax.sharding.NamedSharding", "0.4.1"),
    Move("jax.sharding.MeshPspecSharding", "jax.sharding.NamedSharding", "0.4.1"),
    # OpShardingSharding (jax 0.4.5 renamed it GSPMDSharding, gone in 0.7.0)
    Move(
        "jax.sharding.OpShardingSharding",
        "jax.sharding.GSPMDSharding",
        "0.4.5",
        "0.7.0",
        note=_GSPMD_NOTE,
        fix=_GSPMD_FIX,
    ),
    # XLACompatibleSharding (jax 0.4.29 release notes: use Sharding)
    Move("jax.sharding.XLACompatibleSharding", "jax.sharding.Sharding", "0.4.1"),
)


class ShardingImports(RenameRule, code="JAX205", safety=Safety.SAFE):
    """PartitionSpec / Mesh / NamedSharding from jax.experimental.*, jax.interpreters.pxla,
    MeshPspecSharding, OpShardingSharding, XLACompatibleSharding -> jax.sharding

    **What it does.** Points every old spelling of the sharding vocabulary at `jax.sharding`:

    | legacy | modern |
    | --- | --- |
    | `jax.experimental.PartitionSpec`, `jax.experimental.pjit.PartitionSpec`, `jax.interpreters.pxla.PartitionSpec`, `jax.experimental.global_device_array.PartitionSpec` | `jax.sharding.PartitionSpec` |
    | `jax.experimental.maps.Mesh`, `jax.interpreters.pxla.Mesh`, `jax.experimental.maps.mesh(devices, names)` | `jax.sharding.Mesh` |
    | `jax.experimental.pjit.NamedSharding`, `jax.sharding.MeshPspecSharding` | `jax.sharding.NamedSharding` |
    | `jax.sharding.OpShardingSharding` | `jax.sharding.GSPMDSharding` (targets 0.4.5 - 0.6.x; reported from 0.7.0, where it is gone too) |
    | `jax.sharding.XLACompatibleSharding` | `jax.sharding.Sharding` |

    `from legacy.module import Name as P` becomes `from jax.sharding import Name as P` (the
    local name is kept, so nothing else changes); a statement that also imports names that
    stay (`from jax.experimental.pjit import pjit, PartitionSpec`) is split in two.  Attribute
    spellings (`maps.Mesh(...)`, `jax.experimental.maps.Mesh(...)`) are rewritten to a
    `jax.sharding` reference and the import follows.  Other names of `jax.experimental.maps`
    (`xmap`, `thread_resources`) are left to their own rules.

    **Why.** These aliases were announced deprecated with jax.Array (0.4.1), warned from
    0.4.4 and were removed in 0.4.11-0.4.12 (`MeshPspecSharding`, `OpShardingSharding`) and
    0.4.34 (`XLACompatibleSharding`): the imports fail on current JAX.  The constructors are
    the same objects (`MeshPspecSharding(mesh, spec)` was `NamedSharding(mesh, spec)`).

    **Note.** `PartitionSpec` stopped being a tuple in 0.6.1 and stopped comparing equal to
    tuples in 0.10.0; code comparing specs with tuples needs a look (not detected here).
    """  # noqa: E501

    lifecycle = Lifecycle(
        needs=("0.4.1", "PartitionSpec and Mesh move to jax.sharding"),
        deprecated=("0.4.4", "the old PartitionSpec, Mesh and NamedSharding paths warn"),
        removed=("0.4.11", "the old paths removed"),
    )
    references = (
        refs.release_notes("0.4.29", "XLACompatibleSharding deprecated"),
        refs.module("jax.sharding"),
    )
    moves = MOVES
    names = names_of(MOVES)
    examples = (
        Example(
            title="an aliased import moves, the alias stays",
            before="""
            from jax.experimental.pjit import PartitionSpec as P

            spec = P('x', None)
            """,
            after="""
            from jax.sharding import PartitionSpec as P

            spec = P('x', None)
            """,
        ),
        Example(
            title="mixed imports are split, attribute spellings follow",
            before="""
            import numpy as np
            import jax
            from jax.experimental import maps
            from jax.experimental.pjit import pjit, PartitionSpec

            mesh = maps.Mesh(np.array(jax.devices()), ('x',))
            f = pjit(lambda x: x, in_shardings=PartitionSpec('x'), out_shardings=None)
            """,
            after="""
            import numpy as np
            import jax
            from jax.experimental.pjit import pjit
            from jax.sharding import PartitionSpec

            mesh = jax.sharding.Mesh(np.array(jax.devices()), ('x',))
            f = pjit(lambda x: x, in_shardings=PartitionSpec('x'), out_shardings=None)
            """,
        ),
        Example.reported(
            title="OpShardingSharding has no modern rename on JAX 0.7+",
            code="""
            from jax.sharding import OpShardingSharding

            def is_gspmd(s):
                return isinstance(s, OpShardingSharding)
            """,
        ),
    )
