"""What a fold leaves dead: emptied branches and stores a moved store overwrites.

A fix that removes a statement (``jax.config.update("jax_array", True)``, a GDA conversion)
can leave its block empty, which LibCST prints as ``pass``: ``if use_jax_array: pass`` /
``else: pass``.  A fix that folds ``if jax.config.jax_array: restore_type = jax.Array`` moves
the store up, right after the ``restore_type = GDA`` it used to override.  Maintainers would
have written neither.  Once the rounds of a file settle, this pass:

* drops an ``if`` whose branches the migration emptied, when its test does nothing
  (:func:`migrator.tidy.pure_condition`); drops an emptied ``else``; turns ``if c:`` with an
  emptied body and a kept ``else`` into ``if not c:`` with the ``else``'s statements;
* drops ``x = A`` right before ``x = B`` in the same block when a fix wrote or moved one of
  the two, ``A`` does nothing (a name, a dotted name or a literal) and ``B`` does not read
  ``x``.

A block is empty only when the migration emptied it (a parsed block always holds a statement,
``pass`` included), so the user's own ``pass`` is never touched; nor is anything that holds a
comment.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Set, Tuple, Union

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.migrator.context import Context, Edit
from jaxmigrate.migrator.diagnostics import CLEANUP_CODE
from jaxmigrate.migrator.rule import Safety
from jaxmigrate.migrator.scope import dotted_parts
from jaxmigrate.migrator.tidy import Produced, pure_condition
from jaxmigrate.migrator.traversal import structural_children


def fold_leftovers(ctx: Context, produced: Produced) -> int:
    """Records in ``ctx.edits`` the removal of what the migration's fixes left dead."""
    before = len(ctx.edits)
    for node in ctx.nodes(cst.If):  # (the analysis visits every ``if``, in the tree's order)
        _emptied_branches(ctx, node)
    if produced.nodes or produced.moved:
        touched, holders = _touched_statements(ctx, produced)
        if touched:
            # only a block holding a touched statement can pair one: those blocks, in the
            # order of the module and of every block (ctx.all_nodes), without the whole walk
            for block in _in_tree_order(ctx, holders):
                _dead_stores(ctx, list(block.body), touched, produced)
    return len(ctx.edits) - before


Block = Union["cst.Module", "cst.IndentedBlock"]  # what _dead_stores reads
_BLOCKS = (cst.Module, cst.IndentedBlock)


def _in_tree_order(ctx: Context, nodes: Dict[int, Block]) -> List[Block]:
    """``nodes`` (nodes of this round's tree, by id) in the tree's order, depth first (the
    order of :meth:`Context.all_nodes`), walking only the paths down to them."""
    around = set(nodes)
    for block in nodes.values():
        around.update(id(up) for up in ctx.ancestors(block))
    found: List[Block] = []
    stack: List[cst.CSTNode] = [ctx.module]
    while stack:
        node = stack.pop()
        if id(node) in nodes:
            found.append(nodes[id(node)])
        stack.extend(child for child in reversed(structural_children(node)) if id(child) in around)
    return found


def _record(ctx: Context, node: cst.CSTNode, new: object, code: str, message: str) -> None:
    if id(node) not in ctx.edits and not any(id(up) in ctx.edits for up in ctx.ancestors(node)):
        ctx.edits[id(node)] = Edit(node, new, code, message, Safety.SAFE)  # type: ignore[arg-type]


# -- emptied branches ---------------------------------------------------------------------------
def _emptied(block: cst.BaseSuite) -> bool:
    return (
        isinstance(block, cst.IndentedBlock)
        and not block.body
        and block.header.comment is None
        and not any(line.comment for line in block.footer)
    )


