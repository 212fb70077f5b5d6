"""Class members for ``build_api_history.py``: what ``SomeJaxClass.member`` finds, per release.

Read statically, like the rest of the history.  A public class of a public module records the
members its own body makes visible on the class (methods, class attributes, properties,
nested classes, ``__slots__``), those it inherits from bases that resolve to classes of the
same release, and those other modules attach to it (``setattr(ShapedArray, "T", ...)``,
``Tracer.x = ...``, ``for name in _array_methods: setattr(cls, name, ...)``, followed through a
helper's parameter to its call sites).

A class is *open*, and records nothing for that release, when its members cannot all be
seen: a base that resolves to nothing known, a metaclass, a decorator that may swap the class
(``use_cpp_class``), ``__getattr__``, or an attribute attached under a name that cannot be
worked out.  The history treats a class that is open (or is not a class) in a release as
having every member it ever had there, so an unreadable release never makes a member look
removed.
"""

from __future__ import annotations

import ast
import re
from typing import Dict, Iterable, List, Optional, Set, Tuple

# Bases from outside JAX whose public class attributes are known (and metaclass-free enough
# that nothing else appears): their public members.
_EXCEPTION = frozenset({"args", "with_traceback", "add_note"})
KNOWN_BASES: Dict[str, frozenset] = {
    "object": frozenset(),
    "typing.Generic": frozenset(),
    "typing.Protocol": frozenset(),
    "typing_extensions.Protocol": frozenset(),
    "abc.ABC": frozenset({"register"}),
    "typing.NamedTuple": frozenset({"count", "index"}),
    "contextlib.ContextDecorator": frozenset(),
    "threading.local": frozenset(),
    **{
        name: _EXCEPTION
        for name in (
            "Exception", "ValueError", "TypeError", "RuntimeError", "NotImplementedError",
            "KeyError", "IndexError", "AttributeError", "ArithmeticError", "Warning",
            "UserWarning", "DeprecationWarning", "FutureWarning",
        )
    },
}  # fmt: skip
_BUILTIN_BASES = {name for name in KNOWN_BASES if "." not in name}
# Class decorators that return the class they get, with no new public class attribute.
_KEEPING_DECORATORS = frozenset(
    {
        "dataclass", "total_ordering", "register_pytree_node_class", "final",
        "register_pytree_with_keys_class", "runtime_checkable", "unique", "set_module",
        "export", "_export", "traceback_util", "api_boundary",
    }
)  # fmt: skip
OPEN = None  # the members of a class that is open
# ``setattr(`` or an assignment to an attribute of something other than ``self``.
_SETTER = re.compile(
    r"setattr\(|^[ \t]*(?!self\.|cls\.)[A-Za-z_][\w.]*\.\w+[ \t]*[-+*/|&]?=(?!=)", re.M
)


def _last(node: ast.expr) -> Optional[str]:
    """``a.b.C`` and ``C`` -> ``"C"``; ``C[int]`` -> ``"C"``."""
    if isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _dotted(node: ast.expr) -> Optional[str]:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return f"{head}.{node.attr}" if head else None
    return None


def _top_level(body: Iterable[ast.stmt]) -> Iterable[ast.stmt]:
    """Statements run at module (or class) level, those under ``if``/``try``/``with`` too."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, ast.If):
            yield from _top_level(stmt.body)
            yield from _top_level(stmt.orelse)
        elif isinstance(stmt, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            for block in (stmt.body, stmt.orelse, stmt.finalbody):
                yield from _top_level(block)
            for handler in stmt.handlers:
                yield from _top_level(handler.body)
        elif isinstance(stmt, ast.With):
            yield from _top_level(stmt.body)


class _Module:
    """One module's top-level bindings, enough to resolve a base class or an import."""

    def __init__(self, name: str, tree: ast.Module, is_package: bool) -> None:
        self.name = name
        self.tree = tree
        self.classes: Dict[str, List[ast.ClassDef]] = {}
        self.imports: Dict[str, Tuple[str, Optional[str]]] = {}  # local -> (module, attr|None)
        self.aliases: Dict[str, ast.expr] = {}
        self.literals: Dict[str, ast.expr] = {}  # NAME = [...] / {...} / (...)
        for stmt in _top_level(tree.body):
            if isinstance(stmt, ast.ClassDef):
                self.classes.setdefault(stmt.name, []).append(stmt)
            elif isinstance(stmt, ast.Import):
                for alias in stmt.names:
                    if alias.asname:
                        self.imports[alias.asname] = (alias.name, None)
                    else:
                        head = alias.name.split(".")[0]
                        self.imports[head] = (head, None)
            elif isinstance(stmt, ast.ImportFrom):
                base = stmt.module or ""
                if stmt.level:
                    parts = name.split(".")
                    if not is_package:
                        parts = parts[:-1]
                    parts = parts[: len(parts) - (stmt.level - 1)]
                    base = ".".join(parts + ([stmt.module] if stmt.module else []))
                for alias in stmt.names:
                    if alias.name != "*":
                        self.imports[alias.asname or alias.name] = (base, alias.name)
            elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                target = stmt.targets[0]
                if isinstance(target, ast.Name):
                    if isinstance(stmt.value, (ast.Name, ast.Attribute)):
                        self.aliases[target.id] = stmt.value
                    elif isinstance(stmt.value, (ast.List, ast.Tuple, ast.Set, ast.Dict)):
                        self.literals[target.id] = stmt.value
                    elif isinstance(stmt.value, ast.BinOp):
                        self.literals[target.id] = stmt.value


