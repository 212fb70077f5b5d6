"""What a rule sees while it runs: the module, name resolution, and where it records edits.

Rules never change the tree themselves.  They record replacements keyed by the original
node; the engine applies all of them in one transformer pass (an edit inside a node that
another edit replaces waits for the next round).
"""

from __future__ import annotations

import bisect
import dataclasses
import itertools
import re
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Dict,
    Iterable,
    List,
    NamedTuple,
    Optional,
    Sequence,
    Set,
    Tuple,
    Union,
    cast,
)

import libcst as cst
from libcst._nodes.internal import CodegenState
from libcst._position import CodePosition, CodeRange

from jaxmigrate.migrator.analysis import Analysis
from jaxmigrate.migrator.binding import Binding
from jaxmigrate.migrator.diagnostics import Diagnostic, Safety  # noqa: F401  (Diagnostic: old path)
from jaxmigrate.migrator.rule import Rule, owners
from jaxmigrate.migrator.scope import Scope, Site, dotted_parts
from jaxmigrate.migrator.traversal import (
    TRIVIA,
    children,
    structural_children,
    subtree_cache,
)

if TYPE_CHECKING:  # pragma: no cover
    from jaxmigrate.migrator.settings import Settings
    from jaxmigrate.migrator.version import Version

Replacement = Union[cst.CSTNode, cst.RemovalSentinel, cst.FlattenSentinel]


class NameSite(Site):
    """A reference to (or a ``from`` import of) a qualified name some rule handles."""

    __slots__ = ("qualname",)

    def __init__(self, site: Site, qualname: str) -> None:
        super().__init__(site.node, site.scope, site.ancestors, site.guarded, site.parts)
        self.qualname = qualname

    @property
    def is_import(self) -> bool:
        return isinstance(self.node, cst.ImportAlias)


@dataclasses.dataclass
class Edit:
    node: cst.CSTNode
    new: Replacement
    code: str
    message: str
    safety: Safety


class Finding(NamedTuple):
    """A finding as a rule records it (the engine makes a :class:`Diagnostic` of it)."""

    node: cst.CSTNode
    code: str
    message: str
    safety: str  # a Safety value


class CannotReference(Exception):
    """A replacement name cannot be spelled at a site without clashing with a local name."""


