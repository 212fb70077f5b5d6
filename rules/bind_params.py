"""JAX917 bind-params: ``subfuns, params = p.get_bind_params(ps)`` -> ``params = ...``.

Through JAX 0.9.2, ``Primitive.get_bind_params(params)`` returned two values: the
subfunctions a call primitive binds with (``[]`` for any other primitive) and the remaining
params, and ``bind`` took the subfunctions as its first positional arguments.  JAX 0.10.0
keeps them in the params (``params["subfuns"]``): ``get_bind_params`` returns the params
alone, and ``bind(*args, **params)`` takes them from there (read in the 0.9.0 and 0.10.0
sources of ``jax/_src/core.py``; ``core.eval_jaxpr`` itself changed so).  The interpreter
loop every custom jaxpr interpreter copies from ``eval_jaxpr``::

    subfuns, bind_params = eqn.primitive.get_bind_params(eqn.params)
    ans = eqn.primitive.bind(*subfuns, *map(read, eqn.invars), **bind_params)

then unpacks a dict of params into two names: ``ValueError`` for most primitives, and for
one with exactly two params, its two keys, silently.
"""

from __future__ import annotations

import ast
from typing import List, Optional, Tuple

from jaxmigrate.migrator import lazycst as cst, references as refs
from jaxmigrate.migrator.astfacts import Facts
from jaxmigrate.migrator.context import Context
from jaxmigrate.migrator.rule import Example, Lifecycle, Rule, Safety
from jaxmigrate.migrator.version import parse_version
from jaxmigrate.rules._arg_layout import in_slots
from jaxmigrate.rules._module_facts import module_facts

ATTRIBUTE = "get_bind_params"
BIND = "bind"
CHANGED = parse_version("0.10.0")  # the first release whose get_bind_params returns one value


class BindParams(Rule, code="JAX917", safety=Safety.SAFE):
    """subfuns, params = p.get_bind_params(ps); p.bind(*subfuns, *xs, **params) -> params = ...

    **What it does.** Where every release of the target range is JAX 0.10.0 or later, turns
    `subfuns, params = p.get_bind_params(ps)` into `params = p.get_bind_params(ps)` and drops
    the `*subfuns` that leads each `.bind(...)` call, where those calls are all that read the
    two names (the interpreter loop of `eval_jaxpr`, in a module that imports JAX).  Where
    the subfunctions are read otherwise (wrapped, indexed, handed on), where the result is
    indexed (`get_bind_params(ps)[1]`), or where the target range also holds releases before
    0.10.0 (no call works on both sides), it reports.  The new params read by key
    (`get_bind_params(ps)["subfuns"]`) are left alone.

    **Why.** Through 0.9.2 `get_bind_params` returned `(subfuns, params)` and `bind` took
    the subfunctions first; from 0.10.0 they travel in the params (`params["subfuns"]`),
    `get_bind_params` returns the params alone and `bind(*args, **params)` reads them there.
    The old unpacking raises `ValueError` (or, for a primitive with two params, binds their
    keys).

    **Use instead.** `params = p.get_bind_params(ps)` and `p.bind(*args, **params)`;
    subfunctions to transform are `params["subfuns"]`.
    """

    lifecycle = Lifecycle(removed=("0.10.0", "get_bind_params returns the params alone"))
    references = (
        refs.source_at("0.9.2", "jax/_src/core.py", "get_bind_params returns (subfuns, params)"),
        refs.source_at("0.10.0", "jax/_src/core.py", "get_bind_params returns the params"),
    )
    attributes = frozenset({ATTRIBUTE})
    examples = (
        Example(
            title="a jaxpr interpreter's loop (after core.eval_jaxpr)",
            before="""
            import jax


            def interpret(jaxpr, consts, *args):
                env = dict(zip(jaxpr.constvars, consts))
                env.update(zip(jaxpr.invars, args))
                for eqn in jaxpr.eqns:
                    invals = [env[v] if hasattr(v, "count") else v.val for v in eqn.invars]
                    subfuns, bind_params = eqn.primitive.get_bind_params(eqn.params)
                    ans = eqn.primitive.bind(*subfuns, *invals, **bind_params)
                    outs = ans if eqn.primitive.multiple_results else [ans]
                    env.update(zip(eqn.outvars, outs))
                return [env[v] for v in jaxpr.outvars]
            """,
            after="""
            import jax


            def interpret(jaxpr, consts, *args):
                env = dict(zip(jaxpr.constvars, consts))
                env.update(zip(jaxpr.invars, args))
                for eqn in jaxpr.eqns:
                    invals = [env[v] if hasattr(v, "count") else v.val for v in eqn.invars]
                    bind_params = eqn.primitive.get_bind_params(eqn.params)
                    ans = eqn.primitive.bind(*invals, **bind_params)
                    outs = ans if eqn.primitive.multiple_results else [ans]
                    env.update(zip(eqn.outvars, outs))
                return [env[v] for v in jaxpr.outvars]
            """,
            target_version="0.10.0",
        ),
    )

    def ast_gate(self, facts: Facts) -> bool:
        """A ``get_bind_params`` call unpacked into two targets (the one-value form JAX itself
        writes from 0.10.0 passes no site)."""
        calls = {id(c) for c in facts.calls if _called(c.func) == ATTRIBUTE}
        if not calls:
            return False
        for node in facts.binders:
            if type(node) is ast.Assign and id(node.value) in calls:
                targets = node.targets
                if len(targets) == 1 and type(targets[0]) in (ast.Tuple, ast.List):
                    return True
        return False

    def visit_attribute(self, node: cst.Attribute, ctx: Context) -> None:
        if node.attr.value != ATTRIBUTE or not ctx.reaches(CHANGED):
            return
        call = ctx.parent(node)
        if not isinstance(call, cst.Call) or call.func is not node:
            return
        if not module_facts(ctx).imports_jax:
            return  # another library's method of the same name
        holder = ctx.parent(call)
        names = _unpacked(ctx, holder, call)
        if names is None:
            return
        assign = holder
        assert isinstance(assign, cst.Assign)
        if ctx.target < CHANGED:
            ctx.report(
                assign,
                "get_bind_params() returns one value from JAX 0.10.0, two before it",
                f"{_DETAIL}  The target range holds releases on both sides of 0.10.0, and no "
                "call works on both.",
            )
            return
        subfuns, params = names
        binds = _binds_reading(ctx, assign, subfuns, params)
        if binds is None:
            ctx.report(
                assign,
                "get_bind_params() returns the params alone from JAX 0.10.0, subfuns in them",
                f"{_DETAIL}  Left here: {subfuns} is read otherwise than as the first "
                f"argument of a .bind(*{subfuns}, ...) call, or {params} otherwise than as "
                "its **params.",
            )
            return
        target = cst.AssignTarget(
            target=cst.Name(params),
            whitespace_before_equal=assign.targets[0].whitespace_before_equal,
        )
        message = "subfuns, params = p.get_bind_params(...) -> params = ...: JAX 0.10.0"
        ctx.replace(assign, assign.with_changes(targets=[target]), message)
        for bind in binds:
            kept = list(bind.args[1:])
            ctx.replace(
                bind,
                bind.with_changes(args=in_slots(bind.args, kept, kept)),
                f"bind(*{subfuns}, ...) -> bind(...): the params carry them from JAX 0.10.0",
            )


