"""The layout document of an expression and its printer, for :mod:`migrator.wrap`.

:class:`Builder` turns a one-line expression into a document in the manner of Wadler's
"prettier printer": its brackets (call arguments, lists, tuples, comprehensions and
parenthesised ``and``/``or`` chains) become groups that may break, everything else stays
text.  :func:`render` prints a document from a column, breaking a group only where its
contents do not fit in the width.  Which lines to wrap, and whether the result is kept, is
:mod:`migrator.wrap`'s business; this module only lays out.
"""

from __future__ import annotations

from typing import Dict, List, Sequence, Tuple, Union

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.migrator.context import Context

# A document (after Wadler's "prettier printer"): text, a list of documents, or a tuple
# ("group"|"indent"|"align", document) / ("line",) / ("soft",) / ("ifbreak", text); "align"
# sets its continuation lines at the column it starts at (a visual indent).
Doc = Union[str, list, tuple]
_LINE: tuple = ("line",)  # a space, or a line break when its group breaks
_SOFT: tuple = ("soft",)  # nothing, or a line break when its group breaks
_FLAT, _BREAK = 0, 1
_SHORT_TAIL = 12  # text after a broken last bracket that may share its closing line: ``[::-1]``


class Builder:
    """The document of an expression: its brackets as groups, everything else as text."""

    def __init__(self, ctx: Context, black: bool) -> None:
        self.ctx, self.black = ctx, black

    def code(self, node: cst.CSTNode) -> str:
        return self.ctx.module.code_for_node(node)

    def build(self, node: cst.CSTNode) -> Doc:
        if isinstance(node, cst.Call) and node.args and _plain(node.whitespace_before_args):
            items = [self._arg(arg) for arg in node.args]
            opening = self.code(node.whitespace_after_func) + "("
            trailing = not _starred(node.args)
            if isinstance(node.func, cst.Call) and not node.func.lpar:
                # ``f(...)(x)``: the callee's brackets may break too, and the arguments after
                # them stay on its closing line where they fit (black's layout)
                arguments = self._bracketed(opening, items, ")", trailing=trailing)
                return self._parens(node, [self.build(node.func), arguments])
            head = self.code(node.func) + opening
            return self._parens(node, self._bracketed(head, items, ")", trailing=trailing))
        if isinstance(node, cst.BooleanOperation) and node.lpar:
            operands, operators = _operands(node)
            parts: List[Doc] = [self.build(operands[0])]
            for operator, operand in zip(operators, operands[1:]):
                parts += [_LINE, operator + " ", self.build(operand)]
            inner = cst.Module(body=[]).code_for_node(node.lpar[0])
            closing = cst.Module(body=[]).code_for_node(node.rpar[0])
            unwrapped = node.with_changes(lpar=node.lpar[1:], rpar=node.rpar[1:])
            group = (
                "group",
                [inner, ("indent", [_SOFT, *parts]), _SOFT if self.black else "", closing],
            )
            return self._parens(unwrapped, group)
        if (
            isinstance(node, (cst.List, cst.Tuple))
            and node.elements
            and (isinstance(node, cst.List) or node.lpar)
        ):
            items = [self._element(e) for e in node.elements]
            if isinstance(node, cst.List):
                return self._parens(node, self._bracketed("[", items, "]", trailing=True))
            outer = node.with_changes(lpar=node.lpar[1:], rpar=node.rpar[1:])
            one = len(items) == 1
            return self._parens(
                outer, self._bracketed("(", items, ")", trailing=not one, comma=one)
            )
        if isinstance(node, (cst.GeneratorExp, cst.ListComp)) and not node.for_in.asynchronous:
            return self._comprehension(node)
        return self._generic(node)

    def aligned(self, node: cst.BooleanOperation) -> Doc:
        """A parenthesised ``and``/``or`` chain as the Google style breaks one that does not
        start its line: each operator ends a line, the next operand under the first, one
        column right of the parenthesis (``(isinstance(v, Literal) and\n v in seen)``)."""
        operands, operators = _operands(node)
        parts: List[Doc] = [self.build(operands[0])]
        for operator, operand in zip(operators, operands[1:]):
            parts += [" " + operator, _LINE, self.build(operand)]
        inner = cst.Module(body=[]).code_for_node(node.lpar[0])
        closing = cst.Module(body=[]).code_for_node(node.rpar[0])
        unwrapped = node.with_changes(lpar=node.lpar[1:], rpar=node.rpar[1:])
        return self._parens(unwrapped, [inner, ("group", [("align", parts)]), closing])

    def _parens(self, node: cst.CSTNode, doc: Doc) -> Doc:
        lpar = "".join(self.code(p) for p in getattr(node, "lpar", ()))
        rpar = "".join(self.code(p) for p in getattr(node, "rpar", ()))
        return [lpar, doc, rpar] if lpar or rpar else doc

    def _bracketed(
        self, head: str, items: Sequence[Doc], close: str, trailing: bool, comma: bool = False
    ) -> Doc:
        joined: List[Doc] = []
        for index, item in enumerate(items):
            if index:
                joined += [",", _LINE]
            joined.append(item)
        if comma:
            joined.append(",")
        elif self.black and trailing:
            joined.append(("ifbreak", ","))
        return (
            "group",
            [head, ("indent", [_SOFT, ("group", joined)]), _SOFT if self.black else "", close],
        )

    def _arg(self, arg: cst.Arg) -> Doc:
        bare = arg.with_changes(
            value=cst.Name("_"),
            comma=cst.MaybeSentinel.DEFAULT,
            whitespace_after_arg=cst.SimpleWhitespace(""),
        )
        prefix = self.code(bare)[:-1]
        return [prefix, self.build(arg.value)]

    def _element(self, element: cst.BaseElement) -> Doc:
        bare = element.with_changes(value=cst.Name("_"), comma=cst.MaybeSentinel.DEFAULT)
        prefix = self.code(bare)[:-1]
        return [prefix, self.build(element.value)]

    def _generic(self, node: cst.CSTNode) -> Doc:
        """The node's text, its last bracket a group when only closing brackets or a short
        tail follow it (``lambda x: f(...)``, ``not (...)``, ``(a or b)[::-1]``): a bracket with
        more text after it on the line is left whole, as breaking it would leave that text as
        long as it was."""
        inner = _outermost_breakable(node)
        if not inner:
            return self.code(node)
        last = inner[-1]
        mark = "__jaxmigrate_wrap__"
        marked = node.visit(_Mark({id(last): mark}))
        assert isinstance(marked, cst.CSTNode)  # _Mark only renames
        before, _, after = self.code(marked).partition(mark)
        tail = after.strip(")]}, ")
        if tail and len(tail) > _SHORT_TAIL and not isinstance(last, cst.GeneratorExp):
            return self.code(node)
        return [before, self.build(last), after]

    def _comprehension(self, node: Union[cst.GeneratorExp, cst.ListComp]) -> Doc:
        """``(elt for x in xs)``: a break before ``for`` (inside the brackets, when it has them)."""
        clauses = self.code(node.for_in.with_changes(whitespace_before=cst.SimpleWhitespace("")))
        body = ("group", [self.build(node.elt), _LINE, clauses])
        if isinstance(node, cst.ListComp):
            return self._parens(
                node, ("group", ["[", ("indent", [_SOFT, body]), _SOFT if self.black else "", "]"])
            )
        if not node.lpar:
            return body
        outer = node.with_changes(lpar=node.lpar[1:], rpar=node.rpar[1:])
        return self._parens(
            outer, ("group", ["(", ("indent", [_SOFT, body]), _SOFT if self.black else "", ")"])
        )


