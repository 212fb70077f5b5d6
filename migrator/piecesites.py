"""Which top-level statements of a module can hold a site of an active rule, from ``ast``.

The piecewise path (:mod:`migrator.piecewise`) keeps a statement for itself when one of the
rules may act there.  An attribute, keyword or string site is read off the statement's tree
(an attribute's name, a keyword argument's name, a string's value: comments and other words
do not count); any string annotation keeps it.  A name site is a dotted expression whose
qualified name (its head resolved through
an import, as :meth:`migrator.context.Context.qualname` does) is one of the rules' names:
here every prefix of every dotted expression whose head a top-level import binds is resolved
through each of those imports (shadowing is ignored: that only keeps more), and a head imported
from a module whose every member a rule reads (its ``legacy_modules``) makes a site.  A head bound
inside the statement (a local import) keeps it anyway, as every statement with an import is.

Names that only plain top-level imports bind (``import jax.numpy as jnp``) are "cold": a
statement that reads one but holds no site of it can be left out, and its reads are checked
instead (:func:`migrator.piecewise.couples`): such an import must come out of the rounds
binding exactly what it bound.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import re
from typing import TYPE_CHECKING, Dict, FrozenSet, Iterable, List, Optional, Set, Tuple

from jaxmigrate.migrator.astfacts import dotted

if TYPE_CHECKING:  # pragma: no cover
    from jaxmigrate.migrator.piecescan import Scan
    from jaxmigrate.migrator.rule import Rule

# What an import binds a name to: ("import", dotted module, alias) or ("from", level, module,
# name, alias), "" for no alias.  Two runs bind a name alike when they give it the same specs.
Spec = Tuple[str, ...]


@dataclasses.dataclass(frozen=True)
class SiteWords:
    """What makes a site of the active rules (all of them: the later rounds look for each)."""

    attributes: FrozenSet[str]  # ``x.attr``
    keywords: FrozenSet[str]  # ``f(keyword=...)``
    # the strings the rules look for, found inside any string (CPython joins ``"a" "b"``,
    # whose parts LibCST reads one by one); None when there are none
    strings: Optional["re.Pattern[str]"]
    names: FrozenSet[str]  # qualified names (a name site's)
    # modules whose every member a rule reads (``Rule.legacy_modules``): a name imported from
    # one is a site wherever it is used
    modules: FrozenSet[str] = frozenset()


@functools.lru_cache(maxsize=8)
def site_words(rules: Tuple["Rule", ...]) -> SiteWords:
    attributes: Set[str] = set()
    keywords: Set[str] = set()
    strings: Set[str] = set()
    names: Set[str] = set()
    modules: Set[str] = set()
    for rule in rules:
        attributes |= rule.attributes
        keywords |= rule.keywords
        strings |= rule.strings
        names |= rule.names
        modules |= rule.legacy_modules
    ordered = sorted(strings, key=lambda s: (-len(s), s))
    pattern = re.compile("|".join(map(re.escape, ordered))) if ordered else None
    return SiteWords(
        frozenset(attributes), frozenset(keywords), pattern, frozenset(names), frozenset(modules)
    )


def import_specs(statement: ast.stmt) -> Optional[List[Tuple[str, Spec]]]:
    """The (bound name, spec) pairs of a plain import statement; None for any other statement
    (a star import included)."""
    if isinstance(statement, ast.Import):
        return [
            (a.asname or a.name.split(".", 1)[0], ("import", a.name, a.asname or ""))
            for a in statement.names
        ]
    if isinstance(statement, ast.ImportFrom):
        found: List[Tuple[str, Spec]] = []
        level, module = str(statement.level or 0), statement.module or ""
        for a in statement.names:
            if a.name == "*":
                return None
            found.append((a.asname or a.name, ("from", level, module, a.name, a.asname or "")))
        return found
    return None


def top_level_imports(statements: Iterable[ast.stmt]) -> Optional[Dict[str, List[Spec]]]:
    """Each name the plain top-level imports among ``statements`` bind, with its specs; None
    when one of them is a star import."""
    bound: Dict[str, List[Spec]] = {}
    for statement in statements:
        if type(statement) is ast.ImportFrom and any(a.name == "*" for a in statement.names):
            return None
        for name, spec in import_specs(statement) or ():
            bound.setdefault(name, []).append(spec)
    return bound


def qualnames(specs: List[Spec]) -> List[str]:
    """What a name bound by ``specs`` refers to, as the analysis spells it."""
    found = []
    for spec in specs:
        if spec[0] == "import":
            module, alias = spec[1], spec[2]
            found.append(module if alias else module.split(".", 1)[0])
        else:
            prefix = "." * int(spec[1]) + spec[2]
            found.append(prefix + spec[3] if prefix.endswith(".") else f"{prefix}.{spec[3]}")
    return found


def cold_names(
    units: List[List[ast.stmt]], scans: List["Scan"], bound: Dict[str, List[Spec]]
) -> FrozenSet[str]:
    """The names only plain top-level import statements bind at module level."""
    plain = [all(import_specs(s) is not None for s in statements) for statements in units]
    hot: Set[str] = set()
    for index, scan in enumerate(scans):
        if not plain[index]:
            hot |= scan.binds
    return frozenset(name for name in bound if name not in hot)


class Resolver:
    """Whether a statement may hold a site, read from its ``ast``: an attribute, a keyword or
    a string the rules look for; a dotted name that resolves through the top-level imports to
    one of their names or to a private JAX name (JAX902 reads those module-wide); a string
    annotation (LibCST resolves the names inside); or a name that makes resolution dynamic
    or that the engine reads module-wide (:data:`DYNAMIC`)."""

    def __init__(self, bound: Dict[str, List[Spec]], sites: SiteWords) -> None:
        self.heads = {name: qualnames(specs) for name, specs in bound.items()}
        self.sites = sites
        # the names an import binds to a member of a module whose every member is a site
        self.members = frozenset(
            name
            for name, heads in self.heads.items()
            if any(_in_module(head, sites.modules) for head in heads)
        )

    def holds_site(self, statements: Iterable[ast.AST]) -> bool:
        sites = self.sites
        attributes, keywords, strings = sites.attributes, sites.keywords, sites.strings
        stack: List[ast.AST] = list(statements)
        pop, push = stack.pop, stack.append
        while stack:
            node = pop()
            kind = type(node)
            if kind is ast.Attribute:
                if node.attr in attributes:  # type: ignore[attr-defined]
                    return True
                parts = dotted(node)
                if parts is not None:
                    if self._resolves(parts) or not attributes.isdisjoint(parts):
                        return True
                    continue
            elif kind is ast.Name:
                if node.id in DYNAMIC or self._resolves([node.id]):  # type: ignore[attr-defined]
                    return True
                continue
            elif kind is ast.Constant:
                value = node.value  # type: ignore[attr-defined]
                if type(value) is str and strings is not None and strings.search(value):
                    return True
                continue
            elif kind is ast.keyword:
                if node.arg in keywords:  # type: ignore[attr-defined]
                    return True
            elif kind is ast.arg or kind is ast.AnnAssign:
                if _string_in(node.annotation):  # type: ignore[attr-defined]
                    return True  # names LibCST resolves inside a string annotation
            elif kind in _DEFINITIONS:
                if node.name in DYNAMIC or _string_in(getattr(node, "returns", None)):  # type: ignore[attr-defined]
                    return True
            elif kind is ast.Global or kind is ast.Nonlocal:
                if not DYNAMIC.isdisjoint(node.names):  # type: ignore[attr-defined]
                    return True
            for child in ast.iter_child_nodes(node):
                push(child)
        return False

    def _resolves(self, parts: List[str]) -> bool:
        heads = self.heads.get(parts[0])
        if not heads:
            return False
        if parts[0] in self.members:
            return True
        names = self.sites.names
        for head in heads:
            qualname = head
            if qualname in names or _private(qualname):
                return True
            for part in parts[1:]:
                qualname = f"{qualname}.{part}"
                if qualname in names or _private(qualname):
                    return True
        return False


# Names that make name resolution dynamic, or that the rules and the clean-up read module-wide.
DYNAMIC = frozenset(
    {"__all__", "globals", "locals", "vars", "exec", "eval", "__dict__", "__import__"}
    | {"__builtins__", "__getattr__", "__name__", "__path__", "__spec__", "__loader__"}
)
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _private(qualname: str) -> bool:
    """A JAX name with a part that starts with an underscore (``jax._src``, ``jax.lax._foo``,
    dunders too: that only keeps more)."""
    return "._" in qualname and qualname.startswith(("jax.", "jaxlib."))


def _in_module(qualname: str, modules: FrozenSet[str]) -> bool:
    """``qualname`` is one of ``modules`` or inside one."""
    at = qualname.find(".")
    while at > 0:
        if qualname[:at] in modules:
            return True
        at = qualname.find(".", at + 1)
    return qualname in modules


def _string_in(annotation: Optional[ast.AST]) -> bool:
    if annotation is None:
        return False
    return any(
        isinstance(n, ast.Constant) and type(n.value) in (str, bytes) for n in ast.walk(annotation)
    )
