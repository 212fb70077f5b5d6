"""Tidying what the fixes wrote: a post-pass over the nodes a fix produced, never user code.

Rewrites are local: two legacy spellings of one type each become ``jax.Array``, and a
``Union`` or an ``isinstance`` tuple ends up naming it twice; the GlobalDeviceArray and the
DeviceArray checks of one condition collapse into ``(isinstance(a, jax.Array) and not
a.is_fully_addressable) or isinstance(a, jax.Array)``.  Maintainers wrote each type once and
the condition as ``isinstance(a, jax.Array)``.  Once the rounds of a file settle, this pass
looks at the containers that hold a node some fix put there (a ``Union[...]``/``Optional``
subscript, a ``|`` chain, an ``isinstance``/``issubclass`` class tuple, an ``or`` chain) and:

* drops repeated members, where two members are the same type by qualified name or through
  an alias the rules declare (:attr:`migrator.rule.Rule.same_types`: ``jnp.ndarray`` *is*
  ``jax.Array``), keeping the modern spelling at the first one's place; a ``Union`` or a
  tuple left with one member becomes that member;
* drops an ``and`` chain of side-effect-free boolean tests from an ``or`` chain that also
  holds one of its tests alone (absorption: ``(A and B) or A`` is ``A`` when every test is
  a bool), and repeated side-effect-free tests.

A container no fix touched is never read, so untouched code keeps what it says.  The engine
runs it in the round that would end the file; what it records is applied like any edit
(under the code of the rule whose node it tidies) and the rounds go on, so unused imports
are cleaned up after it as after any fix.
"""

from __future__ import annotations

from typing import Dict, Iterable, List, Optional, Sequence, Set, Tuple, cast

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.migrator.context import Context, Edit, Replacement
from jaxmigrate.migrator.diagnostics import MESSAGE_LIMIT
from jaxmigrate.migrator.rule import Safety
from jaxmigrate.migrator.scope import dotted_parts
from jaxmigrate.migrator.scopewalk import ALWAYS_VISITED
from jaxmigrate.migrator.traversal import structural_children
from jaxmigrate.migrator.walk import all_parents

_UNION_NAMES = frozenset({"typing.Union", "typing_extensions.Union"})
_CHECKS = ("isinstance", "issubclass")


class Produced:
    """The nodes a file's fixes put in its tree, across rounds (kept alive with their ids)."""

    def __init__(self) -> None:
        self.nodes: Dict[int, Tuple[cst.CSTNode, str]] = {}
        # statements a fix only moved (a folded ``if`` keeps its body's): not read by the
        # tidying, but a store a fold moved can make the one before it dead (migrator.folds)
        self.moved: Dict[int, Tuple[cst.CSTNode, str]] = {}

    def add(self, edits: Iterable[Edit], ctx: Context) -> None:
        """Records what ``edits`` (applied to ``ctx``'s tree) wrote: not the nodes they only
        moved (a folded ``if`` keeps its body's statements, which no fix wrote)."""
        for edit in edits:
            new = edit.new
            for node in new.nodes if isinstance(new, cst.FlattenSentinel) else (new,):
                if isinstance(node, cst.CSTNode) and not _in_tree(ctx, node):
                    self.nodes[id(node)] = (node, edit.code)
                elif isinstance(node, cst.BaseStatement):
                    self.moved[id(node)] = (node, edit.code)

    def code_of(self, ctx: Context, node: cst.CSTNode) -> Optional[str]:
        """The code of the fix that wrote ``node`` or a node around it (None: no fix did)."""
        for candidate in (node, *ctx.ancestors(node)):
            found = self.nodes.get(id(candidate))
            if found is not None and found[0] is candidate:
                return found[1]
        return None

    def __bool__(self) -> bool:
        return bool(self.nodes)


def _in_tree(ctx: Context, node: cst.CSTNode) -> bool:
    """``ctx.parent(node) is not None``, from the analysis where it tells
    (:data:`migrator.scopewalk.ALWAYS_VISITED`): a fix's new nodes would otherwise cost the
    round a walk of the whole tree."""
    if id(node) in ctx.analysis.parents:
        return True
    kind = type(node)
    if kind in ALWAYS_VISITED:
        return False
    if kind is cst.Attribute:  # visited everywhere but inside import statements
        return id(node) in ctx.memo(("tidy", "inside imports"), lambda: _inside_imports(ctx))
    return ctx.parent(node) is not None


def _inside_imports(ctx: Context) -> Set[int]:
    found: Set[int] = set()
    for statement in (*ctx.nodes(cst.Import), *ctx.nodes(cst.ImportFrom)):
        found.update(all_parents(statement))
    return found


