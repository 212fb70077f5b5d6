"""JAX903 renamed-api: removed JAX names whose replacement is the same object, renamed.

The table, ``rules/data/jax_api_renames.json``, is made by ``scripts/verify_renames.py``: each
row is a name JAX removed whose deprecation message names its replacement, or (``"found": "same
object"``) a removed re-export whose object the newest release still exports under another name,
confirmed to be the very same object in real JAX releases that had both.  The JAX versions in
which the replacement exists come from the API history, so a rename is only written where the
replacement exists on every release of the target range; elsewhere the name is reported.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Dict, FrozenSet, List, Optional, Tuple

from jaxmigrate.migrator import lazycst as cst, rule_index
from jaxmigrate.migrator.astview import AstView
from jaxmigrate.migrator.context import Context, NameSite
from jaxmigrate.migrator.diagnostics import Diagnostic
from jaxmigrate.migrator.rule import Example, Rule, Safety, owners
from jaxmigrate.migrator.version import Version
from jaxmigrate.rules import loaded as rules_loaded
from jaxmigrate.rules._api_history import HISTORY_SOURCES, history, release_key
from jaxmigrate.rules._ast_sites import nothing_at_sites
from jaxmigrate.rules._names_gate import QualifiedNamesGate
from jaxmigrate.rules._renames import Move, RenameRule, names_of

TABLE = Path(__file__).resolve().parent / "data" / "jax_api_renames.json"


@functools.lru_cache(maxsize=1)
def _rows() -> Tuple[Tuple[str, str, Tuple[str, ...], str], ...]:
    data = json.loads(TABLE.read_text(encoding="utf-8"))
    return tuple(
        (
            row["legacy"],
            row["modern"],
            tuple(row.get("same_object_in") or row["forwarding_module_in"]),
            row.get("found", ""),
        )
        for row in data["renames"]
    )


def moves(exclude: frozenset = frozenset()) -> Tuple[Move, ...]:
    """The table as moves, each with the releases its replacement exists in (from the history)."""
    h = history()
    found = []
    for legacy, modern, evidence, how in _rows():
        if legacy in exclude:
            continue
        known = h.lookup(modern)
        if known is None:
            continue
        first, last = known.present[-1]
        since = h.releases[first]
        until = h.releases[last + 1] if last + 1 < len(h.releases) else None
        # never a rename into a name JAX deprecates within the range: it warns, then goes
        deprecated = known.deprecated_since is not None and known.deprecated_since <= last
        if deprecated:
            until = h.releases[known.deprecated_since]  # type: ignore[index]
        note = (
            f"the same object in JAX {max(evidence, key=release_key)}"
            if how == "same object"
            else "JAX's deprecation message names it"
        )
        found.append(Move(legacy, modern, since, until, note, deprecated=deprecated))
    return tuple(found)


class RenamedApi(QualifiedNamesGate, RenameRule, code="JAX903", safety=Safety.SAFE):
    """removed names whose replacement is the same object (jax.core.Primitive ->
    jax.extend.core.Primitive, ...): renamed

    **What it does.** Renames references and imports of removed JAX names to their
    replacement when the two are the same object: `jax.core.Primitive` ->
    `jax.extend.core.Primitive`, `jax.ShapedArray` -> `jax.core.ShapedArray`,
    `jax.core.ConcretizationTypeError` -> `jax.errors.ConcretizationTypeError`,
    `jax.lib.xla_extension.Device` -> `jax.Device`, `jax.numpy.product` -> `jax.numpy.prod`,
    `jax.linear_util` -> `jax.extend.linear_util`, ...  `from m import X as Y` keeps `Y`, and
    so does an import the module never reads or lists in `__all__` (a re-export other modules
    import by that name): `from jax.nn import normalize` -> `from jax.nn import standardize as
    normalize`.  `xla_bridge.get_backend().platform` becomes `jax.default_backend()`, which
    JAX defines as that very read and has from 0.2.10 (renaming `get_backend` would need
    0.4.33).

    **Why.** JAX removed these names after a deprecation period; its deprecation message
    named the replacement.  Every row of the table was checked in real JAX releases that had
    both names: the replacement is the same object, so the rename keeps behaviour exactly.
    Re-exports JAX removed without naming a replacement move where the object still lives:
    `jax.experimental.maps.thread_resources` (maps was removed in 0.4.31) was, in every
    release that had both, `jax.interpreters.pxla.thread_resources`.
    Modules JAX left as a forwarding shim (`jax.experimental.stax` was only
    `from jax.example_libraries.stax import *` until JAX 0.3.15) move to the module they
    forwarded to.

    **Target range.** The replacement must exist on the target JAX (the API history knows
    from which release); for an older target the name is reported instead.  A replacement
    JAX deprecates within the range is no replacement (migrated code must not warn): there
    the name is left to the rule that reports its module, with what to write.  A range
    capped below the release that removed the name (``0.4.30..0.9.0``) runs it as written:
    nothing is said, unless a release of the range deprecates it (then it is reported as
    deprecated).
    """

    # Its hooks read their sites, the imports and ``__all__``, and whether a new name is free
    # in any scope: the piecewise path keeps the sites and imports, and checks that a name the
    # migrated imports bind anew is bound in no scope of the statements it leaves out.
    whole_module = False
    references = HISTORY_SOURCES
    import_directly = True  # ``import jax`` does not load jax.extend.*
    examples = (
        Example(
            title="an internal API moved to jax.extend",
            before="""
            from jax import core

            my_p = core.Primitive("my_p")
            """,
            after="""
            from jax.extend.core import Primitive

            my_p = Primitive("my_p")
            """,
        ),
        Example(
            title="a from-import keeps its local name",
            before="""
            from jax.core import ClosedJaxpr, Primitive as P
            """,
            after="""
            from jax.extend.core import ClosedJaxpr, Primitive as P
            """,
        ),
    )

    def for_range(self, low: Version, high: Optional[Version], aside: FrozenSet[str]) -> Rule:
        return _table_rule()

    @property
    def moves(self) -> Tuple[Move, ...]:  # type: ignore[override]
        """The moves of the table whose legacy names are the rule's ``names``: read from the
        history when first needed, not to gate a file (the copy the kept gates rebuild holds
        its names alone: :mod:`migrator.gateplan`)."""
        return _moves_of(self.names)

    def move_for(self, qualname: str) -> Optional[Move]:
        return _by_legacy(self.names).get(qualname)  # a dict look-up: the table is long

    def ast_findings(self, view: AstView) -> Optional[List[Diagnostic]]:
        """Nothing, read on ``ast``, in a file with no site (reference or import) of a name of
        the table; None where there is one (a rename, or a report for an older target)."""
        return nothing_at_sites(view, self.names, self.legacy_modules)

    def visit_name(self, site: NameSite, ctx: Context) -> None:
        if site.qualname == GET_BACKEND and _default_backend(site, ctx):
            return
        parts = site.qualname.split(".")
        if not site.is_import and any(
            ".".join(parts[:cut]) in self.names for cut in range(2, len(parts))
        ):
            return  # a moved module earlier in the chain: that site rewrites it
        super().visit_name(site, ctx)


GET_BACKEND = "jax.lib.xla_bridge.get_backend"
DEFAULT_BACKEND = "jax.default_backend"


def _default_backend(site: NameSite, ctx: Context) -> bool:
    """``xla_bridge.get_backend().platform`` -> ``jax.default_backend()`` (done: True).  JAX
    defines ``default_backend()`` as ``get_backend(None).platform`` (``xla_bridge.py`` from
    0.3 on) and has it from 0.2.10, where the rename to ``jax.extend.backend.get_backend``
    needs 0.4.33.  Only through the module (``xla_bridge.get_backend``): an imported
    ``get_backend`` keeps its import, which the rename rewrites."""
    call = site.parent
    if site.is_import or isinstance(site.node, cst.Name):
        return False
    if not (isinstance(call, cst.Call) and call.func is site.node and not call.args):
        return False
    read = ctx.parent(call)
    if not (
        isinstance(read, cst.Attribute) and read.value is call and read.attr.value == "platform"
    ):
        return False
    if not ctx.exists_throughout(DEFAULT_BACKEND):
        return False
    new = cst.Call(func=ctx.ref(DEFAULT_BACKEND, site.scope), lpar=read.lpar, rpar=read.rpar)
    message = f"xla_bridge.get_backend().platform -> {DEFAULT_BACKEND}()"
    detail = (
        f"{GET_BACKEND} is gone; {DEFAULT_BACKEND}() is get_backend(None).platform in JAX's "
        "sources, and exists on every release the target holds."
    )
    ctx.replace(read, new, message, detail=detail)
    return True


@functools.lru_cache(maxsize=1)
def _table_rule() -> RenamedApi:
    """The rule with its table: names another rule migrates stay that rule's (those the rule
    index lists, while the other rules are not imported: the index and a registry of the
    shipped rules agree, ``tests/test_rule_index.py``)."""
    if rules_loaded():
        others = owners().names(besides=RenamedApi.code)
    else:
        others = rule_index.renamed_elsewhere()
    rule = object.__new__(RenamedApi)
    rule.names = names_of(moves(exclude=others))  # type: ignore[misc]
    return rule


@functools.lru_cache(maxsize=4)
def _moves_of(names: FrozenSet[str]) -> Tuple[Move, ...]:
    return tuple(move for move in moves() if move.legacy in names) if names else ()


@functools.lru_cache(maxsize=4)
def _by_legacy(names: FrozenSet[str]) -> Dict[str, Move]:
    return {move.legacy: move for move in _moves_of(names)}
