"""Builtins a call recipe writes: where the module binds their name to something else, and
where the builtin ``list(...)`` a recipe wraps its call in adds nothing.

``list(map(f, xs))`` means Python's ``map`` only where nothing else is bound to ``map``.  One
binding may stand: an import of the removed ``jax.util`` helper itself (``from jax.util
import safe_map as map``), since that import goes once the calls are rewritten.  It goes in
the same round only if every use of the name is rewritten then; otherwise the new ``map``
would still read as ``safe_map`` in the next round and be rewritten again, without end.  So
such a call is rewritten only when every use of the name is a call that is rewritten safely,
none inside another (whose rewrite would wait a round).
"""

from __future__ import annotations

from typing import Callable, FrozenSet, Optional

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.migrator.context import Context, NameSite
from jaxmigrate.migrator.scope import Scope
from jaxmigrate.rules._flow import name_loads
from jaxmigrate.rules._helpers import is_builtin

HELPERS = "jax.util."


def shadowed(
    builtins: FrozenSet[str],
    site: NameSite,
    ctx: Context,
    rewritten_safely: Callable[[str, cst.Call], bool],
) -> Optional[str]:
    """Why one of ``builtins`` (the names a recipe calls as Python's) cannot be written at
    ``site``: None when each is the builtin there, or a ``jax.util`` helper every use of which
    is a call that ``rewritten_safely(qualname, call)`` says this round rewrites."""
    for name in sorted(builtins):
        if is_builtin(name, site.scope):
            continue
        helper = site.scope.resolve_name(name) or ""
        if not helper.startswith(HELPERS):
            return f"{name} is not the builtin here"
        bindings = site.scope.lookup(name)
        for use in name_loads(ctx).get(name, []):
            if ctx.scope_of(use).lookup(name) is not bindings or _in_import(use, ctx):
                continue
            call = ctx.parent(use)
            if not (isinstance(call, cst.Call) and call.func is use):
                return f"{name} is {helper} here, and it is also used other than called"
            if not rewritten_safely(helper, call):
                return f"{name} is {helper} here, and not every call of it is rewritten safely"
            if any(_calls_helper(up, ctx) for up in ctx.ancestors(call)):
                return f"{name} is {helper} here, and a call of it is inside another such call"
    return None


def _calls_helper(node: cst.CSTNode, ctx: Context) -> bool:
    """A call of a ``jax.util`` helper: its rewrite and one of a call inside it cannot both be
    made in one round, so the import would outlive the first."""
    if not isinstance(node, cst.Call):
        return False
    return (ctx.qualname(node.func, ctx.scope_of(node)) or "").startswith(HELPERS)


def _in_import(node: cst.CSTNode, ctx: Context) -> bool:
    return any(isinstance(up, (cst.Import, cst.ImportFrom)) for up in ctx.ancestors(node))


# Builtins that read an iterable to its end with nothing of the caller's running between two
# reads (only what the items' own hash, ``+`` or ``<`` do): given one, a recipe's list(...)
# adds nothing (``tuple(safe_map(f, xs))`` -> ``tuple(map(f, xs))``, ``sum(safe_map(np.size,
# xs))`` -> ``sum(map(np.size, xs))``).  A ``for`` loop is not one: it would interleave its
# body with the calls of ``f``; nor are ``any`` and ``all``, which stop early.
CONSUMERS = frozenset({"list", "tuple", "set", "frozenset", "sorted", "dict", "sum", "min", "max"})


def consumed_whole(call: cst.BaseExpression, scope: Scope, ctx: Context) -> bool:
    """``call`` is the only argument of one of :data:`CONSUMERS` (the builtin), or the iterable
    of a comprehension that does nothing else while it reads it (:func:`_read_whole`)."""
    arg = ctx.parent(call)
    outer = ctx.parent(arg)
    if isinstance(arg, cst.CompFor):
        return _read_whole(call, arg, scope, ctx)
    return (
        isinstance(arg, cst.Arg)
        and isinstance(outer, cst.Call)
        and len(outer.args) == 1
        and not arg.keyword
        and not arg.star
        and isinstance(outer.func, cst.Name)
        and outer.func.value in CONSUMERS
        and is_builtin(outer.func.value, scope)
    )


def _read_whole(call: cst.BaseExpression, clause: cst.CompFor, scope: Scope, ctx: Context) -> bool:
    """``{k: v for k, v in safe_zip(ks, vs)}``: a comprehension with one ``for`` and no ``if``
    whose items are made of its own names and constants only (a generator expression too,
    when a consumer takes it whole).  It builds its result as it reads the iterable, and
    nothing it does between two reads can be seen: with or without the ``list(...)``, the
    iterables are read, ``f`` called and a length mismatch raised at the same item, as for
    ``dict(zip(ks, vs, strict=True))``."""
    comp = ctx.parent(clause)
    if clause.iter is not call or clause.ifs or clause.inner_for_in or clause.asynchronous:
        return False
    if isinstance(comp, cst.DictComp):
        parts = [comp.key, comp.value]
    elif isinstance(comp, (cst.ListComp, cst.SetComp)):
        parts = [comp.elt]
    elif isinstance(comp, cst.GeneratorExp) and consumed_whole(comp, scope, ctx):
        parts = [comp.elt]
    else:
        return False
    names = _target_names(clause.target)
    return names is not None and all(_made_of(part, names) for part in parts)


def _target_names(target: cst.BaseExpression) -> Optional[FrozenSet[str]]:
    """The names a ``for`` target of plain names and tuples of them binds; None otherwise."""
    if isinstance(target, cst.Name):
        return frozenset({target.value})
    if isinstance(target, (cst.Tuple, cst.List)):
        found: FrozenSet[str] = frozenset()
        for element in target.elements:
            inner = _target_names(element.value) if isinstance(element, cst.Element) else None
            if inner is None:
                return None
            found |= inner
        return found
    return None


def _made_of(node: cst.BaseExpression, names: FrozenSet[str]) -> bool:
    """``node`` is one of ``names``, a constant, or a tuple or list of those."""
    if isinstance(node, cst.Name):
        return node.value in names
    if isinstance(node, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString)):
        return True
    if isinstance(node, (cst.Tuple, cst.List)):
        return all(isinstance(e, cst.Element) and _made_of(e.value, names) for e in node.elements)
    return False
