"""JAX907's answer read from CPython's ``ast`` (issue #29): does
:class:`rules.dead_feature_test.DeadFeatureTest` certainly have nothing to do in a file?

Its ``visit_module`` replaces an ``if``/``elif`` chain when the branch that runs on the newest
JAX of the target names a JAX name that release lacks; it reports nothing else.  Here each
chain is read the same way: the ``hasattr(<JAX module>, "name")`` tests and the JAX-version
comparisons (:mod:`rules._version_tests`, whose comparison and values both layers share) are
answered for that release, and the branch that runs is searched for a JAX name the release may
lack.  The answer is "nothing to do" only when every chain is sure to be left alone; a test
the view cannot be sure to answer as LibCST does (a name the module binds in more than one
way, a builtin it rebinds, an odd string or argument), or a branch that may name a missing
name, leaves the file to LibCST.
"""

from __future__ import annotations

import ast
from typing import List, Optional, Tuple, Union

from jaxmigrate.migrator.astfacts import dotted
from jaxmigrate.migrator.astview import AstView
from jaxmigrate.migrator.version import parse_version
from jaxmigrate.rules._api_history import history
from jaxmigrate.rules._ast_sites import one_string_token
from jaxmigrate.rules._version_tests import (
    OPERATORS,
    PARSERS,
    VERSION_STRINGS,
    VERSION_TUPLES,
    Value,
    compared,
    either,
    literal_value,
    release_value,
)


class _Unsure:
    """The view cannot tell what LibCST's path answers."""


UNSURE = _Unsure()
Answer = Union[None, bool, _Unsure]  # None: not a test the rule answers
Body = List[ast.stmt]


def nothing_to_do(view: AstView, newest: str) -> bool:
    """True when no ``if`` chain of the file runs, on JAX ``newest``, a branch that may name a
    JAX name gone there (the rule then makes no fix and reports nothing)."""
    reader = _Reader(view, newest)
    for node in view.facts.ifs:
        if reader.is_elif(node):
            continue
        taken = reader.taken(node)
        if taken is None:
            continue
        if isinstance(taken, _Unsure) or reader.may_name_gone(taken):
            return False
    return True