def _plain(whitespace: cst.BaseParenthesizableWhitespace) -> bool:
    return isinstance(whitespace, cst.SimpleWhitespace) and not whitespace.value


def _starred(args: Sequence[cst.Arg]) -> bool:
    return any(arg.star for arg in args)


def _breakable(node: cst.CSTNode) -> bool:
    if isinstance(node, cst.Call):
        return bool(node.args)
    if isinstance(node, cst.BooleanOperation):
        return bool(node.lpar)
    if isinstance(node, cst.List):
        return bool(node.elements)
    if isinstance(node, cst.Tuple):
        return bool(node.elements and node.lpar)
    return isinstance(node, (cst.GeneratorExp, cst.ListComp))


def _outermost_breakable(node: cst.CSTNode) -> List[cst.CSTNode]:
    found: List[cst.CSTNode] = []
    stack = list(reversed(node.children))
    while stack:
        child = stack.pop()
        if _breakable(child):
            found.append(child)
        else:
            stack.extend(reversed(child.children))
    return found


def _operands(node: cst.BooleanOperation) -> Tuple[List[cst.BaseExpression], List[str]]:
    """The operands of a chain of one boolean operator (parenthesised parts whole)."""
    operands: List[cst.BaseExpression] = []
    operators: List[str] = []
    _walk_operands(node, True, type(node.operator), operands, operators)
    return operands, operators


