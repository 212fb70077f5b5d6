"""JAX907 dead-feature-test: a compatibility shim none of whose branches works on today's JAX.

``if hasattr(jax.interpreters.xla, "_DeviceArray"): A = xla._DeviceArray else: A =
xla.DeviceArray`` (chex 0.1.0) is skipped by every rule as deliberate compatibility code, yet on
the newest JAX of the target its test is False and the branch it picks names a class JAX
removed: the module dies at import with AttributeError.  The API history (public names, and the
private names of public modules, release by release) answers each ``hasattr`` for that release.
"""

from __future__ import annotations

import ast
import functools
from typing import FrozenSet, List, Optional, Set, Tuple

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.migrator.astfacts import Facts
from jaxmigrate.migrator.astview import AstView
from jaxmigrate.migrator.context import Context
from jaxmigrate.migrator.diagnostics import Diagnostic
from jaxmigrate.migrator.rule import Example, Rule, Safety
from jaxmigrate.migrator.scope import dotted_parts
from jaxmigrate.migrator.version import Version, parse_version
from jaxmigrate.rules._api_history import HISTORY_SOURCES, history
from jaxmigrate.rules._config import suite_in_place
from jaxmigrate.rules._dead_fallback import dead_fallback, fallback_may_be_dead, surely_reached
from jaxmigrate.rules._dead_feature_ast import nothing_to_do
from jaxmigrate.rules._text_gates import DeadFeatureTestGate
from jaxmigrate.rules._version_tests import version_answer

Branch = Tuple[Optional["cst.BaseExpression"], "cst.BaseSuite"]  # (test, suite); None: the else


class DeadFeatureTest(DeadFeatureTestGate, Rule, code="JAX907", safety=Safety.UNSAFE):
    """`if hasattr(<jax module>, "name"):` or JAX-version shims whose branch on the newest
    target JAX uses a name gone there -> that branch, which the other rules then migrate

    **What it does.** Reads each `if`/`elif` chain whose tests are all
    `hasattr(<JAX module>, "<name>")` (or `not hasattr(...)`) or comparisons of the JAX version
    with a literal (`tuple(map(int, jax.__version__.split(".")))`, `jax.__version_info__`,
    packaging's `version.parse(jax.__version__)`/`Version(...)`, a conditional expression of
    two of them, or a name one plain assignment binds to one), answers the tests for the
    newest JAX of the target range (from JAX's API history, or as Python compares that
    release's version), and looks at the branch that runs there.
    When that branch itself uses a JAX name the release no longer has, no branch of the shim
    can work on it: the chain is replaced by that branch, which the other rules then migrate
    (`A = xla.DeviceArray` becomes `A = jax.Array` where `A` is only used as a type).

    The same for a `try:` of one assignment with one `except AttributeError:` (netket 3.5's
    `try: A = jaxlib.xla_extension.DeviceArray` / `except AttributeError: A =
    jax.interpreters.xla._DeviceArray`): where the fallback names a JAX name the newest
    release lacks and so does the `try`, the fallback, which runs there, takes the shim's
    place; where the `try` names what JAX's API history does not know (a jaxlib name), the
    shim is reported.

    **Why.** Compatibility code is left alone by every rule, so a shim written for JAX 0.2 and
    0.3 was reported nowhere, though it stops the module at import on today's JAX.

    **Safety.** On the newest release the same branch runs as before, so nothing changes
    there; on older releases of the range another branch may have run, so this is an unsafe
    fix (applied with `--unsafe-fixes`, reported without).  A shim with a branch that works on
    the newest release (`if hasattr(jax, "Array"): ... else: ...`) is live and stays.
    """

    unsafe_fixes_only = True  # (the survey skips it without --unsafe-fixes)

    references = HISTORY_SOURCES
    text_gated = True  # ``hasattr(m, "name")``: a builtin call, no site kind the plan indexes
    # the prefilter's words (a feature test, a JAX version test); the text and ast gates decide
    strings = frozenset({"hasattr", "__version__", "__version_info__", "AttributeError"})
    needs_jax_import = True  # the shim tests a JAX module (a rule with strings defaults to False)
    examples = (
        Example(
            title="neither branch exists on today's JAX: the one that runs there is kept, "
            "for JAX101 to migrate",
            before="""
            import jax

            if hasattr(jax.interpreters.xla, "_DeviceArray"):
                ArrayDevice = jax.interpreters.xla._DeviceArray
            else:
                ArrayDevice = jax.interpreters.xla.DeviceArray

            def f(x: ArrayDevice):
                return x
            """,
            after="""
            import jax

            ArrayDevice = jax.interpreters.xla.DeviceArray

            def f(x: ArrayDevice):
                return x
            """,
            unsafe_fixes=True,
        ),
    )

    def for_range(self, low: Version, high: Optional[Version], aside: FrozenSet[str]) -> Rule:
        return _for_newest(_newest(high))

    def ast_gate(self, facts: Facts) -> bool:
        if facts.attributes & self.absent and _tests_a_version(facts):
            return True
        if fallback_may_be_dead(facts, self.absent):
            return True
        for call in facts.calls:
            func = call.func
            if isinstance(func, ast.Name) and func.id == "hasattr" and len(call.args) == 2:
                name = call.args[1]
                if isinstance(name, ast.Constant) and name.value in self.absent:
                    if _may_name_a_module(call.args[0], facts):
                        return True
        return False

    def ast_findings(self, view: AstView) -> Optional[List[Diagnostic]]:
        """Nothing, when :func:`rules._dead_feature_ast.nothing_to_do` reads on ``ast`` that
        :meth:`visit_module` replaces no chain (the only thing it does, a fix or, without
        ``--unsafe-fixes``, its report); None otherwise: LibCST decides."""
        if fallback_may_be_dead(view.facts, self.absent):
            return None
        return [] if nothing_to_do(view, _newest(view.upper)) else None

    def visit_module(self, ctx: Context) -> None:
        newest = _newest(ctx.upper)
        for node in ctx.all_nodes(cst.If):
            parent = ctx.parent(node)
            if isinstance(parent, cst.If) and parent.orelse is node:
                continue  # an ``elif``: read with its chain
            if not isinstance(parent, (cst.IndentedBlock, cst.Module)):
                continue
            taken = _taken(node, ctx, newest)
            if taken is None:
                continue
            test, suite = taken
            gone = _gone_name(suite, ctx, newest)
            if gone is None:
                continue
            where = "its else" if test is None else f"`{_one_line(ctx.code(test))}`"
            asks = _hasattr_answer(node.test, ctx, parse_version(newest)) is not None
            ctx.replace(
                node,
                suite_in_place(node, suite),
                f"no branch of this {'hasattr' if asks else 'version'} test works on JAX "
                f"{newest}; kept the one run there",
                detail=f"No branch of `if {_one_line(ctx.code(node.test))}` works on JAX "
                f"{newest}: the branch that runs there, {where}, names {gone}, which that "
                "release no longer has.  That branch is kept, for the other rules to migrate.",
            )

        for shim in ctx.all_nodes(cst.Try):
            fallback = dead_fallback(shim, ctx)
            if fallback is None:
                continue
            gone = _gone_name(fallback.body, ctx, newest)
            if gone is None or not surely_reached(fallback.body, gone, ctx):
                continue  # (a fallback that may work, or is itself guarded, is left alone)
            unknown: List[str] = []
            first = _gone_name(shim.body, ctx, newest, unknown)
            if first is None and not unknown:
                continue  # the first way works on the newest JAX: the shim is live
            if first is None or not surely_reached(shim.body, first, ctx):
                tried = unknown[0] if first is None else first
                ctx.report(
                    shim,
                    f"this try's fallback names {gone}, which JAX {newest} lacks",
                    f"`except AttributeError:` here runs `{gone}`, which JAX {newest} no "
                    f"longer has: unless `{tried}` works there, the module stops at import.  "
                    "Write what replaced both for the JAX you target (the changelog).",
                )
                continue
            ctx.replace(
                shim,
                suite_in_place(shim, fallback.body),
                f"no branch of this try works on JAX {newest}; kept the one run there",
                detail=f"Neither branch of this `try`/`except AttributeError` works on JAX "
                f"{newest}: the `try` names {first} and its fallback {gone}, which that "
                "release no longer has.  The fallback, which runs there, is kept for the other "
                "rules to migrate.",
            )


