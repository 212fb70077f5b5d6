"""JAX401 live-buffers: ``len(device.live_buffers())`` -> count of ``jax.live_arrays()`` on the
device.

The jax.Array migration guide, "live_buffers replaced with live_arrays".  Run on real jaxlib
0.4.13, 0.4.30 and 0.10.2, ``Device.live_buffers()`` returns ``[]`` with a DeprecationWarning
(jaxlib's ``py_device.cc`` hard-codes an empty list).
"""

from __future__ import annotations

import functools
from typing import List, Optional, Set, Tuple, Union

from jaxmigrate.migrator import lazycst as cst, references as refs
from jaxmigrate.migrator.context import Context
from jaxmigrate.migrator.rule import Example, Lifecycle, Rule, Safety
from jaxmigrate.migrator.scope import Scope, dotted_parts
from jaxmigrate.rules._flow import bound_only_to, call_site_arguments
from jaxmigrate.rules._receivers import receiver_tie

DEVICE_LISTS = frozenset(
    {
        "jax.devices",
        "jax.local_devices",
        "jax.lib.xla_bridge.devices",
        "jax.lib.xla_bridge.local_devices",
        "jax._src.xla_bridge.devices",
        "jax._src.xla_bridge.local_devices",
    }
)
DEVICE_TYPES = frozenset(
    {
        "jax.Device",
        "jax.lib.xla_client.Device",
        "jaxlib.xla_client.Device",
        "jaxlib.xla_extension.Device",
        "jax._src.lib.xla_client.Device",
    }
)


@functools.cache
def _scopes() -> Tuple[type, ...]:
    return (
        cst.FunctionDef,
        cst.Lambda,
        cst.ClassDef,
        cst.ListComp,
        cst.SetComp,
        cst.DictComp,
        cst.GeneratorExp,
    )


RECIPE = "[a for a in jax.live_arrays() if device in a.devices()]"


def recipe(device: str) -> str:
    return f"[a for a in jax.live_arrays() if {device} in a.devices()]"


