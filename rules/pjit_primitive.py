"""JAX207 pjit-primitive: ``pjit_p`` -> ``jax.extend.core.primitives.jit_p``.

Safe.  jax 0.7.0's release notes: ``jax.extend.core.primitives.pjit_p`` was renamed ``jit_p``
(and its ``name`` changed from ``"pjit"`` to ``"jit"``); ``jax.experimental.pjit.pjit_p``, the
older spelling of the same primitive, is gone from 0.7.0 too (the API history: 0.2.13-0.6.2).
It is the primitive ``jax.jit`` stages every jitted call as, so code that interprets jaxprs
(distrax's ``transformations.py``: ``eqn.primitive is jax.experimental.pjit.pjit_p``) names it.
No one spelling serves a range that crosses 0.7.0: where the target starts earlier the rename
is reported, and the default target starts at 0.7.0 for it (a rename to a newer name raises
the floor).
"""

from __future__ import annotations

from jaxmigrate.migrator import references as refs
from jaxmigrate.migrator.rule import Example, Lifecycle, Safety
from jaxmigrate.rules._renames import Move, RenameRule, names_of

JIT_P = "jax.extend.core.primitives.jit_p"
RENAMED_IN = "0.7.0"
_NOTE = (
    f"{JIT_P} exists from JAX {RENAMED_IN}; before it the primitive was pjit_p: name it by "
    "release where the code must run on both"
)
MOVES = (
    Move("jax.experimental.pjit.pjit_p", JIT_P, RENAMED_IN, note=_NOTE),
    Move("jax.extend.core.primitives.pjit_p", JIT_P, RENAMED_IN, note=_NOTE),
)


class PjitPrimitive(RenameRule, code="JAX207", safety=Safety.SAFE):
    """jax.experimental.pjit.pjit_p / jax.extend.core.primitives.pjit_p ->
    jax.extend.core.primitives.jit_p

    **What it does.** Renames references and imports of the jit primitive's old names,
    `jax.experimental.pjit.pjit_p` and `jax.extend.core.primitives.pjit_p`, to
    `jax.extend.core.primitives.jit_p` where every release of the target range has it (from
    0.7.0).  Where the range starts earlier, the name is reported; with the default target,
    the range then starts at 0.7.0.

    **Why.** The primitive `jax.jit` stages a jitted call as was `pjit_p` until jax 0.6.2
    and is `jit_p` from 0.7.0 (its release notes: renamed, and its `name` is now `"jit"`).
    Code that walks a jaxpr and tests `eqn.primitive is pjit_p` fails with `AttributeError`
    at that line on today's JAX.

    **Use instead.** `jax.extend.core.primitives.jit_p`.  A test of the primitive's name
    (`eqn.primitive.name == "pjit"`) must change to `"jit"` too (not detected here).
    """

    lifecycle = Lifecycle(removed=(RENAMED_IN, "pjit_p renamed jit_p"))
    references = (refs.module("jax.extend.core"),)
    moves = MOVES
    names = names_of(MOVES)
    import_directly = True  # (jax.extend.core does not import its primitives submodule itself)
    examples = (
        Example(
            title="a jaxpr interpreter (distrax's transformations.py)",
            before="""
            import jax
            import jax.experimental.pjit


            def jit_equations(f, x):
                jaxpr = jax.make_jaxpr(f)(x)
                return [e for e in jaxpr.eqns if e.primitive is jax.experimental.pjit.pjit_p]
            """,
            after="""
            import jax
            from jax.extend.core.primitives import jit_p


            def jit_equations(f, x):
                jaxpr = jax.make_jaxpr(f)(x)
                return [e for e in jaxpr.eqns if e.primitive is jit_p]
            """,
        ),
        Example.reported(
            title="a target that starts before 0.7.0: no one spelling serves it",
            code="""
            from jax.experimental.pjit import pjit_p


            def is_jit(eqn):
                return eqn.primitive is pjit_p
            """,
            target_version="0.6.2",
        ),
    )
