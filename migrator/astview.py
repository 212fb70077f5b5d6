"""Findings from CPython's ``ast`` alone: what a rule that can answer without LibCST reads.

When every rule left after gate 2 can say what it reports in a file from the ``ast`` tree gate 2
already made, and none of them has a fix to make there, the engine (:mod:`migrator.astfirst`)
builds the findings here and LibCST never parses the file (issue #29).  An :class:`AstView`
gives such a rule what :class:`migrator.context.Context` gives the LibCST hooks, computed the
same way: positions as LibCST counts them (line, character column, end line), the
``# jaxmigrate: ignore[...]`` comments, compatibility guards (``try/except ImportError``,
feature and version tests), name resolution through imports, and the note for a recommended
name newer than the target.  The shared pieces (:func:`suppresses`,
:func:`migrator.messages.beyond_target`,
:func:`migrator.feature_tests.reads_feature_or_jax_version`) are the ones the LibCST path
calls.  Where the view cannot be sure to agree with LibCST (a name bound in more than one
way, a chain inside an f-string), it says so and the rule answers None: LibCST decides.
``tests/test_gate_equivalence.py`` checks that both paths report the same.

A LibCST-free module: it is imported on the way to LibCST, never after.
"""

from __future__ import annotations

import ast
import re
import sys
from typing import (
    TYPE_CHECKING,
    Dict,
    FrozenSet,
    Iterable,
    List,
    NamedTuple,
    Optional,
    Set,
    Tuple,
)

from jaxmigrate.migrator.astfacts import child_fields
from jaxmigrate.migrator.astguards import bound_in_blocks, catches, feature_test
from jaxmigrate.migrator.astlines import STATEMENTS, lines_spelling, spans
from jaxmigrate.migrator.diagnostics import Diagnostic, Safety
from jaxmigrate.migrator.messages import beyond_target

if TYPE_CHECKING:  # pragma: no cover
    from jaxmigrate.migrator.astfacts import Facts
    from jaxmigrate.migrator.settings import Settings
    from jaxmigrate.migrator.version import Version

Suppressions = Dict[int, Optional[FrozenSet[str]]]
_SUPPRESS_RE = re.compile(r"#\s*jaxmigrate:\s*ignore(?:\[([A-Za-z0-9_,\s]*)\])?")
_JAX_NAME = re.compile(r"\bjax(?:\.[A-Za-z_]\w*)+")
_NEWLINE = re.compile(r"\r\n?|\n")
_VERSION = re.compile("version", re.IGNORECASE)  # (in every version word of feature_tests)
# Before 3.11, CPython placed the parts of a multi-line f-string poorly (gh-94869, fixed in
# 3.11.0b5; 3.12 parses f-strings as code, PEP 701): a chain there is left to LibCST.  On 3.11
# the names and attributes inside the multi-line f-strings of the legacy and modern corpora and
# of an environment's site-packages (24,236) all sit where their text is.
MULTILINE_FSTRINGS_PLACED = sys.version_info >= (3, 11)
TRY_STATEMENTS = tuple(getattr(ast, name) for name in ("Try", "TryStar") if hasattr(ast, name))
_SCOPE_KINDS = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef,
                          ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp})  # fmt: skip
# The kinds whose node changes what the walk below it records (AstView._context).
_CONTEXT_KINDS = frozenset(
    {*TRY_STATEMENTS, ast.If, ast.IfExp, ast.BoolOp, ast.JoinedStr, ast.FunctionDef}
    | {ast.AsyncFunctionDef, ast.ClassDef, ast.arg, ast.ExceptHandler, ast.Global, ast.Nonlocal}
    | {getattr(ast, k) for k in ("MatchAs", "MatchStar", "MatchMapping") if hasattr(ast, k)}
)
AST = ast.AST
# What guards a chain or an import (Chain.guarded): a feature or version test, a ``try`` whose
# handler catches ImportError, ModuleNotFoundError or AttributeError (both: either bit).
TESTED, TRIED = 1, 2
_REVERSED_FIELDS: Dict[type, Tuple[str, ...]] = {}


