"""Which lines of a migrated module stop it at import on some release of the target range.

"Done" is a module that imports, not one whose every line has a finding: a finding on a line
the module runs when it is imported (``from jax.experimental import host_callback`` at the
top of ott-jax 0.3.1's ``decomposition.py``) means the migrated package still dies at
``import`` there, whatever else was fixed.  The run says so in its summary, file by file, so
that a reviewer knows the migration is not finished (:func:`blockers`).

What runs at import, read with ``ast``: the module's statements and, inside them, what is
evaluated as they run: class bodies, decorators, default values and annotations (unless the
module has ``from __future__ import annotations``), but no function or lambda body, and
nothing under ``if TYPE_CHECKING:``, ``if __name__ == "__main__":``, a feature or version
test, or a ``try`` that catches ImportError or AttributeError (compatibility code, as the
floor reads it: :mod:`migrator.source`).  A JAX name read there through a module-level import
is looked up in the API history; one some release of the target range lacks, on a line that
has a finding, is a blocker.  Only lines with a finding count: the rules say what to do there.
"""

from __future__ import annotations

import ast
import functools
import re
from typing import TYPE_CHECKING, Dict, FrozenSet, Iterable, List, Optional, Set, Tuple

from jaxmigrate.migrator.version import Version

if TYPE_CHECKING:  # pragma: no cover
    from jaxmigrate.migrator.diagnostics import Diagnostic
    from jaxmigrate.migrator.settings import Settings

# (line, the JAX name, the releases of the range that lack it: "0.8.0+", "before 0.4.25", or ""
# for all of them)
Blocker = Tuple[int, str, str]


def blockers(
    text: str, findings: Iterable["Diagnostic"], target: Version, upper: Optional[Version]
) -> List[Blocker]:
    """The lines of ``text`` (a module) with a finding that read, while the module is
    imported, a JAX name some release of ``target``..``upper`` lacks: one per line, in line
    order, with the first such name on it, or one no release of the range has."""
    lines = {finding.line for finding in findings if finding.code not in _NEVER_ABSENT}
    if not lines or "jax" not in text:
        return []
    from jaxmigrate.rules._api_history import history

    lines = _may_name_one(text, lines, _missing_words(target, upper))
    if not lines:
        return []  # (no parse: most findings are on lines that name nothing missing)
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return []
    found: Dict[int, Blocker] = {}
    for line, qualname in _read_at_import(tree, lines):
        if line in found and not found[line][2]:
            continue  # (a name on no release of the range: nothing says more)
        absence = history().absence(qualname, target, upper)
        if absence is None:
            continue
        if absence.never:  # (``jax.ad`` is back from 0.10.0, ``jax.ad.zeros_like_p`` is not)
            found[line] = (line, qualname, "")
        elif line in found:
            continue
        elif absence.removed_in is not None:
            found[line] = (line, qualname, f"{absence.removed_in}+")
        elif absence.added_in is not None:
            found[line] = (line, qualname, f"before {absence.added_in}")
    return [found[line] for line in sorted(found)]


# Findings never about a public name some release lacks: a private name (the API history holds
# none), a change of behaviour, pmap's maintenance mode.  Their lines are not read (most of a
# modern project's findings are private imports).
_NEVER_ABSENT = frozenset({"JAX902", "JAX503", "JAX804"})
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@functools.lru_cache(maxsize=16)
def _missing_words(target: Version, upper: Optional[Version]) -> FrozenSet[str]:
    """The last parts of the names some release of the range lacks whose parent it has
    throughout: a reference to any missing name spells one of them (or its import does)."""
    from jaxmigrate.rules._api_history import history

    return frozenset(q.rpartition(".")[2] for q in history().first_missing(target, upper))


def _may_name_one(text: str, lines: Set[int], words: FrozenSet[str]) -> Set[int]:
    """Those of ``lines`` (of ``text``) that spell one of ``words``."""
    split = text.splitlines()
    return {
        line
        for line in lines
        if 0 < line <= len(split) and not words.isdisjoint(_IDENTIFIER.findall(split[line - 1]))
    }


def located(
    text: str, output: str, findings: List["Diagnostic"], settings: "Settings", as_read: bool
) -> List[Blocker]:
    """:func:`blockers` of ``output`` (the migrated ``text``) for the run's target, at the
    lines of ``text`` where ``as_read`` (as the findings are moved there)."""
    found = blockers(output, findings, settings.target, settings.upper)
    if not found or not as_read:
        return found
    from jaxmigrate.migrator.diagnostics import Diagnostic
    from jaxmigrate.migrator.linemap import as_read as moved_to

    marks = moved_to([Diagnostic("", "", line, 1, "") for line, _, _ in found], text, output)
    return [(mark.line, name, releases) for mark, (_, name, releases) in zip(marks, found)]


