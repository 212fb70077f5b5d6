"""Functions that wrap pjit and forward its legacy keywords under their own names.

Projects wrap pjit (``def pjit(fn, in_axis_resources, out_axis_resources, ...): return
jax_pjit(fn, in_axis_resources=in_axis_resources, ...)``): JAX201 renames the keywords of the
inner call, but the wrapper's own parameters keep the removed names, and so do its callers.
When JAX 0.4.9 deprecated the keywords, maintainers renamed the wrapper's parameters and the
keywords at its call sites in the same change.  For a function of this module that passes a
parameter named ``in_axis_resources``/``out_axis_resources`` straight to pjit:

* by default, a finding at the wrapper says what to rename (an unsafe fix: renaming a
  function's parameters changes its interface);
* with ``--unsafe-fixes``, the parameter, its uses in the body and the keyword at every call
  of the wrapper in this module (``wrapper(...)``, ``functools.partial(wrapper, ...)``) are
  renamed to ``in_shardings``/``out_shardings``; a public wrapper keeps a finding that its
  callers in other modules must rename their keywords too.

The renaming is re-proposed every round from what the file state records, so an edit that
waits a round (inside a node another fix replaced) is not lost.  Methods are only reported
(``self.pjit(...)`` call sites cannot be told from other objects' methods), and so is a
wrapper whose body or callers already use the new name.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Set, Tuple

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.migrator.context import Context, Finding
from jaxmigrate.migrator.rule import Safety
from jaxmigrate.rules._flow import local_function
from jaxmigrate.rules._pjit import PARTIAL_NAMES, RENAMES, is_pjit_call, qualname_of

_STATE = "pjit.wrappers"  # file_state key: {wrapper name: {old parameter: new}}


def check_wrappers(ctx: Context) -> None:
    """Reports, or renames, the legacy parameters of this module's pjit wrappers."""
    state: Dict[str, Dict[str, str]] = ctx.file_state.setdefault(_STATE, {})  # type: ignore[assignment]
    for function, renames in _wrappers(ctx).items():
        _handle(ctx, function, renames, state)
    for name, renames in list(state.items()):
        named = _function_named(ctx, name)
        if named is not None:
            _rename(ctx, named, renames, report=True)


def _wrappers(ctx: Context) -> Dict[cst.FunctionDef, Dict[str, str]]:
    """Functions with a legacy-named parameter that they pass to a pjit call in their body."""
    found: Dict[cst.FunctionDef, Dict[str, str]] = {}
    for call in ctx.all_nodes(cst.Call):
        scope = ctx.scope_of(call)
        if is_pjit_call(ctx, call, scope) is None:
            continue
        for arg in call.args:
            value = arg.value
            if not (isinstance(value, cst.Name) and value.value in RENAMES):
                continue
            function = _parameter_owner(ctx, value)
            if function is not None:
                found.setdefault(function, {})[value.value] = RENAMES[value.value]
    return found


def _parameter_owner(ctx: Context, name: cst.Name) -> Optional[cst.FunctionDef]:
    """The function ``name`` is a parameter of (read directly in its body)."""
    bindings = ctx.scope_of(name).lookup(name.value)
    if not bindings or any(b.scope is not bindings[0].scope for b in bindings):
        return None
    owner = bindings[0].scope.node  # the parameter's function (also when assigned again there)
    if not isinstance(owner, cst.FunctionDef):
        return None
    params = owner.params
    every = [*params.posonly_params, *params.params, *params.kwonly_params]
    if not any(p.name.value == name.value for p in every):
        return None
    return owner


