"""JAX703 tree-keypaths: the pre-0.4.6 key-path API, removed in JAX 0.4.24.

With --unsafe-fixes a ``register_keypaths(cls, handler)`` statement is deleted (the type's key
paths become indices; flax 0.6.4's struct.dataclass died at import on it).  Otherwise it needs
a person: ``jax.tree_util.register_keypaths``, ``AttributeKeyPathEntry`` and
``GetitemKeyPathEntry`` were replaced in 0.4.6 by ``register_pytree_with_keys`` and the key
classes ``GetAttrKey``, ``SequenceKey``, ``DictKey`` (jax 0.4.6 release notes), and removed in
0.4.24 (release notes).  The new registration takes a different callback (children *with* keys),
so a person has to write it.
"""

from __future__ import annotations

from jaxmigrate.migrator import lazycst as cst, references as refs
from jaxmigrate.migrator.context import Context, NameSite
from jaxmigrate.migrator.rule import Example, Lifecycle, Rule, Safety
from jaxmigrate.migrator.version import parse_version
from jaxmigrate.rules._api_history import added_in
from jaxmigrate.rules._helpers import called

# name -> (message, detail)
MESSAGES = {
    "jax.tree_util.register_keypaths": (
        "jax.tree_util.register_keypaths was removed in JAX 0.4.24; use register_pytree_with_keys",
        "jax.tree_util.register_keypaths was removed in JAX 0.4.24; register the type with "
        "jax.tree_util.register_pytree_with_keys(cls, flatten_with_keys, unflatten, flatten), "
        "where flatten_with_keys returns ((key, child), ...) pairs (keys: GetAttrKey, "
        "SequenceKey, DictKey, FlattenedIndexKey).",
    ),
    "jax.tree_util.AttributeKeyPathEntry": (
        "jax.tree_util.AttributeKeyPathEntry was removed in JAX 0.4.24; use GetAttrKey",
        "jax.tree_util.AttributeKeyPathEntry was removed in JAX 0.4.24; use "
        "jax.tree_util.GetAttrKey(name) (its field is .name).",
    ),
    "jax.tree_util.GetitemKeyPathEntry": (
        "jax.tree_util.GetitemKeyPathEntry was removed in JAX 0.4.24; use SequenceKey or DictKey",
        "jax.tree_util.GetitemKeyPathEntry was removed in JAX 0.4.24; use "
        "jax.tree_util.SequenceKey(idx) for list/tuple positions (.idx) or "
        "jax.tree_util.DictKey(key) for dict keys (.key).",
    ),
}


class TreeKeypaths(Rule, code="JAX703", safety=Safety.MANUAL):
    """register_keypaths / AttributeKeyPathEntry / GetitemKeyPathEntry: the key-path recipe;
    unsafe: a register_keypaths statement deleted

    **What it does.** Reports every use of the first key-path API:
    `jax.tree_util.register_keypaths`, `AttributeKeyPathEntry` and `GetitemKeyPathEntry`.
    With `--unsafe-fixes`, a `register_keypaths(cls, handler)` statement is deleted (`pass`
    where it stood alone): it fails at import from 0.4.24, and without it the type flattens as
    before while its key paths become indices (`FlattenedIndexKey`).

    **Why.** They were superseded in JAX 0.4.6 and removed in 0.4.24.

    **Use instead.** `jax.tree_util.register_pytree_with_keys(cls, flatten_with_keys,
    unflatten_func, flatten_func=None)`, where `flatten_with_keys(obj)` returns
    `(((key, child), ...), aux_data)`; keys are `jax.tree_util.GetAttrKey(name)`,
    `SequenceKey(idx)`, `DictKey(key)` or `FlattenedIndexKey(i)`.  Read paths with
    `jax.tree_util.tree_flatten_with_path` / `keystr`.  The callbacks differ from the old
    `register_keypaths(cls, handler)` one, so this is not rewritten.
    """

    whole_module = False  # hooks read their sites and the names those resolve to

    unsafe_fixes_only = True  # (the survey skips it without --unsafe-fixes)

    lifecycle = Lifecycle(
        needs=added_in("jax.tree_util.keystr"),
        deprecated=("0.4.6", "register_pytree_with_keys and the key classes added"),
        removed=("0.4.24", "register_keypaths and the old key-path entries removed"),
    )
    references = (refs.pytrees("Explicit key paths"),)
    names = frozenset(MESSAGES)
    examples = (
        Example.reported(
            title="report only",
            code="""
            from jax.tree_util import register_keypaths, AttributeKeyPathEntry

            register_keypaths(Point, lambda p: (AttributeKeyPathEntry('x'), AttributeKeyPathEntry('y')))
            """,  # noqa: E501
        ),
    )

    def visit_name(self, site: NameSite, ctx: Context) -> None:
        if site.is_import:
            return  # report the uses, not the import line as well
        if site.qualname == REGISTER and ctx.reaches(GONE) and _drop_registration(site, ctx):
            return
        ctx.report(site.node, *MESSAGES[site.qualname])


REGISTER = "jax.tree_util.register_keypaths"
GONE = parse_version("0.4.24")
DROPPED = "register_keypaths(...) deleted, gone in JAX 0.4.24: key paths become indices"
DROPPED_DETAIL = (
    "jax.tree_util.register_keypaths was removed in JAX 0.4.24, and the call fails at import. "
    "Without it the type flattens and unflattens as before, but tree_flatten_with_path gives "
    "its children FlattenedIndexKey(i) keys instead of the entries it registered. To keep "
    "named keys, register the type with jax.tree_util.register_pytree_with_keys(cls, "
    "flatten_with_keys, unflatten, flatten) instead of register_pytree_node."
)


def _drop_registration(site: NameSite, ctx: Context) -> bool:
    """``register_keypaths(cls, handler)`` written as a statement of its own: deleted (``pass``
    where it was its block's only statement), an unsafe fix; False for any other use."""
    call = called(site)
    expr = ctx.parent(call) if call is not None else None
    line = ctx.parent(expr) if isinstance(expr, cst.Expr) else None
    if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
        return False
    block = ctx.parent(line)
    alone = isinstance(block, cst.IndentedBlock) and len(block.body) == 1
    new = line.with_changes(body=[cst.Pass()]) if alone else cst.RemovalSentinel.REMOVE
    ctx.replace(line, new, DROPPED, Safety.UNSAFE, detail=DROPPED_DETAIL)
    return True
