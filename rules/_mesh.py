"""Matchers shared by the mesh / shard_map family of rules (JAX601-JAX607); no rule logic."""

from __future__ import annotations

from typing import List, Optional, Sequence, Set

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.migrator.context import Context
from jaxmigrate.migrator.scope import Scope, dotted_parts
from jaxmigrate.rules._flow import local_function
from jaxmigrate.rules._helpers import nodes_under

# Loops whose carry types changed meaning under the varying-manual-axes checker (check_vma).
CARRY_LOOPS = frozenset({"scan", "fori_loop", "while_loop"})


def keyword_arg(name: str, value: cst.BaseExpression, like: Optional[cst.Arg] = None) -> cst.Arg:
    """``name=value``, keeping the comma and whitespace of ``like`` when given."""
    equal = cst.AssignEqual(
        whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")
    )
    if like is not None:
        return like.with_changes(keyword=cst.Name(name), value=value, equal=equal, star="")
    return cst.Arg(keyword=cst.Name(name), value=value, equal=equal)


def with_separators(args: Sequence[cst.Arg]) -> List[cst.Arg]:
    """Give every argument but the last a ``, `` comma when it has none (args that were last)."""
    result = list(args)
    for index, arg in enumerate(result[:-1]):
        if arg.comma is cst.MaybeSentinel.DEFAULT:
            result[index] = arg.with_changes(
                comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
            )
    if result and isinstance(result[-1].comma, cst.Comma) and not _multiline(result[-1].comma):
        result[-1] = result[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return result


def _multiline(comma: cst.Comma) -> bool:
    return isinstance(comma.whitespace_after, cst.ParenthesizedWhitespace)


def is_literal(node: Optional[cst.BaseExpression], value: str) -> bool:
    return isinstance(node, cst.Name) and node.value == value


def is_simple_reference(node: cst.BaseExpression) -> bool:
    """A plain name or attribute chain: safe to evaluate twice."""
    return dotted_parts(node) is not None


def resolves_to(
    ctx: Context, node: cst.BaseExpression, scope: Scope, qualnames: Sequence[str]
) -> bool:
    return ctx.qualname(node, scope) in qualnames


def calls_in(node: cst.CSTNode) -> List[cst.Call]:
    return nodes_under(node, cst.Call)


def loop_carry_in(
    ctx: Context, body: cst.CSTNode, scope: Scope, depth: int = 3, seen: Optional[Set[int]] = None
) -> Optional[str]:
    """The name of the first scan/fori_loop/while_loop call reachable from ``body`` (through
    same-module functions it calls by name, ``depth`` levels deep), or None."""
    seen = seen if seen is not None else set()
    if id(body) in seen:
        return None
    seen.add(id(body))
    for call in calls_in(body):
        parts = dotted_parts(call.func)
        if not parts:
            continue
        if parts[-1] in CARRY_LOOPS:
            return ".".join(parts)
        if depth > 0 and len(parts) == 1:
            callee = local_function(ctx, call.func, scope)  # type: ignore[arg-type]
            if callee is not None:
                found = loop_carry_in(ctx, callee, scope, depth - 1, seen)
                if found:
                    return found
    return None


def append_arg(args: Sequence[cst.Arg], new: cst.Arg) -> List[cst.Arg]:
    """``args`` plus ``new`` at the end; in a call laid out one argument per line with a
    trailing comma, the new argument gets its own line too."""
    result = list(args)
    last = result[-1] if result else None
    if last is not None and isinstance(last.comma, cst.Comma) and _multiline(last.comma):
        indent = _line_indent(last.comma)
        if indent is not None:
            result[-1] = last.with_changes(comma=last.comma.with_changes(whitespace_after=indent))
            result.append(new.with_changes(comma=last.comma))
            return result
    result.append(new)
    return with_separators(result)


def _line_indent(comma: cst.Comma) -> Optional[cst.ParenthesizedWhitespace]:
    """The whitespace that starts the next argument line, derived from a trailing comma's
    whitespace (which ends at the closing parenthesis' indentation)."""
    # Argument lines are assumed to sit four spaces deeper than the closing parenthesis.
    ws = comma.whitespace_after
    if not isinstance(ws, cst.ParenthesizedWhitespace):
        return None
    closing = ws.last_line.value
    return ws.with_changes(last_line=cst.SimpleWhitespace(closing + "    "))


def hoist_point(
    ctx: Context, with_node: cst.With, definition: cst.CSTNode, assigns: dict
) -> Optional[cst.CSTNode]:
    """The statement of ``definition`` (``f = pjit(...)``) when the inline ``with Mesh(...):``
    that runs ``f`` comes later in the same block and its mesh expression can be evaluated
    there as well: every name it reads is an import, a parameter, or assigned only before
    that statement.  Binding ``mesh = Mesh(...)`` right before it gives jax.jit its mesh."""

    class _ChainHeads(cst.CSTVisitor):
        """The names an expression reads, attribute names left out."""

        def __init__(self) -> None:
            super().__init__()
            self.found: List[cst.Name] = []

        def visit_Attribute(self, node: cst.Attribute) -> bool:
            node.value.visit(self)
            return False

        def visit_Name(self, node: cst.Name) -> None:
            self.found.append(node)

    block = ctx.parent(with_node)
    statement: Optional[cst.CSTNode] = definition
    while statement is not None and ctx.parent(statement) is not block:
        statement = ctx.parent(statement)
    if statement is None or not isinstance(block, (cst.IndentedBlock, cst.Module)):
        return None
    body = list(block.body)
    if body.index(statement) >= body.index(with_node):  # type: ignore[arg-type]
        return None
    scope = ctx.scope_of(with_node)
    before = ctx.position(statement).start.line

    heads = _ChainHeads()
    with_node.items[0].item.visit(heads)
    for name in heads.found:
        bindings = scope.lookup(name.value)
        if not bindings:
            continue  # a builtin
        if all(b.is_import for b in bindings) or _is_parameter(bindings[0].scope, name.value):
            continue
        owner = bindings[0].scope
        found = assigns.get((id(owner), name.value), [])
        if len(found) < len(bindings) and owner is scope:
            return None  # bound by something other than an assignment here (a loop, a with)
        if any(ctx.position(a).start.line >= before for a in found):
            return None
    return statement


def _is_parameter(scope: Scope, name: str) -> bool:
    node = getattr(scope, "node", None)
    if not isinstance(node, (cst.FunctionDef, cst.Lambda)):
        return False
    params = node.params
    return any(
        p.name.value == name
        for p in (*params.posonly_params, *params.params, *params.kwonly_params)
    )
