"""JAX501 jax-array-flag: delete the jax.Array transition flags, fold code that reads them.

``jax_array``: default True from 0.4.1, cannot be disabled from 0.4.7, removed in 0.4.14
(release notes of 0.4.7 and 0.4.14; run on real JAX, ``update('jax_array', False)`` raises
ValueError on 0.4.13 and AttributeError from 0.4.30); ``jax_jit_pjit_api_merge``: added 0.4.4,
cannot be disabled from 0.4.7, removed 0.4.14; ``jax_parallel_functions_output_gda``: a no-op,
removed in 0.4.26 (release notes); plus the ``JAX_ARRAY=1`` spelling the jax.Array migration
guide gives ("How to enable jax.Array?").
"""

from __future__ import annotations

import ast
from typing import List, Optional, Tuple

from jaxmigrate.migrator import lazycst as cst, references as refs
from jaxmigrate.migrator.astview import AstView
from jaxmigrate.migrator.context import Context
from jaxmigrate.migrator.diagnostics import Diagnostic
from jaxmigrate.migrator.rule import Example, Lifecycle, Rule, Safety
from jaxmigrate.rules._config import (
    ABSL_FLAGS,
    CONFIG_OBJECTS,
    ENV_SETDEFAULT,
    READ_FUNCTIONS,
    UPDATE_FUNCTIONS,
    env_bool,
    expression_statement,
    fold_if,
    literal_bool,
    removal,
    resolves_to,
    unwrap,
)
from jaxmigrate.rules._flag_tests import (
    ABSL_DEFINES,
    FLAG,
    flag_definition,
    parameterized_tests,
)
from jaxmigrate.rules._helpers import fitting

# flag -> (what it switched, the value every JAX >= 0.4.7 has; None: a no-op flag, value unknown)
FLAGS = {
    "jax_array": ("jax.Array on or off", True),
    "jax_jit_pjit_api_merge": ("jit and pjit merged", True),
    "jax_parallel_functions_output_gda": ("GDA outputs", None),
}
ENV_VARS = {name.upper(): name for name in FLAGS}
SWITCHES = frozenset({"jax._src.config"})  # the module whose flag states are context managers


def _false_message(flag: str) -> Tuple[str, str]:
    """The finding for ``flag=False``: (message, detail)."""
    if flag == "jax_array":
        return (
            "jax_array=False asks for pre-jax.Array arrays, gone since JAX 0.4.7: delete it",
            "jax_array=False asked for the pre-jax.Array arrays (DeviceArray, ShardedDeviceArray, "
            "GlobalDeviceArray), which no JAX since 0.4.7 can give (ValueError on 0.4.7-0.4.13, "
            "AttributeError from 0.4.14): delete it and migrate the code that relied on them.",
        )
    return (
        f"{flag}=False asks for separate jit/pjit, gone since JAX 0.4.7: delete it",
        f"{flag}=False asked for the separate jit/pjit implementations, which no JAX since "
        "0.4.7 has: delete it and check the code that relied on them.",
    )


