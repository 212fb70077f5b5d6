"""Shared rewrites of the array-type rules (JAX101-JAX105): a class reference by where it sits
(the matchers are in :mod:`rules._helpers`), and the isinstance-predicate rewrite used for
ShardedDeviceArray and GlobalDeviceArray."""

from __future__ import annotations

import functools
import re
from typing import FrozenSet, List, Optional, Tuple

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.migrator.context import Context, NameSite
from jaxmigrate.migrator.rule import Safety
from jaxmigrate.migrator.scope import dotted_parts
from jaxmigrate.rules._helpers import (
    in_type_expression,
    is_called,
    is_class_base,
    is_dispatch_key,
    is_type_identity_check,
    isinstance_position,
)
from jaxmigrate.rules._type_alias import module_alias, non_type_use

ARRAY = "jax.Array"


def expr_code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


# Parents under which ``a and b`` / ``a or b`` may replace a call without parentheses.
@functools.cache
def _loose_parents() -> Tuple[type, ...]:
    return (
        cst.If,
        cst.While,
        cst.Return,
        cst.Assign,
        cst.AnnAssign,
        cst.AugAssign,
        cst.Expr,
        cst.Assert,
        cst.IfExp,
        cst.Lambda,
        cst.Element,
        cst.DictElement,
        cst.Index,
    )


def _brief(recipe: str) -> str:
    """A predicate recipe as a message names it: the isinstance it starts with, ``and ...``
    for the property checks after it (the detail has them)."""
    head, sep, _rest = recipe.partition(" and ")
    return f"{head} and ..." if sep else recipe


def _needs_parens(parent: Optional[cst.CSTNode], op: str) -> bool:
    if parent is None:
        return True
    if isinstance(parent, cst.Arg):
        return parent.star != ""
    if isinstance(parent, _loose_parents()):
        return False
    if isinstance(parent, cst.BooleanOperation):
        # required for `or` under `and`; added for `and` under `or` to keep it readable
        return isinstance(parent.operator, cst.And) != (op == "and")
    if isinstance(parent, cst.CompIf):
        return False
    return True


def _array_text(ctx: Context, site: NameSite) -> str:
    """jax.Array spelled at the site (its import is forgotten if the unsafe fix is not applied)."""
    return expr_code(ctx.ref(ARRAY, site.scope))


def predicate_fix(
    ctx: Context,
    site: NameSite,
    legacy: FrozenSet[str],
    template: str,
    class_name: str,
    subsumed_by: FrozenSet[str],
) -> bool:
    """Rewrite ``isinstance(x, LEGACY)`` (alone or in a tuple) into ``template`` (UNSAFE).

    ``template`` uses ``{x}`` for the receiver and ``{array}`` for jax.Array.  Returns False
    when the site is not an isinstance/issubclass class argument (the caller decides).
    """
    position = isinstance_position(site)
    if position is None:
        return False
    call, tuple_node = position
    recipe = template.format(x="x", array=ARRAY)
    if call.func.value == "issubclass":  # type: ignore[attr-defined]
        ctx.report(
            site.node,
            f"issubclass(..., {class_name}) has no jax.Array equivalent; test instances instead",
            "The distinction is a property of each array, not of its class; test instances "
            f"with `{recipe}`.",
        )
        return True
    receiver_arg = call.args[0]
    receiver = receiver_arg.value
    if receiver_arg.star or receiver_arg.keyword is not None or dotted_parts(receiver) is None:
        ctx.report(
            site.node,
            f"isinstance(..., {class_name}): assign the checked value to a name, then fix by hand",
            "The replacement uses the checked value several times, so it must be a plain name; "
            f"assign it to a variable, then use `{recipe}`.",
        )
        return True
    x = ctx.code(receiver)
    op = "and"
    text = ""
    safety = Safety.UNSAFE
    if tuple_node is not None:
        rest: List[str] = []
        subsumed = False
        for element in tuple_node.elements:
            if isinstance(element, cst.StarredElement):
                ctx.report(
                    site.node,
                    f"isinstance with a starred class tuple holding {class_name}: fix by hand",
                    f"Rewrite it by hand as `{recipe}`.",
                )
                return True
            qualname = ctx.qualname(element.value, site.scope)
            if qualname in legacy:
                continue
            if qualname in subsumed_by:
                subsumed = True
            code = ctx.code(element.value)
            if code not in rest:
                rest.append(code)
        if rest:
            classes = rest[0] if len(rest) == 1 else "(" + ", ".join(rest) + ")"
            predicate = "" if subsumed else template.format(x=x, array=_array_text(ctx, site))
            if subsumed:
                # jax.Array (or a DeviceArray spelling, which becomes jax.Array) in the tuple
                # already covers the predicate: exact, hence safe.
                text, op, safety = f"isinstance({x}, {classes})", "call", Safety.SAFE
            else:
                text, op = f"isinstance({x}, {classes}) or ({predicate})", "or"
    if not text:  # ``isinstance(x, LEGACY)``, or a tuple of nothing else
        text = template.format(x=x, array=_array_text(ctx, site))
    new = cst.parse_expression(text)
    if call.lpar:
        new = new.with_changes(lpar=call.lpar, rpar=call.rpar)
    elif op != "call" and _needs_parens(ctx.parent(call), op):
        new = new.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    if safety is Safety.SAFE:
        message = (
            f"isinstance(..., {class_name}) dropped from a class tuple that already holds jax.Array"
        )
    else:
        message = f"isinstance(..., {class_name}) -> {_brief(recipe)}"
    ctx.replace(call, new, message, safety=safety, detail=f"The check becomes {recipe}.")
    return True