class ClassReader:
    """The classes of one release: resolution of names to class definitions, and members."""

    def __init__(
        self, trees: Dict[str, ast.Module], packages: Set[str], texts: Dict[str, str]
    ) -> None:
        self.modules = {name: _Module(name, tree, name in packages) for name, tree in trees.items()}
        self._members: Dict[Tuple[str, str], Optional[frozenset]] = {}
        self._busy: Set[Tuple[str, str]] = set()
        # (module, class) or a bare simple name -> attached members; those something attaches
        # names to that cannot be worked out
        self.attached: Dict[object, Set[str]] = {}
        self.opened: Set[object] = set()
        self._read_attachments(texts)

    # -- resolution ---------------------------------------------------------------------------
    def resolve(self, module: str, node: ast.expr, depth: int = 0):  # noqa: ANN201
        """What ``node`` names in ``module``: ("class", module, name), ("module", name),
        ("external", dotted) or None."""
        if depth > 12:
            return None
        if isinstance(node, ast.Subscript):
            return self.resolve(module, node.value, depth + 1)
        if isinstance(node, ast.Name):
            return self.resolve_name(module, node.id, depth + 1)
        if isinstance(node, ast.Attribute):
            head = self.resolve(module, node.value, depth + 1)
            if head is None:
                return None
            if head[0] == "module":
                return self.resolve_member(head[1], node.attr, depth + 1)
            if head[0] == "external":
                return ("external", f"{head[1]}.{node.attr}")
        return None

    def resolve_name(self, module: str, name: str, depth: int = 0):  # noqa: ANN201
        info = self.modules.get(module)
        if info is None:
            return None
        if name in info.classes:
            return ("class", module, name)
        if name in info.imports:
            source, attr = info.imports[name]
            if attr is None:
                return ("module", source) if source in self.modules else ("external", source)
            return self.resolve_member(source, attr, depth + 1)
        if name in info.aliases:
            return self.resolve(module, info.aliases[name], depth + 1)
        if name in _BUILTIN_BASES:
            return ("external", name)
        return None

    def resolve_member(self, module: str, attr: str, depth: int = 0):  # noqa: ANN201
        sub = f"{module}.{attr}"
        if sub in self.modules:
            return ("module", sub)
        if module in self.modules:
            return self.resolve_name(module, attr, depth + 1)
        if module.split(".")[0] in ("jax", "jaxlib"):
            return None  # a compiled module, or one this release lacks
        return ("external", sub)

    # -- members ------------------------------------------------------------------------------
    def members(self, module: str, name: str) -> Optional[frozenset]:
        """The public members of class ``name`` of ``module``, or None when it is open."""
        key = (module, name)
        if key in self._members:
            return self._members[key]
        if key in self._busy:
            return OPEN
        self._busy.add(key)
        found = self._read_class(module, name)
        self._busy.discard(key)
        self._members[key] = found
        return found

    def _read_class(self, module: str, name: str) -> Optional[frozenset]:
        definitions = self.modules[module].classes[name]
        if len(definitions) != 1 or name in self.opened or (module, name) in self.opened:
            return OPEN  # defined twice (per Python version, say): which one is unknown
        node = definitions[0]
        for decorator in node.decorator_list:
            callee = decorator.func if isinstance(decorator, ast.Call) else decorator
            if _last(callee) not in _KEEPING_DECORATORS:
                return OPEN
        if any(k.arg == "metaclass" and _dotted(k.value) not in ("abc.ABCMeta", "ABCMeta")
               for k in node.keywords):  # fmt: skip
            return OPEN
        found: Set[str] = set(self.attached.get(name, ())) | self.attached.get(
            (module, name), set()
        )
        named_tuple = False
        for base in node.bases:
            target = self.resolve(module, base)
            if target is None:
                return OPEN
            if target[0] == "class":
                inherited = self.members(target[1], target[2])
                if inherited is OPEN:
                    return OPEN
                found |= inherited
            elif target[0] == "external" and target[1] in KNOWN_BASES:
                found |= KNOWN_BASES[target[1]]
                named_tuple = named_tuple or target[1] == "typing.NamedTuple"
            else:
                return OPEN
        slots = any(
            k.arg == "slots" and isinstance(k.value, ast.Constant) and k.value.value
            for d in node.decorator_list if isinstance(d, ast.Call) for k in d.keywords
        )  # fmt: skip
        for stmt in _top_level(node.body):
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                if stmt.name in ("__getattr__", "__getattribute__"):
                    return OPEN
                found.add(stmt.name)
            elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                if isinstance(stmt, ast.AnnAssign) and stmt.value is None:
                    if not (named_tuple or slots):
                        continue  # an annotation only: no class attribute
                for target in targets:
                    for element in ast.walk(target):
                        if isinstance(element, ast.Name):
                            found.add(element.id)
                    if isinstance(target, ast.Name) and target.id == "__slots__":
                        try:
                            slots_value = ast.literal_eval(stmt.value)  # type: ignore[arg-type]
                        except (ValueError, SyntaxError, TypeError):
                            return OPEN
                        found.update([slots_value] if isinstance(slots_value, str) else slots_value)
                    if isinstance(target, ast.Subscript):
                        return OPEN  # locals()[...] = ...
        return frozenset(n for n in found if isinstance(n, str) and not n.startswith("_"))

    # -- members attached from outside the class body ---------------------------------------
    def _read_attachments(self, texts: Dict[str, str]) -> None:
        """``setattr(C, name, v)`` and ``C.name = v`` anywhere in the release.  A target that is
        a parameter of the enclosing function stands for what its call sites pass.  (Only the
        modules whose text can hold a setter, then those that call a function that holds one,
        are walked: walking every module of a release is most of the generator's time.)"""
        calls: Dict[str, List[Tuple[str, ast.Call, list]]] = {}  # function -> call sites
        setters: List[Tuple[str, ast.expr, ast.expr, list]] = []
        walked = set()
        for module, info in self.modules.items():
            if _SETTER.search(texts[module]):
                _walk(info.tree, module, [], calls, setters)
                walked.add(module)
        helpers = {function.name for _m, _t, _n, stack in setters for function, _l in stack}
        if helpers:
            names = "|".join(map(re.escape, sorted(helpers)))
            called = re.compile(rf"\b({names})\s*\(")
            for module, info in self.modules.items():
                if module not in walked and called.search(texts[module]):
                    _walk(info.tree, module, [], calls, [])
        for module, target, name_node, stack in setters:
            classes = self._targets(module, target, stack, calls, 0)
            if not classes:
                continue
            names = self._strings(module, name_node, stack, calls, 0)
            for simple in classes:
                if names is None:
                    self.opened.add(simple)
                else:
                    self.attached.setdefault(simple, set()).update(
                        n for n in names if not n.startswith("_")
                    )

    def _targets(self, module: str, node: ast.expr, stack: list, calls: dict, depth: int) -> Set:
        """The classes ``node`` (what an attribute is set on) may be: (module, name) where it
        resolves to a class of the release, its simple name where it is a bare name that
        resolves to nothing (a local alias, say); nothing where it resolves to something else
        (``xc.NamedSharding``: a compiled class of the same simple name)."""
        simple = _last(node)
        if simple is None or simple == "self" or depth > 3:
            return set()
        if isinstance(node, ast.Name):
            for function, _loops in reversed(stack):
                index = _param_index(function, simple)
                if index is None:
                    continue
                found: Set = set()
                for call_module, call, call_stack in calls.get(function.name, ()):
                    argument = _argument(call, index, simple)
                    if argument is not None:
                        found |= self._targets(call_module, argument, call_stack, calls, depth + 1)
                return found
        target = self.resolve(module, node)
        if target is not None and target[0] == "class":
            return {(target[1], target[2])}
        if target is None and isinstance(node, ast.Name):
            return {simple}
        return set()

    def _strings(
        self, module: str, node: ast.expr, stack: list, calls: dict, depth: int
    ) -> Optional[Set[str]]:
        """The strings ``node`` may hold, or None when that cannot be worked out.  Private
        names (an f-string that starts with ``_``) count as an empty set."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return {node.value}
        if isinstance(node, ast.JoinedStr):
            first = node.values[0] if node.values else None
            if isinstance(first, ast.Constant) and str(first.value).startswith("_"):
                return set()
            return None
        if not isinstance(node, ast.Name) or depth > 3:
            return None
        for function, loops in reversed(stack):
            for loop_target, iterable in reversed(loops):
                names = _loop_names(loop_target, node.id)
                if names is not None:
                    return self._iterated(module, iterable, names)
            index = _param_index(function, node.id)
            if index is not None:
                found: Set[str] = set()
                for call_module, call, call_stack in calls.get(function.name, ()):
                    argument = _argument(call, index, node.id)
                    if argument is None:
                        return None
                    more = self._strings(call_module, argument, call_stack, calls, depth + 1)
                    if more is None:
                        return None
                    found |= more
                return found
        return None

    def _iterated(self, module: str, iterable: ast.expr, position: int) -> Optional[Set[str]]:
        """The strings a ``for`` over ``iterable`` binds (``position``: which element of a
        ``.items()`` pair, -1 for the whole element)."""
        source = iterable
        if isinstance(source, ast.Call) and isinstance(source.func, ast.Attribute):
            if source.func.attr == "items" and position == 0:
                source, position = source.func.value, -1
            elif source.func.attr == "keys" and position == -1:
                source = source.func.value
            else:
                return None
        if position != -1:
            return None
        return self._literal_strings(module, source, 0)

    def _literal_strings(self, module: str, node: ast.expr, depth: int) -> Optional[Set[str]]:
        if depth > 5:
            return None
        if isinstance(node, ast.Name):
            value = self.modules[module].literals.get(node.id)
            return None if value is None else self._literal_strings(module, value, depth + 1)
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.BitOr)):
            left = self._literal_strings(module, node.left, depth + 1)
            right = self._literal_strings(module, node.right, depth + 1)
            return None if left is None or right is None else left | right
        elements = node.keys if isinstance(node, ast.Dict) else getattr(node, "elts", None)
        if elements is None:
            return None
        found = set()
        for element in elements:
            if isinstance(element, ast.Constant) and isinstance(element.value, str):
                found.add(element.value)
            else:
                return None
        return found


def _param_index(function: ast.AST, name: str) -> Optional[int]:
    args = function.args.posonlyargs + function.args.args  # type: ignore[attr-defined]
    for index, arg in enumerate(args):
        if arg.arg == name:
            return index
    return None


def _argument(call: ast.Call, index: int, name: str) -> Optional[ast.expr]:
    """The argument a call passes for parameter ``name`` (at ``index``), if it is visible."""
    if index < len(call.args) and not any(isinstance(a, ast.Starred) for a in call.args):
        return call.args[index]
    for keyword in call.keywords:
        if keyword.arg == name:
            return keyword.value
    return None


def _loop_names(target: ast.expr, name: str) -> Optional[int]:
    """-1 when ``for name in ...``, the position when ``for (.., name, ..) in ...``."""
    if isinstance(target, ast.Name):
        return -1 if target.id == name else None
    if isinstance(target, ast.Tuple):
        for index, element in enumerate(target.elts):
            if isinstance(element, ast.Name) and element.id == name:
                return index
    return None


def _walk(node: ast.AST, module: str, stack: list, calls: dict, setters: list) -> None:
    """Collects call sites (by callee name) and attribute setters, each with its stack of
    enclosing functions and their ``for`` loops."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
            _walk(child, module, [*stack, (child, [])], calls, setters)
            continue
        if isinstance(child, ast.For) and stack:
            inner = [*stack[:-1], (stack[-1][0], [*stack[-1][1], (child.target, child.iter)])]
            _walk(child, module, inner, calls, setters)
            continue
        if isinstance(child, ast.For):
            # a module-level loop: its variable is looked up like a function's
            holder = ast.FunctionDef(
                name="<module>", args=ast.arguments([], [], None, [], [], None, [])
            )
            _walk(child, module, [(holder, [(child.target, child.iter)])], calls, setters)
            continue
        if isinstance(child, ast.Call):
            callee = _last(child.func)
            if callee == "setattr" and len(child.args) >= 2:
                setters.append((module, child.args[0], child.args[1], stack))
            elif callee:
                calls.setdefault(callee, []).append((module, child, stack))
        elif isinstance(child, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = child.targets if isinstance(child, ast.Assign) else [child.target]
            for target in targets:
                if isinstance(target, ast.Attribute) and not _is_self(target.value):
                    setters.append((module, target.value, ast.Constant(target.attr), stack))
        _walk(child, module, stack, calls, setters)


def _is_self(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id in ("self", "cls")
