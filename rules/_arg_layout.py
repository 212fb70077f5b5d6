"""A call's arguments rewritten in the layout it was written in, for a rule that renames a
keyword or moves arguments to their positions (JAX906): each new argument takes the comma of
the slot it lands in (one argument a line and a trailing comma stay), a comment after an
argument moves with it, and a reorder is made only where it keeps the order of the arguments'
effects.  On LibCST's nodes, read through :mod:`migrator.lazycst`.
"""

from __future__ import annotations

import functools
from typing import List, Optional, Sequence, Union

from jaxmigrate.migrator import lazycst as cst


def renamed_arg(arg: cst.Arg, keyword: str, value: "cst.BaseExpression") -> cst.Arg:
    """``arg`` as ``keyword=value``, in its place: its comma, and the blank or line break after
    it (before a closing parenthesis on a line of its own), stay."""
    return arg.with_changes(keyword=cst.Name(keyword), value=value)


def positional_arg(arg: cst.Arg) -> cst.Arg:
    return arg.with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT)


def in_slots(
    old: Sequence[cst.Arg], new: Sequence[cst.Arg], origins: Sequence[Optional[cst.Arg]]
) -> List[cst.Arg]:
    """``new``, a call's arguments rewritten from ``old`` (``origins``: the argument of ``old``
    each one was, or None), in the layout the call was written in: each takes the comma ``old``
    had in its place (one argument a line and a trailing comma stay; an argument more than there
    were takes the comma before the last), and the comment after an argument moves with it."""
    last = len(new) - 1
    placed = []
    for index, (arg, origin) in enumerate(zip(new, origins)):
        slot = old[-1] if index == last else old[min(index, len(old) - 2)] if len(old) > 1 else None
        comma = slot.comma if slot is not None else cst.Comma(cst.SimpleWhitespace(""), _space())
        if origin is not slot:
            comma = _with_comment_of(comma, origin)
        placed.append(arg.with_changes(comma=comma))
    return placed


@functools.cache
def _space() -> "cst.SimpleWhitespace":
    return cst.SimpleWhitespace(" ")


def _comment(arg: Optional[cst.Arg]) -> Optional[cst.TrailingWhitespace]:
    """The end of the line after ``arg``'s comma, where a comment after the argument sits."""
    comma = arg.comma if arg is not None else None
    after = comma.whitespace_after if isinstance(comma, cst.Comma) else None
    return after.first_line if isinstance(after, cst.ParenthesizedWhitespace) else None


def _with_comment_of(
    comma: Union[cst.Comma, cst.MaybeSentinel], origin: Optional[cst.Arg]
) -> Union[cst.Comma, cst.MaybeSentinel]:
    """``comma`` (a place's) with the end of line of ``origin``'s own comma (its comment)."""
    mine = _comment(origin)
    if isinstance(comma, cst.Comma) and isinstance(
        comma.whitespace_after, cst.ParenthesizedWhitespace
    ):
        first_line = mine if mine is not None else cst.TrailingWhitespace()
        after = comma.whitespace_after.with_changes(first_line=first_line)
        return comma.with_changes(whitespace_after=after)
    if origin is not None and mine is not None and mine.comment is not None:
        return origin.comma  # (its comment has no other place to go: its own comma, line and all)
    return comma


def reorders_safely(old: Sequence[cst.Arg], new: Sequence[cst.Arg]) -> bool:
    """Are ``new`` (``old``'s arguments, reordered) evaluated as ``old`` were, but for values
    that have no effect (names, attributes, literals, and tuples or lists of them)?"""
    where = [next(i for i, arg in enumerate(old) if arg is moved) for moved in new]
    swapped = {
        k
        for i in range(len(new))
        for j in range(i + 1, len(new))
        if where[i] > where[j]
        for k in (i, j)
    }
    return sum(not effect_free(new[k].value) for k in swapped) <= 1


def effect_free(node: "cst.BaseExpression") -> bool:
    """Evaluating ``node`` has no effect: a name, an attribute chain, a number or string, a
    sign on one, a tuple or list of such."""
    if isinstance(node, (cst.Name, cst.Integer, cst.Float, cst.SimpleString, cst.Imaginary)):
        return True
    if isinstance(node, cst.Attribute):
        return effect_free(node.value)
    if isinstance(node, cst.UnaryOperation):
        return effect_free(node.expression)
    if isinstance(node, (cst.Tuple, cst.List)):
        return all(isinstance(e, cst.Element) and effect_free(e.value) for e in node.elements)
    return False