class _Reader:
    def __init__(self, view: AstView, newest: str) -> None:
        self.view, self.newest, self.release = view, newest, parse_version(newest)

    def is_elif(self, node: ast.If) -> bool:
        """An ``elif`` (its node starts at the keyword), not an ``if`` inside an ``else``."""
        text = self.view.line(node.lineno).encode("utf-8", "surrogatepass")
        return text[node.col_offset :].startswith(b"elif")

    def _branches(self, node: ast.If) -> List[Tuple[Optional[ast.expr], Body]]:
        branches: List[Tuple[Optional[ast.expr], Body]] = []
        current: Optional[ast.If] = node
        while current is not None:
            branches.append((current.test, current.body))
            orelse = current.orelse
            current = None
            if len(orelse) == 1 and type(orelse[0]) is ast.If and self.is_elif(orelse[0]):
                current = orelse[0]
            elif orelse:
                branches.append((None, orelse))
        return branches

    def taken(self, node: ast.If) -> Union[None, Body, _Unsure]:
        """The branch of ``node``'s chain that runs on the release (``_taken``)."""
        for test, body in self._branches(node):
            if test is None:
                return body
            answer = self._hasattr(test)
            if answer is None:
                answer = self._version(test)
            if answer is None or isinstance(answer, _Unsure):
                return answer
            if answer:
                return body
        return None

    # -- names ---------------------------------------------------------------------------
    def _qualname(self, node: ast.AST) -> Union[None, str, _Unsure]:
        """``ctx.qualname`` of a dotted expression (None for anything else)."""
        parts = dotted(node)
        if parts is None:
            return None
        sure, head = self.view.resolve(parts[0])
        if not sure:
            return UNSURE
        return None if head is None else ".".join((head, *parts[1:]))

    def _string(self, node: ast.AST) -> Union[None, str, _Unsure]:
        """A plain string literal's value (LibCST's ``SimpleString``); None for other nodes."""
        if type(node) is not ast.Constant or not isinstance(node.value, str):
            return None
        return node.value if one_string_token(self.view, node) else UNSURE

    # -- the tests -----------------------------------------------------------------------
    def _hasattr(self, test: ast.expr) -> Answer:
        negated, test = _negation(test)
        if not (
            type(test) is ast.Call
            and type(test.func) is ast.Name
            and test.func.id == "hasattr"
            and len(test.args) == 2
            and not test.keywords
            and not any(type(arg) is ast.Starred for arg in test.args)
            and type(test.args[1]) is ast.Constant
        ):
            return None
        if not isinstance(test.args[1].value, str):
            return None  # (bytes: not a name either)
        if self.view.binds("hasattr"):
            return UNSURE
        owner = self._qualname(test.args[0])
        if owner is None or isinstance(owner, _Unsure):
            return owner
        if history().present_in(owner, self.release) is not True:
            return None
        name = self._string(test.args[1])
        if name is None or isinstance(name, _Unsure):
            return UNSURE  # ``"a" "b"``: not one string to LibCST
        answer = history().present_in(f"{owner}.{name}", self.release)
        return None if answer is None else answer != negated

    def _version(self, test: ast.expr) -> Answer:
        negated, test = _negation(test)
        if type(test) is not ast.Compare or len(test.ops) != 1:
            return None
        name = type(test.ops[0]).__name__
        if name not in OPERATORS:
            return None
        left, right = self._value(test.left), self._value(test.comparators[0])
        if left is None or right is None:
            return None
        if isinstance(left, _Unsure) or isinstance(right, _Unsure):
            return UNSURE
        return compared(name, left, right, negated)

    def _value(self, node: ast.expr, follow: bool = True) -> Union[None, Value, _Unsure]:
        if type(node) is ast.IfExp:
            body, orelse = self._value(node.body, follow), self._value(node.orelse, follow)
            if body is None or orelse is None:
                return None
            if isinstance(body, _Unsure) or isinstance(orelse, _Unsure):
                return UNSURE
            return either(body, orelse)
        if type(node) is ast.Tuple:
            if any(type(item) is ast.Starred for item in node.elts):
                return UNSURE
            numbers = [
                i.value for i in node.elts if type(i) is ast.Constant and type(i.value) is int
            ]
            if node.elts and len(numbers) == len(node.elts):
                return "ints", False, tuple(numbers)
            return None
        if type(node) in (ast.Name, ast.Attribute):
            name = self._qualname(node)
            if isinstance(name, _Unsure):
                return UNSURE
            if name is None and follow and type(node) is ast.Name:
                return self._assigned(node.id)
            return release_value("ints", self.newest) if name in VERSION_TUPLES else None
        if type(node) is not ast.Call or len(node.args) + len(node.keywords) != 1:
            return None
        if node.keywords and node.keywords[0].arg is not None:
            return None  # a keyword argument
        if node.keywords or type(node.args[0]) is ast.Starred:
            return UNSURE  # ``f(*a)``, ``f(**k)``: one argument to LibCST
        func, argument = self._qualname(node.func), node.args[0]
        if isinstance(func, _Unsure):
            return UNSURE
        if func in PARSERS:
            text = self._string(argument)
            if isinstance(text, _Unsure):
                return UNSURE
            if text is not None:
                return literal_value(text)
            read = self._qualname(argument)
            if isinstance(read, _Unsure):
                return UNSURE
            return release_value("parsed", self.newest) if read in VERSION_STRINGS else None
        if func == "builtins.tuple" or (type(node.func) is ast.Name and node.func.id == "tuple"):
            if not _calls_map(argument):
                return None  # ``tuple(range(n))``: no split version, whatever binds tuple
            if self.view.binds("tuple") or self.view.binds("map"):
                return UNSURE  # the module's own tuple or map
            splits = self._splits_version(argument)
            if splits is None or isinstance(splits, _Unsure):
                return splits
            return release_value("ints", self.newest)
        return None

    def _assigned(self, ident: str) -> Union[None, Value, _Unsure]:
        """The version a name no import binds holds: LibCST's path reads it through the one
        plain assignment its scope sees, one of the module's bindings of the name.  None
        where no binding's value is a version; where the module binds it once, that value
        (an assignment LibCST's path does not follow, ``a = b = v`` or an annotated one, is
        read too: an answer where that path has none leaves the chain to it, or finds nothing
        to do in it, as that path does); more bindings: not sure which one a scope sees."""
        facts = self.view.facts
        if facts.scopes() is None:
            return UNSURE
        bindings = facts.bindings(ident)
        read = [
            self._value(binding.value, follow=False)
            for binding in bindings
            if binding.kind == "value" and binding.value is not None
        ]
        found = [value for value in read if value is not None]
        if not found:
            return None
        return found[0] if len(bindings) == 1 else UNSURE

    def _splits_version(self, node: ast.expr) -> Union[None, bool, _Unsure]:
        """``map(int, V.split("."))`` with ``V`` a JAX version string: True, or None."""
        if type(node) is not ast.Call:
            return None
        if (
            type(node.func) is ast.Name
            and node.func.id == "map"
            and (node.keywords or _odd_arguments(node))
        ):
            return UNSURE  # LibCST reads its arguments by position, keywords and stars too
        if not (
            type(node.func) is ast.Name
            and node.func.id == "map"
            and len(node.args) == 2
            and type(node.args[0]) is ast.Name
            and node.args[0].id == "int"
        ):
            return None
        if self.view.binds("int"):
            return UNSURE
        split = node.args[1]
        if not (
            type(split) is ast.Call
            and type(split.func) is ast.Attribute
            and split.func.attr == "split"
            and len(split.args) + len(split.keywords) == 1
        ):
            return None
        if _odd_arguments(split) or split.keywords:
            return UNSURE
        text = self._string(split.args[0])
        if text is None or isinstance(text, _Unsure) or text != ".":
            return text if isinstance(text, _Unsure) else None
        read = self._qualname(split.func.value)
        if isinstance(read, _Unsure):
            return UNSURE
        return True if read in VERSION_STRINGS else None

    # -- the branch that runs --------------------------------------------------------------
    def may_name_gone(self, body: Body) -> bool:
        """Can ``_gone_name`` find, in ``body``, a JAX name the release lacks?  Every dotted
        name and identifier of the branch is read through every import that binds its head,
        in any scope (LibCST resolves the one its scope sees: one of these)."""
        bound: dict = {}
        for item in self.view.imports:
            bound.setdefault(item.bound, set()).add(item.qualname)
        h = history()
        for parts in _spellings(body):
            for head in bound.get(parts[0], ()):
                pieces = [*head.split("."), *parts[1:]]
                if pieces[0] not in ("jax", "jaxlib"):
                    continue
                for cut in range(2, len(pieces) + 1):
                    if h.present_in(".".join(pieces[:cut]), self.release) is False:
                        return True
        return False


