"""JAX203 host-local-inputs: per-process NumPy inputs of pjit/jit in multi-process programs.

Implements the migration guide's "Breaking change for pjit after switching to jax.Array for host
local inputs" and "Handling of host local inputs to pjit like batch, etc" sections of the
jax.Array migration guide: before jax.Array, pjit concatenated the process-local arguments of
every process into one global value, and its outputs were process-local; since 0.4.1 every
pjit/jit input must be *global*.  The transition API is
``multihost_utils.host_local_array_to_global_array(local, mesh, pspecs)`` before the call and
``global_array_to_host_local_array(out, mesh, pspecs)`` for outputs used as per-process data
(both exist from 0.3.24 and are still current).  Fully replicated inputs
(``None``/``P()``/``P(None)``) need nothing.  The rewrite reproduces the legacy meaning, but
whether a program relied on it is not statically certain: UNSAFE.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional, Set, Tuple

from jaxmigrate.migrator import lazycst as cst, references as refs
from jaxmigrate.migrator.astfacts import Facts
from jaxmigrate.migrator.context import Context
from jaxmigrate.migrator.rule import Example, Lifecycle, Rule, Safety
from jaxmigrate.migrator.version import parse_version
from jaxmigrate.rules import _multiprocess as mp
from jaxmigrate.rules._multiprocess import MULTIHOST, RECIPE, TO_GLOBAL, listed
from jaxmigrate.rules._name_refs import module_ref
from jaxmigrate.rules._pjit import (
    FROM_GDA,
    call_qualname,
    compiled_of,
    get_keyword,
    module_facts,
    qualname_of,
)
from jaxmigrate.rules._pjit_inputs import JIT_NAMES, PjitInputs
from jaxmigrate.rules._pjit_mesh import innermost_mesh_with
from jaxmigrate.rules._text_gates import HostLocalInputsGate

if TYPE_CHECKING:  # pragma: no cover
    from jaxmigrate.migrator.source import SourceRange

ARRAY_DEFAULT = "0.4.1"  # jax.Array the default: pjit's inputs global from then on
# jax.Array can no longer be turned off (the jax_array flag: JAX 0.4.7 changelog): from then
# on every program's inputs are global
ALWAYS_GLOBAL = "0.4.7"
MULTI_PROCESS = frozenset({"jax.distributed.initialize", "jax.process_index", "jax.process_count"})
SHARDINGS = frozenset({"in_shardings", "in_axis_resources"})


class HostLocalInputs(HostLocalInputsGate, PjitInputs, Rule, code="JAX203", safety=Safety.UNSAFE):
    """multi-process pjit/jit with per-process NumPy inputs -> host_local_array_to_global_array

    **What it does.** In a multi-process program (the file calls `jax.distributed.initialize`,
    `jax.process_index()` or `jax.process_count()`), finds calls of a pjit/`jax.jit`-compiled
    function with partitioned `in_shardings` whose arguments are NumPy arrays built in the
    process (names bound from `np.*` calls).  Each such argument is converted with
    `multihost_utils.host_local_array_to_global_array(x, mesh, spec)` before the call; an
    output assigned to a name that the code then hands to `np.asarray`/`np.array` or indexes
    is converted back with `global_array_to_host_local_array`.  The mesh comes from the
    `NamedSharding` or the `with mesh:` block around the call.  A function still compiled with
    `pjit` whose call sites cannot be found is reported with the recipe.  Any other argument
    for a partitioned input (a loop variable such as `for batch in loader`, a parameter, a
    value from an unknown function) is reported with the recipe unless it is provably global:
    a `jax.Array` built by a JAX API (`jax.make_array_from_*`,
    `host_local_array_to_global_array`, `jax.device_put(x, sharding)`, `jnp.*`) or an output
    of another jitted call.  `from jax import process_index` marks a file as multi-process too.
    A *legacy* `pjit` (its call sites, decorators `@partial(pjit, ...)` and `pjit(f, ...)(x)`
    forms) keeps its old meaning: every argument for a partitioned input that is not a global
    array (a loader's batch, a helper's result, even `jnp.ones(...)`) is wrapped where it is
    passed (an already global `jax.Array` passes through unchanged), `static_argnums`
    positions are skipped, and each partitioned output the program then reads on the host
    (printing, NumPy, indexing, attributes, other functions) is converted back.

    **Why.** Before `jax.Array` (0.4.1), pjit concatenated the per-process arguments into one
    global value and returned process-local outputs.  Now inputs must be global: the same
    code fails with a shape error or silently computes on the wrong global shape.  Fully
    replicated inputs (`None`, `P()`) are unaffected.

    **When.** Where the code may have been written for a JAX with legacy inputs: code written
    for 0.4.7 or newer (a requirement's lower bound there, `jax>=0.4.30`, or
    `--source-version`), where jax.Array could no longer be turned off, had global inputs
    from the start, and the rule does not run on it.

    **Safety.** Unsafe: the conversion restores the legacy meaning exactly, but code that
    already builds the full global batch in every process relied on the new meaning.

    **Use instead.** `multihost_utils.host_local_array_to_global_array` (or, from 0.4.29,
    `jax.make_array_from_process_local_data(NamedSharding(mesh, spec), local)`).
    """

    unsafe_fixes_only = True  # (all its fixes are unsafe: the survey runs it only with them)
    lifecycle = Lifecycle(needs=(ARRAY_DEFAULT, "jax.Array is the default: pjit inputs are global"))
    references = (
        refs.array_migration(
            "Breaking change for pjit after switching to jax.Array for host local inputs"
        ),
        refs.array_migration("Handling of host local inputs to pjit like batch, etc"),
        refs.release_notes(ALWAYS_GLOBAL, "jax_array can no longer be disabled"),
        refs.api("jax.experimental.multihost_utils.host_local_array_to_global_array"),
    )
    # sites only (the work is in visit_module): jax.process_index() / jax.process_count() /
    # jax.distributed.initialize(), also imported by name (`from jax import process_index`)
    names = MULTI_PROCESS
    names_are_legacy = False  # current APIs: their imports are never removed as legacy
    attributes = frozenset({"process_index", "process_count", "initialize"})
    # Its hook reads the multi-process calls (its sites) and, where a jit call passes input
    # shardings, every such call and where it is called: it asks for the whole module first.
    # Its gates pass only files with such a call (then it asks anyway: the file goes whole);
    # called in a later round (after JAX309 wrote jax.process_index), it may not need to.
    asks_for_whole = True
    examples = (
        Example(
            before="""
            import numpy as np
            import jax
            from jax.sharding import NamedSharding, PartitionSpec as P

            def main(mesh, step):
                f = jax.jit(step, in_shardings=NamedSharding(mesh, P('data')), out_shardings=NamedSharding(mesh, P('data')))
                batch = np.ones((8, 4)) * jax.process_index()
                out = f(batch)
                return np.asarray(out)
            """,  # noqa: E501
            after="""
            import numpy as np
            import jax
            from jax.sharding import NamedSharding, PartitionSpec as P
            from jax.experimental import multihost_utils

            def main(mesh, step):
                f = jax.jit(step, in_shardings=NamedSharding(mesh, P('data')), out_shardings=NamedSharding(mesh, P('data')))
                batch = np.ones((8, 4)) * jax.process_index()
                batch = multihost_utils.host_local_array_to_global_array(batch, mesh, P('data'))
                out = f(batch)
                out = multihost_utils.global_array_to_host_local_array(out, mesh, P('data'))
                return np.asarray(out)
            """,  # noqa: E501
            unsafe_fixes=True,
        ),
    )

    def runs_for(self, source: "SourceRange") -> bool:
        """Not for code written for a JAX whose inputs were always global (the requirement's
        lower bound, or the source the user states, 0.4.7 or newer: before it, a program
        could still turn jax.Array off): they were global when it was written, and they
        still are.  A behaviour change is undone only where the code was written before it;
        where nothing says so, the rule acts as before."""
        return source.written_before(parse_version(ALWAYS_GLOBAL)) is not False

    def ast_gate(self, facts: Facts) -> bool:
        # a multi-process call, and a jit/pjit call with in_shardings/in_axis_resources
        return bool(
            facts.names & MULTI_PROCESS and facts.names & JIT_NAMES and facts.keywords & SHARDINGS
        )

    def visit_module(self, ctx: Context) -> None:
        facts = module_facts(ctx)
        why = mp.evidence(ctx, facts.calls, MULTI_PROCESS)
        if why is None:
            return
        text = ctx.file_state.get("text")  # (the whole file's, on the piecewise path too)
        if not isinstance(text, str) or any(keyword in text for keyword in SHARDINGS):
            ctx.needs_whole_module()  # every jit call with shardings, and where it is called
        jitted = self._jitted_names(ctx, facts)
        legacy: List[mp.LegacySite] = []
        for call in list(facts.calls):
            scope = ctx.scope_of(call)
            through_partial = self._jit_call(ctx, call, scope)
            if through_partial is None:
                continue
            in_arg = get_keyword(call.args, "in_shardings") or get_keyword(
                call.args, "in_axis_resources"
            )
            if in_arg is None:
                continue
            ctx.needs_whole_module()  # (one a fix wrote)
            leaves = self._argument_leaves(in_arg.value)
            is_pjit = self._is_pjit(ctx, call, scope)
            static = mp.static_positions(call)
            from_gda = any(
                leaf is not None and qualname_of(ctx, leaf, scope) == FROM_GDA for leaf in leaves
            )
            if from_gda and not is_pjit:
                continue  # FROM_GDA mixed with specs: JAX204 applies the same recipe
            if not from_gda and not any(self._partitioned(ctx, leaf, scope) for leaf in leaves):
                continue
            compiled = compiled_of(ctx, call, through_partial)
            if not compiled.calls:
                if is_pjit and not from_gda:
                    ctx.report(
                        call,
                        "cannot find the calls of this pjit function; its inputs must be global",
                        f"Cannot find where this pjit-compiled function is called: {RECIPE}.",
                    )
                continue
            out_arg = get_keyword(call.args, "out_shardings") or get_keyword(
                call.args, "out_axis_resources"
            )
            out_value = out_arg.value if out_arg is not None else None
            for site in compiled.calls:
                if is_pjit and static is not None:
                    legacy.append(mp.LegacySite(site, leaves, out_value, static, from_gda))
                elif not from_gda:
                    self._fix_site(ctx, site, leaves, out_value, jitted, static or set())
        mp.fix_legacy_sites(self, ctx, legacy, jitted, why)

    @staticmethod
    def _recipe(ctx: Context) -> str:
        if ctx.target >= parse_version("0.4.29"):
            return RECIPE + (
                "; or `x = jax.make_array_from_process_local_data(NamedSharding(mesh, spec), x)`"
            )
        return RECIPE

    def _report_unknown(
        self,
        ctx: Context,
        site: cst.Call,
        unknown: List[Tuple[str, cst.BaseExpression]],
        out_value: Optional[cst.BaseExpression],
    ) -> None:
        shown = ", ".join(f"{code} (spec {ctx.code(spec)})" for code, spec in unknown)
        note = ""
        statement = mp.block_statement(ctx, site)
        out_name = self._output_name(ctx, site, statement) if statement is not None else None
        out_spec = (
            self._spec_of(ctx, out_value, ctx.scope_of(out_value))[1]
            if out_value is not None
            else None
        )
        if (
            out_name is not None
            and out_spec is not None
            and statement is not None
            and self._used_as_host_data(ctx, out_name, statement)
        ):
            note = (
                f"; the output `{out_name}` is then used as per-process data: "
                f"`{out_name} = multihost_utils.global_array_to_host_local_array({out_name}, mesh, "
                f"{ctx.code(out_spec)})` if the inputs were per-process"
            )
        codes = listed([code for code, _spec in unknown], 20)
        ctx.report(
            site,
            f"{codes} may be per-process data; if so use {TO_GLOBAL}",
            f"Partitioned input(s) {shown} may be per-process data, which the rule cannot check "
            f"statically: {self._recipe(ctx)}{note}.",
        )

    # -- the fix --------------------------------------------------------------------------
    def _fix_site(
        self,
        ctx: Context,
        site: cst.Call,
        leaves: List[Optional[cst.BaseExpression]],
        out_value: Optional[cst.BaseExpression],
        compiled_names: frozenset,
        static: Set[int],
    ) -> None:
        scope = ctx.scope_of(site)
        positional = [a for a in site.args if a.keyword is None and not a.star]
        if len(positional) != len(site.args):
            if any(
                self._partitioned(ctx, leaf, ctx.scope_of(leaf))
                for leaf in leaves
                if leaf is not None
            ):
                ctx.report(
                    site,
                    "partitioned inputs by keyword or unpacking: check they are global arrays",
                    "Partitioned inputs passed by keyword or unpacking cannot be checked: "
                    f"{self._recipe(ctx)}.",
                )
            return
        conversions: List[Tuple[str, Optional[cst.BaseExpression], cst.BaseExpression]] = []
        unknown: List[Tuple[str, cst.BaseExpression]] = []
        for index, _position, arg in mp.dynamic_arguments(site, static):
            if index >= len(leaves) and len(leaves) != 1:
                break  # more positional arguments than specs (static ones): not partitioned
            leaf = leaves[index] if len(leaves) > 1 else leaves[0]
            if leaf is None or not self._partitioned(ctx, leaf, ctx.scope_of(leaf)):
                continue
            mesh, spec = self._spec_of(ctx, leaf, ctx.scope_of(leaf))
            if spec is None:
                continue  # never: _partitioned found the spec
            if not mp.host_local(ctx, arg.value) or not isinstance(arg.value, cst.Name):
                if not self._provably_global(ctx, arg.value, scope, compiled_names):
                    unknown.append((ctx.code(arg.value), spec))
                continue
            conversions.append((arg.value.value, mesh, spec))
        if unknown:
            self._report_unknown(ctx, site, unknown, out_value)
        if not conversions:
            return
        statement = mp.block_statement(ctx, site)
        with_mesh = innermost_mesh_with(ctx, site)
        shown = [n for n, _m, _s in conversions]
        names = ", ".join(shown)
        if statement is None:
            ctx.report(
                site,
                f"host-local NumPy {listed(shown)}: use {TO_GLOBAL} by hand",
                f"Host-local NumPy input(s) {names}: {RECIPE}.",
            )
            return
        utils = module_ref(ctx, MULTIHOST, scope)
        new_statements: List[cst.BaseStatement] = []
        for name, mesh, spec in conversions:
            mesh = (
                mesh
                if mesh is not None
                else (with_mesh.expr if with_mesh is not None and with_mesh.bind is None else None)
            )
            if isinstance(mesh, cst.Name) and not scope.lookup(mesh.value):
                mesh = None  # the sharding's mesh is not visible at the call site
            if mesh is None:
                ctx.report(
                    site,
                    f"host-local NumPy {listed([name], 18)} has no known mesh; use {TO_GLOBAL}",
                    f"Host-local NumPy input {name}, but its mesh is unknown: {RECIPE}.",
                )
                return
            new_statements.append(
                self._convert(utils, "host_local_array_to_global_array", name, mesh, spec, ctx)
            )
        after: List[cst.BaseStatement] = []
        out_name = self._output_name(ctx, site, statement)
        if (
            out_name is not None
            and out_value is not None
            and not isinstance(out_value, (cst.Tuple, cst.List))
        ):
            out_mesh, out_spec = self._spec_of(ctx, out_value, ctx.scope_of(out_value))
            out_mesh = (
                out_mesh
                if out_mesh is not None
                else conversions[0][1] or (with_mesh.expr if with_mesh is not None else None)
            )
            if (
                out_spec is not None
                and out_mesh is not None
                and self._used_as_host_data(ctx, out_name, statement)
            ):
                after.append(
                    self._convert(
                        utils, "global_array_to_host_local_array", out_name, out_mesh, out_spec, ctx
                    )
                )
        first = new_statements[0].with_changes(leading_lines=statement.leading_lines)
        new_statements[0] = first
        body = [*new_statements, statement.with_changes(leading_lines=()), *after]
        ctx.replace(
            statement,
            cst.FlattenSentinel(body),
            f"host-local NumPy {listed(shown)} -> {TO_GLOBAL}",
            detail=f"Host-local NumPy input(s) {names} -> {TO_GLOBAL}: pjit no longer "
            "concatenates per-process inputs.",
        )

    @staticmethod
    def _output_name(
        ctx: Context, site: cst.Call, statement: cst.SimpleStatementLine
    ) -> Optional[str]:
        if len(statement.body) != 1 or not isinstance(statement.body[0], cst.Assign):
            return None
        assign = statement.body[0]
        if assign.value is not site or len(assign.targets) != 1:
            return None
        target = assign.targets[0].target
        return target.value if isinstance(target, cst.Name) else None

    @staticmethod
    def _used_as_host_data(ctx: Context, name: str, statement: cst.SimpleStatementLine) -> bool:
        """``np.asarray(out)`` / ``np.array(out)`` / ``out[...]`` later in the same scope."""
        scope = ctx.scope_of(statement)
        line = ctx.position(statement).start.line
        for use in module_facts(ctx).name_loads.get(name, []):
            if ctx.scope_of(use) is not scope or ctx.position(use).start.line <= line:
                continue
            parent = ctx.parent(use)
            if isinstance(parent, cst.Subscript) and parent.value is use:
                return True
            if isinstance(parent, cst.Arg):
                call = ctx.parent(parent)
                if call_qualname(ctx, call, scope) in ("numpy.asarray", "numpy.array"):
                    return True
        return False

    @staticmethod
    def _convert(
        utils: cst.BaseExpression,
        function: str,
        name: str,
        mesh: cst.BaseExpression,
        spec: cst.BaseExpression,
        ctx: Context,
    ) -> cst.SimpleStatementLine:
        comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        call = cst.Call(
            func=cst.Attribute(value=ctx.copy(utils), attr=cst.Name(function)),
            args=[
                cst.Arg(cst.Name(name), comma=comma),
                cst.Arg(ctx.copy(mesh), comma=comma),
                cst.Arg(ctx.copy(spec)),
            ],
        )
        return cst.SimpleStatementLine(
            body=[cst.Assign(targets=[cst.AssignTarget(cst.Name(name))], value=call)]
        )
