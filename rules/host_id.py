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

import ast
from typing import Optional

from jaxmigrate.migrator import lazycst as cst, references as refs
from jaxmigrate.migrator.astfacts import Facts, dotted
from jaxmigrate.migrator.context import Context
from jaxmigrate.migrator.rule import Example, Lifecycle, Safety
from jaxmigrate.migrator.scope import dotted_parts
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


# A test that mocks an old name: ``mock.patch.object(jax, "host_id", ...)`` (or on another
# module's ``jax``: ``utils.jax``), ``mock.patch("jax.host_id", ...)``, pytest's
# ``monkeypatch.setattr``.  The old names still exist, so once the code calls the new ones
# such a mock patches what nobody calls, and the test goes on without it (jaxline's
# utils_test.py); the target follows the rename.
MOCK_OBJECT = frozenset({"unittest.mock.patch.object", "mock.patch.object"})
MOCK_PATCH = frozenset({"unittest.mock.patch", "mock.patch"})
_MOCK_ENDS = (("patch",), ("patch", "object"), ("monkeypatch", "setattr"))
_BY_NAME = {move.legacy.rsplit(".", 1)[1]: move for move in MOVES}
_BY_QUALNAME = {move.legacy: move for move in MOVES}


class HostId(RenameRule, code="JAX309", safety=Safety.SAFE):
    """jax.host_id / host_count / host_ids -> jax.process_index / process_count /
    process_indices

    **What it does.** Renames references and imports of `jax.host_id`, `jax.host_count` and
    `jax.host_ids` to `jax.process_index`, `jax.process_count` and `jax.process_indices`
    (`from jax import host_id` becomes `from jax import process_index`, and its uses
    follow).  `jax.process_indices` exists from 0.4.33: where the target range starts
    earlier, `host_ids` is reported instead.  A test's mock of an old name follows the
    rename: `mock.patch.object(jax, "host_id")` (also on a module's `jax`, `utils.jax`),
    `mock.patch("jax.host_id")` and pytest's `monkeypatch.setattr` with either form.

    **Why.** JAX renamed the three in 0.2.13 ("host" became "process": one host may run
    several JAX processes).  The old names stayed as aliases that call the new ones, but
    every call warns that the alias will be removed, once per call: in a data loader or a
    logging helper that is a warning per batch.

    The old names still answer, so a mock left on one would no longer be called once the
    code calls the new name, and the test would run without it, silently.

    **Use instead.** `jax.process_index()`, `jax.process_count()`, `jax.process_indices()`
    (same `backend` argument, same values).
    """

    lifecycle = Lifecycle(deprecated=("0.2.13", "host_id, host_count and host_ids renamed"))
    references = (
        refs.api("jax.process_index"),
        refs.api("jax.process_count"),
        refs.api("jax.process_indices"),
    )
    # Its hooks read what JAX903's do (sites, imports, ``__all__``, whether a new name is free
    # anywhere: migrator.piecewise checks that one), and a mock's call and its arguments.
    whole_module = False
    moves = MOVES
    names = names_of(MOVES)
    strings = frozenset(_BY_NAME) | frozenset(_BY_QUALNAME)  # mock targets
    needs_jax_import = False  # (a test may mock another module's ``jax``)
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

    def ast_gate(self, facts: Facts) -> bool:
        """A name of the table, or a call that may mock one (a string of the table in a call
        of something ending ``patch``, ``patch.object`` or ``monkeypatch.setattr``)."""
        if self.names & facts.names:
            return True
        return any(_may_mock(call, self.strings) for call in facts.calls)

    def visit_string(self, node: "cst.SimpleString", ctx: Context) -> None:
        """A mock target naming an old name -> the new name, where the rename applies: the
        code's calls are renamed there, and the mock must follow them."""
        arg = ctx.parent(node)
        call = ctx.parent(arg) if isinstance(arg, cst.Arg) else None
        if not isinstance(call, cst.Call) or arg.star:  # type: ignore[union-attr]
            return
        value = node.evaluated_value
        move = _mocked(call, arg, value, ctx)  # type: ignore[arg-type]
        if move is None or not self.allowed(move, ctx):
            return
        old = value if value in _BY_QUALNAME else move.legacy.rsplit(".", 1)[1]
        new = move.modern if value in _BY_QUALNAME else move.modern_name
        if node.value.count(old) != 1:
            return  # (spelled with escapes: left as it is)
        ctx.replace(
            node,
            node.with_changes(value=node.value.replace(old, new)),
            f"mock target {old} -> {new}",
            detail=f"the code's calls of {move.legacy} become {move.modern}; {move.legacy} "
            "is still there, so a mock of it would no longer be called and the test would "
            "run without it.",
        )


def _may_mock(call: ast.Call, strings: frozenset) -> bool:
    parts = dotted(call.func)
    if not parts or not any(tuple(parts[-len(end) :]) == end for end in _MOCK_ENDS):
        return False
    values = [*call.args, *(k.value for k in call.keywords)]
    return any(type(v) is ast.Constant and v.value in strings for v in values)


def _mocked(call: "cst.Call", arg: "cst.Arg", value: str, ctx: Context) -> Optional[Move]:
    """The move whose old name the string ``arg`` of ``call`` mocks, if it does: the attribute
    of ``mock.patch.object(<jax>, "host_id")`` (``attribute=`` too) or of pytest's
    ``monkeypatch.setattr(<jax>, "host_id", ...)``, where ``<jax>`` is ``jax`` or a module's
    ``jax`` attribute; or the whole target of ``mock.patch("jax.host_id")`` or
    ``monkeypatch.setattr("jax.host_id", ...)``."""
    scope = ctx.scope_of(call)
    func = ctx.qualname(call.func, scope)
    parts = dotted_parts(call.func)
    monkeypatch = parts == ["monkeypatch", "setattr"] and func is None
    positional = [a for a in call.args if a.keyword is None and not a.star]
    index = next((i for i, a in enumerate(positional) if a is arg), None)
    keyword = arg.keyword.value if arg.keyword is not None else None
    if func in MOCK_PATCH or (monkeypatch and len(positional) == 2):
        if (index == 0 or keyword == "target") and value in _BY_QUALNAME:
            return _BY_QUALNAME[value]
        return None
    if not (func in MOCK_OBJECT or monkeypatch) or value not in _BY_NAME:
        return None
    if not (index == 1 or (keyword == "attribute" and func in MOCK_OBJECT)):
        return None
    target = positional[0].value if positional else None
    held = dotted_parts(target)
    if not held or held[-1] != "jax":
        return None
    if len(held) == 1 and ctx.qualname(target, scope) != "jax":  # type: ignore[arg-type]
        return None  # (a bare name must be JAX itself)
    return _BY_NAME[value]