class _Touched:
    """Which nodes of this round's tree hold or lie inside a produced node."""

    def __init__(self, ctx: Context, produced: Produced) -> None:
        self.ctx = ctx
        self.code: Dict[int, str] = {}  # id(node) -> code of a produced node it is or holds
        self.inside: Dict[int, str] = {}  # produced nodes that are in this tree
        for key, (node, code) in produced.nodes.items():
            if node is not ctx.module and ctx.parent(node) is None:
                continue  # replaced since
            self.inside[key] = code
            self.code.setdefault(key, code)
            for up in ctx.ancestors(node):
                self.code.setdefault(id(up), code)

    def nodes(self, ctx: Context, kinds: Sequence[type]) -> Dict[type, List[cst.CSTNode]]:
        """The nodes of each of ``kinds`` that hold or lie inside a produced node, in the order
        :meth:`Context.all_nodes` gives them (the tree's, depth first), found without walking
        the whole tree: only the paths down to the produced nodes, and what is below them."""
        found: Dict[type, List[cst.CSTNode]] = {kind: [] for kind in kinds}
        around, inside = self.code, self.inside
        stack: List[Tuple[cst.CSTNode, bool]] = [(ctx.module, False)]
        while stack:
            node, below = stack.pop()
            listed = found.get(type(node))
            if listed is not None:
                listed.append(node)
            below = below or id(node) in inside
            stack.extend(
                (child, below)
                for child in reversed(structural_children(node))
                if below or id(child) in around
            )
        return found

    def of(self, node: cst.CSTNode) -> Optional[str]:
        """The code of the fix that produced ``node``, a node inside it or a node around it."""
        found = self.code.get(id(node))
        if found is not None:
            return found
        for up in self.ctx.ancestors(node):
            if id(up) in self.inside:
                return self.inside[id(up)]
        return None


def tidy(ctx: Context, produced: Produced, same_types: Dict[str, str]) -> int:
    """Records in ``ctx.edits`` the tidying of containers a fix touched; returns how many."""
    if not produced:
        return 0
    touched = _Touched(ctx, produced)
    if not touched.inside:
        return 0
    before = len(ctx.edits)
    passes = (
        (cst.Subscript, lambda node, code: _tidy_union(ctx, node, code, same_types)),
        (cst.BinaryOperation, lambda node, code: _tidy_bitor(ctx, node, code, same_types)),
        (cst.Call, lambda node, code: _tidy_class_tuple(ctx, node, code, same_types)),
        (cst.BooleanOperation, lambda node, code: _tidy_or_chain(ctx, node, code)),
        (cst.If, lambda node, code: _tidy_same_branches(ctx, node, code)),
    )
    found = touched.nodes(ctx, tuple(kind for kind, _tidy_one in passes))
    for kind, tidy_one in passes:
        for node in found[kind]:
            code = touched.of(node)
            if code is not None:
                tidy_one(node, code)
    return len(ctx.edits) - before


def _record(
    ctx: Context, node: cst.CSTNode, new: Replacement, code: str, message: str, detail: str = ""
) -> None:
    if id(node) not in ctx.edits and not any(id(up) in ctx.edits for up in ctx.ancestors(node)):
        ctx.edits[id(node)] = Edit(node, new, code, message, Safety.SAFE, detail=detail)


def _message(ctx: Context, node: cst.CSTNode, what: str, subject: str) -> Tuple[str, str]:
    """``<node's code> what``, or ``subject what`` with the code in the detail where the code
    would not keep the message one short line."""
    full = f"{ctx.code(node)} {what}"
    if len(full) <= MESSAGE_LIMIT and "\n" not in full:
        return full, ""
    return f"{subject} {what}", f"{full}."


_TWICE = "names a type twice after the rewrite: each member once"


# -- repeated types -----------------------------------------------------------------------------
def _type_key(
    ctx: Context, node: cst.CSTNode, same_types: Dict[str, str]
) -> Tuple[Optional[str], bool]:
    """What type a member names (None: not a plain type reference) and whether it is the
    modern spelling of it (not an alias)."""
    if isinstance(node, cst.Name) and node.value == "None":
        return "None", True
    if dotted_parts(node) is None:
        return None, False
    qualname = ctx.qualname(node, ctx.scope_of(node)) or "local:" + ctx.code(node)
    alias = same_types.get(qualname)
    return (alias, False) if alias is not None else (qualname, True)


def _unique(
    ctx: Context, values: Sequence[cst.BaseExpression], same_types: Dict[str, str]
) -> Tuple[List[int], Dict[int, cst.BaseExpression]]:
    """The indices of the members to keep, and the members a later modern spelling of the
    same type replaces (index -> that spelling)."""
    kept: List[int] = []
    first: Dict[str, int] = {}
    modern: Dict[str, bool] = {}
    swap: Dict[int, cst.BaseExpression] = {}
    for index, value in enumerate(values):
        key, is_modern = _type_key(ctx, value, same_types)
        if key is None or key not in first:
            kept.append(index)
            if key is not None:
                first[key], modern[key] = index, is_modern
            continue
        if is_modern and not modern[key]:
            swap[first[key]], modern[key] = value, True
    return kept, swap


