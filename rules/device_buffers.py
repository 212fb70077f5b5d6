"""JAX403 device-buffers: ``x.device_buffer`` / ``x.device_buffers`` on jax.Array.

``x.device_buffer`` -> ``x.addressable_data(0)`` (safe: the old property raised on multi-device
arrays) and ``x.device_buffers`` -> ``[s.data for s in x.addressable_shards]`` (conditional for
pmap outputs, whose shards keep their axis from 0.4.34).  Release notes: jax 0.4.22 deprecates
both with these recipes, 0.4.27 removes them (the properties raise AttributeError with a hint,
still at 0.10).  Receivers are checked with ``rules._receivers``.  A test for them by name
(``hasattr(x, "device_buffer")``) is reported: it is False for every array from 0.4.27.
"""

from __future__ import annotations

import re

from jaxmigrate.migrator import lazycst as cst, references as refs
from jaxmigrate.migrator.context import Context
from jaxmigrate.migrator.rule import Example, Lifecycle, Rule, Safety
from jaxmigrate.migrator.version import parse_version
from jaxmigrate.rules._helpers import attribute_test, is_store
from jaxmigrate.rules._module_facts import module_facts
from jaxmigrate.rules._verdict import FILE, FIX, REPORT, UNTIED, decide

PMAP_SHARDS_KEEP_AXIS = parse_version("0.4.34")  # observed: 0.4.30 gives (3,), 0.6.2 (1, 3)
REMOVED = parse_version("0.4.27")
RECIPE = {
    "device_buffer": "x.addressable_data(0)",
    "device_buffers": "[s.data for s in x.addressable_shards]",
}


