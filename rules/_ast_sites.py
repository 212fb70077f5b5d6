"""The name sites of a rule's ``names`` read from CPython's ``ast`` (issue #29): where the
engine would call a rule's ``visit_name`` hook on a reference, as
:class:`migrator.astview.AstView` sees the file, for the rules that answer without LibCST
(:meth:`migrator.rule.Rule.ast_findings`).

LibCST's analysis makes a site of every ``Name`` or ``Attribute`` whose qualified name is one
of the rule's names, outside compatibility code; an import is a site of its own, which the
rules that read it handle apart.  None (LibCST decides) where the view cannot be sure to
match: a head name the module binds in more than one way, a chain in a multi-line f-string,
or an alias imported below the module's own statements (LibCST's analysis learns it only when
it gets there).
"""

from __future__ import annotations

import ast
import io
import tokenize
from typing import ClassVar, Dict, FrozenSet, Iterable, List, Optional, Set, Tuple

from jaxmigrate.migrator.astview import AstView, Chain, ImportSite
from jaxmigrate.migrator.diagnostics import UNSAFE_HINT, UNSAFE_NOTE, Diagnostic, Safety
from jaxmigrate.migrator.textgate import under

Site = Tuple[ast.expr, str]  # (the node of the name, its qualified name)


class Resolver:
    """What a chain's head refers to, as the view resolves it, asked once per name."""

    def __init__(self, view: AstView, names: FrozenSet[str]) -> None:
        self.view, self.names = view, names
        self.bound: Dict[str, Set[str]] = {}
        for item in view.imports:
            self.bound.setdefault(item.bound, set()).add(item.qualname)
        self._answers: Dict[str, Tuple[bool, Optional[str]]] = {}

    def resolve(self, name: str) -> Tuple[bool, Optional[str]]:
        answer = self._answers.get(name)
        if answer is None:
            answer = self._answers[name] = self.view.resolve(name)
        return answer

    def hits(self, chain: Chain) -> Optional[List[Tuple[int, str]]]:
        """(index in the chain, qualified name) of each of the names the chain spells where
        the rule's hooks see it (none under a guard); None when the view cannot tell."""
        parts = chain.parts
        heads = self.bound.get(parts[0])
        if not heads or chain.guarded:
            return []  # never imported (no qualified name anywhere), or no site
        if not any(_spelled(head, parts, self.names) for head in heads):
            return []  # whatever the head refers to, none of the names
        sure, head = self.resolve(parts[0])
        if not sure or chain.in_fstring:
            return None
        return [] if head is None else _spelled(head, parts, self.names)


def _spelled(head: str, parts: Tuple[str, ...], names: FrozenSet[str]) -> List[Tuple[int, str]]:
    found = []
    qualname = head
    for index, part in enumerate(parts):
        if index:
            qualname = f"{qualname}.{part}"
        if qualname in names:
            found.append((index, qualname))
    return found


def name_sites(view: AstView, resolved: Resolver) -> Optional[List[Site]]:
    """Every reference site of ``resolved.names`` (imports apart), in the file's order of
    chains; None when the view cannot be sure LibCST's analysis makes the same sites."""
    # Aliases of the names LibCST's analysis knows before it meets any Name (imported by the
    # module's own statements): another alias is a site only after its import.
    names = resolved.names
    prescanned = {
        item.bound
        for item in view.imports
        if item.top and item.qualname in names and item.bound != item.qualname.rpartition(".")[2]
    }
    found: List[Site] = []
    for chain in view.chains:
        hits = resolved.hits(chain)
        if hits is None:
            return None
        for index, qualname in hits:
            node = chain.nodes[index]
            if not index and not isinstance(node.ctx, ast.Load):  # type: ignore[attr-defined]
                continue  # a name being bound: no site
            if not index and chain.parts[0] != qualname.rpartition(".")[2]:
                if chain.parts[0] not in prescanned:
                    return None  # a site only if LibCST's analysis met the import first
            found.append((node, qualname))
    return found


def may_be_sites(view: AstView, resolved: Resolver) -> List[Site]:
    """Every chain that some import of its head (in any scope, guarded or not) makes spell one
    of ``resolved.names``: the sites :func:`name_sites` would find, whatever scope decides
    what the head is, are among them.  For a rule that does nothing at a look-alike either,
    where :func:`name_sites` cannot tell (a head a function imports, or one bound twice)."""
    found: List[Site] = []
    for chain in view.chains:
        for head in resolved.bound.get(chain.parts[0], ()):
            for index, qualname in _spelled(head, chain.parts, resolved.names):
                node = chain.nodes[index]
                if index or isinstance(node.ctx, ast.Load):  # type: ignore[attr-defined]
                    found.append((node, qualname))
    return found


