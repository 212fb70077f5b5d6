"""Keeping one file's trouble inside that file: a nesting limit and a big stack.

LibCST's parser is native code that recurses once per level of nesting and cannot be
stopped: past its stack it kills the process (SIGSEGV), which no ``except`` can catch.  Its
code generation, and this tool's own walks, recurse in Python, where the interpreter's
recursion limit (1,000 frames by default) ends them with a ``RecursionError`` long before a
legacy call inside a 500-term ``a + a + ...`` sum, 600 implicitly concatenated strings or
1,000 ``elif``s has been migrated.

So the LibCST part of a file's migration runs in a thread kept for it, with a large stack
(:data:`STACK_BYTES`, reserved address space: only the pages a deep file touches are used)
and a raised recursion limit, and a file nested more than :data:`MAX_NESTING` levels deep is
refused before LibCST sees it.  The depth is measured on CPython's ``ast`` when it parses the
file (:func:`tree_depth`), else on its tokens (:func:`token_depth`); both count at least the
levels LibCST's tree has.  Measured at the limit on every construct tried (operator, unary,
ternary, lambda, attribute, call and subscript chains, ``and``/``or``, ``elif``, strings),
with a legacy call at the deepest point: under 8,000 Python frames, 16 MB of stack, and a
few seconds a file (nested lists are slow in LibCST: hence CPython's own bracket limit).
"""

from __future__ import annotations

import ast
import io
import os
import queue
import sys
import threading
import tokenize
from typing import Callable, Dict, List, Optional, Tuple, TypeVar

MAX_NESTING = 1500  # levels of syntax (see tree_depth); deeper files are refused
STACK_BYTES = 512 * 2**20  # the engine thread's stack (virtual: pages are used as touched)
RECURSION_LIMIT = 100_000  # Python frames while an engine thread runs (a 12x margin)
# Without the big stack (a thread could not be started) the process's own stack is used:
# keep to what the default 8 MB main-thread stack handles.
FALLBACK_NESTING = 200
MAX_BRACKETS = 200  # CPython's own limit on nested brackets (LibCST slows down past it)

T = TypeVar("T")


def too_deep_message(limit: int) -> str:
    return f"too deeply nested to analyse (limit {limit:,} levels)"


def nesting_problem(text: str, tree: Optional[ast.AST], limit: int) -> Optional[str]:
    """Why LibCST must not be given ``text`` (None if it may): nested beyond ``limit`` levels,
    or, for a file CPython's ``ast`` does not parse (``tree`` is None), beyond
    :data:`MAX_BRACKETS` brackets."""
    if len(text) <= min(limit, MAX_BRACKETS):  # a level takes at least a character
        return None
    if tree is not None:
        depth, brackets = tree_depth(tree, limit, text), 0  # (CPython: MAX_BRACKETS at most)
    else:
        depth, brackets = token_depth(text, limit)
    if brackets > MAX_BRACKETS:
        return f"too deeply nested to analyse (more than {MAX_BRACKETS} nested brackets)"
    if depth > limit:
        return too_deep_message(limit)
    return None


class _Limit:
    """The recursion limit is one per interpreter: raised while any engine thread runs."""

    lock = threading.Lock()
    active = 0
    saved = 0


def _raise_limit() -> None:
    with _Limit.lock:
        if _Limit.active == 0:
            _Limit.saved = sys.getrecursionlimit()
            sys.setrecursionlimit(max(_Limit.saved, RECURSION_LIMIT))
        _Limit.active += 1


def _restore_limit() -> None:
    with _Limit.lock:
        _Limit.active -= 1
        if _Limit.active == 0:
            sys.setrecursionlimit(_Limit.saved)


def with_big_stack(function: Callable[..., T], *args: object) -> Tuple[T, int]:
    """``function(*args)`` in a thread with a :data:`STACK_BYTES` stack and a raised recursion
    limit; returns its value and the nesting limit that applies there (exceptions propagate).
    Where no such thread can be made, runs here with :data:`FALLBACK_NESTING`.

    The thread is made once per process and kept (:class:`_EngineThread`): a new thread per
    file cost a tenth of a run over many small files.  A call made on that thread (the engine
    asking the engine) runs there directly."""
    engine = _EngineThread.get()
    if engine is None:  # pragma: no cover (no memory for the stack)
        return function(*args, FALLBACK_NESTING), FALLBACK_NESTING
    if threading.current_thread() is engine.thread:
        return function(*args, MAX_NESTING), MAX_NESTING
    return engine.call(function, args), MAX_NESTING