def _may_name_a_module(node: ast.expr, facts: Facts) -> bool:
    """Can ``node`` (what ``hasattr`` asks) name a JAX module?  Only a name or attribute
    chain whose head an import binds (a star import may bind any)."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name) and (node.id in facts.aliases or "*" in facts.aliases)


def _tests_a_version(facts: Facts) -> bool:
    """Does an ``if`` test read a version the way :func:`version_answer` reads one
    (``V.split(...)``, ``__version_info__``, ``parse(V)``/``Version(V)``), or compare a name
    an assignment binds to such a read (``jax_version = tuple(map(...))``)?"""
    if facts.tree is None:
        return True
    if facts.attributes.isdisjoint(_VERSION_ATTRIBUTES):  # (each way reads one of them)
        return False
    compared: Set[str] = set()
    for node in facts.ifs:
        for inner in ast.walk(node.test):
            if _answerable(inner):
                return True
            if isinstance(inner, ast.Compare):
                sides = (inner.left, *inner.comparators)
                compared.update(side.id for side in sides if isinstance(side, ast.Name))
    return bool(compared) and _holding_a_version(facts.tree, compared)


_NESTED = ("body", "orelse", "finalbody", "handlers", "cases")  # where statements nest


def _holding_a_version(tree: ast.Module, names: Set[str]) -> bool:
    """Does an assignment bind one of ``names`` to a value that reads a version as
    :func:`version_answer` does (the text gate reads ``NAME =`` before such a read)?  Only
    statements are walked, and a value only where the assignment binds one of the names."""
    stack: List[ast.AST] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Assign):
            if any(isinstance(t, ast.Name) and t.id in names for t in node.targets) and any(
                _answerable(inner) for inner in ast.walk(node.value)
            ):
                return True
            continue
        for field in _NESTED:
            stack.extend(getattr(node, field, ()))
    return False


_VERSION_ATTRIBUTES = frozenset({"__version__", "__version_info__"})


def _answerable(node: ast.AST) -> bool:
    if isinstance(node, ast.Attribute) and node.attr == "__version_info__":
        return True
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    if (
        isinstance(func, ast.Attribute)
        and func.attr == "split"
        and isinstance(func.value, ast.Attribute)
        and func.value.attr == "__version__"
    ):
        return True
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return name in ("parse", "Version") and any(
        isinstance(a, ast.Attribute) and a.attr == "__version__" for a in node.args
    )


def _one_line(code: str) -> str:
    """The test as one line: comments dropped, whitespace runs made one space."""
    words = [line.split("#", 1)[0] if "#" in line else line for line in code.splitlines()]
    return " ".join(" ".join(words).split()).replace("( ", "(").replace(" )", ")")


def _newest(upper: Optional[Version]) -> str:
    h = history()
    return (h.newest_at_most(upper) if upper is not None else None) or h.newest


@functools.lru_cache(maxsize=8)
def _for_newest(newest: str) -> DeadFeatureTest:
    """The rule for one release: every name the history knows (public, or a private name of a
    public module) that the release lacks, as ``hasattr`` spells it."""
    rule = object.__new__(DeadFeatureTest)
    rule.absent = history().names_absent_in(parse_version(newest))
    return rule


def _chain(node: cst.If) -> List[Branch]:
    branches: List[Branch] = []
    current: Optional[cst.If] = node
    while current is not None:
        branches.append((current.test, current.body))
        orelse = current.orelse
        if isinstance(orelse, cst.If):
            current = orelse
        else:
            if orelse is not None:
                branches.append((None, orelse.body))
            current = None
    return branches


def _taken(node: cst.If, ctx: Context, newest: str) -> Optional[Branch]:
    """The branch of ``node``'s chain that runs on ``newest``; None when a test is not a
    ``hasattr`` the history answers, or no branch runs (nothing breaks then)."""
    release = parse_version(newest)
    for test, suite in _chain(node):
        if test is None:
            return test, suite
        answer = _hasattr_answer(test, ctx, release)
        if answer is None:
            answer = version_answer(test, ctx, newest)
        if answer is None:
            return None
        if answer:
            return test, suite
    return None


def _hasattr_answer(test: cst.BaseExpression, ctx: Context, release: Version) -> Optional[bool]:
    negated = False
    while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        negated, test = not negated, test.expression
    if not (
        isinstance(test, cst.Call)
        and isinstance(test.func, cst.Name)
        and test.func.value == "hasattr"
        and len(test.args) == 2
        and not any(arg.star or arg.keyword for arg in test.args)
        and isinstance(test.args[1].value, cst.SimpleString)
    ):
        return None
    scope = ctx.scope_of(test)
    if scope.lookup("hasattr") is not None:
        return None  # a hasattr of the module's own
    owner = ctx.qualname(test.args[0].value, scope)
    if owner is None or history().present_in(owner, release) is not True:
        return None  # not a JAX module that exists there (its test would raise instead)
    name = test.args[1].value.evaluated_value
    if not isinstance(name, str):
        return None
    answer = history().present_in(f"{owner}.{name}", release)
    return None if answer is None else answer != negated


def _gone_name(
    suite: cst.BaseSuite, ctx: Context, newest: str, unknown: Optional[List[str]] = None
) -> Optional[str]:
    """A JAX name ``suite`` uses that ``newest`` lacks (the outermost chain's first missing
    prefix); None when every name it uses is there or unknown (added to ``unknown``)."""

    class _GoneNames(cst.CSTVisitor):
        """The JAX names a suite uses that ``release`` lacks (each chain's first missing prefix)."""

        def __init__(self, ctx: Context, release: Version) -> None:
            super().__init__()
            self.ctx, self.release, self.history = ctx, release, history()
            self.found: List[str] = []

        def visit_Attribute(self, node: cst.Attribute) -> bool:
            return self._chain(node)

        def visit_Name(self, node: cst.Name) -> bool:
            return self._chain(node)

        def _chain(self, node: cst.BaseExpression) -> bool:
            parts = dotted_parts(node)
            if parts is None:
                return True
            qualname = self.ctx.qualname(node, self.ctx.scope_of(node))
            if qualname is None or not qualname.startswith(("jax.", "jaxlib.")):
                return False
            pieces = qualname.split(".")
            for cut in range(2, len(pieces) + 1):
                prefix = ".".join(pieces[:cut])
                answer = self.history.present_in(prefix, self.release)
                if answer is False:
                    self.found.append(prefix)
                    break
                if answer is None and unknown is not None:
                    unknown.append(qualname)
                    break
            return False

    uses = _GoneNames(ctx, parse_version(newest))
    suite.visit(uses)
    return uses.found[0] if uses.found else None