def legacy_imports_stay(view: AstView, names: FrozenSet[str], modules: FrozenSet[str]) -> bool:
    """Does the engine leave every import of a legacy name or module of a rule alone when the
    rule makes no fix (:func:`migrator.cleanup.unused_imports` drops an unused one the API
    history does not show on every release of the target; one listed in ``__all__`` may be
    reported)?  False when it might not: LibCST decides."""
    from jaxmigrate.rules._api_history import history

    for item in view.imports:
        if item.guarded or not (item.qualname in names or under(item.qualname, modules)):
            continue
        if "__all__" in view.text:
            return False
        if not history().exists_throughout(item.qualname, view.target, view.upper):
            if not used(view, item):
                return False
    return True


def used(view: AstView, item: ImportSite) -> bool:
    """Is the name the import ``item`` binds read after it, and bound nowhere else, so that
    LibCST's analysis counts a use of that very import (the clean-up leaves it)?  False
    where the view cannot be sure (a use it did not walk counts as none)."""
    bound = item.bound
    if sum(other.bound == bound for other in view.imports) != 1:
        return False
    if view.resolve(bound) != (True, item.qualname):
        return False
    after = item.node.lineno
    return any(chain.parts[0] == bound and chain.nodes[0].lineno > after for chain in view.chains)


def nothing_at_sites(
    view: AstView, names: FrozenSet[str], modules: FrozenSet[str]
) -> Optional[List[Diagnostic]]:
    """The answer of a rule that acts only at the sites of its ``names`` (its ``visit_name``:
    references, and imports outside compatibility code) when the file has none: nothing
    (``[]``); None when it may have one, or the engine may drop one of its legacy imports."""
    if any(not item.guarded and item.imported in names for item in view.imports):
        return None  # an import site
    if not legacy_imports_stay(view, names, modules):
        return None
    return [] if name_sites(view, Resolver(view, names)) == [] else None


class AnswersAtSites:
    """For a rule (listed before its ``Rule`` base) whose only hook is ``visit_name``:
    :func:`nothing_at_sites` is its :meth:`migrator.rule.Rule.ast_findings`."""

    names: ClassVar[FrozenSet[str]]
    legacy_modules: ClassVar[FrozenSet[str]]

    def ast_findings(self, view: AstView) -> Optional[List[Diagnostic]]:
        return nothing_at_sites(view, self.names, self.legacy_modules)


def parents_of(tree: ast.AST, nodes: Iterable[ast.AST]) -> Dict[int, ast.AST]:
    """id(node) -> its parent in ``tree``, for each of ``nodes`` (one walk, which stops once
    every one is found): what a hook reads as ``site.parent`` or ``ctx.parent(node)``."""
    wanted = {id(node) for node in nodes}
    found: Dict[int, ast.AST] = {}
    stack: List[ast.AST] = [tree]
    while stack and len(found) < len(wanted):
        node = stack.pop()
        for child in ast.iter_child_nodes(node):
            if id(child) in wanted:
                found[id(child)] = node
            stack.append(child)
    return found


def called_at(view: AstView, sites: List[Site]) -> Dict[int, ast.Call]:
    """id(site node) -> the call ``site(...)`` for each site that is what a call calls (as
    ``rules._helpers.called`` reads a LibCST site)."""
    parents = parents_of(view.tree, [node for node, _qualname in sites])
    found: Dict[int, ast.Call] = {}
    for node, _qualname in sites:
        parent = parents.get(id(node))
        if type(parent) is ast.Call and parent.func is node:
            found[id(node)] = parent
    return found


def held_back(
    view: AstView, code: str, node: ast.AST, message: str, detail: str = ""
) -> Optional[Diagnostic]:
    """The finding an unsafe fix of rule ``code`` at ``node`` becomes without
    ``--unsafe-fixes``, as :meth:`migrator.context.Context.replace` records it (the fix's
    message and detail, marked held back); None when a suppression comment silences it."""
    if view.suppressed(code, node):
        return None
    line, column = view.start(node)
    end = node.end_lineno or line  # type: ignore[attr-defined]
    hint = f"{detail} {UNSAFE_HINT}" if detail else UNSAFE_HINT
    return Diagnostic(
        code, f"{message} {UNSAFE_NOTE}", line, column + 1, Safety.UNSAFE.value, end, hint
    )


def one_string_token(view: AstView, node: ast.Constant) -> bool:
    """Is ``node`` written as one string token (LibCST's ``SimpleString``), not an implicit
    concatenation?"""
    segment = ast.get_source_segment(view.text, node)
    if segment is None:
        return False
    try:
        tokens = [
            t
            for t in tokenize.generate_tokens(io.StringIO(segment).readline)
            if t.type not in (tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER)
        ]
    except (tokenize.TokenError, SyntaxError):
        return False
    return len(tokens) == 1 and tokens[0].type == tokenize.STRING