class LiveBuffers(Rule, code="JAX401", safety=Safety.UNSAFE):
    """len(device.live_buffers()) -> len([a for a in jax.live_arrays() if device in a.devices()])

    **What it does.** Rewrites the leak counter `len(device.live_buffers())` to `len([a for a in
    jax.live_arrays() if device in a.devices()])` when the receiver is certainly a JAX device:
    `jax.devices()[i]`, `jax.local_devices()[i]`, a name assigned from one of those, a loop
    variable over `jax.devices()` (a slice of it, `sorted(...)` of it, or `x.devices()` of a JAX
    array), `x.device()` of a JAX array, or a parameter annotated `jax.Device`.  A parameter
    with no annotation is a device (or a device list) on the evidence of its call sites: a plain
    function of the module (not a method, never passed around) every call of which passes one; the
    fix's detail names that evidence, and a report names the call that passes something else.
    A receiver that is not a plain name is bound once (`device = jax.devices()[0]` on the line
    before). Every other use of `live_buffers()`, and receivers that are not known devices, are
    reported with the recipe.

    **Why.** `Device.live_buffers()` still exists but returns an empty list on every JAX
    since jax.Array (checked on 0.4.13, 0.4.30 and 0.10.2), so leak checks built on it
    silently pass.  The migration guide says to use `jax.live_arrays()`.

    **Why unsafe.** The count becomes real: an assertion like `len(...) == 0` that passed
    vacuously may now fail (which is the point, but it changes behaviour).  The count is of
    live arrays with a shard on the device, which equals the number of per-device buffers
    the old API counted (an array has one buffer per device it lives on).  Code that used
    the buffers themselves (their shape, `.delete()`) is reported: `jax.live_arrays()`
    returns whole arrays, and deleting one deletes it on every device.

    **Not touched.** The backend client's `live_buffers()` (`jax.devices()[0].client`,
    `xla_bridge.get_backend()`) still works and is left alone.
    """

    # reports a string annotation or a method call by its name, import or not
    needs_jax_import = False
    unsafe_fixes_only = True  # (all its fixes are unsafe: the survey runs it only with them)
    lifecycle = Lifecycle(
        needs="0.4.1", deprecated=("0.4.1", "jax.Array is the default array type")
    )
    references = (
        refs.array_migration("live_buffers replaced with live_arrays"),
        refs.api("jax.live_arrays"),
    )
    attributes = frozenset({"live_buffers"})
    examples = (
        Example(
            title="a leak counter",
            before="""
            import jax

            def count(device):
                return len(device.live_buffers())

            n = len(jax.devices()[0].live_buffers())
            """,
            after="""
            import jax

            def count(device):
                return len(device.live_buffers())

            device = jax.devices()[0]
            n = len([a for a in jax.live_arrays() if device in a.devices()])
            """,
            unsafe_fixes=True,
        ),
        Example(
            title="loop variables and annotated parameters are devices",
            before="""
            import jax

            def count(dev: jax.Device) -> int:
                return len(dev.live_buffers())

            counts = {d.id: len(d.live_buffers()) for d in jax.local_devices()}
            """,
            after="""
            import jax

            def count(dev: jax.Device) -> int:
                return len([a for a in jax.live_arrays() if dev in a.devices()])

            counts = {d.id: len([a for a in jax.live_arrays() if d in a.devices()]) for d in jax.local_devices()}
            """,  # noqa: E501
            unsafe_fixes=True,
        ),
        Example(
            title="a parameter every call of which passes a device",
            before="""
            import jax

            def live(device):
                return len(device.live_buffers())

            def snapshot(devices):
                return [live(d) for d in devices]

            before = snapshot(jax.devices())
            """,
            after="""
            import jax

            def live(device):
                return len([a for a in jax.live_arrays() if device in a.devices()])

            def snapshot(devices):
                return [live(d) for d in devices]

            before = snapshot(jax.devices())
            """,
            unsafe_fixes=True,
        ),
    )

    def visit_attribute(self, node: cst.Attribute, ctx: Context) -> None:
        call = ctx.parent(node)
        if not isinstance(call, cst.Call) or call.func is not node:
            return
        if call.args:
            return  # not the Device method
        scope = ctx.scope_of(node)
        receiver = node.value
        if _is_client(ctx, receiver, scope, 0):
            return  # ``Client.live_buffers()`` still lists the backend's arrays (checked on 0.10.2)
        evidence = _is_device(ctx, receiver, scope, 0)
        if not evidence:
            mixed = not_passed_a_device(ctx, receiver, scope)
            ctx.report(
                call,
                "live_buffers() returns [] since jax.Array; for a Device use jax.live_arrays()",
                "live_buffers() returns [] on every JAX since jax.Array; if the receiver is a "
                f"jax Device use {recipe(ctx.code(receiver))}" + (f" ({mixed})." if mixed else "."),
            )
            return
        outer = ctx.parent(call)
        wrapper = ctx.parent(outer) if isinstance(outer, cst.Arg) else None
        if not (
            isinstance(wrapper, cst.Call)
            and isinstance(wrapper.func, cst.Name)
            and wrapper.func.value == "len"
            and scope.lookup("len") is None
            and len(wrapper.args) == 1
        ):
            ctx.report(
                call,
                "live_buffers() returns [] since jax.Array; use jax.live_arrays() on the device",
                "live_buffers() returns [] on every JAX since jax.Array; use "
                f"{recipe(ctx.code(receiver))}: these are whole arrays, "
                "not per-device buffers (their shape is global, .delete() frees every shard).",
            )
            return
        live_arrays = ctx.ref("jax.live_arrays", scope)
        message = "device.live_buffers() -> jax.live_arrays() on the device"
        detail = f"device.live_buffers() is always [] since jax.Array. The device: {evidence}."
        if isinstance(receiver, cst.Name):
            ctx.replace(call, _comprehension(live_arrays, receiver), message, detail=detail)
            return
        self._bind_then_count(ctx, call, receiver, live_arrays, scope, message, detail)

    def _bind_then_count(self, ctx, call, receiver, live_arrays, scope, message, detail) -> None:  # noqa: ANN001
        class _ReplaceNode(cst.CSTTransformer):
            def __init__(self, old: cst.CSTNode, new: cst.CSTNode) -> None:
                super().__init__()
                self.old, self.new = old, new

            def on_leave(self, original_node, updated_node):  # noqa: ANN001, ANN201
                return self.new if original_node is self.old else updated_node

        line: Optional[Union[cst.SimpleStatementLine, cst.If]] = None
        previous: cst.CSTNode = call
        for ancestor in ctx.ancestors(call):
            if isinstance(ancestor, _scopes()):
                break
            if isinstance(ancestor, cst.SimpleStatementLine):
                line = ancestor
                break
            if isinstance(ancestor, cst.If) and ancestor.test is previous:
                line = ancestor  # ``if <test>:`` runs its test once, before anything else
                break
            if isinstance(ancestor, cst.BaseCompoundStatement):
                break
            previous = ancestor
        # names picked earlier this round in this scope (a nested scope may shadow them)
        taken: Set[str] = ctx.memo(("live_buffers", "names", id(scope.node)), set)
        name = _free_name(ctx, scope, "device", taken)
        taken.add(name)
        if line is None or not isinstance(ctx.parent(line), (cst.Module, cst.IndentedBlock)):
            # Not a plain statement: bind the device once inside the expression.
            new = cst.ListComp(
                elt=cst.Name("a"),
                for_in=cst.CompFor(
                    target=cst.Name(name),
                    iter=cst.List([cst.Element(receiver)]),
                    inner_for_in=cst.CompFor(
                        target=cst.Name("a"),
                        iter=cst.Call(func=live_arrays),
                        ifs=[cst.CompIf(test=_membership(cst.Name(name)))],
                    ),
                ),
            )
            ctx.replace(call, new, message, detail=detail)
            return
        rewritten = line.visit(_ReplaceNode(call, _comprehension(live_arrays, cst.Name(name))))
        assert isinstance(rewritten, (cst.SimpleStatementLine, cst.If))  # one call swapped
        assign = cst.SimpleStatementLine(
            body=[cst.Assign(targets=[cst.AssignTarget(cst.Name(name))], value=receiver)],
            leading_lines=line.leading_lines,
        )
        ctx.replace(
            line,
            cst.FlattenSentinel([assign, rewritten.with_changes(leading_lines=())]),
            message,
            detail=detail,
        )


