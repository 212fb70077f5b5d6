"""What a rule sees while it runs: the module, name resolution, and where it records edits.

Rules never change the tree themselves.  They record replacements keyed by the original
node; the engine applies all of them in one transformer pass (an edit inside a node that
another edit replaces waits for the next round).

The indexes behind it live apart: :mod:`migrator.walk` (each node's parent, nodes by type)
and :mod:`migrator.positions` (line and column of a node, and the module's code, generated
statement by statement); so do the references to modern names it gives (:meth:`ref`) and the
imports they plan, in :mod:`migrator.naming`.
"""

from __future__ import annotations

import dataclasses
import unicodedata
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Dict,
    FrozenSet,
    List,
    NamedTuple,
    Optional,
    Set,
    Tuple,
    Type,
    TypeVar,
    Union,
    cast,
)

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.migrator.astview import suppresses
from jaxmigrate.migrator.binding import Binding
from jaxmigrate.migrator.diagnostics import UNSAFE_HINT, UNSAFE_NOTE, Safety
from jaxmigrate.migrator.errors import LeftOut
from jaxmigrate.migrator.ledger import Ledger
from jaxmigrate.migrator.messages import beyond_target
from jaxmigrate.migrator.naming import Naming
from jaxmigrate.migrator.rule import Rule, owners
from jaxmigrate.migrator.scope import Scope, Site, dotted_parts
from jaxmigrate.migrator.traversal import trivia
from jaxmigrate.migrator.walk import all_parents, walk_module

if TYPE_CHECKING:  # pragma: no cover
    from libcst._position import CodeRange

    from jaxmigrate.migrator.analysis import Analysis
    from jaxmigrate.migrator.piecewise import Pieces
    from jaxmigrate.migrator.positions import Positions
    from jaxmigrate.migrator.settings import Settings
    from jaxmigrate.migrator.source import Evidence, SourceRange
    from jaxmigrate.migrator.version import Version


# (LibCST's classes named, not read: reading one imports LibCST, migrator.lazycst)
Replacement = Union["cst.CSTNode", "cst.RemovalSentinel", "cst.FlattenSentinel"]
N = TypeVar("N", bound="cst.CSTNode")


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
    # Names ``new`` spells as Python's builtins although the module binds them now (see
    # :meth:`Context.replace`): they keep no import of that name in use.
    builtins: FrozenSet[str] = frozenset()
    detail: str = ""  # the rest of the message (see Diagnostic)
    reported: bool = True  # False: layout only (an import moved in its group), not a fix
    needs: str = ""  # the oldest JAX the replacement needs, beyond its rule's (see replace)


class Finding(NamedTuple):
    """A finding as a rule records it (the engine makes a :class:`Diagnostic` of it)."""

    node: cst.CSTNode
    code: str
    message: str
    safety: str  # a Safety value