class JaxArrayFlag(Rule, code="JAX501", safety=Safety.SAFE):
    """delete jax.config.update('jax_array', True), JAX_ARRAY=1, jax_jit_pjit_api_merge and
    jax_parallel_functions_output_gda; fold `if jax.config.jax_array:`

    **What it does.** Deletes the statements that switched the jax.Array transition flags on:

    * `jax.config.update('jax_array', True)` (any spelling of the config object:
      `jax.config`, `from jax import config`, `from jax.config import config`);
    * `os.environ['JAX_ARRAY'] = '1'`, `os.environ.setdefault('JAX_ARRAY', 'true')`;
    * `flags.FLAGS.jax_array = True` (absl, after `jax.config.parse_flags_with_absl()`);
    * the same for `jax_jit_pjit_api_merge`, and any setting of the no-op
      `jax_parallel_functions_output_gda`.

    Code that reads `jax_array` or `jax_jit_pjit_api_merge` (`jax.config.jax_array`,
    `jax.config.read('jax_array')`) is folded: `if jax.config.jax_array:` keeps its body,
    `if not jax.config.jax_array:` keeps its `else`, `x if jax.config.jax_array else y` becomes
    `x`, `jax.config.jax_array and cond` becomes `cond`, other reads become `True`.

    The flag's own context manager, as test suites used it (`from jax._src import config as
    jax_config`; `with jax_config.jax_array(True):` or `@jax_config.jax_array(True)`), is
    removed and the block it guarded kept; `jax_array(False)` there is reported.

    With `--unsafe-fixes` (reported without it), the flag's plumbing in test suites and absl
    programs goes too, as maintainers removed it: in a file that switches or reads the flag,
    absl `parameterized` test cases over a `jax_array` argument
    (`@parameterized.parameters(True, False)`, `(n, True)` tuples, `named_parameters` tuples
    and `dict(..., jax_array=...)` cases, `product(jax_array=[True, False], ...)`) lose their
    `False` cases, the argument and the flag's value in each case;
    the test body reads `True` in its place (`if jax_array:` keeps its body), and a decorator
    left with one empty case goes.  This is unsafe because the `False` cases stop running and
    the test names change.  An absl definition `flags.DEFINE_bool('jax_array', ...)` is
    deleted: unsafe because a command line that still passes `--jax_array` no longer parses.

    **Why.** The flags were removed in JAX 0.4.14 (0.4.26 for
    `jax_parallel_functions_output_gda`): `jax.config.update('jax_array', True)` now raises
    `AttributeError: Unrecognized config option`.  From 0.4.7 they could not be turned off,
    so on every target this rule runs for (0.4.7+) they are always True and deleting them
    changes nothing.

    **Reported, not fixed.** Setting a flag to `False` (the code relied on legacy arrays:
    it needs a person), values that are not literals, and reads of
    `jax_parallel_functions_output_gda` (its value came from the environment).  Command
    lines such as `--jax_array=true` are not seen.
    """

    needs_jax_import = False  # JAX_ARRAY=1 in os.environ / absl flag strings need no jax import
    lifecycle = Lifecycle(
        needs="0.4.7",
        deprecated=("0.4.7", "jax_array can no longer be disabled"),
        removed=("0.4.14", "the jax_array flag removed"),
    )
    references = (
        refs.release_notes("0.4.26", "jax_parallel_functions_output_gda removed"),
        refs.array_migration("How to enable jax.Array?"),
        refs.array_migration("How can I disable jax.Array for now?"),
    )
    strings = frozenset(FLAGS) | frozenset(ENV_VARS)
    attributes = frozenset(FLAGS)
    # Its hooks read their sites; visit_module reads every test method with a ``jax_array``
    # parameter, and asks for the whole module where a statement left out spells the word.
    whole_module = False
    examples = (
        Example(
            title="the migration guide's opt-in",
            before="""
            import jax
            jax.config.update('jax_array', True)

            x = jax.numpy.ones(3)
            """,
            after="""
            import jax

            x = jax.numpy.ones(3)
            """,
        ),
        Example(
            title="branches on the flag are folded",
            before="""
            import os
            import jax

            os.environ["JAX_ARRAY"] = "1"
            os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"

            def shards(x: jax.Array):
                if jax.config.jax_array:
                    return [s.data for s in x.addressable_shards]
                else:
                    return x.device_buffers
            """,
            after="""
            import os
            import jax

            os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"

            def shards(x: jax.Array):
                return [s.data for s in x.addressable_shards]
            """,
        ),
        Example.reported(
            title="switching jax.Array off needs a person",
            code="""
            import jax
            jax.config.update('jax_array', False)
            """,
        ),
    )

    # -- string triggers: update('jax_array', ...), os.environ['JAX_ARRAY'] = ..., read(...) --
    def visit_string(self, node: cst.SimpleString, ctx: Context) -> None:
        value = node.evaluated_value
        parent = ctx.parent(node)
        scope = ctx.scope_of(node)
        call = ctx.parent(parent) if isinstance(parent, cst.Arg) else None
        if isinstance(parent, cst.Arg) and isinstance(call, cst.Call):
            position = _position(call, parent)
            if value in FLAGS:
                if position == 0 and resolves_to(ctx, call.func, scope, UPDATE_FUNCTIONS):
                    self._setting(ctx, call, value, _arg(call, 1), literal_bool, call)
                elif position == 0 and resolves_to(ctx, call.func, scope, READ_FUNCTIONS):
                    self._read(ctx, call, value)
                elif (
                    value == "jax_array"
                    and position == 0
                    and resolves_to(ctx, call.func, scope, ABSL_DEFINES)
                ):
                    flag_definition(ctx, call, call)
                elif (
                    position == 1
                    and isinstance(call.func, cst.Name)
                    and call.func.value == "getattr"
                    and scope.lookup("getattr") is None
                    and call.args[0].value is not None
                    and resolves_to(ctx, call.args[0].value, scope, CONFIG_OBJECTS)
                ):
                    self._read(ctx, call, value)
            elif value in ENV_VARS and position == 0:
                if resolves_to(ctx, call.func, scope, ENV_SETDEFAULT):
                    self._setting(ctx, call, ENV_VARS[value], _arg(call, 1), _env_value, call)
            return
        subscript = _environ_subscript(ctx, node)
        if subscript is not None and value in ENV_VARS:
            target = ctx.parent(subscript)
            assign = ctx.parent(target) if isinstance(target, cst.AssignTarget) else None
            if isinstance(assign, cst.Assign) and len(assign.targets) == 1:
                self._setting(ctx, assign, ENV_VARS[value], assign.value, _env_value, None)

    # -- attribute triggers: jax.config.jax_array, FLAGS.jax_array = True --------------------
    def visit_attribute(self, node: cst.Attribute, ctx: Context) -> None:
        flag = node.attr.value
        scope = ctx.scope_of(node)
        target = ctx.parent(node)
        if not resolves_to(ctx, node.value, scope, CONFIG_OBJECTS | ABSL_FLAGS):
            # jax._src.config.jax_array(True): the flag's own context manager, as JAX's tests
            # used it (``from jax._src import config as jax_config``)
            if (
                isinstance(target, cst.Call)
                and target.func is node
                and resolves_to(ctx, node.value, scope, SWITCHES)
            ):
                self._switch(ctx, target, flag)
            return
        if isinstance(target, cst.AssignTarget):
            assign = ctx.parent(target)
            if isinstance(assign, cst.Assign) and len(assign.targets) == 1:
                self._setting(ctx, assign, flag, assign.value, literal_bool, None)
            return
        if isinstance(target, (cst.AugAssign, cst.AnnAssign, cst.Del)):
            return
        self._read(ctx, node, flag)

    def visit_module(self, ctx: Context) -> None:
        ctx.needs_word(FLAG)
        parameterized_tests(ctx)

    def ast_findings(self, view: AstView) -> Optional[List[Diagnostic]]:
        """Nothing (``[]``) where no hook can act, read on ``ast`` (orbax's tests key their
        pytrees ``'jax_array'``); None (LibCST decides) otherwise.  A hook can act only at an
        attribute named like a flag, at a flag's string that is a call's argument or (an
        environment variable's) a subscript, or (:func:`parameterized_tests`) on a function
        with a ``jax_array`` parameter."""
        if view.facts.attributes & self.attributes:
            return None
        strings = self.strings
        stack: List[ast.AST] = [view.tree]
        while stack:
            node = stack.pop()
            kind = type(node)
            if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
                arguments = node.args  # type: ignore[attr-defined]
                every = (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)
                if any(argument.arg == FLAG for argument in every):
                    return None
            for child in ast.iter_child_nodes(node):
                if type(child) is ast.Constant and child.value in strings:
                    if kind is ast.Call or kind is ast.keyword:
                        return None  # (an argument, or a keyword's value)
                    if kind is ast.Subscript and child.value in ENV_VARS:
                        return None
                stack.append(child)
        return []

    # -- the two kinds of site ---------------------------------------------------------------
    def _setting(self, ctx, statement_node, flag, value_node, evaluate, call) -> None:  # noqa: ANN001
        """A statement that sets ``flag``: delete it when it sets the value JAX always has."""
        row, always = FLAGS[flag]
        if call is not None:
            statement_node = expression_statement(ctx, call)
            if statement_node is None:
                ctx.report(
                    call,
                    f"{flag} was removed from JAX; this call now raises: delete it",
                    f"{flag} ({row}) was removed from JAX; this call now raises: delete it.",
                )
                return
        value = (
            evaluate(value_node, ctx.scope_of(statement_node)) if value_node is not None else None
        )
        anchor = call if call is not None else statement_node
        if always is not None and value is False:
            ctx.report(anchor, *_false_message(flag))
            return
        if always is not None and value is None:
            ctx.report(
                anchor,
                f"{flag} was removed (on since JAX 0.4.7): delete this if it sets True",
                f"{flag} was removed from JAX ({row}) and is always on since 0.4.7; the value set "
                "here is not a literal: delete the statement if it can only be true.",
            )
            return
        target = removal(ctx, statement_node)
        if target is None:
            ctx.report(anchor, f"{flag} was removed from JAX ({row}): delete this statement")
            return
        ctx.replace(
            target,
            cst.RemovalSentinel.REMOVE,
            f"deleted the setting of the removed flag {flag} ({row})",
        )

    def _read(self, ctx: Context, expr: cst.BaseExpression, flag: str) -> None:
        """An expression reading ``flag``: fold it to the value every JAX >= 0.4.7 has."""
        row, always = FLAGS[flag]
        if always is None:
            ctx.report(
                expr,
                f"{flag} was a no-op flag, removed in JAX 0.4.26: delete the read",
                f"{flag} was a no-op flag, removed in JAX 0.4.26 ({row}); reading it now fails: "
                "decide what the branch on it should do and delete the read.",
            )
            return
        parent = ctx.parent(expr)
        if isinstance(parent, cst.Call) and parent.func is expr:
            self._switch(ctx, parent, flag)
            return
        node, value = _negations(ctx, expr)
        parent = ctx.parent(node)
        always_true = f"{flag}, always True since JAX 0.4.7"
        detail = f"{flag} is always True since JAX 0.4.7 and was removed in 0.4.14 ({row})."
        if isinstance(parent, cst.BooleanOperation):
            new = _fold_boolean(ctx, parent, node, value)
            if new is not None:
                message = f"simplified a test of {always_true}"
                ctx.replace(
                    parent, new, message, detail=f"Simplified `{ctx.code(parent)}`: {detail}"
                )
                return
        if isinstance(parent, cst.If) and parent.test is node:
            folded = fold_if(ctx, parent, value)
            if folded is not None:
                ctx.replace(parent, folded, f"folded the branch on {always_true}", detail=detail)
                return
        if isinstance(parent, cst.IfExp) and parent.test is node:
            kept = parent.body if value else parent.orelse
            ctx.replace(parent, kept, f"folded the conditional on {always_true}", detail=detail)
            return
        if isinstance(parent, cst.Assert) and parent.test is node and value:
            target = removal(ctx, parent)
            if target is not None:
                message = f"deleted an assert on {always_true}"
                ctx.replace(target, cst.RemovalSentinel.REMOVE, message, detail=detail)
                return
        literal = cst.Name("True" if value else "False")
        message = fitting(
            f"{ctx.code(node)} -> {literal.value}: the flag is always True since JAX 0.4.7",
            f"{flag} -> {literal.value}: always True since JAX 0.4.7",
        )
        ctx.replace(node, literal, message, detail=detail)

    def _switch(self, ctx: Context, call: cst.Call, flag: str) -> None:
        """``with config.jax_array(True):`` / ``@config.jax_array(True)``: the flag as a context
        manager or decorator, on for a block; it is on everywhere since 0.4.7: the block stays,
        the switch goes."""
        row, _always = FLAGS[flag]
        value = None
        if len(call.args) == 1 and call.args[0].keyword is None and not call.args[0].star:
            value = literal_bool(call.args[0].value, ctx.scope_of(call))
        if value is False:
            ctx.report(call, *_false_message(flag))
            return
        holder = ctx.parent(call)
        message = f"removed the switch of {flag}, on in every JAX since 0.4.7"
        detail = f"{flag} is on in every JAX since 0.4.7 and was removed in 0.4.14 ({row})."
        if value is True and isinstance(holder, cst.Decorator):
            ctx.replace(holder, cst.RemovalSentinel.REMOVE, message, detail=detail)
            return
        if value is True and isinstance(holder, cst.WithItem) and holder.asname is None:
            statement = ctx.parent(holder)
            if isinstance(statement, cst.With) and len(statement.items) > 1:
                items = [item for item in statement.items if item is not holder]
                items[-1] = items[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
                ctx.replace(statement, statement.with_changes(items=items), message, detail=detail)
                return
            if isinstance(statement, cst.With) and statement.asynchronous is None:
                new = unwrap(ctx, statement)
                if new is not None:
                    ctx.replace(statement, new, message, detail=detail)
                    return
        ctx.report(
            call,
            f"{flag} is on in every JAX since 0.4.7 and was removed: delete this switch",
            f"{flag} was removed from JAX ({row}) and is on everywhere since 0.4.7: "
            "delete this switch.",
        )


def _boolean_context(ctx: Context, node: cst.BaseExpression) -> bool:
    """True if only the truth value of ``node`` matters (an if/while/assert test, ``not``)."""
    parent = ctx.parent(node)
    if isinstance(parent, (cst.If, cst.While, cst.Assert, cst.IfExp)) and parent.test is node:
        return True
    if isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, cst.Not):
        return True
    if isinstance(parent, cst.BooleanOperation):
        return _boolean_context(ctx, parent)
    return False