def _reversed_fields(kind: type) -> Tuple[str, ...]:
    """:func:`migrator.astfacts.child_fields` of ``kind``, last first (the walk's stack)."""
    fields = _REVERSED_FIELDS[kind] = tuple(reversed(child_fields(kind)))
    return fields


# -- shared with the LibCST path ----------------------------------------------------------------
def find_suppressions(text: str) -> Suppressions:
    """Line number -> suppressed codes (None: every code) for ``# jaxmigrate: ignore[...]``."""
    result: Suppressions = {}
    if "jaxmigrate" not in text:
        return result
    for number, line in enumerate(text.splitlines(), start=1):
        match = _SUPPRESS_RE.search(line)
        if match:
            codes = match.group(1)
            if codes is None:
                result[number] = None
            else:
                result[number] = frozenset(c.strip() for c in codes.split(",") if c.strip())
    return result


def suppresses(suppressions: Optional[Suppressions], code: str, lines: Iterable[int]) -> bool:
    """Does a suppression comment on one of ``lines`` (a node's first and last) silence
    ``code``?"""
    if not suppressions:
        return False
    for line in set(lines):
        if line in suppressions:
            codes = suppressions[line]
            if codes is None or any(code.startswith(c) for c in codes):
                return True
    return False


# -- what the view collects in one walk ---------------------------------------------------------
class Chain(NamedTuple):
    """A dotted chain ``a.b.c`` (a lone name too), outermost node first in ``nodes``' last slot:
    ``nodes[i]`` is the node of ``parts[: i + 1]``.  The view keeps only the chains whose head
    an import binds somewhere in the module (the others name no qualified name anywhere)."""

    parts: Tuple[str, ...]
    nodes: Tuple[ast.expr, ...]
    guarded: int  # what guards it: TESTED and TRIED bits (0: nothing)
    in_fstring: bool


class ImportSite(NamedTuple):
    node: ast.alias
    imported: str  # ``jax._src.core``: ``import jax._src.core``, ``from jax._src import core``
    bound: str
    qualname: str  # what ``bound`` refers to (``jax`` for ``import jax._src.core``)
    guarded: int  # as Chain.guarded
    module_level: bool
    top: bool  # a statement of the module's own body (LibCST's analysis reads those first)