def _walk_operands(
    part: cst.BaseExpression,
    top: bool,
    kind: type,
    operands: List[cst.BaseExpression],
    operators: List[str],
) -> None:
    # ``(a and b) and c`` is ``a and b and c`` (same values, same order of evaluation).  (Not
    # a closure: a recursive one is a cycle that would hold the nodes until a collection.)
    if (
        isinstance(part, cst.BooleanOperation)
        and isinstance(part.operator, kind)
        and (top or len(part.lpar) <= 1)
    ):
        _walk_operands(part.left, False, kind, operands, operators)
        operators.append("and" if kind is cst.And else "or")
        _walk_operands(part.right, False, kind, operands, operators)
    else:
        operands.append(part)


class _Mark(cst.CSTTransformer):
    def __init__(self, marks: Dict[int, str]) -> None:
        super().__init__()
        self.marks = marks

    def on_visit(self, node: cst.CSTNode) -> bool:
        return id(node) not in self.marks

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode):  # noqa: ANN201
        mark = self.marks.get(id(original_node))
        return cst.Name(mark) if mark is not None else updated_node


def render(doc: Doc, width: int, column: int, indent: int, unit: int) -> str:
    """``doc`` printed from ``column``, continuation lines at ``indent`` (plus ``unit`` a
    level), breaking a group only where its contents do not fit in ``width``."""
    out: List[str] = []
    position = column
    commands: List[Tuple[int, int, Doc]] = [(indent, _BREAK, doc)]
    while commands:
        level, mode, item = commands.pop()
        if isinstance(item, str):
            out.append(item)
            position += len(item)
        elif isinstance(item, list):
            commands.extend((level, mode, part) for part in reversed(item))
        elif item[0] == "group":
            flat = mode == _FLAT or _fits((level, _FLAT, item[1]), commands, width - position)
            commands.append((level, _FLAT if flat else _BREAK, item[1]))
        elif item[0] == "indent":
            commands.append((level + unit, mode, item[1]))
        elif item[0] == "align":
            commands.append((position, mode, item[1]))
        elif item[0] in ("line", "soft"):
            if mode == _FLAT:
                text = " " if item[0] == "line" else ""
                out.append(text)
                position += len(text)
            else:
                out.append("\n" + " " * level)
                position = level
        elif item[0] == "ifbreak" and mode == _BREAK:
            out.append(item[1])
            position += len(item[1])
    return "".join(out).replace(" \n", "\n")


def _fits(next_command: Tuple[int, int, Doc], rest: List[Tuple[int, int, Doc]], width: int) -> bool:
    """Whether ``next_command`` and what follows it up to the next line break fit in ``width``."""
    stack = [next_command]
    remaining = len(rest)
    while width >= 0:
        if not stack:
            if not remaining:
                return True
            remaining -= 1
            stack.append(rest[remaining])
            continue
        level, mode, item = stack.pop()
        if isinstance(item, str):
            width -= len(item)
        elif isinstance(item, list):
            stack.extend((level, mode, part) for part in reversed(item))
        elif item[0] in ("group", "indent", "align"):
            stack.append((level, mode, item[1]))
        elif item[0] in ("line", "soft"):
            if mode == _BREAK:
                return True
            width -= 1 if item[0] == "line" else 0
        elif item[0] == "ifbreak" and mode == _BREAK:
            width -= len(item[1])
    return False
