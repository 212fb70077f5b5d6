"""The JAX a piece of code was written for (its *source*), as opposed to the JAX it must run on
after the migration (its *target*).

A behaviour change at release C (``process_allgather``'s default in 0.5.0, ``jax.make_mesh``'s
axis types in 0.9.0) is undone only where the code was written for a JAX before C and will run
on one at or after C.  What the code was written for comes, in this order, from:

* the user: ``--source-version`` or ``source-version`` in ``[tool.jaxmigrate]`` (decides alone);
* the file itself (:func:`evidence`): a reference to a name JAX removed in release R proves the
  code was written for a JAX before R; a reference to a name JAX added in release A proves it
  was written for A or later.  References under ``try: ... except ImportError`` or under a
  feature test (``if hasattr(...)``, a version check) are compatibility code and prove nothing;
* the project's ``jax`` requirement: ``jax==0.3.16`` or ``jax>=0.3.4`` states the JAX the code
  was written for (its lower bound; an upper bound, where stated, is the newest it knew).

The same evidence gives the *floor* of a migrated file: the oldest JAX on which every JAX name
it spells exists (:func:`floor_of`), from which the command line derives the default target.
A bound of it read from the words alone, before any parse, is :mod:`migrator.floorbound`'s.
"""

from __future__ import annotations

import ast
import dataclasses
from typing import (
    Callable,
    Dict,
    Iterator,
    List,
    Optional,
    Sequence,
    Set,
    Tuple,
)

from jaxmigrate.migrator.feature_tests import (
    OWN_HASATTR,
    own_hasattr,
    reads_feature_or_jax_version,
)
from jaxmigrate.migrator.version import Version, parse_version

# The first jax.Array release: no target starts before it (the rules write the jax.Array
# world), and code that still admits an older JAX was written for one (migrator.settings).
ARRAY_FLOOR = "0.4.1"

_GUARD_EXCEPTIONS = frozenset(
    {"ImportError", "ModuleNotFoundError", "AttributeError", "Exception", "BaseException"}
)


@dataclasses.dataclass(frozen=True)
class SourceRange:
    """The releases code was written for: ``lower``..``upper`` (either None: unknown)."""

    lower: Optional[Version]
    upper: Optional[Version]
    origin: str = ""  # where it comes from, as users read it

    def written_before(self, change: Version) -> Optional[bool]:
        """True: written for releases before ``change``; False: at or after it; None: the
        range holds both, or nothing is known."""
        if self.upper is not None and self.upper < change:
            return True
        if self.lower is not None and self.lower >= change:
            return False
        return None

    @property
    def known(self) -> bool:
        return self.lower is not None or self.upper is not None

    def describe(self) -> str:
        """``0.3.16``, ``0.4.13..0.4.38``, or ``unknown``."""
        low = _text(self.lower)
        high = _text(self.upper)
        if low is None and high is None:
            return "unknown"
        if low == high or high is None:
            return low or ""
        return f"{low or ''}..{high}"


def _text(version: Optional[Version]) -> Optional[str]:
    return None if version is None else ".".join(str(part) for part in version)


def source_range(text: Optional[str], origin: str = "") -> SourceRange:
    """``"0.3.16"`` (one release) or ``"0.4.13..0.4.38"`` as a :class:`SourceRange`; ``None``:
    unknown.  Raises ValueError for a malformed version."""
    if text is None:
        return SourceRange(None, None, origin)
    low, dots, high = text.partition("..")
    lower = parse_version(low) if low.strip() else None
    upper = parse_version(high) if high.strip() else (None if dots else lower)
    if lower is not None and upper is not None and upper < lower:
        raise ValueError(f"source range {text} is empty (the upper bound is older)")
    return SourceRange(lower, upper, origin)


