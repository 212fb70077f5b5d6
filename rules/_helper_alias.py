"""A ``jax.util`` helper given another name by an assignment: ``map = safe_map`` (netket 3.5's
``jax/_grad.py``, after ``from jax.util import safe_map``).

The import alias ``from jax.util import safe_map as map`` is rewritten where every use of the
name is a call rewritten safely (:mod:`rules._builtin_calls`).  The assignment is the same
alias written in two statements, and kept the module from importing on any JAX from 0.8.0:
name resolution reads no assignment as a qualified name, so its calls were no sites.  Here
each call of such a name is read as a call of the helper, and where every one has a safe
rewrite they all get it and the assignment goes (the clean-up then drops the import it left
unused).  Anything else leaves it all as it was: another binding of the name, a use other
than a call, a call inside another, one whose rewrite is not safe or is suppressed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, FrozenSet, List, Optional, Tuple

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.migrator.context import Context, NameSite
from jaxmigrate.migrator.scope import Site
from jaxmigrate.rules._builtin_calls import HELPERS
from jaxmigrate.rules._flow import name_loads
from jaxmigrate.rules._helpers import is_builtin

if TYPE_CHECKING:  # (LibCST is imported when a file needs it, not with the rules)
    Uses = List[Tuple[NameSite, cst.Call]]


def helper_alias(
    site: NameSite,
    ctx: Context,
    safe: Callable[[str, cst.Call], bool],
    writes: Callable[[str, cst.Call], FrozenSet[str]],
) -> Optional[Tuple[cst.SimpleStatementLine, str, Uses]]:
    """(the statement to delete, the alias, each use as a site of the helper and its call)
    when ``site`` is the whole value of ``NAME = helper``, the name's one binding, every use
    of which is a call ``safe(qualname, call)`` says is rewritten safely, none inside another,
    none suppressed, each writing only builtins it can (``writes``: those the rewrite of a
    call names); None otherwise."""
    assign = site.parent
    if site.guarded or not site.qualname.startswith(HELPERS) or not isinstance(assign, cst.Assign):
        return None
    line = ctx.parent(assign)
    target = assign.targets[0].target if len(assign.targets) == 1 else None
    if (
        assign.value is not site.node
        or not isinstance(target, cst.Name)
        or not isinstance(line, cst.SimpleStatementLine)
        or len(line.body) != 1
    ):
        return None
    name = target.value
    ctx.needs_name(name)  # (its every use is read: the piecewise path may have left one out)
    bindings = site.scope.lookup(name)
    if not bindings or len(bindings) != 1 or bindings[0].kind != "other":
        return None  # (an assignment's: where the statement runs, the name's one binding)
    if bindings[0].scope is not site.scope:
        return None
    uses: Uses = []
    for use in name_loads(ctx).get(name, []):
        if use is target or ctx.scope_of(use).lookup(name) is not bindings:
            continue
        call = ctx.parent(use)
        if not (isinstance(call, cst.Call) and call.func is use) or ctx.is_suppressed(call):
            return None
        if not safe(site.qualname, call):
            return None
        scope = ctx.scope_of(call)
        if any(b != name and not is_builtin(b, scope) for b in writes(site.qualname, call)):
            return None
        ancestors = tuple(reversed(ctx.ancestors(use)))
        uses.append((NameSite(Site(use, scope, ancestors, False), site.qualname), call))
    calls = {id(call) for _site, call in uses}
    if not uses or any(id(up) in calls for _site, call in uses for up in ctx.ancestors(call)):
        return None  # (one inside another: the inner one would be left to a later round)
    return line, name, uses
