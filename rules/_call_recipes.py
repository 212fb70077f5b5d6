"""Call recipes: how the calls of a removed function become calls of its replacement (the
table is the rule's, ``rules/removed_calls.py``), and the code a recipe writes for a call."""

from __future__ import annotations

import dataclasses
import functools
import re
from typing import FrozenSet, List, Optional, Tuple, Union

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.migrator.context import Context, NameSite
from jaxmigrate.migrator.rule import Safety
from jaxmigrate.migrator.scope import dotted_parts
from jaxmigrate.rules._api_history import history
from jaxmigrate.rules._arrays import expr_code

_PLACEHOLDER = re.compile(r"\{(\d+|\*|kw:\w+|q:[\w.]+|,\s\*\*)\}")


@functools.cache
def _atoms() -> Tuple[type, ...]:
    return (
        cst.Name,
        cst.Attribute,
        cst.Call,
        cst.Subscript,
        cst.Integer,
        cst.Float,
        cst.SimpleString,
    )


@dataclasses.dataclass(frozen=True)
class CallRecipe:
    """How calls of one removed function become calls of its replacement.

    ``template`` placeholders: ``{0}``, ``{1}``...: positional arguments; ``{*}``: all of
    them, comma-separated; ``{kw:NAME}``: the value of keyword NAME (positional at
    ``keyword_positions[NAME]`` also accepted); ``{, **}``: the passed-through keywords, with
    a leading comma; ``{q:NAME}``: a reference to the qualified name NAME (import managed).
    """

    legacy: str
    template: str
    shown: str  # the replacement as messages show it
    positional: Tuple[int, int]  # fewest, most positional arguments
    why: str  # where JAX says so, and what changes if anything
    safety: Safety = Safety.SAFE
    keywords: FrozenSet[str] = frozenset()  # keyword arguments {kw:...} or {, **} takes
    required: FrozenSet[str] = frozenset()  # keywords the template needs
    passed_through: FrozenSet[str] = frozenset()  # keywords {, **} passes on unchanged
    statement_only: bool = False  # the replacement returns nothing useful: its value must be unused
    # The removed function returned this positional argument: ``y = f(x)`` becomes the
    # replacement as a statement, then ``y = x`` (when x is a plain name).
    returns: Optional[int] = None
    dropped: Tuple[
        int, ...
    ] = ()  # positional arguments the template drops: must be side-effect free
    unsafe_beyond: Optional[int] = None  # more positional arguments than this: an unsafe fix
    # Builtins the template calls: where one is shadowed at the call, the call is reported.
    builtins: FrozenSet[str] = frozenset()
    low_precedence: bool = False  # the template is an ``or``: parenthesized unless it stands alone
    atoms: bool = False  # every argument is parenthesized unless an atom (``in {0}`` needs it)
    # (release, arguments): appended to the call where every release of the target has them
    stated_from: Optional[Tuple[str, str]] = None
    # A keyword whose value (a name or a literal) the removed function returned in place of
    # the positional argument ``returns`` names, when the call passes it.
    result_keyword: Optional[str] = None
    # The parameters a call must pass, in order, each by position or by keyword (a template
    # that takes them as passed, ``{*}{, **}``, has no other check they are there).
    parameters: Tuple[str, ...] = ()

    def uses(self) -> Tuple[str, ...]:
        return tuple(m[2:] for m in _PLACEHOLDER.findall(self.template) if m.startswith("q:"))


def keyword_is_none(call: cst.Call, keyword: str) -> bool:
    """Does ``call`` pass ``keyword=None`` (the literal)?"""
    return any(
        arg.keyword is not None
        and arg.keyword.value == keyword
        and isinstance(arg.value, cst.Name)
        and arg.value.value == "None"
        for arg in call.args
    )


def none_or_left_out(call: cst.Call, keyword: str) -> bool:
    """Does ``call`` pass ``keyword=None``, or leave it out with nothing unpacked into the call
    that could pass it (a keyword whose default is None: equinox 0.9.2's
    ``hcb.call(_set_state_hcb, arg)``)?"""
    return keyword_is_none(call, keyword) or all(
        not arg.star and (arg.keyword is None or arg.keyword.value != keyword) for arg in call.args
    )


def recipe_safety(recipe: CallRecipe, call: cst.Call) -> Safety:
    if recipe.unsafe_beyond is not None and len(call.args) > recipe.unsafe_beyond:
        return Safety.UNSAFE
    if any(not is_pure(call.args[i].value) for i in recipe.dropped):
        return Safety.UNSAFE
    return recipe.safety


# Where an ``or`` template may stand without parentheses: it is the whole value there.
@functools.cache
def _whole_value() -> Tuple[type, ...]:
    return (cst.Assign, cst.AnnAssign, cst.Return, cst.Arg, cst.Element, cst.Expr)