class _EngineThread:
    """The thread :func:`with_big_stack` runs functions in, one call at a time.

    A daemon, so that an idle one never holds the process at exit; and a call waits for its
    function to end even when a signal interrupts the wait, so that the process never exits
    while the thread is inside LibCST's native code (which would abort it)."""

    _made: Dict[int, Optional["_EngineThread"]] = {}  # per process (a forked worker makes its own)
    _lock = threading.Lock()

    def __init__(self) -> None:
        self.calls: "queue.SimpleQueue[Tuple[Callable[..., object], Tuple[object, ...], _Call]]"
        self.calls = queue.SimpleQueue()
        self.serial = threading.Lock()  # one call at a time
        self.thread = threading.Thread(target=self._serve, name="jaxmigrate-engine", daemon=True)

    @classmethod
    def get(cls) -> Optional["_EngineThread"]:
        pid = os.getpid()
        if pid not in cls._made:
            with cls._lock:
                if pid not in cls._made:
                    cls._made[pid] = cls._start()
        return cls._made[pid]

    @classmethod
    def _start(cls) -> Optional["_EngineThread"]:
        try:
            previous = threading.stack_size(STACK_BYTES)
        except (ValueError, RuntimeError):  # pragma: no cover (platforms without the setting)
            return None
        try:
            engine = cls()
            engine.thread.start()
        except RuntimeError:  # pragma: no cover (no memory for the stack)
            return None
        finally:
            threading.stack_size(previous)
        return engine

    def _serve(self) -> None:
        while True:
            function, args, call = self.calls.get()
            _raise_limit()
            try:
                call.value = function(*args, MAX_NESTING)
            except BaseException as error:  # noqa: BLE001  (handed to the caller)
                call.error = error
            finally:
                _restore_limit()
                call.done.set()

    def call(self, function: Callable[..., T], args: Tuple[object, ...]) -> T:
        with self.serial:
            call = _Call()
            self.calls.put((function, args, call))
            stopped: Optional[BaseException] = None
            while not call.done.is_set():
                try:
                    call.done.wait()
                except BaseException as signalled:  # noqa: BLE001  (raised once it ends)
                    stopped = stopped or signalled
            if stopped is not None:
                raise stopped
        if call.error is not None:
            error, call.error = call.error, None
            raise error
        return call.value  # type: ignore[return-value]


class _Call:
    __slots__ = ("done", "value", "error")

    def __init__(self) -> None:
        self.done = threading.Event()
        self.value: object = None
        self.error: Optional[BaseException] = None


# -- measuring the nesting ---------------------------------------------------------------------
def tree_depth(tree: ast.AST, limit: int, text: Optional[str] = None) -> int:
    """How deeply ``tree`` nests, counted so that LibCST's tree is no deeper: one level per
    node, plus the operands of an ``and``/``or`` chain and the ``for`` clauses of a
    comprehension (flat lists in ``ast``, nested nodes in LibCST).  Stops early past ``limit``.
    (Implicitly concatenated strings, flat in ``ast`` too, are bounded by LibCST's parser.)

    With ``text`` (the source of ``tree``), a statement whose source is too short to nest past
    ``limit`` is not walked (:func:`_short_enough`), so that the answer is the depth when it
    is over ``limit``, and some depth no greater than ``limit`` otherwise."""
    AST, stmt = ast.AST, ast.stmt
    BoolOp, comprehensions = ast.BoolOp, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)
    starts = _line_starts(text) if text is not None else None
    deepest = 0
    stack: List[Tuple[ast.AST, int]] = [(tree, 1)]
    pop, push = stack.pop, stack.append
    while stack:
        node, depth = pop()
        kind = type(node)
        if kind is BoolOp:
            depth += len(node.values) - 1  # type: ignore[attr-defined]
        elif kind in comprehensions:
            depth += len(node.generators) - 1  # type: ignore[attr-defined]
        if depth > deepest:
            deepest = depth
            if deepest > limit:
                return deepest
        if starts is not None and isinstance(node, stmt):
            if _short_enough(node, starts, limit - depth):
                continue  # (it cannot reach past the limit)
        below = depth + 1
        for field in node._fields:
            value = getattr(node, field, None)
            if type(value) is list:
                for item in value:
                    if isinstance(item, AST):
                        push((item, below))
            elif isinstance(value, AST):
                push((value, below))
    return deepest


