"""The base of the rules that rewrite calls building a GlobalDeviceArray (JAX301-JAX304): what
they share (the class's lifecycle, its modules, the import fix-up, the sources) and the two
shapes of rewrite, a call replaced by a call and a statement replaced by statements."""

from __future__ import annotations

from typing import Any, ClassVar, Dict, List, Optional, Sequence, Tuple

from jaxmigrate.migrator import lazycst as cst, references as refs
from jaxmigrate.migrator.context import Context, NameSite
from jaxmigrate.migrator.references import Reference
from jaxmigrate.migrator.rule import Lifecycle, Rule, Safety
from jaxmigrate.rules._gda import (
    GDA_HISTORY,
    GDA_MODULES,
    METHOD_PARAMS,
    assignment_statement,
    bind_arguments,
    callable_text,
    expression_text,
    fix_dotted_imports,
    fresh_name,
    gda_names,
    hoisted_arguments,
    named_sharding,
    positional_args,
    render,
    returned_alone,
    statements,
    taken_names,
)
from jaxmigrate.rules._helpers import called_or_report, fitting


def gda_references(modern: str) -> Tuple[Reference, ...]:
    """The sources of a GDA constructor rule: GDA's own history, the migration guide's
    "Creating jax.Array" and the API page of ``modern``, what the call becomes."""
    return (*GDA_HISTORY, refs.array_migration("Creating jax.Array"), refs.api(modern))


class GdaRule(Rule):
    """A rule for a way of building a GlobalDeviceArray.  jax.Array (0.4.1) is what replaces
    it; GDA warns from 0.4.6 and its module is gone in 0.4.7."""

    lifecycle = Lifecycle(needs="0.4.1", deprecated="0.4.6", removed="0.4.7")
    legacy_modules = GDA_MODULES

    def visit_module(self, ctx: Context) -> None:
        fix_dotted_imports(ctx)


def sharded_call(
    call: cst.Call,
    params: Sequence[str],
    modern: str,
    what: str,
    recipe: str,
    site: NameSite,
    ctx: Context,
) -> Optional[Tuple[cst.Call, Dict[str, cst.BaseExpression]]]:
    """``what(global_shape, global_mesh, mesh_axes, last)`` as
    ``modern(global_shape, NamedSharding(global_mesh, spec), last)`` (``last`` is the final
    name in ``params``), with the bound arguments; None once it has reported why it cannot."""
    bound, reason = bind_arguments(call, params)
    if bound is None:
        ctx.report(
            call,
            _by_hand(what, "cannot be rewritten", modern),
            f"{what} cannot be rewritten ({reason}); use {recipe}.",
        )
        return None
    sharding = named_sharding(bound["global_mesh"], bound["mesh_axes"], ctx, site.scope)
    if sharding is None:
        ctx.report(call, *_no_axes(what, recipe))
        return None
    values = [bound["global_shape"], sharding, bound[params[-1]]]
    new = call.with_changes(
        func=ctx.ref(modern, site.scope), args=positional_args(call.args, values)
    )
    return new, bound


def _by_hand(what: str, why: str, modern: str) -> str:
    """``what why; use modern`` in a message, shorter where it does not fit."""
    method = what.rpartition(".")[2]
    return fitting(
        f"{what} {why}; use {modern}",
        f"{what} -> {modern} by hand",
        f"{method} -> {modern} by hand",
    )


def _no_axes(what: str, recipe: str) -> Tuple[str, str]:
    return (
        f"{what} with mesh_axes=None: choose a PartitionSpec by hand",
        f"{what} with mesh_axes=None: choose a PartitionSpec and use {recipe}.",
    )


MODERN = "jax.make_array_from_single_device_arrays"  # what the batched callbacks become


class BatchedCallbackRule(GdaRule):
    """Shared shape of the two ``from_batched_callback*`` rules: bind the arguments, place the
    call on a ``name = ...`` line, build the sharding, then emit the statements ``tail`` gives."""

    method: ClassVar[str]  # "from_batched_callback" / "from_batched_callback_with_devices"
    recipe: ClassVar[str]
    safety = Safety.SAFE
    references = gda_references("jax.make_array_from_single_device_arrays")

    def __init_subclass__(cls, **kwargs: Any) -> None:
        if "method" in cls.__dict__:  # the names, before the rule registers
            cls.names = gda_names("." + cls.method)
        super().__init_subclass__(**kwargs)

    def tail(
        self, target: str, s: str, idx: str, shape: str, callback: str, jax_name: str, taken: set
    ) -> List[str]:
        """The statements after the sharding and index map that build ``target``."""
        raise NotImplementedError

    def visit_name(self, site: NameSite, ctx: Context) -> None:
        what = f"GlobalDeviceArray.{self.method}"
        call = called_or_report(
            site,
            ctx,
            _by_hand(what, "no longer exists", MODERN),
            f"Use {self.recipe}.",
        )
        if call is None:
            return
        bound, reason = bind_arguments(call, METHOD_PARAMS)
        placed = assignment_statement(call, ctx)
        returned = placed is None and returned_alone(call, ctx)
        if bound is None or (placed is None and not returned):
            why = reason or "it is not the value of a plain `name = ...` or `return` statement"
            ctx.report(
                call,
                _by_hand(what, "cannot be rewritten here", MODERN),
                f"{what} cannot be rewritten here ({why}); use {self.recipe}.",
            )
            return
        if returned:  # ``return GDA.from_batched_callback(...)``: build it, then return it
            returned_line = ctx.parent(ctx.parent(call))
            assert isinstance(returned_line, cst.SimpleStatementLine)  # returned_alone saw to it
            placed = (returned_line, fresh_name("array", taken_names(ctx)))
        assert placed is not None  # placed, or returned: checked above
        line, target = placed
        if isinstance(bound["mesh_axes"], cst.Name) and bound["mesh_axes"].value == "None":
            ctx.report(call, *_no_axes(what, self.recipe))
            return
        taken = taken_names(ctx)
        hoist, values = hoisted_arguments(call, bound, target, taken, ctx, site.scope)
        sharding = named_sharding(values["global_mesh"], values["mesh_axes"], ctx, site.scope)
        if sharding is None:
            return
        jax_name = render(ctx.ref("jax", site.scope))
        s = fresh_name(f"{target}_sharding", taken)
        idx = fresh_name(f"{target}_indices", taken)
        if values["global_shape"] is bound["global_shape"]:
            shape = expression_text(values["global_shape"], ctx)
        else:
            shape = render(values["global_shape"])
        cb = values["data_callback"]
        if cb is bound["data_callback"]:
            callback = callable_text(expression_text(cb, ctx), cb)
        else:
            callback = render(cb)
        body = hoist + [
            f"{s} = {render(sharding)}\n",
            f"{idx} = {s}.addressable_devices_indices_map({shape})\n",
            *self.tail(target, s, idx, shape, callback, jax_name, taken),
            *([f"return {target}\n"] if returned else []),
        ]
        ctx.replace(
            line,
            statements(line, body, ctx.module),
            fitting(f"{what} -> {MODERN}", f"{self.method} -> {MODERN}"),
            detail=f"{what} -> {self.summary_of_fix}.",
        )

    summary_of_fix: ClassVar[str] = ""