class Context:
    def __init__(
        self,
        module: cst.Module,
        analysis: Analysis,
        settings: "Settings",
        target: "Version",
        suppressions: Optional[Dict[int, Optional[frozenset]]],
    ) -> None:
        self.module = module
        self.analysis = analysis
        # Rules see the target range, never the settings: whether an unsafe edit is applied
        # is the engine's decision alone (see :meth:`replace`).
        self._unsafe_fixes = settings.unsafe_fixes
        self.target = target
        self.upper: Optional["Version"] = settings.upper  # the range's newest JAX (None: open)
        self.target_range = settings.target_range  # as users write it: "0.4.13..0.4.38"
        self.rule: Rule = None  # type: ignore[assignment]  # set by the engine per call
        self.edits: Dict[int, Edit] = {}
        self.findings: List[Finding] = []
        self.planned_imports: Dict[str, Tuple[Optional[str], str]] = {}  # qualname -> (module, name)
        self._suppressions = suppressions
        self._positions: Optional["_Positions"] = None
        self._parents: Optional[Dict[int, cst.CSTNode]] = None
        self._trivia_parents: Optional[Dict[int, cst.CSTNode]] = None
        self._all_nodes: Optional[Dict[type, List[cst.CSTNode]]] = None
        self._memo: Dict[Any, Any] = {}
        # Facts a rule learnt about this file in an earlier round (the engine shares one dict
        # across a file's rounds): e.g. "the file imported X" after X's import was removed.
        self.file_state: Dict[str, object] = {}

    def exists_throughout(self, qualname: str) -> bool:
        """True when JAX's API history shows ``qualname`` on every release of the target range
        (False for a name the history does not know)."""
        from jaxmigrate.rules._api_history import history

        return history().exists_throughout(qualname, self.target, self.upper)

    def begin(self, rule: Rule) -> None:
        """The engine is about to call one of ``rule``'s hooks."""
        self.rule = rule

    # -- recording -------------------------------------------------------------------------
    def replace(
        self,
        node: cst.CSTNode,
        new: Replacement,
        message: str,
        safety: Optional[Safety] = None,
    ) -> bool:
        """Record a fix; returns False when it is suppressed, a duplicate, or not allowed.

        A rule records an UNSAFE fix like any other; without ``--unsafe-fixes`` the engine
        turns it into a finding here, and forgets the imports only that replacement planned,
        so a rule never needs to know whether its unsafe fix will be applied."""
        safety = safety or self.rule.safety
        if self.is_suppressed(node):
            return False
        if safety is Safety.UNSAFE and not self._unsafe_fixes:
            self.findings.append(Finding(node, self.rule.code, f"{message} [unsafe fix: run with --unsafe-fixes]", safety.value))
            self._forget_imports_of(new)
            return False
        if safety is Safety.MANUAL:
            raise ValueError(f"{self.rule.code}: a manual finding cannot carry a fix")
        if id(node) in self.edits:
            return False
        self.edits[id(node)] = Edit(node, new, self.rule.code, message, safety)
        return True

    def _forget_imports_of(self, rejected: Replacement) -> None:
        """Drop the planned imports that ``rejected`` (a replacement that will not be applied)
        spells and no recorded edit does, so that they reserve no name for later references."""
        bound = {name for _module, name in self.planned_imports.values()}
        spelled = names_in([rejected], bound)
        if not spelled:
            return
        spelled -= names_in([edit.new for edit in self.edits.values()], spelled)
        for key in [k for k, (_module, name) in self.planned_imports.items() if name in spelled]:
            del self.planned_imports[key]

    def report(self, node: cst.CSTNode, message: str) -> None:
        """Record a finding that needs a person: the reason and the recommended replacement."""
        if not self.is_suppressed(node):
            self.findings.append(Finding(node, self.rule.code, message, Safety.MANUAL.value))

    # -- positions and suppression comments ------------------------------------------------
    def position(self, node: cst.CSTNode) -> CodeRange:
        """Where ``node`` is (as LibCST's ``PositionProvider`` says); one codegen pass per round."""
        if self._positions is None:
            self._positions = _Positions(self.module, self.parent)
        return self._positions[node]

    def generated_code(self) -> Optional[str]:
        """The module's code, if this round's position pass generated it (else None)."""
        return self._positions.text if self._positions is not None else None

    # -- per-round facts rules derive --------------------------------------------------------
    def memo(self, key: Any, factory: Callable[[], Any]) -> Any:
        """``factory()``, computed once per round (the module does not change within a round).

        Use a key naming the rule or helper, e.g. ``("jax.arrays", "annotations")``.
        """
        try:
            return self._memo[key]
        except KeyError:
            value = self._memo[key] = factory()
            return value

    def owner(self, qualname: str, besides: Optional[str] = None) -> Optional[str]:
        """The code of the rule that handles ``qualname`` (declares it in its ``names``), other
        than ``besides`` (default: the rule now running); None when no other rule does.  A
        rule asks this to leave another rule's names alone, instead of reading the registry."""
        index = self.memo(("owners",), owners)
        return index.owner(qualname, self.rule.code if besides is None else besides)

    def owns_under(self, prefix: str, besides: Optional[str] = None) -> bool:
        """True when a rule other than ``besides`` (default: the running one) handles a name
        inside ``prefix`` (``prefix.member``)."""
        index = self.memo(("owners",), owners)
        return index.owns_under(prefix, self.rule.code if besides is None else besides)

    def nodes(self, kind: type) -> List[cst.CSTNode]:
        """Every node of type ``kind`` the analysis traversal visited (see ``Analysis.nodes``)."""
        return self.analysis.nodes(kind)

    def is_suppressed(self, node: cst.CSTNode) -> bool:
        if not self._suppressions:
            return False
        code_range = self.position(node)
        for line in {code_range.start.line, code_range.end.line}:
            if line in self._suppressions:
                codes = self._suppressions[line]
                if codes is None or any(self.rule.code.startswith(c) for c in codes):
                    return True
        return False

    def suppressed_lines(self) -> List[int]:
        """The lines a ``# jaxmigrate: ignore`` comment silences, for any code."""
        return list(self._suppressions or ())

    # -- structure -------------------------------------------------------------------------
    def parent(self, node: cst.CSTNode) -> Optional[cst.CSTNode]:
        # The analysis traversal recorded the parents of the nodes it visited; the rest
        # (names inside imports, keyword names, ...) need one full pass, made on demand.
        found = self.analysis.parents.get(id(node))
        if found is not None or node is self.module:
            return found
        if self._parents is None:
            self._walk()
        found = self._parents.get(id(node))  # type: ignore[union-attr]
        if found is None and type(node) in TRIVIA:
            # The per-round walk leaves whitespace and punctuation out: one full walk, if asked.
            if self._trivia_parents is None:
                self._trivia_parents = _all_parents(self.module)
            found = self._trivia_parents.get(id(node))
        return found

    def all_nodes(self, kind: type) -> List[cst.CSTNode]:
        """Every node of exactly type ``kind`` in the module, in source order (the order a
        LibCST visitor meets them), including the ones :meth:`nodes` leaves out (binding
        names, ``Param``s, import internals, ...), but not whitespace, comments or
        punctuation (:data:`migrator.traversal.TRIVIA`).  One cheap walk per round, made on first
        use and shared with :meth:`parent`; prefer :meth:`nodes` when it covers the kind."""
        if kind in TRIVIA:
            raise ValueError(f"{kind.__name__} nodes are not indexed; read them from their parent")
        if self._all_nodes is None:
            self._walk()
        return self._all_nodes.get(kind, [])  # type: ignore[union-attr]

    def _walk(self) -> None:
        self._parents, self._all_nodes = walk_module(self.module)

    def ancestors(self, node: cst.CSTNode) -> List[cst.CSTNode]:
        """From the node's parent up to the Module."""
        result = []
        parent = self.parent(node)
        while parent is not None:
            result.append(parent)
            parent = self.parent(parent)
        return result

    def scope_of(self, node: cst.CSTNode) -> Scope:
        """The scope code at ``node`` runs in.

        Decorators, defaults, annotations, bases and a def's own name run in the enclosing
        scope, as does a comprehension's first iterable: only a body belongs to the new scope.
        """
        path = [node]
        for ancestor in self.ancestors(node):
            scope = self.analysis.scopes.get(id(ancestor))
            if scope is not None and _runs_inside(ancestor, path):
                return scope
            path.append(ancestor)
        return self.analysis.scopes[id(self.module)]

    def code(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node)

    def qualname(self, node: cst.CSTNode, scope: Scope) -> Optional[str]:
        """The qualified name a dotted expression refers to at ``scope``, if known."""
        parts = dotted_parts(node)
        if not parts:
            return None
        head = scope.resolve_name(parts[0])
        if head is None:
            return None
        return ".".join([head, *parts[1:]])

    # -- references to modern names, with import management --------------------------------
    def ref(
        self, qualname: str, scope: Scope, prefer_from: bool = False, direct: bool = False
    ) -> cst.BaseExpression:
        """An expression that names ``qualname`` at ``scope``, adding an import if needed.

        Reuses an existing import (``import jax.numpy as jnp`` serves ``jax.numpy.x``).
        With ``prefer_from`` a missing name is imported as ``from module import name``.
        With ``direct`` only an import of the name or of its own module is reused: for a name
        in a submodule its package does not load (``import jax`` does not make
        ``jax.extend.core`` an attribute).
        Raises :class:`CannotReference` when every spelling would clash with a local name.
        """
        parts = qualname.split(".")
        lowest = max(len(parts) - 1, 1) if direct else 1
        for cut in range(len(parts), lowest - 1, -1):
            local = self._visible_import(".".join(parts[:cut]), scope)
            if local is not None:
                return _attribute_chain([local, *parts[cut:]])
        if prefer_from and len(parts) > 1 and self._free(parts[-1], scope, qualname):
            self.planned_imports[qualname] = (".".join(parts[:-1]), parts[-1])
            return cst.Name(parts[-1])
        if self._free(parts[0], scope, parts[0]):
            self.planned_imports[parts[0]] = (None, parts[0])
            return _attribute_chain(parts)
        raise CannotReference(f"cannot refer to {qualname}: {parts[0]!r} is taken by a local name")

    def _visible_import(self, qualname: str, scope: Scope) -> Optional[str]:
        planned = self.planned_imports.get(qualname)
        if planned is not None and scope.lookup(planned[1]) is None:
            return planned[1]
        for binding in self.analysis.imports:
            if binding.qualname == qualname and not binding.guarded:
                if scope.resolve_name(binding.name) == qualname:
                    return binding.name
        return None

    def _free(self, name: str, scope: Scope, planned_key: str) -> bool:
        """True if a new module-level binding ``name`` is visible at ``scope`` and clashes with nothing."""
        if scope.lookup(name) is not None or name in self.analysis.scopes[id(self.module)].bindings:
            return False
        for key, (_module, bound) in self.planned_imports.items():
            if bound == name and key != planned_key:
                return False
        return True

    # -- small helpers rules share ---------------------------------------------------------
    @staticmethod
    def copy(node: cst.CSTNode) -> cst.CSTNode:
        """A fresh copy, for a node a replacement uses more than once."""
        return node.deep_clone()