def returned_arg(recipe: CallRecipe, call: cst.Call) -> Tuple[cst.BaseExpression, bool]:
    """What a call the recipe fits returned (a statement-only replacement returns nothing),
    and whether it is the value of :attr:`CallRecipe.result_keyword`."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == recipe.result_keyword:
            return arg.value, True
    assert recipe.returns is not None  # (asked only of recipes that return an argument)
    return [a.value for a in call.args if a.keyword is None][recipe.returns], False


def is_pure(node: cst.BaseExpression) -> bool:
    """Evaluating it has no effect: a name, an attribute chain, a literal."""
    return dotted_parts(node) is not None or isinstance(
        node, (cst.Integer, cst.Float, cst.SimpleString, cst.Imaginary)
    )


def statement_assignment(
    recipe: CallRecipe, call: cst.Call, ctx: Context
) -> Optional[Tuple[cst.SimpleStatementLine, Union[cst.Assign, cst.Return]]]:
    """``y = f(..., x, ...)`` or ``return f(..., x, ...)`` alone on its line, ``x`` (what
    ``f`` returned) a plain name; or ``y = f(..., <expression>)`` with ``y`` a plain name
    and every other argument a name, literal or lambda (evaluated first, then or later
    alike), which becomes ``y = <expression>`` and the statement on ``y``."""
    assign = ctx.parent(call)
    if recipe.returns is None or not isinstance(assign, (cst.Assign, cst.Return)):
        return None
    if assign.value is not call:
        return None
    line = ctx.parent(assign)
    if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
        return None
    positional = [a for a in call.args if a.keyword is None]
    if len(positional) <= recipe.returns:
        return None
    if returned_arg(recipe, call)[1]:
        return line, assign  # (a name or a literal: read after the call as before)
    if dotted_parts(positional[recipe.returns].value) is None:
        others = [a.value for a in call.args if a is not positional[recipe.returns]]
        if not (
            isinstance(assign, cst.Assign)
            and len(assign.targets) == 1
            and isinstance(assign.targets[0].target, cst.Name)
            and positional[recipe.returns] is call.args[recipe.returns]
            and all(is_pure(v) or isinstance(v, cst.Lambda) for v in others)
        ):
            return None
    return line, assign


def _argument_code(node: cst.BaseExpression, site: NameSite, ctx: Context, receiver: bool) -> str:
    if isinstance(node, cst.Subscript) and ctx.qualname(node.value, site.scope) == "jax.ops.index":
        return ", ".join(ctx.code(element.slice) for element in node.slice)
    code = ctx.code(node)
    if (
        receiver and not isinstance(node, _atoms()) or isinstance(node, cst.GeneratorExp)
    ) and not node.lpar:
        return f"({code})"  # a generator that was the only argument had the call's parentheses
    return code


def render(
    recipe: CallRecipe, template: str, call: cst.Call, site: NameSite, ctx: Context
) -> cst.BaseExpression:
    """``template`` (the recipe's, or one the rule adjusted for this call) filled in with
    ``call``'s arguments, as the expression that replaces it."""
    positional = [a.value for a in call.args if a.keyword is None]
    keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}

    def fill(match: "re.Match[str]") -> str:
        key = match.group(1)
        if key.isdigit():
            index = int(key)
            receiver = recipe.atoms or template[match.end() : match.end() + 1] in (".", "[", "(")
            return _argument_code(positional[index], site, ctx, receiver)
        if key == "*":
            return ", ".join(_argument_code(p, site, ctx, False) for p in positional)
        if key.startswith("kw:"):
            return ctx.code(keywords[key[3:]])
        if key.startswith("q:"):
            return expr_code(ctx.ref(key[2:], site.scope))
        passed: List[str] = [
            f"{k}={ctx.code(v)}" for k, v in keywords.items() if k in recipe.passed_through
        ]
        before = template[: match.start()]
        if before.endswith("(") or (not positional and before.endswith("({*}")):
            return ", ".join(passed)  # (the first argument: no comma before it)
        return "".join(", " + p for p in passed)

    text = _PLACEHOLDER.sub(fill, template).replace("{{}}", "{}")
    new = cst.parse_expression(text)
    if call.lpar:
        new = new.with_changes(lpar=call.lpar, rpar=call.rpar)
    elif recipe.low_precedence and not isinstance(ctx.parent(call), _whole_value()):
        new = new.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return new


def newer_names(recipe: CallRecipe, ctx: Context) -> str:
    """A JAX name ``recipe`` writes that some release of the target lacks (``jax.x needs JAX
    0.4.2,``), or "" (and always "" in the survey, whose floor rises to the release that has
    them).  An unsafe fix held back is one all the same: with ``--unsafe-fixes`` a default
    target rises to that release."""
    for qualname in recipe.uses():
        if ctx.survey:
            break
        if qualname.partition(".")[0] != "jax":
            continue  # (NumPy's: every JAX depends on it)
        if not ctx.exists_throughout(qualname):
            known = history().lookup(qualname)
            first = history().releases[known.present[0][0]] if known is not None else "?"
            return f"{qualname} needs JAX {first},"
    return ""