def _line_starts(text: str) -> Optional[List[int]]:
    """Where each line of ``text`` starts (:func:`migrator.piecewise.line_starts`), in the units
    of ``ast``'s column offsets (UTF-8 bytes): for an ASCII text whose lines end at ``\n``
    (``\r\n`` included), its characters.  None for any other text (its statements are walked)."""
    if not text.isascii() or text.count("\r") != text.count("\r\n"):
        return None
    from jaxmigrate.migrator.piecewise import line_starts  # (the engine's: loaded by then)

    return line_starts(text)


def _short_enough(node: ast.stmt, starts: List[int], levels: int) -> bool:
    """Can the statement ``node`` have no more than ``levels`` levels below it, by its length?

    Each level of ``ast`` below a statement takes at least one character of it, apart from a
    few that take none and never nest in one another (an expression statement, a context or
    an operator, the arguments of a definition, a keyword argument, a ``with`` item): so twice
    its characters, and a margin, bound its levels (``tests/test_guard_depth.py`` builds the
    constructs that nest most for their length).  A definition's decorators come before its
    own line: they are counted in."""
    line, column = node.lineno, node.col_offset
    for decorator in getattr(node, "decorator_list", ()):
        line, column = min((line, column), (decorator.lineno, decorator.col_offset))
    end_line, end_column = node.end_lineno, node.end_col_offset
    if end_line is None or end_column is None or end_line > len(starts):
        return False
    length = starts[end_line - 1] + end_column - starts[line - 1] - column
    return 2 * length + 8 <= levels


# Tokens that can open a level of LibCST's tree within a statement: operators (binary,
# unary, comparison), attribute/call/subscript trailers, the keywords of nested expressions.
_NESTING_OPS = frozenset(
    "+ - * / // % ** @ << >> & | ^ ~ < > <= >= == != . := -> = += -= *= /= //= %= **= @= "
    "<<= >>= &= |= ^=".split()
)
_NESTING_WORDS = frozenset("not and or if else lambda await yield in is for async from".split())
_OPEN, _CLOSE = frozenset("([{"), frozenset(")]}")


def token_depth(text: str, limit: int) -> Tuple[int, int]:
    """A bound on how deeply ``text`` nests, from its tokens, for files CPython's ``ast`` does
    not parse: per statement, each bracket level plus every operator, keyword and string that
    can add a level inside it (counted from the last comma of that bracket), plus the
    indentation and the length of each ``elif``/``else`` chain around it; and the deepest
    bracket nesting.  Stops early past ``limit`` (or :data:`MAX_BRACKETS`); an input the
    tokenizer gives up on counts up to where it did."""
    deepest = 0
    brackets = 0
    frames: List[int] = [0]  # per open bracket: the count where its current element began
    count = 0
    chains: List[int] = [0]  # per indentation level: elif/else clauses so far in its chain
    line_start = True
    previous_string = False
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            kind, value = token.type, token.string
            if kind == tokenize.INDENT:
                chains.append(0)
                continue
            if kind == tokenize.DEDENT:
                if len(chains) > 1:
                    chains.pop()
                continue
            if kind in (tokenize.NEWLINE, tokenize.ENDMARKER):
                frames, count, line_start, previous_string = [0], 0, True, False
                continue
            if kind in (tokenize.NL, tokenize.COMMENT):
                continue
            if line_start:
                line_start = False
                if value in ("elif", "else") and kind == tokenize.NAME:
                    chains[-1] += 1
                elif value not in ("except", "finally"):
                    chains[-1] = 0
                base = len(chains) + sum(chains)
                count = base
                frames = [base]
            is_string = kind == tokenize.STRING
            if kind == tokenize.OP and value in _OPEN:
                count += 1
                frames.append(count)
                if len(frames) - 1 > brackets:
                    brackets = len(frames) - 1
                    if brackets > MAX_BRACKETS:
                        return deepest, brackets
            elif kind == tokenize.OP and value in _CLOSE:
                if len(frames) > 1:
                    frames.pop()
                count = max(count, frames[-1])  # a closed bracket's levels stay counted
            elif kind == tokenize.OP and value == ",":
                count = frames[-1]
            elif (kind == tokenize.OP and value in _NESTING_OPS) or (
                kind == tokenize.NAME and value in _NESTING_WORDS
            ):
                count += 1
            elif is_string and previous_string:
                count += 1
            previous_string = is_string
            if count > deepest:
                deepest = count
                if deepest > limit:
                    return deepest, brackets
    except (tokenize.TokenError, SyntaxError):
        pass
    return deepest, brackets