def _tidy_union(ctx: Context, node: cst.Subscript, code: str, same_types: Dict[str, str]) -> None:
    if ctx.qualname(node.value, ctx.scope_of(node)) not in _UNION_NAMES:
        return
    elements = list(node.slice)
    if not all(isinstance(e.slice, cst.Index) and e.slice.star is None for e in elements):
        return
    values = [cast(cst.Index, e.slice).value for e in elements]
    kept, swap = _unique(ctx, values, same_types)
    if len(kept) == len(values) and not swap:
        return
    message, detail = _message(ctx, node, _TWICE, "a union")
    members = [swap.get(i, values[i]) for i in kept]
    if len(members) == 1:
        new = members[0].with_changes(lpar=node.lpar, rpar=node.rpar)
        _record(ctx, node, new, code, message, detail)
        return
    new_elements = [
        elements[i].with_changes(slice=elements[i].slice.with_changes(value=m))
        for i, m in zip(kept, members)
    ]
    new_elements[-1] = new_elements[-1].with_changes(comma=elements[-1].comma)
    _record(ctx, node, node.with_changes(slice=new_elements), code, message, detail)


def _bitor_members(node: cst.BinaryOperation) -> Optional[List[cst.BaseExpression]]:
    members: List[cst.BaseExpression] = []
    current: cst.BaseExpression = node
    while isinstance(current, cst.BinaryOperation) and isinstance(current.operator, cst.BitOr):
        if current is not node and (current.lpar or current.rpar):
            break
        members.append(current.right)
        current = current.left
    members.append(current)
    return members[::-1]


def _tidy_bitor(
    ctx: Context, node: cst.BinaryOperation, code: str, same_types: Dict[str, str]
) -> None:
    parent = ctx.parent(node)
    if not isinstance(node.operator, cst.BitOr):
        return
    if (
        isinstance(parent, cst.BinaryOperation)
        and isinstance(parent.operator, cst.BitOr)
        and not node.lpar
    ):
        return  # the outermost ``|`` of the chain does it
    values = _bitor_members(node) or []
    kept, swap = _unique(ctx, values, same_types)
    if len(kept) == len(values) and not swap:
        return
    members = [swap.get(i, values[i]) for i in kept]
    result: cst.BaseExpression = members[0]
    for member in members[1:]:
        result = cst.BinaryOperation(left=result, operator=node.operator, right=member)
    if node.lpar:
        result = result.with_changes(lpar=node.lpar, rpar=node.rpar)
    _record(ctx, node, result, code, *_message(ctx, node, _TWICE, "a union"))


def _tidy_class_tuple(ctx: Context, node: cst.Call, code: str, same_types: Dict[str, str]) -> None:
    if not (isinstance(node.func, cst.Name) and node.func.value in _CHECKS and len(node.args) == 2):
        return
    if ctx.scope_of(node).lookup(node.func.value) is not None:
        return  # a local isinstance
    classes = node.args[1].value
    if not isinstance(classes, cst.Tuple) or node.args[1].keyword is not None:
        return
    if not all(isinstance(e, cst.Element) for e in classes.elements) or not classes.elements:
        return
    values = [e.value for e in classes.elements]
    kept, swap = _unique(ctx, values, same_types)
    if len(kept) == len(values) and not swap:
        return
    members = [swap.get(i, values[i]) for i in kept]
    message, detail = _message(
        ctx, classes, "names a class twice after the rewrite: each one once", "a class tuple"
    )
    if len(members) == 1:
        _record(ctx, classes, members[0], code, message, detail)
        return
    new_elements = [classes.elements[i].with_changes(value=m) for i, m in zip(kept, members)]
    new_elements[-1] = new_elements[-1].with_changes(comma=classes.elements[-1].comma)
    _record(ctx, classes, classes.with_changes(elements=new_elements), code, message, detail)


# -- absorbed tests -----------------------------------------------------------------------------
def _chain(node: cst.BaseExpression, operator: type) -> List[cst.BaseExpression]:
    """The operands of a ``node`` chain of ``operator`` (parenthesised parts stay whole)."""
    if isinstance(node, cst.BooleanOperation) and isinstance(node.operator, operator):
        left, right = node.left, node.right
        parts = [left] if left.lpar else _chain(left, operator)
        return parts + ([right] if right.lpar else _chain(right, operator))
    return [node]


def _bare(node: cst.BaseExpression) -> cst.BaseExpression:
    return node.with_changes(lpar=[], rpar=[]) if getattr(node, "lpar", None) else node


def _pure_dotted(node: cst.BaseExpression) -> bool:
    return dotted_parts(node) is not None