@dataclasses.dataclass(frozen=True)
class Evidence:
    """What a file's own JAX references prove about the JAX it was written for.

    ``before``: the earliest release that removed a name the file uses (it was written for a
    JAX before it), with that name.  ``since``: the latest release that added a name the file
    uses, with that name (written for it or later; also the oldest JAX the file runs on)."""

    before: Optional[Tuple[Version, str]] = None
    since: Optional[Tuple[Version, str]] = None

    def written_before(self, change: Version) -> Optional[bool]:
        before = self.before is not None and self.before[0] <= change
        since = self.since is not None and self.since[0] >= change
        if before and not since:
            return True
        if since and not before:
            return False
        return None

    def reason(self, change: Version) -> str:
        """Why :meth:`written_before` answered as it did, for a message."""
        if self.written_before(change) and self.before is not None:
            return f"the file uses {self.before[1]}, removed in JAX {_text(self.before[0])}"
        if self.since is not None:
            return f"the file uses {self.since[1]}, added in JAX {_text(self.since[0])}"
        return ""


def evidence(
    tree: ast.Module, source: Optional[SourceRange] = None, written_for: bool = False
) -> Evidence:
    """The :class:`Evidence` of a parsed module: every JAX name it references outside
    compatibility code, looked up in JAX's API history.  ``source``: what the code is known
    to be written for (its requirement), which decides what a name JAX dropped and brought
    back means (:func:`_dates`).  ``written_for``: the question is what the code was written
    for, not the oldest JAX it runs on: a name a rename of the migration writes
    (``jax.extend.core.Primitive`` for ``jax.core.Primitive``) is no proof against the
    requirement, or a second run would read the first one's rewrites as the code's own age
    (equinox 0.9.2's JAX913 finding went quiet on the migrated tree)."""
    from jaxmigrate.migrator.rule_index import releases
    from jaxmigrate.rules._api_runs import last_run, renamed_to, reused  # (not the history)

    known = releases()
    newest = len(known) - 1
    before: Optional[Tuple[Version, str]] = None
    since: Optional[Tuple[Version, str]] = None
    references = list(jax_references(tree))
    for index, qualname in enumerate(references):
        run = last_run(qualname)  # the run of releases that reaches the newest
        if run is None:
            continue
        first, last = run
        if last < newest:
            removed = release_version(known[last + 1])
            if before is None or removed < before[0]:
                before = (removed, qualname)
        elif first > 0:
            added = release_version(known[first])
            if written_for and _before(source, added) and renamed_to(qualname):
                continue
            if _dates(qualname, added, references[index + 1 :], reused, source):
                if since is None or added > since[0]:
                    since = (added, qualname)
    return Evidence(before, since)


def _dates(
    qualname: str,
    added: Version,
    later: List[str],
    reused: Callable[[str], bool],
    source: Optional[SourceRange],
) -> bool:
    """Does a reference to ``qualname``, a name added in release ``added``, date the code at
    or after it?  Not for a name JAX had before too, gone in between, in code written for a
    JAX before ``added`` (``source``: oryx 0.2.2, on ``jax==0.2.26``, calls the
    ``batching.batch_subtrace`` JAX 0.10.0 removed, which 0.11.1 exports again: the code
    means the old one), nor where the code reads a member of it (``later``: the references
    sorted after it, among them its members): the member may be the old name's
    (``jax.ad.zeros_like_p``, the module alias's, not 0.10.0's namespace's)."""
    if not reused(qualname):
        return True
    if _before(source, added):
        return False
    prefix = qualname + "."
    return not any(other.startswith(prefix) for other in later)


def _before(source: Optional[SourceRange], release: Version) -> bool:
    """Is ``source`` known to end before ``release``?"""
    return source is not None and source.upper is not None and source.upper < release


def floor_of(text: str, source: Optional[SourceRange] = None) -> Optional[Tuple[Version, str]]:
    """The oldest JAX on which every JAX name ``text`` references (outside compatibility
    code) exists, with the name that sets it; None when the text does not parse or names
    nothing newer than the oldest release the history knows.  ``source``: as
    :func:`evidence` reads it."""
    noted = _noted.entry
    if noted is not None and noted[0] == text and noted[1] == source:
        return noted[2]
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    return evidence(tree, source).since