def _handle(
    ctx: Context,
    function: cst.FunctionDef,
    renames: Dict[str, str],
    state: Dict[str, Dict[str, str]],
) -> None:
    name = function.name.value
    old, new = _spelled(renames)
    blocked = _blocked(ctx, function, renames)
    calls = len(_call_sites(ctx, function)) if not blocked else 0
    where = f", the keywords at its {calls} call site(s) in this module" if calls else ""
    message = f"{name}() forwards {old} to pjit; rename to {new}"
    detail = (
        f"{name}() forwards {', '.join(sorted(renames))} to pjit, which renamed them "
        f"{', '.join(renames[k] for k in sorted(renames))} (deprecated in JAX 0.4.9, removed "
        f"in 0.4.14): rename its parameters{where} and the keywords of its callers"
        f"{' in other modules' if calls else ''}."
    )
    if blocked:
        message = f"{message} by hand"
        ctx.findings.append(Finding(function.name, ctx.rule.code, message, Safety.MANUAL.value))
        ctx.details[(id(function.name), ctx.rule.code, message)] = (
            f"{detail}  Not renamed: {blocked}."
        )
        return
    # The first parameter's renaming stands for the whole change: the engine applies it, or
    # (without --unsafe-fixes) turns it into the one finding, and then nothing else is proposed.
    params = function.params
    every = [*params.posonly_params, *params.params, *params.kwonly_params]
    first = next((p for p in every if p.name.value in renames), None)
    if first is not None and ctx.replace(
        first.name, cst.Name(renames[first.name.value]), message, Safety.UNSAFE, detail=detail
    ):
        state[name] = dict(renames)


def _blocked(ctx: Context, function: cst.FunctionDef, renames: Dict[str, str]) -> Optional[str]:
    """Why the wrapper cannot be renamed here (None: it can)."""
    if _method(ctx, function):
        return "a method: its callers cannot be told apart from other objects' methods"
    if _function_named(ctx, function.name.value) is not function:
        return f"{function.name.value} is defined more than once in this module"
    body = ctx.analysis.scopes.get(id(function))
    if body is None:
        return "its scope is unknown"
    used = _references(ctx, function, set(renames.values()), any_binding=True)
    for new in renames.values():
        if body.lookup(new) and any(b.scope is body for b in body.lookup(new) or ()):
            return f"{new} is already a name in it"
        if any(name.value == new for name in used):
            return f"it reads {new} from outside, which the new parameter would hide"
    sites, other = _uses(ctx, function)
    if other is not None:
        line = ctx.position(other).start.line
        return (
            f"{function.name.value} is used other than by calls at line {line}, "
            "which cannot be followed"
        )
    for call, _through_partial in sites:
        keywords = {a.keyword.value for a in call.args if a.keyword is not None}
        for old, new in renames.items():
            if old in keywords and new in keywords:
                return f"a call passes both {old} and {new}"
    return None


def _method(ctx: Context, function: cst.FunctionDef) -> bool:
    parent = ctx.parent(function)
    return isinstance(ctx.parent(parent), cst.ClassDef) if parent is not None else False


def _function_named(ctx: Context, name: str) -> Optional[cst.FunctionDef]:
    found = [
        f for f in ctx.all_nodes(cst.FunctionDef) if f.name.value == name and not _method(ctx, f)
    ]
    return found[0] if len(found) == 1 else None


def _call_sites(ctx: Context, function: cst.FunctionDef) -> List[Tuple[cst.Call, bool]]:
    """The calls that pass the wrapper's keywords: ``function(...)`` -> (call, False),
    ``functools.partial(function, ...)`` -> (call, True) and, when that partial is called
    at once, ``partial(function, ...)(...)`` -> (that call, False)."""
    return _uses(ctx, function)[0]