def _membership(device: cst.BaseExpression) -> cst.Comparison:
    devices = cst.Call(func=cst.Attribute(value=cst.Name("a"), attr=cst.Name("devices")))
    return cst.Comparison(
        left=device, comparisons=[cst.ComparisonTarget(operator=cst.In(), comparator=devices)]
    )


def _comprehension(live_arrays: cst.BaseExpression, device: cst.Name) -> cst.ListComp:
    var = "arr" if device.value == "a" else "a"
    membership = _membership(device)
    if var != "a":
        membership = membership.with_changes(
            comparisons=[
                membership.comparisons[0].with_changes(
                    comparator=cst.Call(
                        func=cst.Attribute(value=cst.Name(var), attr=cst.Name("devices"))
                    )
                )
            ]
        )
    return cst.ListComp(
        elt=cst.Name(var),
        for_in=cst.CompFor(
            target=cst.Name(var), iter=cst.Call(func=live_arrays), ifs=[cst.CompIf(test=membership)]
        ),
    )


def _free_name(ctx: Context, scope: Scope, base: str, taken: Set[str]) -> str:
    """A name unbound where the new assignment lands and in every scope it can see.

    Nested scopes that bind the same name shadow it, so they do not clash."""
    name, number = base, 0
    while scope.lookup(name) is not None or name in taken:
        number += 1
        name = f"{base}{number}"
    return name


# -- is this expression a JAX device? ------------------------------------------------------
# Each test answers with the evidence, as a message's detail names it, or None.
_ORDERING = frozenset({"list", "tuple", "sorted", "reversed"})  # a device list, reordered


def _qual(ctx: Context, expr: cst.BaseExpression, scope: Scope) -> Optional[str]:
    return ctx.qualname(expr, scope) if dotted_parts(expr) else None


def _builtin(expr: cst.BaseExpression, scope: Scope, names: frozenset) -> bool:
    return isinstance(expr, cst.Name) and expr.value in names and scope.lookup(expr.value) is None


def _array_devices(ctx: Context, call: cst.Call, scope: Scope, depth: int) -> Optional[str]:
    """``x.devices()`` of a JAX array ``x``: the set of devices it lives on."""
    func = call.func
    if call.args or not isinstance(func, cst.Attribute) or func.attr.value != "devices":
        return None
    tie = receiver_tie(ctx, func.value, scope, depth + 1)
    if tie.kind not in ("array", "gda", "likely"):
        return None
    return f"{ctx.code(call)}, {tie.reason}"


def _device_list(
    ctx: Context, expr: cst.BaseExpression, scope: Scope, depth: int = 0
) -> Optional[str]:
    """``jax.devices(...)``/``jax.local_devices(...)`` (a slice of one, ``sorted``/``list`` of
    one), ``x.devices()`` of a JAX array, or a name bound only to one of those."""
    if depth > 4:
        return None
    if isinstance(expr, cst.Call):
        if _qual(ctx, expr.func, scope) in DEVICE_LISTS:
            return ctx.code(expr)
        if _builtin(expr.func, scope, _ORDERING) and expr.args and not expr.args[0].keyword:
            if expr.args[0].star:
                return None
            return _device_list(ctx, expr.args[0].value, scope, depth + 1)
        return _array_devices(ctx, expr, scope, depth)
    if (
        isinstance(expr, cst.Subscript)
        and len(expr.slice) == 1
        and isinstance(expr.slice[0].slice, cst.Slice)
    ):
        return _device_list(ctx, expr.value, scope, depth + 1)
    if isinstance(expr, cst.Name):
        found: List[str] = []

        def holds_devices(kind: str, value: cst.BaseExpression, home: Scope) -> bool:
            reason = _device_list(ctx, value, home, depth + 1) if kind == "value" else None
            found.extend([reason] if reason else [])
            return reason is not None

        if bound_only_to(ctx, expr.value, scope, holds_devices):
            return f"{expr.value} = {found[0]}"
        return _passed(ctx, expr, scope, depth, _device_list, "a device list")
    return None