def _fold_boolean(
    ctx: Context, operation: cst.BooleanOperation, node: cst.BaseExpression, value: bool
) -> Optional[cst.BaseExpression]:
    """``<flag> and x`` -> ``x``, ``<flag> or x`` -> ``True`` (and the negated forms)."""
    absorbing = isinstance(operation.operator, cst.Or) == value  # ``True or x``/``False and x``
    if operation.left is node:
        if absorbing:
            return cst.Name("True" if value else "False")
        return operation.right  # ``True and x`` is x, ``False or x`` is x: exactly
    if operation.right is node and not absorbing and _boolean_context(ctx, operation):
        return operation.left  # ``x and True`` is only as true as x
    return None


def _negations(ctx: Context, expr: cst.BaseExpression) -> Tuple[cst.BaseExpression, bool]:
    """Climb ``not (not x)``: the outermost node and the value it has when ``x`` is True."""
    node: cst.BaseExpression = expr
    value = True
    parent = ctx.parent(node)
    while isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, cst.Not):
        node, value = parent, not value
        parent = ctx.parent(node)
    return node, value


def _position(call: cst.Call, arg: cst.Arg) -> Optional[int]:
    for index, candidate in enumerate(call.args):
        if candidate is arg:
            return index if not arg.keyword and not arg.star else None
    return None


def _arg(call: cst.Call, index: int) -> Optional[cst.BaseExpression]:
    positional = [a for a in call.args if not a.keyword and not a.star]
    return positional[index].value if len(positional) > index else None


def _env_value(node: cst.BaseExpression, scope) -> Optional[bool]:  # noqa: ANN001
    return env_bool(node)


def _environ_subscript(ctx: Context, node: cst.SimpleString) -> Optional[cst.Subscript]:
    """``os.environ['X']`` around the string, if that is what it is."""
    index = ctx.parent(node)
    element = ctx.parent(index) if isinstance(index, cst.Index) else None
    subscript = ctx.parent(element) if isinstance(element, cst.SubscriptElement) else None
    if not isinstance(subscript, cst.Subscript) or len(subscript.slice) != 1:
        return None
    if not resolves_to(ctx, subscript.value, ctx.scope_of(node), frozenset({"os.environ"})):
        return None
    return subscript
