"""``jax.config.define_bool_state(...)`` -> ``jax._src.config.bool_state(...)``: JAX901's
unsafe fix for the option definers ``jax.config`` lost.

``Config.define_bool_state`` and its siblings (``define_enum_state``, ``define_int_state``,
``define_float_state``, ``define_string_state``) defined a configuration option with an
environment variable and a context manager; ``jax.config`` has no such method after 0.4.24,
and the changelog of 0.4.25 names no public successor.  From 0.4.31 on ``jax._src.config``
has ``bool_state``, ``enum_state``, ``int_state``, ``float_state`` and ``string_state`` with
the same positional parameters (name, [enum_values,] default, help) and the same keywords, and
they register the option as the methods did (``jax.config.update(name, value)`` and
``jax.config.<name>`` serve it).  Checked on the sources of every release: the parameters
below are those of 0.4.31, and every later release through the newest keeps them.

The module is private (no compatibility promise), so the rewrite is an unsafe fix, made only
where every release of the target range has the new function.
"""

from __future__ import annotations

from typing import Dict, FrozenSet, Optional, Tuple

from jaxmigrate.migrator import lazycst as cst, references as refs
from jaxmigrate.migrator.context import Context
from jaxmigrate.migrator.naming import CannotReference
from jaxmigrate.migrator.rule import Safety
from jaxmigrate.migrator.version import parse_version

SINCE = "0.4.31"  # the first release with jax._src.config.bool_state and its siblings
PRIVATE = "jax._src.config"
_HOOKS = ("update_global_hook", "update_thread_local_hook")
# Old definer -> (new function, its positional parameters, the keywords it takes).  The old
# definers other than define_bool_state took the two hooks positionally after ``help`` (until
# 0.4.19); the new functions take them by keyword only.
DEFINERS: Dict[str, Tuple[str, Tuple[str, ...], FrozenSet[str]]] = {
    "jax.config.define_bool_state": (
        "bool_state",
        ("name", "default", "help"),
        frozenset({*_HOOKS, "upgrade", "extra_description"}),
    ),
    "jax.config.define_enum_state": (
        "enum_state",
        ("name", "enum_values", "default", "help"),
        frozenset(_HOOKS),
    ),
    "jax.config.define_int_state": ("int_state", ("name", "default", "help"), frozenset(_HOOKS)),
    "jax.config.define_float_state": (
        "float_state",
        ("name", "default", "help"),
        frozenset(_HOOKS),
    ),
    "jax.config.define_string_state": (
        "string_state",
        ("name", "default", "help"),
        frozenset(_HOOKS),
    ),
}
# What the rewrite writes, outside JAX's public API history: the floor survey reads it.
WRITTEN_SINCE = {f"{PRIVATE}.{new}": SINCE for new, _positional, _keywords in DEFINERS.values()}
SOURCE = refs.source_at(SINCE, "jax/_src/config.py", "bool_state and the other *_state definers")
_WHY = (
    "jax.config lost its option definers in JAX 0.4.25 (no public successor, says that "
    "release's changelog); jax._src.config.{new} takes the same arguments and registers the "
    f"option the same way from JAX {SINCE} on, but jax._src is private: it may change in any "
    "release (the public way: define the option in your own code, from an environment "
    "variable or an absl flag)"
)


def recipe(qualname: str) -> Optional[str]:
    """What to write instead of the definer ``qualname``, for a finding (None: not one)."""
    known = DEFINERS.get(qualname)
    if known is None:
        return None
    return (
        f"on JAX {SINCE} and later, {PRIVATE}.{known[0]}(...) takes the same arguments "
        f"(private: jax._src may change in any release); jaxmigrate writes it with "
        f"--unsafe-fixes when the target starts at {SINCE} or later"
    )


def rewrite(node: cst.CSTNode, qualname: str, ctx: Context) -> bool:
    """Record the unsafe fix for a call of the definer ``qualname`` whose function is
    ``node`` (without ``--unsafe-fixes`` the engine makes a finding of it); False (nothing
    recorded) where it does not apply: the target range starts before the new function,
    ``node`` is not called, or the call passes what the new function does not take."""
    known = DEFINERS.get(qualname)
    if known is None or (ctx.target < parse_version(SINCE) and not ctx.survey):
        return False  # (the floor survey writes it: its name then raises the floor to SINCE)
    call = ctx.parent(node)
    if not isinstance(call, cst.Call) or call.func is not node:
        return False
    new_name, positional, keywords = known
    args = _arguments(call, positional, keywords, hooks_by_position=new_name != "bool_state")
    if args is None:
        return False
    try:
        func = ctx.ref(f"{PRIVATE}.{new_name}", ctx.scope_of(call), direct=True)
    except CannotReference:
        return False
    ctx.replace(
        call,
        call.with_changes(func=func, args=args),
        f"{qualname} -> {PRIVATE}.{new_name} (private JAX API)",
        Safety.UNSAFE,
        detail=_WHY.format(new=new_name) + ".",
    )
    return True


def _arguments(
    call: cst.Call,
    positional: Tuple[str, ...],
    keywords: FrozenSet[str],
    hooks_by_position: bool,
) -> Optional[Tuple[cst.Arg, ...]]:
    """The call's arguments for the new function: positional hooks become keywords; None
    when an argument has no place there (``*args``, ``**kwargs``, an unknown keyword, one
    positional argument too many)."""
    taken = set(positional) | keywords
    extra = _HOOKS if hooks_by_position else ()
    result = []
    for index, arg in enumerate(call.args):
        if arg.star:
            return None
        if arg.keyword is not None:
            if arg.keyword.value not in taken:
                return None
            result.append(arg)
        elif index < len(positional):
            result.append(arg)
        elif index < len(positional) + len(extra):
            result.append(
                arg.with_changes(
                    keyword=cst.Name(extra[index - len(positional)]),
                    equal=cst.AssignEqual(
                        whitespace_before=cst.SimpleWhitespace(""),
                        whitespace_after=cst.SimpleWhitespace(""),
                    ),
                )
            )
        else:
            return None
    return tuple(result)
