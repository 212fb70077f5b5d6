"""JAX402 gda-attributes: GlobalDeviceArray attribute names on jax.Array.

``.local_shards`` -> ``.addressable_shards`` (safe), ``.local_data(i)`` ->
``.addressable_data(i)`` (safe for values) and ``.mesh`` -> ``.sharding.mesh``, ``.mesh_axes``
-> ``.sharding.spec`` (only when the array's sharding is a NamedSharding).  Sources: the
jax.Array migration guide, "GDA's API name changes"; GDA was removed in JAX 0.4.7 (JAX commit
634035a).  Receivers are checked with ``rules._receivers``.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from jaxmigrate.migrator import lazycst as cst, references as refs
from jaxmigrate.migrator.astfacts import Facts
from jaxmigrate.migrator.context import Context
from jaxmigrate.migrator.rule import Example, Lifecycle, Rule, Safety
from jaxmigrate.migrator.version import parse_version
from jaxmigrate.rules._gda import GDA_HISTORY
from jaxmigrate.rules._loose_facts import LooseFacts
from jaxmigrate.rules._module_facts import module_facts
from jaxmigrate.rules._receiver_gate import (
    any_may_tie,
    ast_called,
    ast_imports_gda,
)
from jaxmigrate.rules._text_gates import GdaAttributesGate
from jaxmigrate.rules._verdict import FILE, FIX, REPORT, decide, receiver_of_method

if TYPE_CHECKING:  # pragma: no cover
    from jaxmigrate.migrator.source import SourceRange

REMOVED_IN = "0.4.7"  # GDA (the JAX commit above)
MESH_ATTRIBUTES = ("mesh", "mesh_axes")  # acted on only where the receiver ties to an array

NEW = {
    "local_shards": ".addressable_shards",
    "local_data": ".addressable_data(i)",
    "mesh_axes": ".sharding.spec",
    "mesh": ".sharding.mesh",
}


class GdaAttributes(GdaAttributesGate, Rule, code="JAX402", safety=Safety.SAFE):
    """GDA .local_shards/.local_data(i)/.mesh_axes/.mesh ->
    .addressable_shards/.addressable_data(i)/.sharding.spec/.sharding.mesh

    **What it does.** Renames GlobalDeviceArray attributes to their jax.Array spelling:
    `.local_shards` -> `.addressable_shards`, `.local_data(i)` -> `.addressable_data(i)`,
    `.mesh_axes` -> `.sharding.spec`, `.mesh` -> `.sharding.mesh`.

    **When.** The receiver must be tied to a GDA or jax.Array: built by a GDA constructor or a
    JAX API in the same scope, the output of a jitted function, or a parameter annotated
    `GlobalDeviceArray`/`jax.Array`.  In a module that imports GDA, `.local_shards`,
    `.local_data(i)` on other receivers, and `.mesh_axes` on a plain name, are rewritten too
    (`.mesh_axes` only with `--unsafe-fixes`).  `.mesh` is far too common (`self.mesh`, a
    config's mesh) and is rewritten only on a tied receiver.  `self.table.mesh`, where every
    assignment of `.table` in the module is `self.table = <a GDA or JAX array>` in the class's
    own methods, is rewritten with `--unsafe-fixes` (likely evidence, named in the message).
    Elsewhere `.local_shards`/`.local_data(i)` are reported in modules that import JAX;
    `.mesh`/`.mesh_axes` on a plain name only in modules that import GDA (`cfg.mesh_axes` is a
    t5x config field, not an array).  Code written for JAX 0.4.7 or newer (a requirement's
    lower bound there, or `--source-version`) had no GDA: outside a module that still imports
    it, its `.mesh`/`.mesh_axes` are some other object's and are left alone;
    `.local_shards`/`.local_data(i)` are still renamed.

    **Why.** GDA was removed in JAX 0.4.7; jax.Array has only the `addressable_*` names and
    keeps the mesh and spec on its sharding.

    **Safety.** `addressable_data(i)` on a fully replicated array returns the first replica
    whatever `i` is (same values, maybe another device).  `.sharding.mesh`/`.sharding.spec`
    exist only on a `NamedSharding`: the rewrite is safe for arrays built by a GDA
    constructor or with a literal `NamedSharding(...)`, and an unsafe fix otherwise (a jit
    output may carry another sharding).

    **Use instead.** `x.addressable_shards`, `x.addressable_data(i)`, `x.sharding.spec`,
    `x.sharding.mesh` (check `isinstance(x.sharding, jax.sharding.NamedSharding)` first when
    the array may come from `jit`).
    """

    lifecycle = Lifecycle(
        needs="0.4.1",
        deprecated=("0.4.1", "jax.Array is the default array type"),
        removed=REMOVED_IN,
    )
    references = (
        GDA_HISTORY[1],
        refs.array_migration("GDA’s API name changes"),
        refs.api("jax.Array"),
    )
    attributes = frozenset({"local_shards", "local_data", "mesh_axes", "mesh"})
    examples = (
        Example(
            title="an array built from a callback",
            before="""
            import jax
            from jax.sharding import NamedSharding

            def build(mesh, spec, data):
                arr = jax.make_array_from_callback(data.shape, NamedSharding(mesh, spec), lambda i: data[i])
                local = [s.data for s in arr.local_shards]
                return local, arr.local_data(0), arr.mesh_axes, arr.mesh
            """,  # noqa: E501
            after="""
            import jax
            from jax.sharding import NamedSharding

            def build(mesh, spec, data):
                arr = jax.make_array_from_callback(data.shape, NamedSharding(mesh, spec), lambda i: data[i])
                local = [s.data for s in arr.addressable_shards]
                return local, arr.addressable_data(0), arr.sharding.spec, arr.sharding.mesh
            """,  # noqa: E501
        ),
        Example.reported(
            title="an untied receiver is reported (self.mesh and the like are left alone)",
            code="""
            import jax

            def shard_data(x):
                return [s.data for s in x.local_shards]
            """,
        ),
    )

    def for_source(self, source: "SourceRange") -> Rule:
        """Itself, unless the code was written for JAX 0.4.7 or newer (the requirement's lower
        bound, or the source the user states): GDA was gone there, so an array with a
        ``.mesh`` or ``.mesh_axes`` can only be a GDA its module still makes, and elsewhere
        such a read is some other object's (a Mesh's, a sharding's, a partitioner's), however
        the receiver seems tied.  ``.local_shards`` and ``.local_data(i)``, which nothing
        else spells, are looked for everywhere (a removal asks the target alone)."""
        if source.written_before(parse_version(REMOVED_IN)) is not False:
            return self
        return _after_removal()

    def ast_gate(self, facts: Facts) -> bool:
        # .local_shards / .local_data(i) are reported on any receiver, and so is anything in a
        # module importing GDA; otherwise .mesh/.mesh_axes act only on a receiver tied to an array.
        if "local_shards" in facts.attributes or ast_called(facts, "local_data"):
            return True
        if ast_imports_gda(facts):
            return True
        if not self.mesh_without_gda:
            return False
        nodes = [node for attr in MESH_ATTRIBUTES for node in facts.attribute_nodes.get(attr, ())]
        if not nodes:
            return False
        loose = LooseFacts.of(facts)  # (not the scopes: JAX's sharding code reads .mesh a lot)
        if not any_may_tie(loose, ((node.value, None) for node in nodes)):
            return False  # (ast_cannot_tie of every receiver)
        if facts.scopes() is None:
            return True
        return any_may_tie(facts, ((node.value, facts.scope_of(node)) for node in nodes))

    def visit_attribute(self, node: cst.Attribute, ctx: Context) -> None:
        attr = node.attr.value
        if attr == "local_data" and receiver_of_method(ctx, node) is None:
            return
        facts = module_facts(ctx)
        gda_file = facts.imports_gda
        if attr in MESH_ATTRIBUTES and not (gda_file or self.mesh_without_gda):
            return
        plain = isinstance(node.value, cst.Name)
        specific = gda_file and (
            attr in ("local_shards", "local_data") or (attr == "mesh_axes" and plain)
        )
        verdict, tie = decide(ctx, node, specific=specific)
        if verdict == REPORT:
            if attr == "mesh" or (attr == "mesh_axes" and not (gda_file and plain)):
                # self.mesh, partitioner.mesh, cfg.mesh_axes (t5x) ...: far too common to report,
                # even in a module that imports GDA (a Mesh, a partitioner has a .mesh too)
                return
            ctx.report(
                node,
                f".{attr} was a GlobalDeviceArray attribute; for a jax.Array use {NEW[attr]}",
                f"GDA was removed in JAX 0.4.7; if {ctx.code(node.value)} is a jax.Array use "
                f"{NEW[attr]}.",
            )
            return
        if verdict not in (FIX, FILE):
            return
        if attr in ("local_shards", "local_data"):
            new: cst.BaseExpression = node.with_changes(
                attr=cst.Name(
                    "addressable_shards" if attr == "local_shards" else "addressable_data"
                )
            )
            ctx.replace(node, new, f".{attr} -> {NEW[attr]}")
            return
        new = cst.Attribute(
            value=cst.Attribute(value=node.value, attr=cst.Name("sharding")),
            attr=cst.Name("spec" if attr == "mesh_axes" else "mesh"),
        )
        if tie.kind == "likely":
            ctx.replace(
                node,
                new,
                f".{attr} -> {NEW[attr]} (only a NamedSharding has .mesh/.spec)",
                Safety.UNSAFE,
                detail=f"Only a NamedSharding has .mesh/.spec; the receiver is taken for a "
                f"GDA/jax.Array on likely evidence ({tie.reason}).",
            )
        elif verdict == FIX and tie.named:
            ctx.replace(node, new, f".{attr} -> {NEW[attr]} (the sharding is a NamedSharding)")
        else:
            ctx.replace(
                node,
                new,
                f".{attr} -> {NEW[attr]} (only a NamedSharding has .mesh/.spec)",
                Safety.UNSAFE,
                detail=f"Only a NamedSharding has .mesh/.spec; check that {ctx.code(node.value)} "
                "is not a jit output with another sharding.",
            )


@functools.cache
def _after_removal() -> GdaAttributes:
    """The rule for code written after GDA's removal (:meth:`GdaAttributes.for_source`)."""
    rule = object.__new__(GdaAttributes)
    rule.mesh_without_gda = False
    return rule
