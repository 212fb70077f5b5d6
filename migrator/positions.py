"""Positions without LibCST's metadata machinery: the line and column of any node, from one
code generation per top-level statement that records where each node's tokens start and
end, and the module's code generated from the same per-statement pieces (cached, so a later
round regenerates only the statements an edit replaced).  Used by the context to locate
fixes and findings.
"""

from __future__ import annotations

import bisect
import itertools
import re
from typing import (
    Callable,
    Dict,
    List,
    Optional,
    Tuple,
)

from libcst._nodes.internal import CodegenState
from libcst._position import CodePosition, CodeRange

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.migrator.traversal import subtree_cache

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


class Positions:
    """Node positions of one module, as LibCST's ``PositionProvider`` gives them.

    A top-level statement's text does not depend on where it stands, so a node is placed by
    generating only its own statement (with spans) and counting the lines of the statements
    before it; both are kept per file (``subtree_cache``), so a later round regenerates only
    statements an edit replaced.  Anything else (the module node, its header and footer, a
    module with ``\r`` line endings) falls back to one pass over the whole module."""

    def __init__(
        self,
        module: cst.Module,
        parent: Callable[[cst.CSTNode], Optional[cst.CSTNode]],
        source: Optional[str] = None,
    ) -> None:
        self.module = module
        # ``source``: the text ``module`` was parsed from (LibCST gives it back exactly), so
        # the lines of the statements after a node are its line count less theirs: a node
        # late in a long file is placed without generating the code of everything before it.
        self._source = source
        self._ends: Optional[List[int]] = None  # first line of body[-k], as found
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
        if len(starts) <= index and self._source is not None:
            ends = self._ends or ()
            if len(body) - index - len(ends) < index - len(starts):  # fewer statements after
                found = self._from_end(index)
                if found is not None:
                    return found
        while len(starts) <= index:
            text = self._statement_text(body[len(starts) - 1])
            if "\r" in text:
                self._incremental = False
                return None
            starts.append(starts[-1] + text.count("\n"))
        return starts[index]

    def _from_end(self, index: int) -> Optional[int]:
        """``_first_line`` counted back from the end of the source (None: not that simple).

        Only where LibCST gives the source back line for line: it does not always keep a
        backslash continuation (LibCST 1.9 drops ``\\`` + newline before an ``except``
        clause's colon), and positions are those of the code it generates."""
        module, source = self.module, self._source
        if self._ends is None:
            if (
                source is None
                or "\r" in source
                or "\\\n" in source
                or not module.has_trailing_newline
            ):
                self._source = None
                return None
            footer = sum(module.code_for_node(line).count("\n") for line in module.footer)
            self._ends = [source.count("\n") + 1 - footer]  # the line after the last statement
        ends, body = self._ends, module.body
        while len(ends) <= len(body) - index:
            ends.append(ends[-1] - self._statement_text(body[len(body) - len(ends)]).count("\n"))
        return ends[len(body) - index]

    def _statement_text(self, statement: cst.CSTNode) -> str:
        return _statement_code(self.module, statement, self._spans, self._code)


def module_code(module: cst.Module) -> str:
    """``module.code``, from the per-file caches of statement code where they hold it (see
    :class:`Positions`): a later round generates only the statements an edit replaced."""
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


def _or_empty(
    cache: Optional[Dict[int, Tuple[cst.CSTNode, object]]],
) -> Dict[int, Tuple[cst.CSTNode, object]]:
    return {} if cache is None else cache