class AstView:
    """One file's ``ast`` tree, as the rules that answer without LibCST read it."""

    def __init__(
        self,
        text: str,
        facts: "Facts",
        settings: "Settings",
        codes: Tuple[str, ...],
        only: Optional[FrozenSet[str]] = None,
    ):
        """``only``: the words of :meth:`migrator.rule.Rule.view_words` of every rule that reads
        the view (None: some rule reads every statement)."""
        assert facts.tree is not None
        self.text, self.facts, self.tree = text, facts, facts.tree
        # the file as read: what it was written for (a view of what fixes made of it: before)
        self.as_read: Tuple[str, ast.Module] = (text, facts.tree)
        self.target, self.upper = settings.target, settings.upper
        self.codes = codes  # the rules answering for this file
        self._settings = settings
        self.unsafe_fixes = settings.unsafe_fixes  # (else an unsafe fix is held back: a finding)
        self._lines: Optional[List[str]] = None
        self._starts: Optional[List[int]] = None  # where each line starts in the text
        self._ascii: Optional[bool] = None  # is the whole text ASCII (asked on use)
        self._suppressions: Optional[Suppressions] = None
        self.chains: List[Chain] = []
        self.imports: List[ImportSite] = []
        self.covered_lines: Set[int] = set()  # where a once-per-module finding counts a use
        # code -> lines where that rule's findings stand only if no other rule speaks there
        # (LibCST's hooks then decide: which spoke first depends on when each hook ran)
        self.unless_spoken: Dict[str, Set[int]] = {}
        self.covered_by: Dict[str, Set[int]] = {}  # code -> the lines its findings count
        self.finishing: list = []  # answers made once every rule answered (findings_on_ast)
        # names bound otherwise than by an import, at module level / in a function or class
        self._module_other: set = set()
        self._inner: set = set()  # (imports in functions too, and global/nonlocal names)
        self._in_blocks: Optional[FrozenSet[str]] = None  # see _bound_in_blocks
        # A feature test reads ``hasattr`` or a version word (a name, an attribute, a keyword
        # or a lambda's parameter): where the module's identifiers hold neither, none is read.
        self._tests = "hasattr" in facts.heads or _VERSION.search(_identifiers(facts)) is not None
        self._walk(None if only is None else lines_spelling(text, only))

    # -- positions -------------------------------------------------------------------------
    def line(self, number: int) -> str:
        """The text of line ``number`` (1-based, as ``ast`` counts lines), without its end."""
        if self._lines is None:
            self._lines = _NEWLINE.split(self.text)
        return self._lines[number - 1] if 0 < number <= len(self._lines) else ""

    def _column(self, line: int, offset: int) -> int:
        """``ast``'s UTF-8 byte offset on ``line`` as a character count (LibCST's column)."""
        if self._ascii is None:
            self._ascii = self.text.isascii()
        if self._ascii:  # (every offset a character count, without splitting the lines)
            return offset
        text = self.line(line)
        if text.isascii():
            return offset
        return len(text.encode("utf-8", "surrogatepass")[:offset].decode("utf-8", "replace"))

    def start(self, node: ast.AST) -> Tuple[int, int]:
        """(line, 0-based column) where ``node`` starts, as LibCST counts."""
        line = node.lineno  # type: ignore[attr-defined]
        return line, self._column(line, node.col_offset)  # type: ignore[attr-defined]

    def offset(self, line: int, column: int) -> int:
        """Where (``line``, character ``column``) is in :attr:`text`."""
        if self._starts is None:
            self._starts = [0, *(found.end() for found in _NEWLINE.finditer(self.text))]
        return self._starts[line - 1] + column

    def end(self, node: ast.AST) -> Tuple[int, int]:
        """(line, 0-based column) where ``node`` ends, as LibCST counts."""
        line = node.end_lineno  # type: ignore[attr-defined]
        return line, self._column(line, node.end_col_offset)  # type: ignore[attr-defined]

    def report(
        self, code: str, node: ast.AST, message: str, detail: str = ""
    ) -> Optional[Diagnostic]:
        """A finding of rule ``code`` at ``node`` (as :meth:`Context.report` records it), or
        None when a suppression comment silences it."""
        if self.suppressed(code, node):
            return None
        line, column = self.start(node)
        end = node.end_lineno or line  # type: ignore[attr-defined]
        message, detail = beyond_target(message, detail, self.target, self.upper)
        return Diagnostic(code, message, line, column + 1, Safety.MANUAL.value, end, detail)

    def report_once(
        self, code: str, uses: List[ast.AST], message: str, detail: str = "", cover: bool = True
    ) -> Optional[Diagnostic]:
        """One finding for every use of a module, as ``rules._helpers.report_once`` makes it:
        at the first use no suppression comment silences, with the count of the uses.  With
        ``cover``, a backstop is silent on the lines it counts (:attr:`covered_lines`)."""
        kept = [node for node in uses if not self.suppressed(code, node)]
        if not kept:
            return None
        where = {id(node): self.start(node) for node in kept}
        first = min(kept, key=lambda node: where[id(node)])
        count = len(set(where.values()))
        if cover:
            lines = {line for line, _column in where.values()}
            self.covered_lines.update(lines)
            self.covered_by.setdefault(code, set()).update(lines)
        return self.report(
            code, first, f"{message} ({count} uses)" if count > 1 else message, detail
        )

    def suppressed(self, code: str, node: ast.AST) -> bool:
        """Does a suppression comment on ``node``'s first or last line silence ``code``?"""
        line = node.lineno  # type: ignore[attr-defined]
        end = node.end_lineno or line  # type: ignore[attr-defined]
        if self._suppressions is None:
            self._suppressions = find_suppressions(self.text)
        return suppresses(self._suppressions, code, (line, end))

    def suppressed_lines(self) -> List[int]:
        if self._suppressions is None:
            self._suppressions = find_suppressions(self.text)
        return list(self._suppressions)

    # -- what the code was written for --------------------------------------------------------
    def written_before(self, change: "Version") -> Optional[bool]:
        """:meth:`Context.written_before`'s answer (without the reason)."""
        return self.written_before_why(change)[0]

    def written_before_why(self, change: "Version") -> Tuple[Optional[bool], str]:
        """:meth:`Context.written_before`: the answer, and why, for a message."""
        answer, why = self.proven_before(change)
        if answer is not None:
            return answer, why
        source = self._settings.source
        answer = source.written_before(change)
        if answer is None:
            return None, ""
        return answer, f"the code was written for JAX {source.describe()}"

    def proven_before(self, change: "Version") -> Tuple[Optional[bool], str]:
        """:meth:`Context.proven_before`: the file's own references alone."""
        from jaxmigrate.migrator.source import evidence

        if self._settings.source_explicit:
            return None, ""
        proof = evidence(self.as_read[1], self._settings.source, written_for=True)
        answer = proof.written_before(change)
        return answer, "" if answer is None else proof.reason(change)

    # -- names -----------------------------------------------------------------------------
    def resolve(self, name: str) -> Tuple[bool, Optional[str]]:
        """(sure, qualname): what ``name`` refers to wherever it is read, as LibCST's analysis
        resolves it; not sure when the module imports it and also binds it inside a function,
        class or comprehension (a scope then decides, which the view does not follow)."""
        found = {i.qualname for i in self.imports if i.bound == name}
        if not found:
            return True, None  # never an import: no qualified name in any scope
        if name in self._inner:
            return False, None
        if name in self._module_other or len(found) > 1:
            # module-level bindings that disagree: unresolved everywhere, unless each is a
            # top-level statement's, which LibCST's analysis follows in order (flow_qualname)
            return name in self._bound_in_blocks(), None
        return True, found.pop()

    def _bound_in_blocks(self) -> FrozenSet[str]:
        if self._in_blocks is None:
            self._in_blocks = bound_in_blocks(self.tree)
        return self._in_blocks

    def binds(self, name: str) -> bool:
        """Does the module bind ``name`` anywhere (an import, an assignment, a parameter, a
        definition, in any scope)?  A builtin it binds is not Python's."""
        return (
            name in self._module_other
            or name in self._inner
            or any(i.bound == name for i in self.imports)
        )

    def _walk(self, lines: Optional[List[int]]) -> None:
        # A chain whose head no import binds (anywhere in the module) names nothing: every
        # reader resolves such a head to no qualified name and skips it, so it is not kept.
        # ``lines``: where a statement must stand to be walked (None: every statement).
        imported = self.facts.import_bound
        chains, module_other, inner = self.chains, self._module_other, self._inner
        Attribute, Name, Constant = ast.Attribute, ast.Name, ast.Constant
        Load, Store = ast.Load, ast.Store
        # (node, guarded, in f-string, module level, top-level statement)
        stack: List[Tuple[ast.AST, int, bool, bool, bool]] = [
            (node, 0, False, True, True) for node in reversed(self.tree.body)
        ]
        pop, push = stack.pop, stack.append
        while stack:
            node, guarded, fstring, module_level, top = pop()
            kind = type(node)
            if kind is Name:
                name = node.id  # type: ignore[attr-defined]
                context = type(node.ctx)  # type: ignore[attr-defined]
                if context is Store:
                    (module_other if module_level else inner).add(name)
                elif context is not Load:  # ``del name``: neither a read nor a value
                    if not module_level:
                        inner.add(name)  # (it makes the name local to its function)
                    continue
                if name in imported:
                    chains.append(Chain((name,), (node,), guarded, fstring))  # type: ignore[arg-type]
                continue
            if kind is Attribute:
                current = node.value  # type: ignore[attr-defined]
                while type(current) is Attribute:
                    current = current.value
                if type(current) is not Name:
                    push((current, guarded, fstring, module_level, False))
                    continue
                if type(current.ctx) is not Load:
                    (module_other if module_level else inner).add(current.id)
                if current.id in imported:
                    self._chain(node, guarded, fstring)  # type: ignore[arg-type]
                continue
            if kind is Constant:
                continue
            if kind is ast.Import or kind is ast.ImportFrom:
                self._import(node, guarded, module_level, top)
                continue
            if lines is not None and kind in STATEMENTS and not spans(node, lines):
                continue  # (it spells no word a reader of the view asked for)
            inner_level = module_level and kind not in _SCOPE_KINDS
            if kind in _CONTEXT_KINDS:  # a guard, an f-string or a binding: see _context
                guarded, fstring = self._context(node, kind, guarded, fstring, module_level)
            for field in _REVERSED_FIELDS.get(kind) or _reversed_fields(kind):
                value = getattr(node, field, None)
                if type(value) is list:
                    for item in reversed(value):
                        if isinstance(item, AST):
                            push((item, guarded, fstring, inner_level, False))
                elif isinstance(value, AST):
                    push((value, guarded, fstring, inner_level, False))

    def _context(
        self, node: ast.AST, kind: type, guarded: int, fstring: bool, module_level: bool
    ) -> Tuple[int, bool]:
        """(guarded, in an f-string) below ``node``, of a kind in :data:`_CONTEXT_KINDS`; the
        names it binds (but for imports, names and attribute chains) are recorded."""
        other = self._module_other if module_level else self._inner
        if kind in TRY_STATEMENTS:
            if not guarded & TRIED and any(catches(h) for h in node.handlers):  # type: ignore[attr-defined]
                guarded |= TRIED
        elif kind is ast.If or kind is ast.IfExp:
            if not guarded & TESTED and self._tests and feature_test(node.test):  # type: ignore[attr-defined]
                guarded |= TESTED
        elif kind is ast.BoolOp:
            values = node.values  # type: ignore[attr-defined]
            if not guarded & TESTED and self._tests and any(feature_test(v) for v in values[:-1]):
                guarded |= TESTED
        elif kind is ast.JoinedStr:
            if not MULTILINE_FSTRINGS_PLACED:
                fstring = fstring or node.lineno != node.end_lineno  # type: ignore[attr-defined]
        elif kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            other.add(node.name)  # type: ignore[attr-defined]
        elif kind is ast.arg:
            self._inner.add(node.arg)  # type: ignore[attr-defined]
        elif kind is ast.ExceptHandler:
            if node.name:  # type: ignore[attr-defined]
                other.add(node.name)  # type: ignore[attr-defined]
        elif kind in (ast.Global, ast.Nonlocal):
            self._inner.update(node.names)  # type: ignore[attr-defined]
        elif kind in (ast.MatchAs, ast.MatchStar):
            if node.name:  # type: ignore[attr-defined]
                other.add(node.name)  # type: ignore[attr-defined]
        elif kind is ast.MatchMapping and node.rest:  # type: ignore[attr-defined]
            other.add(node.rest)  # type: ignore[attr-defined]
        return guarded, fstring

    def _chain(self, node: ast.Attribute, guarded: int, fstring: bool) -> None:
        """Keep the chain ``a.b.c`` whose outermost node is ``node`` (its head a Name)."""
        nodes: List[ast.expr] = []
        current: ast.expr = node
        while type(current) is ast.Attribute:
            nodes.append(current)
            current = current.value
        nodes.append(current)
        nodes.reverse()
        parts = tuple(n.id if type(n) is ast.Name else n.attr for n in nodes)  # type: ignore[attr-defined]
        self.chains.append(Chain(parts, tuple(nodes), guarded, fstring))

    def _import(self, node: ast.AST, guarded: int, module_level: bool, top: bool) -> None:
        if type(node) is ast.Import:
            for alias in node.names:
                bound = alias.asname or alias.name.split(".", 1)[0]
                qualname = alias.name if alias.asname else bound
                self.imports.append(
                    ImportSite(alias, alias.name, bound, qualname, guarded, module_level, top)
                )
                if not module_level:
                    self._inner.add(bound)
            return
        module = "." * node.level + (node.module or "")  # type: ignore[attr-defined]
        for alias in node.names:  # type: ignore[attr-defined]
            if alias.name == "*":
                continue
            qualname = module + alias.name if module.endswith(".") else f"{module}.{alias.name}"
            bound = alias.asname or alias.name
            self.imports.append(
                ImportSite(alias, qualname, bound, qualname, guarded, module_level, top)
            )
            if not module_level:
                self._inner.add(bound)


def _identifiers(facts: "Facts") -> str:
    """Every identifier a test can read in the module of ``facts``, blank-separated."""
    args = (node.arg for node in facts.binders if type(node) is ast.arg)
    return " ".join((*facts.heads, *facts.attributes, *facts.keywords, *args))
