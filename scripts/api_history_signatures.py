"""The keyword parameters of JAX's public functions, release by release (for
``scripts/build_api_history.py``).

Read statically like the rest of the history.  A public name of a public module that is, or is
imported from, a module-level ``def`` (followed through ``from m import f [as g]`` and
``g = f`` within the release) records the names its callers may pass by keyword (its ordinary
and keyword-only parameters) and whether it takes ``**kwargs``.  A name defined more than once
(``if``/``else`` branches with different signatures), a class, a callable object
(``jnp.add`` is a ufunc) or anything it cannot follow records nothing for that release: the
history then knows nothing of its keywords there.  Decorators are taken to keep the signature
(``jit``, ``partial(jit, static_argnames=...)``, ``_wraps(np.f)``, ``api_boundary`` do).
"""

from __future__ import annotations

import ast
from typing import Dict, FrozenSet, List, Optional, Set, Tuple

from scripts.api_history_classes import _Module, _top_level

# Accepted keyword names, and whether ``**kwargs`` takes any other.
Signature = Tuple[FrozenSet[str], bool]


class _Index:
    """One module's top-level functions, with the imports and aliases ``_Module`` reads."""

    def __init__(self, module: str, tree: ast.Module, is_package: bool) -> None:
        bindings = _Module(module, tree, is_package)
        self.imports = {
            name: (source, attr)
            for name, (source, attr) in bindings.imports.items()
            if attr is not None
        }
        self.aliases = {
            name: value.id
            for name, value in bindings.aliases.items()
            if isinstance(value, ast.Name)
        }
        self.functions: Dict[str, List[ast.AST]] = {}
        self.rebound: Set[str] = set()
        for stmt in _top_level(tree.body):
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.functions.setdefault(stmt.name, []).append(stmt)
            elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                for target in targets:
                    if isinstance(target, ast.Name) and target.id not in self.aliases:
                        self.rebound.add(target.id)  # ``f = something(...)``: not a def


def signatures(
    trees: Dict[str, ast.Module], packages: Set[str], public: Dict[str, Set[str]]
) -> Dict[str, Signature]:
    """``module.name`` -> its signature, for the public names of the public modules that are
    (or import) a single module-level ``def``."""
    indexes: Dict[str, _Index] = {}

    def index(module: str) -> Optional[_Index]:
        if module not in indexes and module in trees:
            indexes[module] = _Index(module, trees[module], module in packages)
        return indexes.get(module)

    def resolve(module: str, name: str, depth: int = 0) -> Optional[ast.AST]:
        info = index(module)
        if info is None or depth > 8 or name in info.rebound:
            return None
        defs = info.functions.get(name, [])
        if len(defs) == 1 and name not in info.imports and name not in info.aliases:
            return defs[0]
        if defs:
            return None  # defined twice, or also imported: which one runs is not known
        if name in info.imports:
            source, attr = info.imports[name]
            return resolve(source, attr, depth + 1)
        if name in info.aliases:
            return resolve(module, info.aliases[name], depth + 1)
        return None

    found: Dict[str, Signature] = {}
    for module, names in public.items():
        for name in names:
            node = resolve(module, name)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                arguments = node.args
                keywords = frozenset(a.arg for a in [*arguments.args, *arguments.kwonlyargs])
                found[f"{module}.{name}"] = (keywords, arguments.kwarg is not None)
    return found