def floor_noted(text: str, source: Optional[SourceRange] = None) -> bool:
    """Is :func:`floor_of` ``text`` in hand, from the tree the engine parsed (no parse)?"""
    noted = _noted.entry
    return noted is not None and noted[0] == text and noted[1] == source


class _noted:
    """The floor of the last text the engine left unchanged, from the tree it had parsed
    (:func:`note_floor`): the survey asks for it next, and need not parse the text again."""

    # (text, source, floor): one tuple, set atomically
    entry: Optional[Tuple[str, Optional[SourceRange], Optional[Tuple[Version, str]]]] = None


def note_floor(text: str, tree: ast.Module, source: Optional[SourceRange] = None) -> None:
    """Remember :func:`floor_of` ``text`` (whose tree is ``tree``) for the next question."""
    _noted.entry = (text, source, evidence(tree, source).since)


def release_version(release: str) -> Version:
    """A release of the API history (``"0.4.13"``, ``"0.9.0.1"``) as a version of three parts."""
    parts = [int(p) for p in release.split(".")[:3]]
    return tuple(parts + [0] * (3 - len(parts)))  # type: ignore[return-value]


def jax_references(tree: ast.Module) -> Iterator[str]:
    """The qualified JAX names a module references (``jax.x.y`` through any import alias, and
    what it imports from ``jax``/``jaxlib``), outside compatibility code: the branches of a
    ``try`` that catches ImportError/AttributeError, of an ``if`` that tests a feature or a
    version, and an ``and``/``or`` with such a test before its last operand; nor the body of an
    ``if TYPE_CHECKING:``, which never runs (a type checker's view of a newer JAX: flax 0.12.12
    names ``hjx.HiPrim`` there, and ``hjx.VJPHiPrimitive`` where it runs on ``jax>=0.11.1``).  An
    over-approximation of resolution: a name bound by an import anywhere in the module is
    taken to mean that import everywhere."""
    aliases: Dict[str, Set[str]] = {}
    seen: Set[str] = set()
    imports, chains = _outside_compatibility_code(tree)
    for node in imports:
        bind_jax_import(node, aliases, seen)
    for parts in chains:
        for head in aliases.get(parts[0], ()):
            for end in range(2, len(parts) + 1):
                seen.add(".".join((head, *parts[1:end])))
    yield from sorted(seen)


def bind_jax_import(node: ast.AST, aliases: Dict[str, Set[str]], named: Set[str]) -> None:
    """What the import ``node`` binds to JAX: each bound name's qualified names into
    ``aliases``, and each module or name it imports into ``named`` (``from m import *``
    binds nothing that can be read)."""
    if type(node) is ast.Import:
        for alias in node.names:
            if is_jax_module(alias.name):
                bound = alias.asname or alias.name.split(".", 1)[0]
                aliases.setdefault(bound, set()).add(alias.name if alias.asname else bound)
                named.add(alias.name)
        return
    module = node.module  # type: ignore[attr-defined]
    if module and not node.level and is_jax_module(module):  # type: ignore[attr-defined]
        for alias in node.names:  # type: ignore[attr-defined]
            if alias.name != "*":
                qualname = f"{module}.{alias.name}"
                aliases.setdefault(alias.asname or alias.name, set()).add(qualname)
                named.add(qualname)


def is_jax_module(module: str) -> bool:
    return module in ("jax", "jaxlib") or module.startswith(("jax.", "jaxlib."))


_TRIES = (ast.Try, getattr(ast, "TryStar", ast.Try))
_IFS = (ast.If, ast.IfExp)


