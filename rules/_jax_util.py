"""jax.util's helpers (gone from JAX 0.8.0): the call recipes of ``safe_map``, ``safe_zip``
and ``unzip2``, and the exact forms of ``safe_zip`` and ``safe_map`` of several iterables, which
keep the helpers' length check with ``zip(..., strict=True)`` (Python 3.10): a target from
:data:`STRICT_SINCE`.  Below it they lose the check, and are unsafe fixes."""

from __future__ import annotations

import dataclasses
from typing import Optional, Tuple

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.migrator.context import Context
from jaxmigrate.migrator.scope import Scope
from jaxmigrate.rules._call_recipes import CallRecipe
from jaxmigrate.rules._helpers import needs_to_fix

# zip(..., strict=True) (Python 3.10) raises where the lengths differ.  PyPI's requires_python
# for jax: ">=3.9" up to 0.4.30, ">=3.10" from 0.4.31 (">=3.11" from 0.8.0): on a target from
# 0.4.31 every JAX of the range runs on a Python that has it.
STRICT_SINCE = "0.4.31"
STARMAP = "itertools.starmap"


def exact_form(helper: str, iterables: int, scope: Scope) -> Optional[Tuple[str, str]]:
    """(template, as shown) of a call of ``jax.util.safe_zip`` or ``safe_map`` (``helper``)
    with ``iterables`` iterables, two or more, that keeps the helper's length check; None for
    one iterable (``list(zip(xs))`` needs none) or where ``itertools`` is another name here.

    What the helpers do on every JAX of such a target that has them (jaxlib's compiled
    ``safe_zip``/``safe_map``: jax/_src/util.py takes them where jaxlib has them, always from
    0.4.30; measured on jax 0.4.13, 0.4.30, 0.6.2 and 0.10.2): the iterables are read in step,
    ``f`` runs on each item as it comes, and a length mismatch raises ValueError where the
    shortest one ends.  ``zip(..., strict=True)`` and ``itertools.starmap(f, ...)`` read, call
    and raise alike (only the message is worded otherwise); ``map`` takes ``strict=`` only
    from Python 3.14, and a comprehension would evaluate ``f`` once per item."""
    if iterables < 2:
        return None
    if helper.endswith("safe_zip"):
        return "list(zip({*}, strict=True))", "list(zip(*iterables, strict=True))"
    bound = scope.lookup("itertools") is not None
    if bound and scope.resolve_name("itertools") != "itertools":
        return None  # (ctx.ref could not name itertools.starmap here)
    columns = ", ".join(f"{{{i}}}" for i in range(1, iterables + 1))
    template = f"list({{q:{STARMAP}}}({{0}}, zip({columns}, strict=True)))"
    return template, "list(itertools.starmap(f, zip(*iterables, strict=True)))"


UTIL_RECIPES: Tuple[CallRecipe, ...] = (
    *(
        CallRecipe(
            legacy=f"jax.util.safe_{builtin}",
            template=f"list({builtin}({{*}}))",
            shown=f"list({builtin}({shown}))",
            positional=(fewest, 99),
            unsafe_beyond=fewest,
            builtins=frozenset({"list", builtin}),
            why=f"safe_{builtin} was list({builtin}(...)) that also checked the iterables have one "
            "length; with several iterables that check is lost (a target from "
            f"{STRICT_SINCE} keeps it)",
        )
        # the builtin, how many arguments make one iterable, and its arguments as shown
        for builtin, fewest, shown in (("map", 2, "f, *iterables"), ("zip", 1, "*iterables"))
    ),
    CallRecipe(
        legacy="jax.util.unzip2",
        template="tuple(map(tuple, zip(*[(x, y) for x, y in {0}]))) or ((), ())",
        shown="tuple(map(tuple, zip(*[(x, y) for x, y in pairs]))) or ((), ())",
        positional=(1, 1),
        builtins=frozenset({"tuple", "map", "zip"}),
        low_precedence=True,
        atoms=True,
        why="unzip2 unpacked each item into two values and returned two tuples, ((), ()) for no "
        "items (its source in JAX 0.4-0.7): the same, with builtins",
    ),
)
_LIST_ZIP = frozenset({"list", "zip"})  # the builtins the exact forms call


def exact_recipe(
    recipe: CallRecipe, call: cst.Call, scope: Scope, ctx: Context
) -> Tuple[CallRecipe, str]:
    """The recipe for ``call`` and what its fix needs beyond the target: for safe_zip and
    safe_map of several iterables, their exact forms (:func:`exact_form`) where the target,
    or the survey, holds only releases on a Python with ``zip(..., strict=True)``; else
    ``recipe`` itself, and ""."""
    needs = needs_to_fix(ctx, STRICT_SINCE) if recipe.unsafe_beyond is not None else None
    if needs is None:
        return recipe, ""
    count = len([a for a in call.args if a.keyword is None]) - recipe.positional[0] + 1
    if any(a.star for a in call.args):  # (reported: its message shows the exact form)
        count = max(count, 2)
    form = exact_form(recipe.legacy, count, scope)
    if form is None:
        return recipe, ""
    template, shown = form
    why = f"zip(..., strict=True) checks the lengths as it did (Python 3.10: jax {STRICT_SINCE}+)"
    exact = dataclasses.replace(
        recipe, template=template, shown=shown, why=why, unsafe_beyond=None, builtins=_LIST_ZIP
    )
    return exact, needs
