"""JAX306 process-allgather-tiled: ``process_allgather(x)`` -> ``process_allgather(x, tiled=True)``.

Conditional.  ``tiled=False`` (the default) changed meaning twice: from jax 0.5.0 (JAX commit
b3833dc) a single-process call stacks a new leading axis (``(8,)`` -> ``(1, 8)``), and from
0.8.0 (release notes) a non-fully-addressable array with ``tiled=False`` raises.  ``tiled=True``
gives the old result on every version for global arrays and in single-process runs; for
multi-process host-local inputs it changes the result, so those calls are only reported.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from jaxmigrate.migrator import references as refs
from jaxmigrate.migrator.context import Context, NameSite
from jaxmigrate.migrator.rule import Example, Lifecycle, Rule, Safety
from jaxmigrate.migrator.version import Version, parse_version
from jaxmigrate.rules._module_facts import module_facts
from jaxmigrate.rules._receivers import receiver_tie

MULTIHOST = "jax.experimental.multihost_utils"
# A single-process tiled=False call stacks a leading axis from 0.5.0 (it returned np.asarray(x)
# before); a global, not fully addressable array with tiled=False raises from 0.8.0.
STACKS_FROM = parse_version("0.5.0")
RAISES_FROM = parse_version("0.8.0")
# Calls that return a global jax.Array (in multi-process runs: not fully addressable).
GLOBAL_PRODUCERS = frozenset(
    {
        f"{MULTIHOST}.host_local_array_to_global_array",
        "jax.make_array_from_process_local_data",
        "jax.make_array_from_callback",
        "jax.make_array_from_single_device_arrays",
        "jax.experimental.global_device_array.GlobalDeviceArray",
        "jax.experimental.global_device_array.GlobalDeviceArray.from_callback",
        "jax.experimental.global_device_array.GlobalDeviceArray.from_batched_callback",
        "jax.experimental.global_device_array.GlobalDeviceArray.from_batched_callback_with_devices",
    }
)


class ProcessAllgatherTiled(Rule, code="JAX306", safety=Safety.SAFE):
    """multihost_utils.process_allgather(x) -> process_allgather(x, tiled=True) where that keeps the
    old result

    **What it does.** Adds `tiled=True` to `multihost_utils.process_allgather(x)` calls
    that do not pass `tiled`, when that keeps the old result:

    * in single-process code (a module that never calls `jax.distributed.initialize` and
      never reads `jax.process_index()`/`jax.process_count()`), when the target range starts
      before 0.5.0 and reaches it: the code was written for the old result;
    * in multi-process code on a global array (the argument is the result of
      `host_local_array_to_global_array`, `jax.make_array_from_callback`,
      `make_array_from_single_device_arrays`, `make_array_from_process_local_data` or a GDA
      constructor), when the target range reaches 0.8.0.

    Other calls in multi-process code, and the function used as a value
    (`gather = multihost_utils.process_allgather`), are reported when the range starts before
    a change and reaches it.  Code whose range starts at or after a change was written for the
    default as it is there (`min(process_allgather(total).tolist())` needs the stacked axis):
    it is left alone.

    **Why.** Before JAX 0.5.0 a single-process `process_allgather(x)` returned
    `np.asarray(x)`; from 0.5.0 it stacks a new leading axis (an `(8,)` array comes back as
    `(1, 8)`).  From 0.8.0 a global (not fully addressable) array with `tiled=False` raises.
    With `tiled=True` both cases give the old result on every version.

    **Not rewritten.** Multi-process code gathering *host-local* values: there `tiled=False`
    stacks the per-process values (the old meaning) and `tiled=True` would concatenate them.

    **Use instead.** `process_allgather(x, tiled=True)` for global arrays and single-process
    code; an explicit `tiled=False` for host-local values in multi-process code.
    """

    lifecycle = Lifecycle(needs="0.4.1")
    references = (
        refs.commit(
            "b3833dc", "jax 0.5.0: one process's process_allgather(tiled=False) adds an axis"
        ),
        refs.release_notes(
            "0.8.0", "process_allgather(tiled=False) raises for non-addressable arrays"
        ),
        refs.api("jax.experimental.multihost_utils.process_allgather"),
    )
    names = frozenset({f"{MULTIHOST}.process_allgather"})
    names_are_legacy = False  # process_allgather still exists: never drop its import
    examples = (
        Example(
            title="single-process code",
            before="""
            import jax.numpy as jnp
            from jax.experimental import multihost_utils

            full = multihost_utils.process_allgather(jnp.arange(8))
            """,
            after="""
            import jax.numpy as jnp
            from jax.experimental import multihost_utils

            full = multihost_utils.process_allgather(jnp.arange(8), tiled=True)
            """,
            target_version="0.4.30",
        ),
        Example.reported(
            title="multi-process code with a host-local value is reported",
            code="""
            import jax
            from jax.experimental import multihost_utils

            jax.distributed.initialize()
            scores = multihost_utils.process_allgather(local_scores)
            """,
            target_version="0.4.30",
        ),
    )

    def visit_name(self, site: NameSite, ctx: Context) -> None:
        if site.is_import:
            return
        parent = site.parent
        if not _crosses(ctx, STACKS_FROM) and not _crosses(ctx, RAISES_FROM):
            return  # the default means the same on every release of the range
        if not (isinstance(parent, cst.Call) and parent.func is site.node):
            if not isinstance(parent, (cst.Attribute, cst.Call)):
                ctx.report(
                    site.node,
                    "process_allgather used as a value: its tiled=False default changed in JAX "
                    "0.5.0/0.8.0; use functools.partial(process_allgather, tiled=True) for global "
                    "arrays or single-process code",
                )
            return
        call = parent
        if any(arg.star for arg in call.args):
            return
        if any(arg.keyword is not None and arg.keyword.value == "titled" for arg in call.args):
            ctx.report(
                call,
                "process_allgather(titled=...) is the jax 0.3.1 misspelling; the keyword is tiled",
            )
            return
        if any(arg.keyword is not None and arg.keyword.value == "tiled" for arg in call.args):
            return
        positional = [arg for arg in call.args if arg.keyword is None]
        if len(positional) != 1:
            return  # tiled passed positionally, or a call we do not understand
        facts = module_facts(ctx)
        reason: Optional[str] = None
        if not facts.multiprocess:
            if not _crosses(ctx, STACKS_FROM):
                return  # written for the default of the whole range
            reason = "single-process code"
        else:
            if not _crosses(ctx, RAISES_FROM):
                return
            tie = receiver_tie(ctx, positional[0].value, site.scope)
            if tie.source in GLOBAL_PRODUCERS:
                reason = "a global array"
        if reason is None:
            ctx.report(
                call,
                "process_allgather(x) changed in JAX 0.5.0/0.8.0: for a global jax.Array pass "
                "tiled=True (tiled=False raises from 0.8.0); "
                "for host-local values keep tiled=False (stacks one row per process)",
            )
            return
        ctx.replace(
            call,
            _with_tiled(call),
            f"process_allgather(...) -> process_allgather(..., tiled=True) ({reason})",
        )


def _crosses(ctx: Context, change: Version) -> bool:
    """The target range starts before ``change`` and reaches it: the code was written for the
    default before it and must keep that meaning after it."""
    return ctx.target < change and (ctx.upper is None or ctx.upper >= change)


def _with_tiled(call: cst.Call) -> cst.Call:
    args = list(call.args)
    last = args[-1]
    new_arg = cst.Arg(
        keyword=cst.Name("tiled"),
        value=cst.Name("True"),
        equal=cst.AssignEqual(
            whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")
        ),
    )
    if isinstance(last.comma, cst.Comma):  # a trailing comma: keep the layout
        new_arg = new_arg.with_changes(comma=last.comma)
        args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=call.whitespace_before_args))
        if isinstance(call.whitespace_before_args, cst.SimpleWhitespace):
            args[-1] = last.with_changes(
                comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
            )
    else:
        args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    args.append(new_arg)
    return call.with_changes(args=args)