def names_in(replacements: Iterable[object], wanted: Set[str]) -> Set[str]:
    """The names of ``wanted`` that some ``Name`` in the replacements spells."""
    found: Set[str] = set()
    stack: List[object] = []
    for new in replacements:
        stack.extend(new.nodes if isinstance(new, cst.FlattenSentinel) else [new])
    while stack and len(found) < len(wanted):
        node = stack.pop()
        if type(node) is cst.Name:
            if node.value in wanted:
                found.add(node.value)
        elif isinstance(node, cst.CSTNode):
            stack.extend(structural_children(node))
    return found


def _runs_inside(owner: cst.CSTNode, path: List[cst.CSTNode]) -> bool:
    """Whether the node at ``path[0]`` (``path[-1]`` is ``owner``'s child) runs in ``owner``'s scope."""
    child = path[-1]
    if isinstance(owner, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
        return child is owner.body
    if isinstance(owner, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
        if child is owner.for_in and len(path) >= 2:
            return path[-2] is not owner.for_in.iter
        return True
    return True


def _attribute_chain(parts: Sequence[str]) -> cst.BaseExpression:
    node: cst.BaseExpression = cst.Name(parts[0])
    for part in parts[1:]:
        node = cst.Attribute(value=node, attr=cst.Name(part))
    return node


def _all_parents(module: cst.CSTNode) -> Dict[int, cst.CSTNode]:
    """id(node) -> parent for every node under ``module``, :data:`TRIVIA` included."""
    parents: Dict[int, cst.CSTNode] = {}
    stack: List[cst.CSTNode] = [module]
    while stack:
        node = stack.pop()
        found = children(node)
        for child in found:
            parents[id(child)] = node
        stack.extend(found)
    return parents


def walk_module(module: cst.CSTNode) -> Tuple[Dict[int, cst.CSTNode], Dict[type, List[cst.CSTNode]]]:
    """id(node) -> parent, and type -> nodes in source order (LibCST's visiting order), for
    every node under ``module`` but whitespace, comments and punctuation (see
    :func:`migrator.traversal.structural_children`).

    Inside :func:`migrator.traversal.cached_children`, a module's top-level statements are walked
    once per file: a later round reuses what an unchanged statement held."""
    cache = subtree_cache("walk")
    if cache is None or type(module) is not cst.Module:
        return _walk_tree(module)
    parents: Dict[int, cst.CSTNode] = {}
    by_type: Dict[type, List[cst.CSTNode]] = {cst.Module: [module]}
    for statement in children(module):
        parents[id(statement)] = module
        entry = cache.get(id(statement))
        if entry is None or entry[0] is not statement:
            entry = cache[id(statement)] = (statement, _walk_tree(statement))
        below, kinds = cast(Tuple[Dict[int, cst.CSTNode], Dict[type, List[cst.CSTNode]]], entry[1])
        parents.update(below)
        for kind, nodes in kinds.items():
            found = by_type.get(kind)
            if found is None:
                by_type[kind] = list(nodes)
            else:
                found.extend(nodes)
    return parents, by_type


def _walk_tree(module: cst.CSTNode) -> Tuple[Dict[int, cst.CSTNode], Dict[type, List[cst.CSTNode]]]:
    parents: Dict[int, cst.CSTNode] = {}
    by_type: Dict[type, List[cst.CSTNode]] = {}
    stack: List[cst.CSTNode] = [module]
    while stack:
        node = stack.pop()
        kind = type(node)
        found = by_type.get(kind)
        if found is None:
            by_type[kind] = [node]
        else:
            found.append(node)
        found_children = structural_children(node)
        for child in found_children:
            parents[id(child)] = node
        stack.extend(reversed(found_children))
    return parents, by_type


_NEWLINE_RE = re.compile(r"\r\n?|\n")


class _TokenIndexState(CodegenState):
    """Code generation that records, per node, the token indexes where it starts and ends.

    Mirrors LibCST's ``PositionProvidingCodegenState`` (whitespace-inclusive ranges, overridden
    by syntactic ranges) but keeps only integers; line/column come later, for the nodes asked.
    """

    __slots__ = ("spans", "_stack", "popped")

    def __init__(self, default_indent: str, default_newline: str) -> None:
        super().__init__(default_indent=default_indent, default_newline=default_newline)
        self.spans: Dict[int, Tuple[int, int]] = {}
        self._stack: List[int] = []
        # 1 once the module's trailing newline is "popped": the token stays, so that (as in
        # LibCST, which counts lines as tokens arrive) the Module ends after it.
        self.popped = 0

    def _length(self) -> int:
        return len(self.tokens)

    def pop_trailing_newline(self) -> None:
        # Keep the token (positions recorded before the pop still count it), remember the pop.
        if self.tokens:
            self.popped = 1

    def before_codegen(self, node: cst.CSTNode) -> None:
        self._stack.append(len(self.tokens))

    def after_codegen(self, node: cst.CSTNode) -> None:
        start = self._stack.pop()
        key = id(node)
        if key not in self.spans:
            self.spans[key] = (start, len(self.tokens))

    def record_syntactic_position(  # type: ignore[override]
        self,
        node: cst.CSTNode,
        *,
        start_node: Optional[cst.CSTNode] = None,
        end_node: Optional[cst.CSTNode] = None,
    ) -> "_SyntacticSpan":
        return _SyntacticSpan(self, node, start_node, end_node)


class _SyntacticSpan:
    """The context manager of :meth:`_TokenIndexState.record_syntactic_position` (a class:
    cheaper than a generator-based one, and it runs for most nodes)."""

    __slots__ = ("state", "node", "start_node", "end_node", "start")

    def __init__(
        self,
        state: _TokenIndexState,
        node: cst.CSTNode,
        start_node: Optional[cst.CSTNode],
        end_node: Optional[cst.CSTNode],
    ) -> None:
        self.state = state
        self.node = node
        self.start_node = start_node
        self.end_node = end_node

    def __enter__(self) -> None:
        self.start = self.state._length()

    def __exit__(self, *exc_info: object) -> None:
        state = self.state
        start = self.start
        end = state._length()
        spans = state.spans
        if self.start_node is not None:
            start = spans[id(self.start_node)][0]
        if self.end_node is not None:
            end = spans[id(self.end_node)][1]
        spans[id(self.node)] = (start, end)


class _Spans:
    """Node spans of one tree (a module, or a top-level statement on its own), from one
    pass of :class:`_TokenIndexState` codegen."""

    __slots__ = ("spans", "text", "full", "offsets", "plain", "_line_starts")

    def __init__(self, node: cst.CSTNode, module: cst.Module) -> None:
        state = _TokenIndexState(module.default_indent, module.default_newline)
        node._codegen(state)
        self.spans = state.spans
        self.full = "".join(state.tokens)  # what positions count in
        self.text = "".join(state.tokens[: len(state.tokens) - state.popped])  # the code
        self.offsets = [0, *itertools.accumulate(map(len, state.tokens))]
        self.plain = "\r" not in self.full
        self._line_starts: Optional[List[int]] = None

    def point(self, index: int, first_line: int = 1) -> CodePosition:
        offset = self.offsets[index]
        starts = self._line_starts
        if starts is None:
            starts = self._line_starts = [0, *(m.end() for m in _NEWLINE_RE.finditer(self.full))]
        line = bisect.bisect_right(starts, offset) - 1
        return CodePosition(line + first_line, offset - starts[line])


class _Positions:
    """Node positions of one module, as LibCST's ``PositionProvider`` gives them.

    A top-level statement's text does not depend on where it stands, so a node is placed by
    generating only its own statement (with spans) and counting the lines of the statements
    before it; both are kept per file (``subtree_cache``), so a later round regenerates only
    statements an edit replaced.  Anything else (the module node, its header and footer, a
    module with ``\r`` line endings) falls back to one pass over the whole module."""

    def __init__(self, module: cst.Module, parent: Callable[[cst.CSTNode], Optional[cst.CSTNode]]) -> None:
        self.module = module
        self._parent = parent
        self._index: Optional[Dict[int, int]] = None  # id(statement) -> index in module.body
        self._starts: List[int] = [len(module.header) + 1]  # first line of body[i], as found
        self._whole: Optional[_Spans] = None
        self._incremental = module.default_newline == "\n"
        # id(statement) -> (statement, its spans / its code): per file where the engine keeps
        # a cache (see migrator.traversal.cached_children), else for this round
        self._spans = _or_empty(subtree_cache("positions"))
        self._code = _or_empty(subtree_cache("code"))

    @property
    def text(self) -> Optional[str]:
        """The module's code, if a whole-module pass generated it."""
        return self._whole.text if self._whole is not None else None

    def __getitem__(self, node: cst.CSTNode) -> CodeRange:
        if self._incremental:
            found = self._in_statement(node)
            if found is not None:
                return found
        if self._whole is None:
            self._whole = _Spans(self.module, self.module)
        span = self._whole.spans[id(node)]  # KeyError, like LibCST, for a node not in the module
        return CodeRange(self._whole.point(span[0]), self._whole.point(span[1]))

    def _in_statement(self, node: cst.CSTNode) -> Optional[CodeRange]:
        module = self.module
        statement = node
        parent = self._parent(statement)
        while parent is not module:
            if parent is None:
                return None
            statement = parent
            parent = self._parent(statement)
        if self._index is None:
            self._index = {id(s): i for i, s in enumerate(module.body)}
        index = self._index.get(id(statement))
        if index is None:  # the module's header or footer
            return None
        spans = self._statement(statement)
        if not spans.plain:
            self._incremental = False
            return None
        span = spans.spans.get(id(node))
        if span is None:
            return None
        first = self._first_line(index)
        if first is None:
            return None
        return CodeRange(spans.point(span[0], first), spans.point(span[1], first))

    def _statement(self, statement: cst.CSTNode) -> _Spans:
        cache = self._spans
        entry = cache.get(id(statement))
        if entry is None or entry[0] is not statement:
            entry = cache[id(statement)] = (statement, _Spans(statement, self.module))
        return entry[1]  # type: ignore[return-value]

    def _first_line(self, index: int) -> Optional[int]:
        starts = self._starts
        body = self.module.body
        while len(starts) <= index:
            text = self._statement_text(body[len(starts) - 1])
            if "\r" in text:
                self._incremental = False
                return None
            starts.append(starts[-1] + text.count("\n"))
        return starts[index]

    def _statement_text(self, statement: cst.CSTNode) -> str:
        return _statement_code(self.module, statement, self._spans, self._code)


def module_code(module: cst.Module) -> str:
    """``module.code``, from the per-file caches of statement code where they hold it (see
    :class:`_Positions`): a later round generates only the statements an edit replaced."""
    if not module.has_trailing_newline:
        return module.code  # the last token is dropped: rare, and simplest left to LibCST
    spans, codes = _or_empty(subtree_cache("positions")), _or_empty(subtree_cache("code"))
    parts = [module.code_for_node(line) for line in module.header]
    parts.extend(_statement_code(module, statement, spans, codes) for statement in module.body)
    parts.extend(module.code_for_node(line) for line in module.footer)
    return "".join(parts) or module.default_newline


def _statement_code(
    module: cst.Module,
    statement: cst.CSTNode,
    spans: Dict[int, Tuple[cst.CSTNode, object]],
    codes: Dict[int, Tuple[cst.CSTNode, object]],
) -> str:
    entry = spans.get(id(statement))
    if entry is not None and entry[0] is statement:
        return entry[1].text  # type: ignore[attr-defined]
    entry = codes.get(id(statement))
    if entry is None or entry[0] is not statement:
        entry = codes[id(statement)] = (statement, module.code_for_node(statement))
    return entry[1]  # type: ignore[return-value]


def _or_empty(cache: Optional[Dict[int, Tuple[cst.CSTNode, object]]]) -> Dict[int, Tuple[cst.CSTNode, object]]:
    return {} if cache is None else cache


def binding_is_legacy(binding: Binding, names: frozenset, modules: frozenset) -> bool:
    qualname = binding.qualname or ""
    if qualname in names:
        return True
    return any(qualname == m or qualname.startswith(m + ".") for m in modules)
