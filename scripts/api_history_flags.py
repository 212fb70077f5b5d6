"""Configuration flags for ``build_api_history.py``: which flags a release defines, and which of
them code can read as attributes of ``jax.config``.

``jax.config`` is an instance of ``Config``.  Flags made by the ``*_state`` definers
(``define_bool_state``, ``bool_state``, ...) get a property on ``Config``
(``setattr(Config, name, property(...))``), so ``jax.config.jax_enable_x64`` works; flags made
by ``DEFINE_*``/``*_flag`` (``jax_platform_name``, ``jax_backend_target``, ...) are only
registered by name, so ``jax.config.update``/``read``/``values`` see them and the attribute
read raises AttributeError.
"""

from __future__ import annotations

import ast
import re
from typing import Callable, Dict, NamedTuple, Optional, Set

_FLAG_DEFINER = re.compile(r"^(define_\w+|\w+_state|\w+_flag|DEFINE_\w+)$")
_STATE_DEFINER = re.compile(r"^(define_\w+_state|\w+_state)$")


class Flags(NamedTuple):
    """What one release's configuration offers."""

    members: Set[str]  # readable as ``jax.config.X``: flags and the members of ``Config``
    defined: Set[str]  # every flag, by name (``jax.config.update("jax_x", ...)``)


def config_flags(files: Dict[str, str], parse: Callable[[str], ast.Module]) -> Flags:
    """The configuration flags one release defines and which of them are attributes.

    A flag is defined by a call such as ``define_bool_state(name="jax_x")``,
    ``bool_state("jax_x", ...)``, ``string_flag("jax_x", ...)`` or ``flags.DEFINE_bool("jax_x",
    ...)``.  It is an attribute of ``jax.config`` when the function that defines it
    (directly or through the definer it calls) runs ``setattr(Config, name, property(...))``,
    or when ``Config`` has a ``__getattr__``; otherwise it exists by name only
    (``jax.config.update``/``read``/``values``).  The members of ``Config`` are its methods,
    class attributes, what ``setattr(Config, "x64_enabled", ...)`` or a module-level
    ``Config.x64_enabled = ...`` adds, and the attributes its ``__init__`` sets on ``self``."""
    trees = {}
    for module, text in files.items():
        if "jax_" not in text and "class Config" not in text:
            continue
        trees[module] = parse(module)
    members: Set[str] = set()
    functions: Dict[str, ast.AST] = {}
    config_getattr = False  # a ``Config.__getattr__`` that may serve any flag
    for module, tree in trees.items():
        if not module.endswith("config"):
            continue
        literals = {
            target.id: stmt.value
            for stmt in tree.body
            if isinstance(stmt, ast.Assign)
            for target in stmt.targets
            if isinstance(target, ast.Name)
        }
        for stmt in tree.body:  # Config.x64_enabled = Config.jax_enable_x64 (0.2.11..0.4.24)
            if isinstance(stmt, ast.Assign):
                members.update(
                    target.attr
                    for target in stmt.targets
                    if isinstance(target, ast.Attribute)
                    and getattr(target.value, "id", "") == "Config"
                )
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                functions.setdefault(node.name, node)
            if isinstance(node, ast.ClassDef) and node.name == "Config":
                for item in node.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        members.add(item.name)
                        if item.name == "__getattr__":
                            served = _served_names(item, literals)
                            members.update(served or ())
                            config_getattr = config_getattr or served is None
                        if item.name == "__init__":
                            for inner in ast.walk(item):
                                if (
                                    isinstance(inner, ast.Attribute)
                                    and isinstance(inner.ctx, ast.Store)
                                    and getattr(inner.value, "id", "") == "self"
                                ):
                                    members.add(inner.attr)  # self.values = {}
                    elif isinstance(item, ast.Assign):
                        members.update(t.id for t in item.targets if isinstance(t, ast.Name))
    # The definers that make an attribute: setattr(Config, <parameter>, ...), or a call of one.
    setting = {
        name
        for name, node in functions.items()
        if any(_is_config_setattr(call) and not isinstance(call.args[1], ast.Constant)
               for call in ast.walk(node) if isinstance(call, ast.Call))
    }  # fmt: skip
    grew = True
    while grew:
        grew = False
        for name, node in functions.items():
            if name in setting:
                continue
            for call in ast.walk(node):
                if isinstance(call, ast.Call) and _callee(call) in setting:
                    setting.add(name)
                    grew = True
                    break
    defined: Set[str] = set()
    for tree in trees.values():
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            callee = _callee(node)
            if _is_config_setattr(node):
                name = node.args[1]  # setattr(Config, "x64_enabled", property(...))
                if isinstance(name, ast.Constant) and isinstance(name.value, str):
                    members.add(name.value)
                continue
            if not _FLAG_DEFINER.match(callee):
                continue
            values = [k.value for k in node.keywords if k.arg == "name"] + node.args[:1]
            for value in values:
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    # (JAX's own state definers name every flag they make, ``jax_`` or not:
                    # ``define_bool_state(name="experimental_xmap_spmd_lowering")``)
                    if value.value.isidentifier() and (
                        value.value.startswith("jax") or _STATE_DEFINER.match(callee)
                    ):
                        defined.add(value.value)
                        if config_getattr or callee in setting:
                            members.add(value.value)
    return Flags({m for m in members if not m.startswith("_")}, defined)


def _served_names(getattr_def: ast.AST, literals: Dict[str, ast.expr]) -> Optional[Set[str]]:
    """The names a ``Config.__getattr__`` serves when it only serves those of a module-level
    collection it tests (``if name in _CONFIG_DEPRECATIONS``, 0.4.20..0.4.24); None when it
    may serve anything."""
    for node in ast.walk(getattr_def):
        if isinstance(node, ast.Compare) and isinstance(node.ops[0], ast.In):
            collection = node.comparators[0]
            value = literals.get(getattr(collection, "id", ""))
            if value is not None:
                try:
                    names = ast.literal_eval(value)
                except (ValueError, SyntaxError, TypeError):
                    return None
                return {str(n) for n in names}
    return None


def _callee(call: ast.Call) -> str:
    func = call.func
    return func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")


def _is_config_setattr(call: ast.Call) -> bool:
    return (
        _callee(call) == "setattr"
        and len(call.args) >= 2
        and getattr(call.args[0], "id", "") == "Config"
    )
