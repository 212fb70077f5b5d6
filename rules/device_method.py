"""JAX404 device-method: ``x.device()`` -> ``next(iter(x.devices()))``.

Never the ``.device`` property, which from JAX 0.4.31 returns a Sharding for multi-device arrays
and does not exist at all in 0.4.27-0.4.30.  Changelog: 0.4.21 deprecates ``Array.device()``,
0.4.27 removes it; on 0.10 ``x.device()`` raises ``TypeError: 'Device' object is not callable``.
"""

from __future__ import annotations

from typing import List, Optional, Tuple

from jaxmigrate.migrator import lazycst as cst, references as refs
from jaxmigrate.migrator.astfacts import Facts
from jaxmigrate.migrator.context import Context
from jaxmigrate.migrator.rule import Example, Lifecycle, Rule, Safety
from jaxmigrate.rules._helpers import parse_statement_in
from jaxmigrate.rules._receiver_gate import ast_called_without_arguments
from jaxmigrate.rules._text_gates import DeviceMethodGate
from jaxmigrate.rules._verdict import FILE, FIX, REPORT, decide, receiver_of_method

MODERN = "next(iter(x.devices()))"


class DeviceMethod(DeviceMethodGate, Rule, code="JAX404", safety=Safety.UNSAFE):
    """x.device() on a jax.Array -> next(iter(x.devices())) (never the .device property)

    **What it does.** Rewrites the removed `Array.device()` method to
    `next(iter(x.devices()))` on receivers tied to a JAX array (the result of a `jax`/`jnp`
    call or of a jitted function, a name assigned only such values, a parameter annotated
    `jax.Array`/`jnp.ndarray`).  Other `.device()` calls in a module that imports JAX are
    reported; `.device()` of other libraries' objects is left alone.

    **Why.** `device()` was deprecated in JAX 0.4.21 and removed in 0.4.27.  From 0.4.31
    `device` is a *property*, so the old call raises `TypeError: 'Device' object is not
    callable`.

    **Why not `x.device`.** The property does not exist in 0.4.27-0.4.30 and returns the
    *Sharding* (not an error) for an array on several devices, so it is never suggested.

    **Safety: unsafe.** The old method raised on an array spread over several devices;
    `next(iter(x.devices()))` silently picks one.  Add `assert len(x.devices()) == 1` if the
    code relied on the error, or use `x.sharding`.

    **Use instead.** `next(iter(x.devices()))` for a single-device array, `x.devices()` (a
    set) or `x.sharding` in general.
    """

    unsafe_fixes_only = True  # (all its fixes are unsafe: the survey runs it only with them)
    lifecycle = Lifecycle(
        needs="0.4.1",
        deprecated=("0.4.21", "Array.device() deprecated"),
        removed=("0.4.27", "Array.device() removed; use arr.devices()"),
    )
    references = (refs.api("jax.Array"),)
    attributes = frozenset({"device"})
    asks_for_whole = True  # visit_attribute asks once it has a `.device()` call
    examples = (
        Example(
            title="the device an array lives on",
            unsafe_fixes=True,
            before="""
            import jax.numpy as jnp

            x = jnp.zeros(3)
            print(x.device())
            """,
            after="""
            import jax.numpy as jnp

            x = jnp.zeros(3)
            print(next(iter(x.devices())))
            """,
        ),
        Example.reported(
            title="an untied receiver is reported",
            code="""
            import jax

            def where(x):
                return x.device()
            """,
        ),
    )

    def ast_gate(self, facts: Facts) -> bool:
        return ast_called_without_arguments(facts, "device")  # the .device property is modern

    def visit_attribute(self, node: cst.Attribute, ctx: Context) -> None:
        call = receiver_of_method(ctx, node)
        if call is None or call.args:
            return
        ctx.needs_whole_module()  # (decide reads the receiver's flow and the module's facts)
        # `.device()` called with no argument is a method only JAX arrays had (torch, TF and
        # CuPy have a `.device` attribute, never called): in a module that imports JAX and no
        # other array library, and defines no `device` method itself, it is a jax.Array.
        verdict, tie = decide(ctx, node, specific=True)
        receiver = ctx.code(node.value)
        if verdict == REPORT:
            ctx.report(
                call,
                "Array.device() was removed in JAX 0.4.27; "
                "for a jax.Array use next(iter(x.devices()))",
                f"If {receiver} is a jax.Array use "
                f"next(iter({receiver}.devices())) (not the .device property, which returns a "
                "Sharding on several devices).",
            )
            return
        if verdict not in (FIX, FILE):
            return
        devices = cst.Call(func=cst.Attribute(value=node.value, attr=cst.Name("devices")))
        new = cst.Call(
            func=cst.Name("next"),
            args=[cst.Arg(cst.Call(func=cst.Name("iter"), args=[cst.Arg(devices)]))],
        )
        evidence = (
            f" {receiver} is taken for a jax.Array: {tie.reason}."
            if verdict == FIX and tie.reason
            else f" {receiver} is taken for a jax.Array: .device() is a method only JAX arrays "
            "had, and this module imports JAX and no other array library."
            if verdict == FILE
            else ""
        )
        scope = ctx.scope_of(call)
        if scope.lookup("next") is not None or scope.lookup("iter") is not None:
            ctx.report(
                call,
                "Array.device() was removed in JAX 0.4.27; use next(iter(x.devices()))",
                f"Use next(iter({receiver}.devices())); "
                "not rewritten: next/iter are shadowed here.",
            )
            return
        contract = raises_value_error_contract(ctx, call, node.value)
        if contract is not None:
            statement, guard = contract
            ctx.replace(
                statement,
                cst.FlattenSentinel([guard, statement.deep_replace(call, new)]),
                ".device() -> next(iter(x.devices())), after a check that raises ValueError",
                detail=f"{receiver}.device() -> next(iter({receiver}.devices())), after a check "
                f"that raises ValueError when {receiver} spans several devices, as the old method "
                f"did (the surrounding try catches it).{evidence}",
            )
            return
        ctx.replace(
            call,
            new,
            ".device() -> next(iter(x.devices()))",
            detail=f"{receiver}.device() -> next(iter({receiver}.devices())): the old method "
            f"raised when the array spans several devices.{evidence}",
        )


