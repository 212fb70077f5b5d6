"""JAX906's rewrite of ``jax.scipy.linalg.solve(..., sym_pos=...)`` into ``assume_a=`` (a call,
or a ``functools.partial`` of solve): the replacement JAX named when it deprecated ``sym_pos``
in 0.3.15, following ``scipy.linalg.solve``."""

from __future__ import annotations

from typing import List, Optional

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.migrator.context import Context
from jaxmigrate.rules._arg_layout import renamed_arg
from jaxmigrate.rules._helpers import needs_to_fix

ASSUME_A_SINCE = "0.3.15"  # solve's assume_a= (jax 0.3.15's changelog; 0.3.14's solve lacks it)


def solve(call: cst.Call, ctx: Context) -> None:
    """``solve(..., sym_pos=v)`` -> ``assume_a="pos"`` (a call, or a ``functools.partial``)."""
    named = {arg.keyword.value: arg for arg in call.args if arg.keyword is not None}
    sym_pos = named.get("sym_pos")
    if sym_pos is None:
        return
    if "assume_a" in named:
        _solve_both(call, sym_pos, named["assume_a"], ctx)
        return
    value = sym_pos.value
    new: Optional[cst.Arg] = None
    if isinstance(value, cst.Name) and value.value == "True":
        new = renamed_arg(sym_pos, "assume_a", cst.SimpleString('"pos"'))
    elif not (isinstance(value, cst.Name) and value.value == "False"):
        choice = cst.parse_expression(f'"pos" if {ctx.code(value)} else "gen"')
        new = renamed_arg(sym_pos, "assume_a", choice)
    args: List[cst.Arg] = []
    for arg in call.args:
        if arg is not sym_pos:
            args.append(arg)
        elif new is not None:
            args.append(new)
    if args and new is None:  # a dropped last argument leaves no dangling comma
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    needs = "" if new is None else needs_to_fix(ctx, ASSUME_A_SINCE)  # (False: just dropped)
    if needs is None:
        ctx.report(
            call,
            f"solve(sym_pos=...) is deprecated; assume_a=, its replacement, needs jax "
            f"{ASSUME_A_SINCE}",
            "Every release of the target range must take the call: keep sym_pos= there, or "
            f'raise the target to {ASSUME_A_SINCE}, where assume_a="pos" replaces sym_pos=True.',
        )
        return
    message = 'solve(sym_pos=...) -> solve(assume_a="pos"), its replacement since jax 0.3.15'
    ctx.replace(call, call.with_changes(args=args), message, needs=needs)


def _solve_both(call: cst.Call, sym_pos: cst.Arg, assume_a: cst.Arg, ctx: Context) -> None:
    """``solve(..., sym_pos=v, assume_a=a)``: JAX's solve took ``"pos"`` where ``v`` was true,
    else ``a`` (jax/_src/scipy/linalg.py while it took ``sym_pos``).  So ``sym_pos=True`` makes
    ``assume_a="pos"``, ``sym_pos=False`` goes, and another ``v`` chooses between the two where
    neither value can have an effect (a name, a string); anything else is reported."""
    value, chosen = sym_pos.value, assume_a.value
    plain = (cst.Name, cst.SimpleString)
    new: Optional[cst.BaseExpression] = chosen
    if isinstance(value, cst.Name) and value.value == "True" and isinstance(chosen, plain):
        new = cst.SimpleString('"pos"')
    elif isinstance(value, cst.Name) and value.value == "False":
        pass
    elif isinstance(value, plain) and isinstance(chosen, plain):
        new = cst.parse_expression(f'"pos" if {ctx.code(value)} else {ctx.code(chosen)}')
    else:
        ctx.report(call, 'solve() with both sym_pos and assume_a: a true sym_pos meant "pos"')
        return
    args = [
        arg if arg is not assume_a else arg.with_changes(value=new)
        for arg in call.args
        if arg is not sym_pos
    ]
    if call.args[-1] is sym_pos:  # a dropped last argument leaves no dangling comma
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    message = 'solve(sym_pos=, assume_a=) -> solve(assume_a=): a true sym_pos meant "pos"'
    ctx.replace(call, call.with_changes(args=args), message)