def type_reference(
    ctx: Context,
    site: NameSite,
    class_name: str,
    recipe: str,
    annotations_only: bool,
) -> None:
    """A reference that is not an isinstance argument: identity checks and calls are reported;
    annotations (and, unless ``annotations_only``, other uses) become jax.Array."""
    if is_type_identity_check(site):
        ctx.report(
            site.node,
            f"type(x) is {class_name}: the class no longer exists; use an isinstance check",
            f"It compares with a class that no longer exists (the concrete class is an "
            f"implementation detail); use {recipe}.",
        )
        return
    if is_called(site):
        ctx.report(
            site.node,
            f"{class_name}(...) constructs a legacy array; build a jax.Array instead",
            f"A jax.Array check afterwards: {recipe}.",
        )
        return
    if is_dispatch_key(site, ctx):
        ctx.report(
            site.node,
            f"{class_name} as a dispatch key never matches a jax.Array; key it by a predicate",
            "A table looked up by type(x) never sees jax.Array (the concrete class is "
            f"ArrayImpl); key it by a predicate ({recipe}) by hand.",
        )
        return
    if is_class_base(site):
        ctx.report(
            site.node,
            f"subclassing {class_name}: jax.Array cannot be subclassed; wrap the array instead",
        )
        return
    if annotations_only and not in_type_expression(site, ctx):
        alias = module_alias(site, ctx)
        use = non_type_use(alias, ctx) if alias is not None else None
        if alias is not None and use is None:
            ctx.replace(
                site.node,
                ctx.ref(ARRAY, site.scope),
                f"{alias} = {class_name} -> {alias} = {ARRAY}",
                safety=Safety.UNSAFE,
                detail=f"Every use of {alias} here is a type (an isinstance through it accepts "
                f"any jax.Array; exact: {recipe}).",
            )
            return
        if alias is not None:
            kind = str(use).partition(":")[0].partition(" (")[0]  # the rest is the detail's
            ctx.report(
                site.node,
                f"{class_name} alias {alias} is used as {kind}; replace by hand",
                f"{alias} is used as {use}.  A later isinstance check through it would need "
                f"{recipe}.",
            )
            return
        ctx.report(
            site.node,
            f"{class_name} used as a value (alias, argument, ...); replace by hand",
            f"A later isinstance check through it would need {recipe}.",
        )
        return
    ctx.replace(
        site.node,
        ctx.ref(ARRAY, site.scope),
        f"{ctx.code(site.node)} -> {ARRAY}",
        safety=Safety.SAFE,
    )


@functools.lru_cache(maxsize=64)
def _word_pattern(words: Tuple[str, ...]) -> "re.Pattern[str]":
    return re.compile(r"\b(?:{})\b".format("|".join(re.escape(w) for w in words)))


def report_string_annotations(
    ctx: Context, word: str, recipe: str, names: FrozenSet[str] = frozenset()
) -> None:
    """String annotations are not rewritten; one that names the legacy class is reported.

    Names the class was imported under (``from jax.numpy import DeviceArray as DA``) count too;
    they are remembered across rounds because the import itself goes in the first one.
    """
    state = getattr(ctx, "file_state", None)
    key = f"{ctx.rule.code}-class-aliases"
    aliases = set(state.get(key, ())) if state is not None else set()
    for binding in ctx.analysis.imports:
        if binding.qualname in names and binding.name != word and not binding.guarded:
            aliases.add(binding.name)
    if state is not None:
        state[key] = frozenset(aliases)
    # The bare word, unless the module binds it to something else (``from mylib import
    # DeviceArray``, a class of its own): then the annotation names that.
    ctx.needs_name(word)
    own = ctx.analysis.scopes[id(ctx.module)].bindings.get(word, ())
    bare = [] if any(b.qualname not in names for b in own) else [word]
    words = [*bare, *sorted(aliases)]
    if not words:
        return
    # The analysis traversal already collected the strings inside annotations.
    strings = ctx.analysis.annotation_strings
    if not strings:
        return
    pattern = _word_pattern(tuple(words))
    found = [node for node in strings if pattern.search(node.value)]
    for node in found:
        ctx.report(
            node,
            f"a string annotation names {word}, which no longer exists; write {recipe}",
            f"The annotation {node.value} names {word}; write {recipe}.",
        )