def _pure_test(ctx: Context, node: cst.BaseExpression) -> bool:
    """A bool-valued test without calls but ``isinstance``/``issubclass`` of dotted names."""
    node = _bare(node)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
        return _pure_dotted(_bare(node.expression)) or _pure_test(ctx, node.expression)
    if isinstance(node, cst.Call):
        return (
            isinstance(node.func, cst.Name)
            and node.func.value in _CHECKS
            and ctx.scope_of(node).lookup(node.func.value) is None
            and len(node.args) == 2
            and all(a.keyword is None and not a.star for a in node.args)
            and _pure_dotted(node.args[0].value)
            and all(_pure_dotted(e.value) for e in _class_members(node.args[1].value))
        )
    if isinstance(node, cst.Comparison):
        operands = [node.left, *(c.comparator for c in node.comparisons)]
        return all(
            _pure_dotted(_bare(o)) or isinstance(o, (cst.Integer, cst.SimpleString))
            for o in operands
        )
    return False


def pure_condition(ctx: Context, node: cst.BaseExpression) -> bool:
    """A condition whose evaluation does nothing (a name, a dotted read, a pure test)."""
    bare = _bare(node)
    if isinstance(bare, cst.BooleanOperation):
        return pure_condition(ctx, bare.left) and pure_condition(ctx, bare.right)
    if isinstance(bare, cst.UnaryOperation) and isinstance(bare.operator, cst.Not):
        return pure_condition(ctx, bare.expression)
    return _pure_dotted(bare) or _pure_test(ctx, bare)


def _tidy_same_branches(ctx: Context, node: cst.If, code: str) -> None:
    """``if c: A else: A`` (a fix made the branches the same) -> ``A``, for a pure ``c``."""
    orelse = node.orelse
    if not isinstance(orelse, cst.Else) or not isinstance(node.body, cst.IndentedBlock):
        return
    if not isinstance(orelse.body, cst.IndentedBlock) or not pure_condition(ctx, node.test):
        return
    if isinstance(ctx.parent(node), cst.If):
        return  # an ``elif``: its own test stays
    body, other = node.body, orelse.body
    same = len(body.body) == len(other.body) and all(
        ctx.code(a) == ctx.code(b) for a, b in zip(body.body, other.body)
    )
    if not same or body.header.comment or orelse.whitespace_before_colon.value:
        return
    statements = list(body.body)
    statements[0] = statements[0].with_changes(leading_lines=node.leading_lines)
    message = f"the branches of `if {ctx.code(node.test)}:` are the same after the rewrite: one"
    detail = ""
    if len(message) > MESSAGE_LIMIT or "\n" in message:
        message, detail = "the branches of an if are the same after the rewrite: one", message
    _record(ctx, node, cst.FlattenSentinel(statements), code, message, detail)


def _class_members(node: cst.BaseExpression) -> List[cst.BaseElement]:
    if isinstance(node, cst.Tuple):
        return list(node.elements)
    return [cst.Element(value=node)]


def _tidy_or_chain(ctx: Context, node: cst.BooleanOperation, code: str) -> None:
    if not isinstance(node.operator, cst.Or):
        return
    parent = ctx.parent(node)
    if (
        isinstance(parent, cst.BooleanOperation)
        and isinstance(parent.operator, cst.Or)
        and not node.lpar
    ):
        return  # the outermost ``or`` of the chain does it
    operands = _chain(_bare(node), cst.Or)
    texts = [ctx.module.code_for_node(_bare(o)) for o in operands]
    alone = {t for o, t in zip(operands, texts) if _pure_test(ctx, o)}
    drop: Set[int] = set()
    seen: Set[str] = set()
    for index, (operand, text) in enumerate(zip(operands, texts)):
        if text in alone and text in seen:
            drop.add(index)  # a repeated test
            continue
        seen.add(text)
        conjuncts = _chain(_bare(operand), cst.And)
        if len(conjuncts) < 2 or not all(_pure_test(ctx, c) for c in conjuncts):
            continue
        own = {ctx.module.code_for_node(_bare(c)) for c in conjuncts}
        others = {t for j, t in enumerate(texts) if j != index and j not in drop and t in alone}
        if own & others:
            drop.add(index)  # absorbed by the test alone
    if not drop:
        return
    kept = [o for i, o in enumerate(operands) if i not in drop]
    result: cst.BaseExpression = kept[0]
    for operand in kept[1:]:
        result = cst.BooleanOperation(left=result, operator=node.operator, right=operand)
    if node.lpar and not getattr(result, "lpar", None):
        result = result.with_changes(lpar=node.lpar, rpar=node.rpar)
    what = "tests the same thing twice after the rewrite: once"
    _record(ctx, node, result, code, *_message(ctx, node, what, "a test"))