class Context(Ledger, Naming):
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
        # The floor survey (migrator.target): a rename whose new name the target's lower bound
        # lacks is written anyway, so that the floor it needs counts (see Renames._arrived).
        self.survey = settings.survey
        # The JAX the code was written for, as the settings know it (see written_before).
        self._source = settings.source
        self._source_explicit = settings.source_explicit
        self.rule: Rule = None  # type: ignore[assignment]  # set by the engine per call
        self.edits: Dict[int, Edit] = {}
        Ledger.__init__(self)
        # (id(node), code, message) of a finding -> its detail (see Diagnostic)
        self.details: Dict[Tuple[int, str, str], str] = {}
        self.covered_lines: Set[int] = set()  # where a once-per-module finding counts a use
        self.planned_imports: Dict[
            str, Tuple[Optional[str], str]
        ] = {}  # qualname -> (module, name)
        self._suppressions = suppressions
        self._positions: Optional["Positions"] = None
        # The text ``module`` was parsed from, while it is that parse (the first round):
        # positions late in the file are then counted from its end (see Positions).
        self.source: Optional[str] = None
        self._parents: Optional[Dict[int, cst.CSTNode]] = None
        self._top_index: Optional[Dict[int, int]] = None  # id(top-level statement) -> index
        self._trivia_parents: Optional[Dict[int, cst.CSTNode]] = None
        self._all_nodes: Optional[Dict[type, List[cst.CSTNode]]] = None
        self._memo: Dict[Any, Any] = {}
        # Facts a rule learnt about this file in an earlier round (the engine shares one dict
        # across a file's rounds): e.g. "the file imported X" after X's import was removed.
        self.file_state: Dict[str, object] = {}
        # What the piecewise path left out of a module it reduced (migrator.piecewise); None
        # for a whole module (needs_whole_module).
        self.pieces: Optional["Pieces"] = None

    def exists_throughout(self, qualname: str) -> bool:
        """True when JAX's API history shows ``qualname`` on every release of the target range
        (False for a name the history does not know)."""
        from jaxmigrate.rules._api_history import history

        return history().exists_throughout(qualname, self.target, self.upper)

    def written_before(self, change: "Version") -> Tuple[Optional[bool], str]:
        """Was this code written for a JAX before ``change``?  (True, False, or None when
        nothing says), and why, for a message.  A source the user stated decides alone;
        otherwise the file's own references (a name removed at or before ``change``, or one
        added at or after it: :mod:`migrator.source`) come before the project's requirement."""
        answer, why = self.proven_before(change)
        if answer is not None:
            return answer, why
        source = self._source
        answer = source.written_before(change)
        if answer is None:
            return None, ""
        return answer, f"the code was written for JAX {source.describe()}"

    def proven_before(self, change: "Version") -> Tuple[Optional[bool], str]:
        """:meth:`written_before` as the file's own references alone answer it (None where
        they say nothing, or where the user stated the source)."""
        if self._source_explicit:
            return None, ""
        proof = self.file_state.get("evidence")
        if proof is None:
            original = self.file_state.get("text")  # the file as read (run_rounds)
            proof = self.file_state["evidence"] = _evidence_of(
                original if isinstance(original, str) else self.module.code, self._source
            )
        answer = cast("Evidence", proof).written_before(change)
        return answer, "" if answer is None else cast("Evidence", proof).reason(change)

    def reaches(self, change: "Version") -> bool:
        """The target range holds a release at or after ``change``."""
        return self.upper is None or self.upper >= change

    def begin(self, rule: Rule) -> None:
        """The engine is about to call one of ``rule``'s hooks."""
        self.rule = rule

    # -- the piecewise path (migrator.piecewise) -------------------------------------------
    def needs_whole_module(self) -> None:
        """A hook of a rule that reads only its sites and the names they resolve to
        (``Rule.whole_module`` False) calls this before it reads more of the module: in a
        module the piecewise path reduced, the engine then parses the whole module instead
        (:class:`LeftOut`)."""
        if self.pieces is not None:
            raise LeftOut(self.rule.code if self.rule is not None else "")

    def needs_name(self, name: str) -> None:
        """Such a hook calls this before it reads what binds or uses ``name`` (a ``def``, an
        assignment, every read of a variable): where a statement the piecewise path left out
        binds or reads it, the whole module answers."""
        pieces = self.pieces
        if pieces is not None and (name in pieces.dropped_binds or name in pieces.dropped_reads):
            raise LeftOut(name)

    def needs_word(self, word: str) -> None:
        """Such a hook calls this before it reads every statement spelling ``word`` (every
        function with a parameter of that name): where a statement left out spells it (also
        in the NFKC form Python gives identifiers), the whole module answers."""
        pieces = self.pieces
        if pieces is not None and any(
            word in run or (not run.isascii() and word in unicodedata.normalize("NFKC", run))
            for run in pieces.runs
        ):
            raise LeftOut(word)

    def read_elsewhere(self, binding: Binding) -> bool:
        """May ``binding``, a module-level import, be read by a statement the piecewise path
        left out?  (Its scan over-approximates: a word of a string counts.)"""
        pieces = self.pieces
        return (
            pieces is not None
            and binding.name in pieces.imports_read
            and binding.scope is self.analysis.scopes.get(id(self.module))
        )

    @property
    def unsafe_fixes(self) -> bool:
        """Are unsafe fixes applied (``--unsafe-fixes``)?  A rule needs to know only to avoid
        work an unapplied fix would waste, such as planning its imports."""
        return self._unsafe_fixes

    # -- recording -------------------------------------------------------------------------
    def replace(
        self,
        node: cst.CSTNode,
        new: Replacement,
        message: str,
        safety: Optional[Safety] = None,
        builtins: FrozenSet[str] = frozenset(),
        detail: str = "",
        needs: str = "",
    ) -> bool:
        """Record a fix; returns False when it is suppressed, a duplicate, or not allowed.

        A rule records an UNSAFE fix like any other; without ``--unsafe-fixes`` the engine
        turns it into a finding here, and forgets the imports only that replacement planned,
        so a rule never needs to know whether its unsafe fix will be applied.

        ``builtins``: names ``new`` spells meaning Python's builtins where an import binds
        them now (``list(map(f, xs))`` for ``map(f, xs)`` under ``from jax.util import
        safe_map as map``).  They do not keep that import in use; the rule must rewrite every
        other use of the name in the same round, so that the import goes with them.

        ``message``: one short line, ``old -> new`` or what changed; ``detail``: the rest
        (why it is unsafe, what differs), for the reports that carry it.

        ``needs``: the oldest JAX this replacement works on, where that is newer than the
        rule's ``needs_jax`` (a keyword one release added): the default target's survey then
        raises the target to it.  At most the rule's ``fix_needs``."""
        safety = safety or self.rule.safety
        if self.is_suppressed(node):
            return False
        if self.rule.unsafe_fixes_only and safety is not Safety.UNSAFE:
            raise ValueError(f"{self.rule.code}: unsafe fixes only, yet made a {safety.value} fix")
        if safety is Safety.UNSAFE and not self._unsafe_fixes:
            hint = f"{detail} {UNSAFE_HINT}" if detail else UNSAFE_HINT
            self._record(node, f"{message} {UNSAFE_NOTE}", hint, safety)
            self._forget_imports_of(new)
            return False
        if safety is Safety.MANUAL:
            raise ValueError(f"{self.rule.code}: a manual finding cannot carry a fix")
        if id(node) in self.edits:
            return False
        if needs and not _within(needs, self.rule.fix_needs):
            raise ValueError(f"{self.rule.code}: a fix needs {needs}, beyond its fix_needs")
        self.edits[id(node)] = Edit(
            node, new, self.rule.code, message, safety, builtins, detail, needs=needs
        )
        return True

    def report(self, node: cst.CSTNode, message: str, detail: str = "") -> None:
        """Record a finding that needs a person.  ``message``: one line of at most 100
        characters, what is wrong and the fix in a few words (``jax.foo was removed in JAX
        0.4.14; use jax.bar``); ``detail``: the rest (the exact recipe, the caveats)."""
        if not self.is_suppressed(node):
            message, detail = beyond_target(message, detail, self.target, self.upper)
            self._record(node, message, detail, Safety.MANUAL)

    def _record(self, node: cst.CSTNode, message: str, detail: str, safety: Safety) -> None:
        self.add_finding(Finding(node, self.rule.code, message, safety.value))
        if detail:
            self.details[(id(node), self.rule.code, message)] = detail

    # -- positions and suppression comments ------------------------------------------------
    def position(self, node: cst.CSTNode) -> CodeRange:
        """Where ``node`` is (as LibCST's ``PositionProvider`` says); one codegen pass per round."""
        if self._positions is None:
            from jaxmigrate.migrator.positions import Positions  # (LibCST's codegen: on first use)

            self._positions = Positions(self.module, self.parent, self.source)
        return self._positions[node]

    def release(self) -> None:
        """Once the rounds are over, break the cycles this round's context made (its position
        pass holds one of its methods; its analysis, scopes that hold their bindings: see
        :meth:`migrator.scopewalk.ScopeWalker.release`) and let go of everything it holds: a
        rule's local class or closure that captured it is a cycle of its own, which then
        holds nothing of the file.  The context is not used again."""
        self._positions = None
        self.analysis.release()
        self.__dict__.clear()

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

    def nodes(self, kind: Type[N]) -> List[N]:
        """Every node of type ``kind`` the analysis traversal visited (see ``Analysis.nodes``)."""
        return self.analysis.nodes(kind)

    def is_suppressed(self, node: cst.CSTNode) -> bool:
        if not self._suppressions:
            return False
        code_range = self.position(node)
        lines = (code_range.start.line, code_range.end.line)
        return suppresses(self._suppressions, self.rule.code, lines)

    def suppressed_lines(self) -> List[int]:
        """The lines a ``# jaxmigrate: ignore`` comment silences, for any code."""
        return list(self._suppressions or ())

    # -- structure -------------------------------------------------------------------------
    def parent(self, node: Optional[cst.CSTNode]) -> Optional[cst.CSTNode]:
        # The analysis traversal recorded the parents of the nodes it visited; the rest
        # (names inside imports, keyword names, ...) need one full pass, made on demand.
        # None (the Module's parent) has none, so ``parent(parent(x))`` needs no check.
        if node is None:
            return None
        found = self.analysis.parents.get(id(node))
        if found is not None or node is self.module:
            return found
        if self._parents is None:
            self._walk()
        found = self._parents.get(id(node))  # type: ignore[union-attr]
        if found is None and type(node) in trivia():
            # The per-round walk leaves whitespace and punctuation out: one full walk, if asked.
            if self._trivia_parents is None:
                self._trivia_parents = all_parents(self.module)
            found = self._trivia_parents.get(id(node))
        return found

    def all_nodes(self, kind: Type[N]) -> List[N]:
        """Every node of exactly type ``kind`` in the module, in source order (the order a
        LibCST visitor meets them), including the ones :meth:`nodes` leaves out (binding
        names, ``Param``s, import internals, ...), but not whitespace, comments or
        punctuation (:func:`migrator.traversal.trivia`).  One cheap walk per round, made on first
        use and shared with :meth:`parent`; prefer :meth:`nodes` when it covers the kind."""
        if kind in trivia():
            raise ValueError(f"{kind.__name__} nodes are not indexed; read them from their parent")
        if self._all_nodes is None:
            self._walk()
        return cast(List[N], self._all_nodes.get(kind, []))  # type: ignore[union-attr]

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
        if head is None and scope.kind == "module" and scope.bindings.get(parts[0]):
            head = self._flow_head(node, scope, parts[0])
        if head is None:
            return None
        return ".".join([head, *parts[1:]])

    def _flow_head(self, node: cst.CSTNode, scope: Scope, name: str) -> Optional[str]:
        """:meth:`Scope.flow_qualname` of ``name`` read at ``node``, in a top-level statement
        (a module whose bindings of ``name`` disagree, each in a statement of its own)."""
        top: Optional[cst.CSTNode] = node
        parent = self.parent(top)
        while parent is not None and parent is not self.module:
            top, parent = parent, self.parent(parent)
        if parent is None:
            return None
        if self._top_index is None:
            self._top_index = {id(s): i for i, s in enumerate(self.module.body)}
        index = self._top_index.get(id(top))
        return None if index is None else scope.flow_qualname(name, index)

    # -- small helpers rules share ---------------------------------------------------------
    @staticmethod
    def copy(node: N) -> N:
        """A fresh copy, for a node a replacement uses more than once."""
        return node.deep_clone()


def _evidence_of(text: str, source: "SourceRange") -> "Evidence":
    import ast

    from jaxmigrate.migrator.source import Evidence, evidence

    try:
        return evidence(ast.parse(text), source, written_for=True)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return Evidence()


def _runs_inside(owner: cst.CSTNode, path: List[cst.CSTNode]) -> bool:
    """Whether the node at ``path[0]`` (``path[-1]`` is ``owner``'s child) runs in ``owner``'s
    scope."""
    child = path[-1]
    if isinstance(owner, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
        return child is owner.body
    if isinstance(owner, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
        if child is owner.for_in and len(path) >= 2:
            return path[-2] is not owner.for_in.iter
        return True
    return True


def binding_is_legacy(binding: Binding, names: frozenset, modules: frozenset) -> bool:
    qualname = binding.qualname or ""
    if qualname in names:
        return True
    return any(qualname == m or qualname.startswith(m + ".") for m in modules)


def _within(needs: str, most: Optional[str]) -> bool:
    from jaxmigrate.migrator.version import parse_version

    return most is not None and parse_version(needs) <= parse_version(most)