def _read_at_import(tree: ast.Module, lines: Set[int]) -> List[Tuple[int, str]]:
    """(line, qualified JAX name) of each reference made while the module is imported, on one
    of ``lines``: each import of a JAX module or name, and each prefix of an attribute chain
    on a name a module-level import binds to JAX (shortest first)."""
    from jaxmigrate.migrator.source import bind_jax_import

    postponed = postponed_annotations(tree)
    aliases: Dict[str, Set[str]] = {}
    named: Set[str] = set()
    run = _statements_run(tree.body)
    for node, _header in run:  # (what a module-level import binds, wherever it stands)
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            bind_jax_import(node, aliases, named)
    found: List[Tuple[int, str]] = []
    for node, header in run:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:  # (at its own line where the statement spans several)
                line = getattr(alias, "lineno", node.lineno)
                at = line if line in lines else node.lineno if node.lineno in lines else 0
                if at:
                    one = node.__class__(**{**vars(node), "names": [alias]})
                    imported: Set[str] = set()
                    bind_jax_import(one, {}, imported)
                    found.extend((at, q) for q in sorted(imported, key=len))
            continue
        for expr in _attributes_run(_evaluated(node, header, postponed)):
            if expr.lineno in lines:
                found.extend((expr.lineno, q) for q in _chain_names(expr, aliases))
    return found


def postponed_annotations(tree: ast.Module) -> bool:
    """``from __future__ import annotations``: no annotation is evaluated."""
    return any(
        isinstance(node, ast.ImportFrom)
        and node.module == "__future__"
        and any(alias.name == "annotations" for alias in node.names)
        for node in tree.body
    )


def _statements_run(body: List[ast.stmt]) -> List[Tuple[ast.stmt, bool]]:
    """The statements of ``body`` (a module's) that run at import, with those nested in the
    blocks and class bodies that run, each with whether only its header counts (a block
    whose body is listed apart: an ``if``, ``with``, ``for``, ``while``)."""
    from jaxmigrate.migrator.source import _guards, _type_checking, feature_test

    found: List[Tuple[ast.stmt, bool]] = []
    stack: List[ast.stmt] = list(reversed(body))
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If):
            if feature_test(node.test):
                continue  # (both branches: compatibility code)
            if _main_guard(node.test) or _type_checking(node.test):
                stack.extend(reversed(node.orelse))
                continue
            found.append((node, True))
            stack.extend(reversed([*node.body, *node.orelse]))
        elif isinstance(node, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            if not _guards(node):
                handlers = [s for h in node.handlers for s in h.body]  # type: ignore[attr-defined]
                blocks = [*node.body, *handlers, *node.orelse, *node.finalbody]  # type: ignore[attr-defined]
                stack.extend(reversed(blocks))
        elif isinstance(node, (ast.With, ast.For, ast.While)):
            found.append((node, True))
            stack.extend(reversed([*node.body, *getattr(node, "orelse", [])]))
        else:
            found.append((node, False))
            if isinstance(node, ast.ClassDef):
                stack.extend(reversed(node.body))
    return found


def _main_guard(test: ast.AST) -> bool:
    """``if __name__ == "__main__":`` (either way round)."""
    if not (isinstance(test, ast.Compare) and len(test.comparators) == 1):
        return False
    sides = [test.left, test.comparators[0]]
    return any(isinstance(s, ast.Name) and s.id == "__name__" for s in sides) and any(
        isinstance(s, ast.Constant) and s.value == "__main__" for s in sides
    )


def _evaluated(node: ast.stmt, header: bool, postponed: bool) -> List[ast.AST]:
    """What running ``node`` evaluates: a block header's own parts, a ``def``'s decorators,
    defaults and (unless ``postponed``) annotations, a ``class``'s decorators, bases and
    keywords (its body is listed apart), every other statement whole."""
    if header:
        if isinstance(node, (ast.If, ast.While)):
            return [node.test]
        if isinstance(node, ast.For):
            return [node.iter]
        return [item.context_expr for item in node.items]  # type: ignore[attr-defined]
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        args = node.args
        parts: List[ast.AST] = [*node.decorator_list, *args.defaults]
        parts += [default for default in args.kw_defaults if default is not None]
        if not postponed:
            every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
            parts += [a.annotation for a in every if a is not None and a.annotation is not None]
            parts += [node.returns] if node.returns is not None else []
        return parts
    if isinstance(node, ast.ClassDef):
        return [*node.decorator_list, *node.bases, *(k.value for k in node.keywords)]
    if isinstance(node, ast.AnnAssign) and postponed:
        return [node.value] if node.value is not None else []
    return [node]


def _attributes_run(parts: List[ast.AST]) -> List[ast.Attribute]:
    """The outermost attribute chains in ``parts``, not below a ``lambda``."""
    found: List[ast.Attribute] = []
    stack = list(parts)
    while stack:
        item = stack.pop()
        if isinstance(item, ast.Lambda):
            continue
        if isinstance(item, ast.Attribute):
            found.append(item)
            continue
        stack.extend(ast.iter_child_nodes(item))
    return found


def _chain_names(expr: ast.expr, aliases: Dict[str, Set[str]]) -> List[str]:
    """The JAX names an attribute chain ``head.a.b`` spells through the imports (each prefix,
    shortest first), and those its inner expressions spell (``f(jax.x).y``)."""
    parts: List[str] = []
    inner: ast.expr = expr
    while isinstance(inner, ast.Attribute):
        parts.append(inner.attr)
        inner = inner.value
    if not isinstance(inner, ast.Name):
        found: List[str] = []
        for child in ast.walk(inner):
            if isinstance(child, ast.Attribute):
                found.extend(_chain_names(child, aliases))
        return found
    parts.reverse()
    names: List[str] = []
    for head in sorted(aliases.get(inner.id, ())):
        names.extend(".".join((head, *parts[:end])) for end in range(1, len(parts) + 1))
    return names