def _emptied_branches(ctx: Context, node: cst.If) -> None:
    if isinstance(ctx.parent(node), cst.If):
        return  # an ``elif``: its chain is left as it is
    orelse = node.orelse
    body_empty = _emptied(node.body)
    else_empty = isinstance(orelse, cst.Else) and _emptied(orelse.body)
    test = ctx.code(node.test)
    if body_empty and (orelse is None or else_empty):
        if pure_condition(ctx, node.test) and not any(e.comment for e in node.leading_lines):
            message = f"removed `if {test}:`, whose branches the migration emptied"
            _record(ctx, node, cst.RemovalSentinel.REMOVE, CLEANUP_CODE, message)
    elif else_empty:
        message = f"removed the `else:` of `if {test}:`, which the migration emptied"
        _record(ctx, node, node.with_changes(orelse=None), CLEANUP_CODE, message)
    elif body_empty and isinstance(orelse, cst.Else) and not orelse.leading_lines:
        message = f"`if {test}:` lost its body to the migration: `if not` with the `else:` one"
        new = node.with_changes(test=_negated(node.test), body=orelse.body, orelse=None)
        _record(ctx, node, new, CLEANUP_CODE, message)


def _negated(test: cst.BaseExpression) -> cst.BaseExpression:
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = test.expression
        return inner.with_changes(lpar=[], rpar=[]) if _bare_enough(inner) else inner
    if isinstance(test, (cst.BooleanOperation, cst.IfExp, cst.Lambda, cst.NamedExpr)) and not (
        test.lpar
    ):
        test = test.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return cst.UnaryOperation(operator=cst.Not(), expression=test)


def _bare_enough(node: cst.BaseExpression) -> bool:
    return isinstance(node, (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.Comparison))


# -- dead stores ----------------------------------------------------------------------------------
def _touched_statements(ctx: Context, produced: Produced) -> Tuple[Set[int], Dict[int, Block]]:
    """ids of the statement lines a fix wrote or moved, or that hold a node a fix wrote; and
    the blocks (the module, indented blocks) that hold one of them, by id."""
    found: Set[int] = set()
    holders: Dict[int, Block] = {}
    for key, (node, _code) in [*produced.nodes.items(), *produced.moved.items()]:
        parent = ctx.parent(node)
        if node is not ctx.module and parent is None:
            continue  # replaced since
        found.add(key)
        if isinstance(parent, _BLOCKS) and any(s is node for s in parent.body):
            holders[id(parent)] = parent
        for up in ctx.ancestors(node):
            if isinstance(up, cst.SimpleStatementLine):
                found.add(id(up))
                block = ctx.parent(up)
                if isinstance(block, _BLOCKS):
                    holders[id(block)] = block
                break
    return found, holders


def _store(statement: cst.CSTNode) -> Optional[Tuple[str, cst.BaseExpression]]:
    """``(x, A)`` for a line that is only ``x = A``."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    small = statement.body[0]
    if not isinstance(small, cst.Assign) or len(small.targets) != 1:
        return None
    target = small.targets[0].target
    return (target.value, small.value) if isinstance(target, cst.Name) else None


def _does_nothing(value: cst.BaseExpression) -> bool:
    if isinstance(value, (cst.Integer, cst.Float, cst.SimpleString)):
        return True
    return dotted_parts(value) is not None


def _reads(node: cst.CSTNode, name: str) -> bool:
    if isinstance(node, cst.Name):
        return node.value == name
    return any(_reads(child, name) for child in node.children)


def _dead_stores(ctx: Context, body: list, touched: Set[int], produced: Produced) -> None:
    for first, second in zip(body, body[1:]):
        stores = _store(first), _store(second)
        if stores[0] is None or stores[1] is None or stores[0][0] != stores[1][0]:
            continue
        name, value = stores[0]
        if id(first) not in touched and id(second) not in touched:
            continue
        if not _does_nothing(value) or _reads(stores[1][1], name):
            continue
        if first.trailing_whitespace.comment or any(e.comment for e in first.leading_lines):
            continue
        code = produced.code_of(ctx, second) or produced.code_of(ctx, first)
        moved = produced.moved.get(id(second)) or produced.moved.get(id(first))
        code = code or (moved[1] if moved else CLEANUP_CODE)
        message = f"removed `{ctx.code(first.body[0])}`: the next line overwrites it"
        _record(ctx, first, cst.RemovalSentinel.REMOVE, code, message)
