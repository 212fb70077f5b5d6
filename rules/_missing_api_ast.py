"""JAX901's findings read from CPython's ``ast`` (issue #29): what
:class:`rules.missing_api.MissingApi`'s LibCST hooks report in a file, or None where the two
could differ.

The hooks, mirrored in their order: ``visit_name`` at every name site of a missing name (a
``Name`` or ``Attribute`` whose qualified name is one), ``visit_string`` at the flag name a
``jax.config.update``/``read`` call is given, then ``visit_module`` at every import of (or
from) a missing name.  Each records a site once per line and missing name (the first the
engine hands it: name sites in traversal order, then strings, then imports); a removed module
is reported once per file at its first use, the others at each site.

None (LibCST decides) where the view cannot be sure to match: a site where the rule may make a
fix instead of a finding (:func:`rules.missing_api._ast_absence` says which), a head name the
module binds in more than one way, a chain in a multi-line f-string, an alias imported below
the module's own statements (LibCST's analysis learns it only when it gets there), two sites
of one name on a line whose order LibCST's traversal may not keep, an odd flag string, or a
removed module beside a rule whose findings the grouping would have to leave out.
"""

from __future__ import annotations

import ast
from typing import Callable, Dict, FrozenSet, List, NamedTuple, Optional, Set, Tuple

from jaxmigrate.migrator.astview import AstView, Chain
from jaxmigrate.migrator.diagnostics import Diagnostic
from jaxmigrate.rules._api_history import Absence, history
from jaxmigrate.rules._ast_sites import Resolver, name_sites, one_string_token

# (the absence a site of this missing name reports, and whether a fix may apply there instead)
Judge = Callable[[str], Tuple[Optional[Absence], bool]]
Message = Callable[[Absence], Tuple[str, str]]

# Rules whose every finding is made in their own visit_module: when they run after JAX901, the
# grouping of removed modules (in JAX901's visit_module) does not see them yet.
_REPORT_IN_VISIT_MODULE = frozenset({"JAX902"})
# Where LibCST's analysis meets a line's sites out of source order: a conditional expression
# (its test first), a comprehension (its iterables and conditions before the element), the
# parameters of a def or lambda (each default before its annotation, ``*args`` after the
# keyword-only ones), a class's keywords (after all of its bases).
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp, ast.IfExp)
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_NAMES, _STRINGS, _IMPORTS = 0, 1, 2  # the order the engine calls the hooks in


class _Site(NamedTuple):
    hook: int  # _NAMES, _STRINGS or _IMPORTS
    node: ast.AST
    absence: Absence


def findings(
    view: AstView,
    code: str,
    names: FrozenSet[str],
    strings: FrozenSet[str],
    flag_calls: FrozenSet[str],
    judge: Judge,
    message: Message,
) -> Optional[List[Diagnostic]]:
    """Every finding of JAX901 (``code``, looking for ``names`` and the flag ``strings`` in
    ``flag_calls``) in the view's file, as its LibCST hooks report them; None when unsure."""
    sites: List[_Site] = []
    resolved = Resolver(view, names)
    found_names = name_sites(view, resolved)
    if found_names is None:
        return None
    for node, qualname in found_names:
        absence, fixes = judge(qualname)
        if fixes:
            return None  # visit_name may rewrite it (MissingApi._read_by_name)
        if absence is not None:
            sites.append(_Site(_NAMES, node, absence))
    func_chains = {id(chain.nodes[-1]): chain for chain in view.chains}
    found = _flag_strings(view, strings, flag_calls, func_chains, resolved)
    if found is None:
        return None
    sites.extend(found)
    for item in view.imports:
        if item.guarded:
            continue
        missing = first_missing(item.imported, names)
        if missing is None:
            continue
        absence, fixes = judge(missing)
        if fixes:
            return None
        if absence is not None:
            sites.append(_Site(_IMPORTS, item.node, absence))
    recorded = _recorded(view, sites)
    if recorded is None:
        return None
    return _report(view, code, recorded, message)


def first_missing(qualname: str, missing: FrozenSet[str]) -> Optional[str]:
    """The shortest dotted prefix of ``qualname`` (itself included) that is missing, as
    ``visit_module`` judges an import."""
    parts = qualname.split(".")
    for cut in range(2, len(parts) + 1):
        prefix = ".".join(parts[:cut])
        if prefix in missing:
            return prefix
    return None


def _flag_strings(
    view: AstView,
    strings: FrozenSet[str],
    flag_calls: FrozenSet[str],
    func_chains: Dict[int, Chain],
    resolved: Resolver,
) -> Optional[List[_Site]]:
    """``visit_string``: the first argument of a flag call, a plain string naming a flag the
    range lacks by name."""
    found: List[_Site] = []
    for call in view.facts.calls_of(set(flag_calls)):
        arguments: List[ast.AST] = [*call.args, *call.keywords]
        first = min(arguments, key=lambda a: view.start(a), default=None)
        value = first.value if isinstance(first, ast.keyword) else first
        if not isinstance(value, ast.Constant) or value.value not in strings:
            continue
        chain = func_chains.get(id(call.func))
        if chain is None:
            return None
        if chain.guarded:
            continue
        sure, head = resolved.resolve(chain.parts[0])
        if not sure or chain.in_fstring:
            return None
        if head is None or ".".join((head, *chain.parts[1:])) not in flag_calls:
            continue
        if not one_string_token(view, value):
            return None  # implicitly concatenated (no site for LibCST), or odd
        absence = history().flag_absence(value.value, view.target, view.upper)
        if absence is not None:
            found.append(_Site(_STRINGS, value, absence))
    return found