def _outside_compatibility_code(tree: ast.AST) -> Tuple[List[ast.AST], List[List[str]]]:
    """Every import, and the parts of the outermost attribute of every attribute chain on a
    name, outside compatibility code (whose subtrees are not entered), in one walk of the
    fields :func:`migrator.astfacts.iter_nodes` walks (none of the others holds a node)."""
    from jaxmigrate.migrator.astfacts import push_children

    imports: List[ast.AST] = []
    chains: List[List[str]] = []
    stack: List[ast.AST] = [tree]
    pop, push = stack.pop, stack.append
    Attribute, Name, Constant = ast.Attribute, ast.Name, ast.Constant
    while stack:
        node = pop()
        kind = type(node)
        if kind is Name or kind is Constant:
            continue  # (nothing below either)
        if kind is Attribute:
            parts = [node.attr]  # type: ignore[attr-defined]
            inner: ast.AST = node.value  # type: ignore[attr-defined]
            while type(inner) is Attribute:
                parts.append(inner.attr)
                inner = inner.value
            if type(inner) is Name:
                parts.append(inner.id)
                parts.reverse()
                chains.append(parts)
            else:
                push(inner)
            continue
        if kind is ast.Import or kind is ast.ImportFrom:
            imports.append(node)
            continue
        if kind in _TRIES and _guards(node):
            continue
        if kind in _IFS and feature_test(node.test):  # type: ignore[attr-defined]
            continue
        if kind is ast.If and _type_checking(node.test):  # type: ignore[attr-defined]
            stack.extend(node.orelse)  # type: ignore[attr-defined]
            continue
        if kind is ast.BoolOp and any(map(feature_test, node.values[:-1])):  # type: ignore
            continue  # ``hasattr(jax, "pxla") and jax.pxla.X``: a shim, as the analysis reads it
        push_children(node, push)
    return imports, chains


def _type_checking(test: ast.AST) -> bool:
    """``TYPE_CHECKING`` or ``typing.TYPE_CHECKING`` (any module's alias): true only while a
    type checker reads the code."""
    kind = type(test)
    return (kind is ast.Name and test.id == "TYPE_CHECKING") or (  # type: ignore[attr-defined]
        kind is ast.Attribute and test.attr == "TYPE_CHECKING"  # type: ignore[attr-defined]
    )


def _guards(node: ast.AST) -> bool:
    from jaxmigrate.migrator.astfacts import dotted  # (on use: start-up reads no ast)

    for handler in getattr(node, "handlers", ()):
        kinds: Sequence[ast.AST] = (
            handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        )
        for kind in kinds:
            if kind is None:
                return True  # a bare except
            parts = dotted(kind) if isinstance(kind, ast.Attribute) else None
            word = parts[-1] if parts else getattr(kind, "id", None)
            if word in _GUARD_EXCEPTIONS:
                return True
    return False


def feature_test(test: ast.AST) -> bool:
    """Does an ``if`` test (read with ``ast``) check for a feature or the JAX version, so that
    its branches are a shim?  The engine's rule (:mod:`migrator.feature_tests`)."""
    from jaxmigrate.migrator.astfacts import dotted, push_children  # (start-up reads no ast)

    chains: List[Sequence[str]] = []
    stack: List[ast.AST] = [test]
    pop, push = stack.pop, stack.append
    while stack:
        node = pop()
        kind = type(node)
        if kind is ast.Name:
            chains.append([node.id])  # type: ignore[attr-defined]
            continue
        if kind is ast.Attribute:
            parts = dotted(node)
            if parts is not None:
                chains.append(parts)
                continue
        if kind is ast.Call and own_hasattr(node):  # type: ignore[arg-type]
            chains.append(OWN_HASATTR)
            stack.extend(node.args[1:])  # type: ignore[attr-defined]
            stack.extend(node.keywords)  # type: ignore[attr-defined]
            continue
        push_children(node, push)  # (contexts and operators hold no name)
    return reads_feature_or_jax_version(chains)