def _negation(test: ast.expr) -> Tuple[bool, ast.expr]:
    negated = False
    while type(test) is ast.UnaryOp and type(test.op) is ast.Not:
        negated, test = not negated, test.operand
    return negated, test


def _calls_map(node: ast.expr) -> bool:
    """``map(...)``: the only argument of ``tuple`` LibCST's reading may take for a split
    version (``_splits_jax_version``); it says no to anything else, in any scope."""
    return type(node) is ast.Call and type(node.func) is ast.Name and node.func.id == "map"


def _odd_arguments(call: ast.Call) -> bool:
    """A ``*args`` or ``**kwargs``: LibCST counts those as arguments like any other."""
    return any(type(a) is ast.Starred for a in call.args) or any(
        k.arg is None for k in call.keywords
    )


def _spellings(body: Body) -> List[Tuple[str, ...]]:
    """Every dotted name (``a.b.c``) and identifier (a parameter, a keyword, an imported
    module's parts, an attribute of a call's result, ...) written in ``body``."""
    found: List[Tuple[str, ...]] = []
    for statement in body:
        for node in ast.walk(statement):
            kind = type(node)
            if kind is ast.Constant:
                continue
            if kind is ast.Attribute:
                parts = dotted(node)
                found.append(tuple(parts) if parts else (node.attr,))  # type: ignore[attr-defined]
                continue
            for _field, value in ast.iter_fields(node):
                values = value if isinstance(value, list) else [value]
                for item in values:
                    if isinstance(item, str):
                        found.append(tuple(item.split(".")))
    return found