def _recorded(view: AstView, sites: List[_Site]) -> Optional[List[_Site]]:
    """The sites ``MissingApi._record`` keeps: the first per line and missing name, in the
    order the engine calls the hooks (name sites in LibCST's traversal order, which is the
    source order but on the lines of :func:`_reordered_lines`)."""
    by_key: Dict[Tuple[int, str], List[_Site]] = {}
    for site in sites:
        key = (view.start(site.node)[0], site.absence.qualname)
        by_key.setdefault(key, []).append(site)
    kept: List[_Site] = []
    reordered: Optional[Set[int]] = None
    for (line, _qualname), found in by_key.items():
        hook = min(site.hook for site in found)
        first = [site for site in found if site.hook == hook]
        if len(first) > 1 and hook != _IMPORTS:
            if reordered is None:
                reordered = _reordered_lines(view.tree)
            if line in reordered:
                return None
            first.sort(key=lambda site: view.start(site.node))
        kept.append(first[0])  # (imports: in the file's order, as the view lists them)
    return kept


def _reordered_lines(tree: ast.Module) -> Set[int]:
    lines: Set[int] = set()

    def span(node: Optional[ast.AST]) -> None:
        if node is not None:
            end = node.end_lineno or node.lineno  # type: ignore[attr-defined]
            lines.update(range(node.lineno, end + 1))  # type: ignore[attr-defined]

    for node in ast.walk(tree):
        if isinstance(node, _COMPREHENSIONS):
            span(node)
        elif isinstance(node, _DEFS):
            arguments = node.args
            every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
            every += [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
            for default in [*arguments.defaults, *arguments.kw_defaults]:
                span(default)
            for argument in every:
                span(argument.annotation)
        elif isinstance(node, ast.ClassDef) and node.keywords:
            for base in [*node.bases, *node.keywords]:
                span(base)
    return lines


def _grouped(
    view: AstView,
    code: str,
    modules: Dict[str, Tuple[Absence, List[ast.AST]]],
    message: Message,
    spoken: Set[int],
) -> List[Diagnostic]:
    """Each removed module once, at its first use on a line not ``spoken`` to."""
    found = []
    for absence, nodes in modules.values():
        left = [node for node in nodes if view.start(node)[0] not in spoken]
        finding = view.report_once(code, left, *message(absence), cover=False)
        if finding is not None:
            found.append(finding)
    return found


def _spoken_first(
    view: AstView,
    code: str,
    modules: Dict[str, Tuple[Absence, List[ast.AST]]],
    others: List[Diagnostic],
) -> Optional[Set[int]]:
    """The lines other rules spoke to before the hook ran (``others``: their findings, once
    every rule answered): the hook runs after the traversal's hooks and the ``visit_module``
    of the rules before it, and leaves out the uses on the lines those spoke to (or count as
    a module's uses).  None when a rule after it speaks on a line of a use: whether it spoke
    first, the view cannot tell (a ``visit_module``-only rule did not:
    ``_REPORT_IN_VISIT_MODULE``)."""
    mine = view.codes.index(code)
    before = set(view.codes[:mine])
    later = {c for c in view.codes[mine + 1 :] if c not in _REPORT_IN_VISIT_MODULE}
    lines = {view.start(node)[0] for _absence, nodes in modules.values() for node in nodes}
    if any(d.code in later and d.line in lines for d in others):
        return None
    if any(not lines.isdisjoint(view.covered_by.get(c, ())) for c in later):
        return None
    spoken = {d.line for d in others if d.code in before}
    spoken.update(*(view.covered_by.get(c, ()) for c in before))
    return spoken


def _report(
    view: AstView, code: str, sites: List[_Site], message: Message
) -> Optional[List[Diagnostic]]:
    """The findings: each missing name at its site, each removed module once (``visit_module``
    leaves out its uses on lines where another rule spoke first)."""
    found: List[Diagnostic] = []
    modules: Dict[str, Tuple[Absence, List[ast.AST]]] = {}
    for site in sites:
        known = history().lookup(site.absence.qualname)
        if known is not None and known.is_module:
            modules.setdefault(site.absence.qualname, (site.absence, []))[1].append(site.node)
            continue
        finding = view.report(code, site.node, *message(site.absence))
        if finding is not None:
            found.append(finding)
    if modules:
        mine = view.codes.index(code)
        if mine == 0 and all(c in _REPORT_IN_VISIT_MODULE for c in view.codes[1:]):
            # (only rules that report in their own visit_module, after it: nobody spoke yet)
            found.extend(_grouped(view, code, modules, message, set()))
        else:

            def finish(others: List[Diagnostic]) -> Optional[List[Diagnostic]]:
                spoken = _spoken_first(view, code, modules, others)
                return None if spoken is None else _grouped(view, code, modules, message, spoken)

            view.finishing.append(finish)  # (made once every rule answered)
    return sorted(found, key=lambda d: (d.line, d.column))