CATCHES_VALUE_ERROR = frozenset({"ValueError", "Exception", "BaseException"})


def raises_value_error_contract(
    ctx: Context, call: cst.Call, receiver: cst.BaseExpression
) -> Optional[Tuple[cst.SimpleStatementLine, cst.If]]:
    """``x.device()`` in a statement directly inside ``try:`` whose handler catches ValueError:
    the code relied on the old method raising for an array on several devices.  Returns the
    statement and the guard to put before it (``if len(x.devices()) != 1: raise ValueError``),
    or None.  Only for a receiver that is a plain name or attribute chain (evaluated twice)."""
    if not isinstance(receiver, (cst.Name, cst.Attribute)) or any(
        not isinstance(part, (cst.Name, cst.Attribute)) for part in _chain(receiver)
    ):
        return None
    statement: Optional[cst.CSTNode] = call
    while statement is not None and not isinstance(statement, cst.SimpleStatementLine):
        statement = ctx.parent(statement)
    block = ctx.parent(statement) if statement is not None else None
    try_node = ctx.parent(block) if isinstance(block, cst.IndentedBlock) else None
    if not isinstance(try_node, cst.Try) or try_node.body is not block:
        return None
    if not any(_catches_value_error(handler) for handler in try_node.handlers):
        return None
    guard = parse_statement_in(
        f"if len({cst.Module([]).code_for_node(receiver)}.devices()) != 1:\n"
        "    raise ValueError('the array spans several devices')\n",
        ctx.module,
    )
    return statement, guard  # type: ignore[return-value]


def _chain(expr: cst.BaseExpression) -> List[cst.BaseExpression]:
    parts = [expr]
    while isinstance(expr, cst.Attribute):
        expr = expr.value
        parts.append(expr)
    return parts


def _catches_value_error(handler: cst.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    kinds = (
        [e.value for e in handler.type.elements]
        if isinstance(handler.type, cst.Tuple)
        else [handler.type]
    )
    names = kinds
    return any(isinstance(n, cst.Name) and n.value in CATCHES_VALUE_ERROR for n in names)
