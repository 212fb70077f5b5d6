"""Code that saves, sets and restores xmap's positional semantics, deleted: JAX806's unsafe fix.

``jax.experimental.maps._positional_semantics.val`` chose whether xmap and pjit read their
inputs' axes as local or global, for GlobalDeviceArray.  jax 0.4.6's ``jax/_src/maps.py`` is
the last to have it and ``_PositionalSemantics``; from 0.4.7 on (GDA's removal) every array is
global and the setting is gone, so code that saves, sets or restores it (dm-haiku 0.0.9's
``jaxpr_info.py``) raises AttributeError, and its ``from jax.experimental import maps`` stops
the module at import from 0.4.31 on.

Deleted where the code was written before 0.4.7 (as the names themselves show, unless the
stated source says otherwise) and the target range reaches it: each
statement that sets the value (``maps._positional_semantics.val = <a name or attribute
chain>``) and each that saves it in a variable only such statements read.  A block left
empty is tidied: an ``if`` without ``else`` whose test runs nothing goes, a ``try`` whose
``finally`` is gone gives way to its body, other blocks get ``pass``.  Any other use of the
two names, or one in compatibility code (``try: ... except AttributeError``, a feature
test), leaves the whole module to the findings.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Set, Union

from jaxmigrate.migrator import lazycst as cst, references as refs
from jaxmigrate.migrator.context import Context
from jaxmigrate.migrator.rule import Safety
from jaxmigrate.migrator.scope import dotted_parts
from jaxmigrate.migrator.version import parse_version
from jaxmigrate.rules._helpers import in_compatibility_code

GONE = "0.4.7"  # the first release without the setting (GlobalDeviceArray's removal)
MAPS = "jax.experimental.maps"
MEMBERS = (f"{MAPS}._positional_semantics", f"{MAPS}._PositionalSemantics")
STATE = f"{MAPS}._positional_semantics.val"
SOURCE = refs.source_at("0.4.6", "jax/_src/maps.py", "the last _positional_semantics")
MESSAGE = "deleted code that sets maps' positional semantics (gone in JAX 0.4.7)"
DETAIL = (
    "jax.experimental.maps._positional_semantics chose local or global axes for "
    "GlobalDeviceArray inputs; the setting went with GlobalDeviceArray in JAX 0.4.7, where every "
    "jax.Array is global, so the statements that save, set or restore it were deleted"
)
Result = Union["cst.BaseStatement", "cst.FlattenSentinel", "cst.RemovalSentinel"]


def delete(ctx: Context) -> Set[int]:
    """Record the deletions (unsafe fixes); the first lines of the statements they replace,
    where the fix's own message (or its finding) stands for the per-name findings.  Empty
    where the fix does not apply."""

    class _Delete(cst.CSTTransformer):
        """Remove the given lines from a statement and tidy the blocks they leave empty."""

        def __init__(self, lines: Set[int]) -> None:
            super().__init__()
            self.lines = lines

        def leave_SimpleStatementLine(
            self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine
        ) -> Union[cst.SimpleStatementLine, cst.RemovalSentinel]:
            return cst.RemovalSentinel.REMOVE if id(original) in self.lines else updated

        def leave_If(self, original: cst.If, updated: cst.If) -> Result:
            orelse = updated.orelse
            if isinstance(orelse, cst.Else) and not orelse.body.body:
                updated = updated.with_changes(orelse=None)
            if updated.body.body:
                return updated
            if updated.orelse is None and _runs_nothing(updated.test):
                return cst.RemovalSentinel.REMOVE
            return updated.with_changes(body=_passing(updated.body))

        def leave_Try(self, original: cst.Try, updated: cst.Try) -> Result:
            final = updated.finalbody
            if final is not None and not final.body.body:
                final = None
            orelse = updated.orelse
            if orelse is not None and not orelse.body.body:
                orelse = None
            handlers = tuple(
                h.with_changes(body=_passing(h.body)) if not h.body.body else h
                for h in updated.handlers
            )
            if not handlers and final is None:
                return _flatten(updated, updated.body)  # nothing left to catch or to run after
            if not handlers and not updated.body.body and final is not None:
                return _flatten(updated, final.body)  # try: pass finally: ...
            return updated.with_changes(
                body=_passing(updated.body), handlers=handlers, orelse=orelse, finalbody=final
            )

        def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> Result:
            return _with_body(updated)

        def leave_For(self, original: cst.For, updated: cst.For) -> Result:
            return _with_body(updated)

        def leave_While(self, original: cst.While, updated: cst.While) -> Result:
            return _with_body(updated)

        def leave_With(self, original: cst.With, updated: cst.With) -> Result:
            return _with_body(updated)

        def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> Result:
            return _with_body(updated)

    gone = parse_version(GONE)
    if not ctx.reaches(gone) or not any(
        (b.qualname or "").startswith(MAPS) for b in ctx.analysis.imports
    ):
        return set()
    lines = _statements(ctx)
    if not lines:
        return set()
    written_before, why = ctx.written_before(gone)
    if written_before is False:
        return set()
    if written_before is None:  # the names themselves say so: no release since 0.4.7 has them
        why = f"the file uses {STATE}, gone from JAX {GONE} on"
    roots: Dict[int, cst.BaseStatement] = {}
    for line in lines.values():
        root = _root(ctx, line)
        if root is None:
            return set()
        roots[id(root)] = root
    if any(id(a) in roots for root in roots.values() for a in ctx.ancestors(root)):
        return set()  # one root inside another (a def nested in a compound statement)
    results = {key: root.visit(_Delete(set(lines))) for key, root in roots.items()}
    _keep_blocks_alive(ctx, roots, results)
    for key, root in roots.items():
        ctx.replace(
            root,
            results[key],
            MESSAGE,
            Safety.UNSAFE,
            detail=f"{DETAIL}; {why}; unsafe because older releases of the range read it.",
        )
    return {ctx.position(root).start.line for root in roots.values()}


def _statements(ctx: Context) -> Dict[int, cst.SimpleStatementLine]:
    """The lines to delete, by id; empty when some use of the names is not one of them."""
    found: Dict[int, cst.SimpleStatementLine] = {}
    saved: Dict[str, cst.CSTNode] = {}  # variable -> the scope owner it is saved in
    restores: Set[int] = set()  # ids of Names read by the set statements
    for node in _references(ctx):
        line = _line_of(ctx, node)
        if line is None or in_compatibility_code(ctx, line):
            return {}
        statement = line.body[0]
        if not isinstance(statement, cst.Assign) or len(statement.targets) != 1:
            return {}
        target, value = statement.targets[0].target, statement.value
        scope = ctx.scope_of(node)
        if ctx.qualname(target, scope) == STATE and dotted_parts(value) is not None:
            # a set (``node`` is its target, or in its value): the value runs no code
            if isinstance(value, cst.Name):
                restores.add(id(value))
        elif value is node and ctx.qualname(node, scope) == STATE and isinstance(target, cst.Name):
            saved[target.value] = _owner(ctx, line)  # a save
        else:
            return {}
        found[id(line)] = line
    for name, owner in saved.items():  # a saved value only the set statements read
        ctx.needs_name(name)
        for use in ctx.all_nodes(cst.Name):
            if use.value != name or id(use) in restores or not _within(ctx, use, owner):
                continue
            if isinstance(ctx.parent(use), cst.AssignTarget) and id(_line_of(ctx, use)) in found:
                continue  # the save itself
            return {}
    return found


def _references(ctx: Context) -> List[cst.BaseExpression]:
    """The outermost dotted chains that name one of :data:`MEMBERS` (or inside them)."""
    found: List[cst.BaseExpression] = []
    for kind in (cst.Attribute, cst.Name):
        for node in ctx.all_nodes(kind):
            parent = ctx.parent(node)
            if isinstance(parent, cst.Attribute) and parent.value is node:
                continue  # only the outermost chain
            if isinstance(parent, (cst.ImportAlias, cst.AsName)) or dotted_parts(node) is None:
                continue
            qualname = ctx.qualname(node, ctx.scope_of(node)) or ""
            if any(qualname == m or qualname.startswith(m + ".") for m in MEMBERS):
                found.append(node)
    return found


def _line_of(ctx: Context, node: cst.CSTNode) -> Optional[cst.SimpleStatementLine]:
    """The line of the one statement ``node`` is in (None: a compound statement's header, or
    a line of several statements)."""
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, cst.SimpleStatementLine):
            return ancestor if len(ancestor.body) == 1 else None
        if isinstance(ancestor, cst.BaseCompoundStatement):
            return None
    return None


def _within(ctx: Context, node: cst.CSTNode, outer: cst.CSTNode) -> bool:
    return node is outer or any(a is outer for a in ctx.ancestors(node))


def _owner(ctx: Context, node: cst.CSTNode) -> cst.CSTNode:
    return next(
        a for a in ctx.ancestors(node) if isinstance(a, (cst.FunctionDef, cst.ClassDef, cst.Module))
    )


def _root(ctx: Context, line: cst.SimpleStatementLine) -> Optional[cst.BaseStatement]:
    """The statement holding ``line`` that sits directly in a def's, class's or module's
    body."""
    statement: cst.BaseStatement = line
    for ancestor in ctx.ancestors(line):
        if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef, cst.Module)):
            return statement
        if isinstance(ancestor, cst.BaseStatement):
            statement = ancestor
    return None


def _keep_blocks_alive(
    ctx: Context, roots: Dict[int, cst.BaseStatement], results: Dict[int, Result]
) -> None:
    """A body whose every statement goes keeps a ``pass`` (in place of its last root)."""
    for key, root in roots.items():
        block = ctx.parent(root)
        body = getattr(block, "body", ())
        if isinstance(block, cst.Module) or not body or body[-1] is not root:
            continue
        if all(id(s) in roots and _removed(results[id(s)]) for s in body):
            results[key] = cst.SimpleStatementLine([cst.Pass()])


def _removed(result: Result) -> bool:
    return isinstance(result, cst.RemovalSentinel) or (
        isinstance(result, cst.FlattenSentinel) and not result.nodes
    )


def _with_body(node: cst.BaseCompoundStatement) -> Result:
    body = node.body
    if isinstance(body, cst.IndentedBlock) and not body.body:
        return node.with_changes(body=_passing(body))
    return node


def _passing(block: cst.BaseSuite) -> cst.BaseSuite:
    if isinstance(block, cst.IndentedBlock) and not block.body:
        return block.with_changes(body=[cst.SimpleStatementLine([cst.Pass()])])
    return block


def _flatten(old: cst.Try, suite: cst.BaseSuite) -> Result:
    """The statements of ``suite`` in place of the ``try``: its comments above go to the
    first of them."""
    body: List[cst.BaseStatement] = []
    if isinstance(suite, cst.IndentedBlock):
        body.extend(suite.body)
    elif isinstance(suite, cst.SimpleStatementSuite) and suite.body:
        body.append(cst.SimpleStatementLine(body=suite.body))  # ``try: x()`` on one line
    if not body:
        return cst.RemovalSentinel.REMOVE
    first = body[0]
    if isinstance(first, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
        body[0] = first.with_changes(leading_lines=[*old.leading_lines, *first.leading_lines])
    return cst.FlattenSentinel(body)


def _runs_nothing(test: cst.BaseExpression) -> bool:
    """Names, attribute chains, constants, and ``not``/``and``/``or``/comparisons of them."""
    if dotted_parts(test) is not None or isinstance(test, (cst.BaseNumber, cst.SimpleString)):
        return True
    if isinstance(test, cst.UnaryOperation):
        return _runs_nothing(test.expression)
    if isinstance(test, cst.BooleanOperation):
        return _runs_nothing(test.left) and _runs_nothing(test.right)
    if isinstance(test, cst.Comparison):
        return _runs_nothing(test.left) and all(
            _runs_nothing(c.comparator) for c in test.comparisons
        )
    return False
