"""Matchers shared by the config-flag rules (JAX501-JAX509); no rule logic here."""

from __future__ import annotations

from typing import List, Optional, Sequence

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.migrator.context import Context, Replacement
from jaxmigrate.migrator.scope import Scope

# What ``jax.config`` was called over the years (the Config object, not the submodule).
CONFIG_OBJECTS = frozenset({"jax.config", "jax.config.config", "jax._src.config.config"})
# absl's flag holder, when a program ran ``jax.config.parse_flags_with_absl()``.
ABSL_FLAGS = frozenset({"absl.flags.FLAGS"})
UPDATE_FUNCTIONS = frozenset(q + ".update" for q in CONFIG_OBJECTS)
READ_FUNCTIONS = frozenset(q + ".read" for q in CONFIG_OBJECTS)
ENV_SETDEFAULT = frozenset({"os.environ.setdefault", "os.putenv"})

# JAX's own boolean environment parsing (``jax._src.config.bool_env``, strtobool-style).
TRUE_STRINGS = frozenset({"y", "yes", "t", "true", "on", "1"})
FALSE_STRINGS = frozenset({"n", "no", "f", "false", "off", "0"})


def resolves_to(ctx: Context, expr: cst.BaseExpression, scope: Scope, qualnames: frozenset) -> bool:
    qualname = ctx.qualname(expr, scope)
    return qualname is not None and qualname in qualnames


def literal_bool(node: cst.BaseExpression, scope: Optional[Scope]) -> Optional[bool]:
    """True/False for the literals ``True``/``False``/``1``/``0``; None for anything else."""
    if isinstance(node, cst.Name) and node.value in ("True", "False"):
        return node.value == "True"
    if isinstance(node, cst.Integer) and node.value in ("0", "1"):
        return node.value == "1"
    return None


def env_bool(node: cst.BaseExpression) -> Optional[bool]:
    """How JAX reads an environment string literal: True, False, or None (not a literal)."""
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        if isinstance(value, str):
            lowered = value.strip().lower()
            if lowered in TRUE_STRINGS:
                return True
            if lowered in FALSE_STRINGS:
                return False
    return None


def removal(ctx: Context, small: cst.BaseSmallStatement) -> Optional[cst.CSTNode]:
    """The node to replace by ``RemovalSentinel.REMOVE`` to delete ``small``; None if unsure."""
    line = ctx.parent(small)
    if not isinstance(line, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
        return None
    if len(line.body) == 1 and isinstance(line, cst.SimpleStatementLine):
        return line
    if len(line.body) == 1:
        return None  # ``if x: stmt`` on one line: removing would leave an empty suite
    return small


def expression_statement(ctx: Context, expr: cst.BaseExpression) -> Optional[cst.Expr]:
    """The ``Expr`` statement if ``expr`` is a whole expression statement."""
    parent = ctx.parent(expr)
    if isinstance(parent, cst.Expr) and parent.value is expr:
        return parent
    return None


def _as_statements(body: cst.BaseSuite) -> List[cst.BaseStatement]:
    if isinstance(body, cst.SimpleStatementSuite):
        small = list(body.body)
        if small:
            small[-1] = small[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
        return [cst.SimpleStatementLine(body=small)]
    assert isinstance(body, cst.IndentedBlock)  # LibCST's only other BaseSuite
    return list(body.body)


def _with_leading(
    statements: Sequence[cst.BaseStatement], leading: Sequence[cst.EmptyLine]
) -> List[cst.BaseStatement]:
    """``statements`` (a branch's) in place of the compound statement whose leading lines
    are ``leading``: those stand before the first, and the blank lines that parted the first
    from the compound's header go with the header (pgx 0.1.0's unwrapped version test left
    two blank lines in a function, which pycodestyle's E303 flags)."""
    result = list(statements)
    if result:
        first = result[0]
        own = list(first.leading_lines)  # type: ignore[attr-defined]
        blanks = 0
        while blanks < len(own) and own[blanks].comment is None:
            blanks += 1
        if leading or blanks:
            result[0] = first.with_changes(leading_lines=[*leading, *own[blanks:]])
    return result


def fold_if(ctx: Context, if_node: cst.If, value: bool) -> Optional[Replacement]:
    """What replaces ``if <test>:`` when the test is known to be ``value``; None if unsure."""
    parent = ctx.parent(if_node)
    if isinstance(parent, cst.If) and parent.orelse is if_node:  # an ``elif``
        if value:
            return cst.Else(body=if_node.body)
        if if_node.orelse is None:
            return cst.RemovalSentinel.REMOVE
        return if_node.orelse
    if not isinstance(parent, (cst.IndentedBlock, cst.Module)):
        return None
    return branch_in_place(if_node, value, drop_pass=True)


def branch_in_place(if_node: cst.If, value: bool, drop_pass: bool = False) -> Replacement:
    """What stands in place of ``if <test>:`` (not an ``elif``) whose test is ``value``: the
    statements of the branch that runs, the ``elif`` that follows, or nothing.  ``drop_pass``
    leaves out the branch's ``pass`` statements (a branch of only ``pass`` goes entirely)."""
    if value:
        statements = _as_statements(if_node.body)
    elif if_node.orelse is None:
        return cst.RemovalSentinel.REMOVE
    elif isinstance(if_node.orelse, cst.If):
        return if_node.orelse.with_changes(leading_lines=if_node.leading_lines)
    else:
        statements = _as_statements(if_node.orelse.body)
    if drop_pass:
        statements = [s for s in statements if not _is_pass(s)]
        if not statements:
            return cst.RemovalSentinel.REMOVE
    return cst.FlattenSentinel(_with_leading(statements, if_node.leading_lines))


def suite_in_place(statement: cst.BaseCompoundStatement, suite: cst.BaseSuite) -> Replacement:
    """The statements of ``suite`` (one branch of ``statement``) standing in its place."""
    return cst.FlattenSentinel(_with_leading(_as_statements(suite), statement.leading_lines))


def unwrap(ctx: Context, compound: cst.BaseCompoundStatement) -> Optional[Replacement]:
    """The statements of ``compound``'s body in its place (a ``with`` whose only item goes);
    None when that cannot keep the code as written (a one-line suite, a comment on the header)."""
    body = compound.body
    if not isinstance(body, cst.IndentedBlock) or body.header.comment is not None:
        return None
    if not isinstance(ctx.parent(compound), (cst.IndentedBlock, cst.Module)):
        return None
    return cst.FlattenSentinel(_with_leading(_as_statements(body), compound.leading_lines))


def _is_pass(statement: cst.BaseStatement) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and all(isinstance(small, cst.Pass) for small in statement.body)
        and not any(line.comment for line in statement.leading_lines)
        and statement.trailing_whitespace.comment is None
    )