def _uses(
    ctx: Context, function: cst.FunctionDef
) -> Tuple[List[Tuple[cst.Call, bool]], Optional[cst.Name]]:
    """The wrapper's call sites, and the first other reference to it (a value passed on,
    a partial kept in a variable: calls through it cannot be followed)."""
    sites: List[Tuple[cst.Call, bool]] = []
    other: Optional[cst.Name] = None
    name = function.name.value
    for node in ctx.all_nodes(cst.Name):
        if node.value != name or node is function.name:
            continue
        parent = ctx.parent(node)
        if not _is_reference(node, parent):
            continue
        scope = ctx.scope_of(node)
        if local_function(ctx, node, scope) is not function:
            continue
        if isinstance(parent, cst.Call) and parent.func is node:
            sites.append((parent, False))
            continue
        call = ctx.parent(parent) if isinstance(parent, cst.Arg) else None
        if (
            isinstance(call, cst.Call)
            and call.args[0] is parent
            and parent.keyword is None
            and not parent.star
            and qualname_of(ctx, call.func, scope) in PARTIAL_NAMES
        ):
            holder = ctx.parent(call)
            if isinstance(holder, cst.Decorator):
                sites.append((call, True))
                continue
            if isinstance(holder, cst.Call) and holder.func is call:
                sites += [(call, True), (holder, False)]
                continue
        if other is None:
            other = node
    return sites, other


def _rename(ctx: Context, function: cst.FunctionDef, renames: Dict[str, str], report: bool) -> None:
    """Proposes every renaming still to do; a public wrapper keeps a finding for its callers
    elsewhere."""
    message = "pjit wrapper: " + ", ".join(f"{o} -> {n}" for o, n in sorted(renames.items()))
    params = function.params
    for param in [*params.posonly_params, *params.params, *params.kwonly_params]:
        if param.name.value in renames:
            ctx.replace(param.name, cst.Name(renames[param.name.value]), message, Safety.UNSAFE)
    for name in _references(ctx, function, set(renames)):
        ctx.replace(name, cst.Name(renames[name.value]), message, Safety.UNSAFE)
    for call, _through_partial in _call_sites(ctx, function):
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value in renames:
                ctx.replace(
                    arg.keyword,
                    cst.Name(renames[arg.keyword.value]),
                    message + " (call site)",
                    Safety.UNSAFE,
                )
    if report and not function.name.value.startswith("_"):
        old, new = _spelled(renames)
        ctx.report(
            function.name,
            f"{function.name.value}() now takes {new}: rename its callers' {old} elsewhere",
            f"{function.name.value}() now takes {', '.join(renames[k] for k in sorted(renames))} "
            f"(renamed from {', '.join(sorted(renames))} with pjit's own keywords): callers in "
            "other modules must rename their keywords too.",
        )


def _spelled(renames: Dict[str, str]) -> Tuple[str, str]:
    """The renamed keywords as a message names them: ``in/out_axis_resources`` for both."""
    if len(renames) == 2 and all(k.startswith(("in_", "out_")) for k in renames):
        return "in/out_axis_resources", "in/out_shardings"
    return ", ".join(sorted(renames)), ", ".join(renames[k] for k in sorted(renames))


def _references(
    ctx: Context, function: cst.FunctionDef, old: Set[str], any_binding: bool = False
) -> List[cst.Name]:
    """Reads and writes of the legacy parameter names in the function's own body (a nested
    function or class that binds the name again keeps its own); with ``any_binding``, every
    reference to those names in it, whatever it binds to."""
    body = ctx.analysis.scopes.get(id(function))
    found: List[cst.Name] = []
    for node in ctx.all_nodes(cst.Name):
        if node.value not in old or not _is_reference(node, ctx.parent(node)):
            continue
        if not any(up is function for up in ctx.ancestors(node)):
            continue
        if any_binding:
            found.append(node)
            continue
        bindings = ctx.scope_of(node).lookup(node.value)
        if bindings and not any(b.scope is body for b in bindings):
            continue  # bound again in between
        found.append(node)
    return found


def _is_reference(name: cst.Name, parent: Optional[cst.CSTNode]) -> bool:
    """A read or write of a variable (not an attribute, a keyword, a parameter's or a
    definition's own name, an import)."""
    if isinstance(parent, cst.Attribute):
        return name is not parent.attr
    if isinstance(parent, cst.Arg):
        return name is not parent.keyword
    if isinstance(parent, (cst.Param, cst.FunctionDef, cst.ClassDef)):
        return name is not parent.name
    return not isinstance(parent, (cst.ImportAlias, cst.ImportFrom))
