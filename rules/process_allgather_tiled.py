"""JAX306 process-allgather-tiled: ``process_allgather(x)`` -> ``process_allgather(x, tiled=True)``.

Conditional.  ``tiled=False`` (the default) changed meaning twice: from jax 0.5.0 (JAX commit
b3833dc) a single-process call stacks a new leading axis (``(8,)`` -> ``(1, 8)``), and from
0.8.0 (release notes) a non-fully-addressable array with ``tiled=False`` raises.  ``tiled=True``
gives the old result on every version for global arrays and in single-process runs; for
multi-process host-local inputs it changes the result, so those calls are only reported.
"""

from __future__ import annotations

import ast
from typing import List, Optional, Tuple

from jaxmigrate.migrator import lazycst as cst, references as refs
from jaxmigrate.migrator.astview import AstView
from jaxmigrate.migrator.context import Context, NameSite
from jaxmigrate.migrator.diagnostics import Diagnostic
from jaxmigrate.migrator.rule import Example, Lifecycle, Rule, Safety
from jaxmigrate.migrator.version import Version, parse_version
from jaxmigrate.rules._ast_sites import Resolver, called_at, legacy_imports_stay, name_sites
from jaxmigrate.rules._module_facts import MULTIPROCESS, module_facts
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
    that do not pass `tiled`, where the code was written for a JAX before a change and the
    target reaches it (the question this rule asks: *written before the change, and will it
    run after it?*):

    * in single-process code (a module that never calls `jax.distributed.initialize` and
      never reads `jax.process_index()`/`jax.process_count()`): written before 0.5.0, target
      reaching 0.5.0;
    * in multi-process code on a global array (the argument is the result of
      `host_local_array_to_global_array`, `jax.make_array_from_callback`,
      `make_array_from_single_device_arrays`, `make_array_from_process_local_data` or a GDA
      constructor): written before 0.8.0, target reaching 0.8.0.

    What the code was written for comes from `--source-version`, else from the file's own
    references (a name JAX removed in 0.4.14 proves older code; one it added in 0.6.1 newer
    code), else from the project's `jax` requirement (`jax==0.4.13`).  Where nothing says,
    the call is reported with both readings.  Other calls in multi-process code, and the
    function used as a value (`gather = multihost_utils.process_allgather`), are reported.
    Code written for a JAX at or after a change uses the default as it is there
    (`min(process_allgather(total).tolist())` needs the stacked axis): it is left alone.

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
            source_version="0.4.30",
        ),
        Example.reported(
            title="nothing says which JAX the code was written for: reported with both readings",
            code="""
            import jax.numpy as jnp
            from jax.experimental import multihost_utils

            full = multihost_utils.process_allgather(jnp.arange(8))
            """,
        ),
        Example.reported(
            title="multi-process code with a host-local value is reported",
            code="""
            import jax
            from jax.experimental import multihost_utils

            jax.distributed.initialize()
            scores = multihost_utils.process_allgather(local_scores)
            """,
            source_version="0.4.30",
        ),
    )

    def ast_findings(self, view: AstView) -> Optional[List[Diagnostic]]:
        """:meth:`visit_name` on ``ast`` where it only reports: nothing where the code was
        written for the default of the whole range, or a call passes ``tiled=`` or unpacks its
        arguments; the reports of single-process code nothing says the age of, and of
        multi-process code where no global array can reach the call.  None (LibCST decides)
        where it may fix, a site is no call, or the module's facts are not sure on ``ast``."""
        sites = name_sites(view, Resolver(view, self.names))
        if sites is None or not legacy_imports_stay(view, self.names, self.legacy_modules):
            return None
        stacks, raises = _ast_question(view, STACKS_FROM), _ast_question(view, RAISES_FROM)
        if not sites or (stacks is False and raises is False):
            return []  # (as _question says: the default means what the code was written for)
        calls = called_at(view, sites)
        found: List[Optional[Diagnostic]] = []
        known: List[Optional[bool]] = []  # the module's multi-process fact, read once
        for node, _qualname in sites:
            call = calls.get(id(node))
            if call is None:
                return None  # (used as a value, or read as an attribute's receiver)
            words = [keyword.arg for keyword in call.keywords]
            if "titled" in words:
                return None  # the 0.3.1 misspelling: reported
            if None in words or any(type(arg) is ast.Starred for arg in call.args):
                continue  # (arguments unpacked: left alone)
            if "tiled" in words or len(call.args) != 1:
                continue
            if not known:
                known.append(_ast_multiprocess(view))
            multiprocess = known[0]
            if multiprocess is None:
                return None
            if not multiprocess and stacks is None:
                found.append(view.report(self.code, call, *_unknown_source("0.5.0", STACKS)))
            elif not multiprocess and stacks:
                return None  # a fix: single-process code written before 0.5.0
            elif multiprocess and raises is not False:
                if any(word in view.text for word in _PRODUCER_WORDS):
                    return None  # a global array may reach it: the receiver decides
                found.append(view.report(self.code, call, *HOST_LOCAL_OR_GLOBAL))
        return [finding for finding in found if finding is not None]

    def visit_name(self, site: NameSite, ctx: Context) -> None:
        if site.is_import:
            return
        parent = site.parent
        stacks, raises = _question(ctx, STACKS_FROM), _question(ctx, RAISES_FROM)
        if stacks[0] is False and raises[0] is False:
            return  # the default means what the code was written for on every target release
        if not (isinstance(parent, cst.Call) and parent.func is site.node):
            if not isinstance(parent, (cst.Attribute, cst.Call)):
                ctx.report(
                    site.node,
                    "process_allgather used as a value: pass tiled=True via functools.partial",
                    "Its tiled=False default changed in JAX 0.5.0/0.8.0; use "
                    "functools.partial(process_allgather, tiled=True) for global arrays or "
                    "single-process code.",
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
            answer, why = stacks
            if answer is False:
                return  # written for the default of the whole range
            if answer is None:
                ctx.report(call, *_unknown_source("0.5.0", STACKS))
                return
            reason = f"single-process code; {why}"
        else:
            answer, why = raises
            if answer is False:
                return
            tie = receiver_tie(ctx, positional[0].value, site.scope)
            if tie.source in GLOBAL_PRODUCERS:
                if answer is None:
                    ctx.report(call, *_unknown_source("0.8.0", "raises"))
                    return
                reason = f"a global array; {why}"
        if reason is None:
            ctx.report(call, *HOST_LOCAL_OR_GLOBAL)
            return
        ctx.replace(
            call,
            _with_tiled(call),
            "process_allgather(...) -> process_allgather(..., tiled=True)",
            detail=f"It keeps the old result: {reason}.",
        )


# A multi-process call no global array reaches: host-local values keep tiled=False.
HOST_LOCAL_OR_GLOBAL = (
    "process_allgather(x) changed in JAX 0.5.0/0.8.0: pass tiled=True for global arrays",
    "process_allgather(x) changed in JAX 0.5.0/0.8.0: for a global jax.Array pass "
    "tiled=True (tiled=False raises from 0.8.0); "
    "for host-local values keep tiled=False (stacks one row per process).",
)
STACKS = "stacks an axis"
# The last part of each of GLOBAL_PRODUCERS: a receiver ties to one only where the text spells
# it (in the call's chain, or in the import of its head).
_PRODUCER_WORDS = frozenset(name.rpartition(".")[2] for name in GLOBAL_PRODUCERS)


def _ast_question(view: AstView, change: Version) -> Optional[bool]:
    """:func:`_question` on ``ast`` (its answer only)."""
    if view.upper is not None and view.upper < change:
        return False
    return view.written_before(change)


def _ast_multiprocess(view: AstView) -> Optional[bool]:
    """``module_facts(ctx).multiprocess`` on ``ast``: False where no reference can name one of
    its calls (gate 2's names over-approximate the module's), True where the view finds one
    LibCST's analysis resolves alike; None (not sure) otherwise."""
    if view.facts.names.isdisjoint(MULTIPROCESS):
        return False
    return True if name_sites(view, Resolver(view, MULTIPROCESS)) else None


# A call whose meaning depends on the JAX the code was written for, which nothing states.
def _unknown_source(change: str, effect: str) -> Tuple[str, str]:
    return (
        f"process_allgather(x) {effect} from JAX {change}: add tiled=True? "
        "--source-version says which",
        f"process_allgather(x) {effect} from JAX {change}: code written for an older JAX needs "
        f"tiled=True, code for {change}+ stays; --source-version says which.",
    )


def _question(ctx: Context, change: Version) -> Tuple[Optional[bool], str]:
    """Must the code keep the default it had before ``change``?  It was written for a JAX
    before it (:meth:`Context.written_before`: the user's source version, the file's own
    references, the project's requirement) and the target range reaches it.  (False: no;
    None: the target reaches it, but nothing says what the code was written for.)"""
    if not ctx.reaches(change):
        return False, ""
    return ctx.written_before(change)


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