def _is_device(ctx: Context, expr: cst.BaseExpression, scope: Scope, depth: int) -> Optional[str]:
    """Why ``expr`` is certainly a JAX device (the evidence), else None."""
    if depth > 4:
        return None
    if isinstance(expr, cst.Subscript):
        if len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index):
            if _device_list(ctx, expr.value, scope, depth + 1):
                return ctx.code(expr)
        return None
    if isinstance(expr, cst.Name):
        return _name_is_device(ctx, expr, scope, depth)
    if isinstance(expr, cst.Call):
        func = expr.func
        if isinstance(func, cst.Attribute) and func.attr.value == "device" and not expr.args:
            tie = receiver_tie(ctx, func.value, scope, depth + 1)  # the legacy Array.device()
            return f"{ctx.code(expr)}, {tie.reason}" if tie.kind in _ARRAYS else None
        if _builtin(func, scope, frozenset({"next"})) and len(expr.args) == 1:
            inner = expr.args[0].value  # next(iter(x.devices())), as JAX404 writes x.device()
            if (
                isinstance(inner, cst.Call)
                and _builtin(inner.func, scope, frozenset({"iter"}))
                and len(inner.args) == 1
                and isinstance(inner.args[0].value, cst.Call)
                and _array_devices(ctx, inner.args[0].value, scope, depth)
            ):
                return ctx.code(expr)
    return None


_ARRAYS = ("array", "gda", "likely")


def _is_client(ctx: Context, expr: cst.BaseExpression, scope: Scope, depth: int) -> bool:
    """A backend client: ``<device>.client``, ``get_backend()``, or a name bound only to those."""
    if depth > 4:
        return False
    if isinstance(expr, cst.Attribute) and expr.attr.value == "client":
        return True
    if isinstance(expr, cst.Call):
        parts = dotted_parts(expr.func)
        return (
            parts is not None
            and parts[-1] == "get_backend"
            and _qual(ctx, expr.func, scope) is not None
        )
    if isinstance(expr, cst.Name):
        return bound_only_to(
            ctx,
            expr.value,
            scope,
            lambda kind, value, home: kind == "value" and _is_client(ctx, value, home, depth + 1),
        )
    return False


def _name_is_device(ctx: Context, name: cst.Name, scope: Scope, depth: int) -> Optional[str]:
    """A name bound only to devices (assigned one, a loop over a device list, annotated
    ``jax.Device``), else a parameter every call of whose function passes a device."""
    found: List[str] = []

    def holds_a_device(kind: str, value: cst.BaseExpression, home: Scope) -> bool:
        if kind == "value":
            reason = _is_device(ctx, value, home, depth + 1)
        elif kind == "iter":
            reason = _device_list(ctx, value, home, depth + 1)
            reason = reason and f"an element of {reason}"
        else:
            reason = "annotated jax.Device" if _qual(ctx, value, home) in DEVICE_TYPES else None
        found.extend([reason] if reason else [])
        return reason is not None

    if bound_only_to(ctx, name.value, scope, holds_a_device):
        return f"{name.value}, {found[0]}"
    return _passed(ctx, name, scope, depth, _is_device, "a device")


def _passed(ctx: Context, name: cst.Name, scope: Scope, depth: int, test, what: str):  # noqa: ANN001, ANN202
    """A parameter of a plain function of this module every call of which passes there what
    ``test`` (:func:`_is_device`, :func:`_device_list`) proves: the evidence of the call sites
    (a caller elsewhere may pass anything else)."""
    if depth > 4:
        return None
    found = call_site_arguments(ctx, name, scope)
    if found is None:
        return None
    function, arguments = found
    reasons = [test(ctx, value, where, depth + 1) for value, where in arguments]
    if not all(reasons):
        return None
    calls = "its one call" if len(reasons) == 1 else f"each of its {len(reasons)} calls"
    return f"{name.value} of {function.name.value}(): {calls} here passes {what} ({reasons[0]})"


def not_passed_a_device(ctx: Context, name: cst.BaseExpression, scope: Scope) -> Optional[str]:
    """For a parameter some calls of whose function pass a device and some do not: the first
    argument that is not one, as a report names it (None: no such call-site evidence)."""
    if not isinstance(name, cst.Name):
        return None
    found = call_site_arguments(ctx, name, scope)
    if found is None:
        return None
    function, arguments = found
    others = [value for value, where in arguments if not _is_device(ctx, value, where, 1)]
    if not others or len(others) == len(arguments):
        return None
    return f"{function.name.value}({ctx.code(others[0])}) passes what is not known to be a device"