class DeviceBuffers(Rule, code="JAX403", safety=Safety.SAFE):
    """x.device_buffer -> x.addressable_data(0); x.device_buffers -> [s.data for s in
    x.addressable_shards]

    **What it does.** Rewrites the removed buffer properties of JAX arrays:
    `x.device_buffer` becomes `x.addressable_data(0)` and `x.device_buffers` becomes
    `[s.data for s in x.addressable_shards]` (`len(x.device_buffers)` becomes
    `len(x.addressable_shards)` and `x.device_buffers[i]` becomes
    `x.addressable_shards[i].data`).

    **Why.** Both properties were deprecated in JAX 0.4.22 and removed in 0.4.27; on current
    JAX they raise AttributeError.

    **When.** Only on receivers tied to a JAX array: the result of a `jax`/`jnp` call or of a
    jitted function, a name whose every assignment is one, or a parameter annotated
    `jax.Array`/`jnp.ndarray`/`DeviceArray`.  In a module that imports JAX (and no other array
    library) an untied receiver is fixed only with `--unsafe-fixes`, otherwise reported.

    **Behaviour.** `device_buffer` raised ValueError on multi-device arrays, while
    `addressable_data(0)` returns the first shard: only formerly failing code changes.
    Shards of a `pmap` output have shape `()` up to JAX 0.4.33 and `(1,)` from 0.4.34: for a
    target from 0.4.34 on, `device_buffers` of a pmap output becomes `[s.data[0] for s in
    x.addressable_shards]` (`x.device_buffers[i]` -> `x.addressable_shards[i].data[0]`), the old
    buffer's shape and device; for an older target the rewrite on a pmap output is an unsafe fix.
    The question is the target's alone (*which releases will it run on?*): code that reads
    `device_buffers` was written for a JAX before 0.4.27, so always before 0.4.34.
    A pmap with `out_axes=None` has whole copies as shards on every JAX (no `[0]`); any other
    non-zero `out_axes` makes its output only likely evidence (an unsafe fix).
    A parameter every call of its (plain, local) function gives a JAX array counts as one,
    likely (fixed only with `--unsafe-fixes`, the message names the callers' evidence).

    **Feature tests.** `hasattr(x, "device_buffer")` (or `"device_buffers"`), and
    `getattr(x, "device_buffer", default)`, told a DeviceArray apart; from 0.4.27 they are
    False (the default) for every array, so the code they guard stops running without an
    error.  Each is reported where the code was not written for 0.4.27 or later (see
    `--source-version`): test `isinstance(x, jax.Array)` and read the recipes above.

    **Use instead.** `x.addressable_data(i)`, `x.addressable_shards` (each with `.data`,
    `.device`, `.index`).
    """

    lifecycle = Lifecycle(
        needs="0.4.1",
        deprecated=("0.4.22", "device_buffer and device_buffers deprecated"),
        removed=("0.4.27", "device_buffer and device_buffers removed"),
    )
    references = (refs.api("jax.Array"),)
    attributes = frozenset({"device_buffer", "device_buffers"})
    strings = frozenset({"device_buffer", "device_buffers"})  # hasattr(x, "device_buffer")
    examples = (
        Example(
            title="buffers of an array made by jax",
            before="""
            import jax.numpy as jnp

            x = jnp.arange(8)
            first = x.device_buffer
            bufs = x.device_buffers
            n = len(x.device_buffers)
            """,
            after="""
            import jax.numpy as jnp

            x = jnp.arange(8)
            first = x.addressable_data(0)
            bufs = [s.data for s in x.addressable_shards]
            n = len(x.addressable_shards)
            """,
        ),
        Example.reported(
            title="an untied receiver is reported",
            code="""
            import jax

            def first_buffer(x):
                return x.device_buffer
            """,
        ),
    )

    def visit_attribute(self, node: cst.Attribute, ctx: Context) -> None:
        attr = node.attr.value
        verdict, tie = decide(ctx, node, specific=True)
        if verdict not in (FIX, FILE, REPORT):
            return
        if verdict == REPORT:
            ctx.report(
                node,
                f"{attr} was removed in JAX 0.4.27; for a jax.Array use {RECIPE[attr]}",
                f"If {ctx.code(node.value)} is a jax.Array use {RECIPE[attr]}.",
            )
            return
        # A pmap output's shards keep the mapped axis from 0.4.34: s.data[0] is the old buffer.
        squeeze = attr == "device_buffers" and tie.pmap and ctx.target >= PMAP_SHARDS_KEEP_AXIS
        target, new = self._replacement(node, ctx, squeeze)
        pmap = tie.pmap if verdict == FIX else module_facts(ctx).uses_pmap
        message = f".{attr} -> {RECIPE[attr]}"
        detail = (
            f".{attr} -> "
            f"{RECIPE[attr].replace('x.addressable', ctx.code(node.value) + '.addressable')}"
        )
        if squeeze:
            message = message.replace("s.data for", "s.data[0] for")
            detail = detail.replace("s.data for", "s.data[0] for") + (
                ": a pmap output's shards have shape (1, ...) from JAX 0.4.34 (its buffers had "
                "the mapped axis dropped), so each shard's [0] is the old buffer."
            )
        if verdict == FILE and tie.kind == "likely":
            why = f"{detail} (taken for a JAX array on likely evidence: {tie.reason})."
            ctx.replace(target, new, message, Safety.UNSAFE, detail=why)
        elif verdict == FILE:
            ctx.replace(target, new, message, Safety.UNSAFE, detail=f"{detail}. {UNTIED}")
        elif squeeze:
            ctx.replace(target, new, message, detail=detail)
        elif attr == "device_buffers" and pmap:
            why = f"{detail}: on a pmap output each shard has shape (1, ...) from JAX 0.4.34"
            why += ", () before."
            ctx.replace(target, new, message, Safety.UNSAFE, detail=why)
        else:
            ctx.replace(target, new, message, detail=detail)

    def visit_module(self, ctx: Context) -> None:
        # (the tests are the sites of a feature test: the engine calls no hook on them)
        for site in ctx.analysis.string_sites:
            node = site.node
            if isinstance(node, cst.SimpleString) and node.evaluated_value in RECIPE:
                self._feature_test(node, str(node.evaluated_value), ctx)

    def _feature_test(self, node: cst.SimpleString, attr: str, ctx: Context) -> None:
        call = attribute_test(node, ctx)
        if call is None or not ctx.reaches(REMOVED) or ctx.written_before(REMOVED)[0] is False:
            return
        test = ctx.code(call.func)
        found = "the default" if test == "getattr" else "False"
        ctx.report(
            call,
            f"{test}(x, {attr!r}) is {found} from JAX 0.4.27 on: what it guards no longer runs",
            f"{attr} was removed in JAX 0.4.27, so no jax.Array has it: a test that told a "
            f"DeviceArray by it takes the other path on current JAX, without an error.  Test "
            f"isinstance(x, jax.Array) and use {RECIPE[attr]}.",
        )

    @staticmethod
    def _replacement(node: cst.Attribute, ctx: Context, squeeze: bool = False):  # noqa: ANN205
        receiver = node.value

        def data(shard: cst.BaseExpression) -> cst.BaseExpression:
            value = cst.Attribute(value=shard, attr=cst.Name("data"))
            if not squeeze:
                return value
            return cst.Subscript(
                value=value, slice=[cst.SubscriptElement(cst.Index(cst.Integer("0")))]
            )

        if node.attr.value == "device_buffer":
            return node, cst.Call(
                func=cst.Attribute(value=receiver, attr=cst.Name("addressable_data")),
                args=[cst.Arg(cst.Integer("0"))],
            )
        shards = cst.Attribute(value=receiver, attr=cst.Name("addressable_shards"))
        parent = ctx.parent(node)
        if (
            isinstance(parent, cst.Subscript)
            and parent.value is node
            and len(parent.slice) == 1
            and isinstance(parent.slice[0].slice, cst.Index)
            and not is_store(ctx, parent)
        ):  # x.device_buffers[i] -> x.addressable_shards[i].data
            return parent, data(parent.with_changes(value=shards))
        grand = ctx.parent(parent) if parent is not None else None
        if (
            isinstance(parent, cst.Arg)
            and isinstance(grand, cst.Call)
            and isinstance(grand.func, cst.Name)
            and grand.func.value == "len"
            and len(grand.args) == 1
            and ctx.scope_of(grand).lookup("len") is None
        ):
            return node, shards
        # The comprehension's iterable is evaluated outside it, so any name is correct; avoid
        # one the receiver mentions anyway, for the reader.
        var = "shard" if re.search(r"\bs\b", ctx.code(receiver)) else "s"
        return node, cst.ListComp(
            elt=data(cst.Name(var)),
            for_in=cst.CompFor(target=cst.Name(var), iter=shards),
        )