_DETAIL = (
    "Through JAX 0.9.2 Primitive.get_bind_params(params) returned (subfuns, params) and bind "
    "took the subfunctions first; from 0.10.0 it returns the params alone, the subfunctions "
    'in params["subfuns"], and bind(*args, **params) reads them there.'
)


def _called(func: ast.AST) -> Optional[str]:
    return func.attr if type(func) is ast.Attribute else None


def _unpacked(
    ctx: Context, holder: Optional[cst.CSTNode], call: cst.Call
) -> Optional[Tuple[str, str]]:
    """(subfuns, params): the two names ``holder``, an assignment of ``call``, unpacks it into."""
    if not isinstance(holder, cst.Assign) or holder.value is not call or len(holder.targets) != 1:
        return None
    target = holder.targets[0].target
    if not isinstance(target, (cst.Tuple, cst.List)) or len(target.elements) != 2:
        return None
    found = []
    for element in target.elements:
        if not isinstance(element, cst.Element) or not isinstance(element.value, cst.Name):
            return None
        found.append(element.value.value)
    if found[0] == found[1]:
        return None
    return found[0], found[1]


def _binds_reading(
    ctx: Context, assign: cst.Assign, subfuns: str, params: str
) -> Optional[List[cst.Call]]:
    """The ``.bind(*subfuns, ..., **params)`` calls that read the names ``assign`` binds,
    where nothing else reads or binds them in its scope (nested functions included); None
    where something does."""
    scope = ctx.scope_of(assign)
    seen = scope.lookup(subfuns), scope.lookup(params)
    target = assign.targets[0].target
    own = {id(element.value) for element in target.elements}  # type: ignore[attr-defined]
    binds: List[cst.Call] = []
    for name in ctx.all_nodes(cst.Name):
        if name.value not in (subfuns, params) or id(name) in own:
            continue
        arg = ctx.parent(name)
        if (isinstance(arg, cst.Attribute) and arg.attr is name) or (
            isinstance(arg, cst.Arg) and arg.keyword is name
        ):
            continue  # (``eqn.params``, ``f(params=...)``: no reference to a variable)
        if ctx.scope_of(name).lookup(name.value) is not seen[name.value == params]:
            continue  # (another binding of the same spelling)
        bind = ctx.parent(arg)
        if not (
            isinstance(arg, cst.Arg)
            and arg.keyword is None
            and isinstance(bind, cst.Call)
            and isinstance(bind.func, cst.Attribute)
            and bind.func.attr.value == BIND
        ):
            return None
        if name.value == subfuns:
            if arg.star != "*" or bind.args[0] is not arg:
                return None
            binds.append(bind)
        elif arg.star != "**":
            return None
    return binds
