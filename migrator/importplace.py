"""Where an import a fix adds goes: into the group of its isort section, in the group's order.

isort, ruff and the style guides JAX projects follow split a module's imports into groups by
section (``__future__``, the standard library, third party, first party, relative), one
group after another with a blank line between, each sorted.  Appending ``import jax`` after
``from mypkg import util`` puts a third-party import among first-party ones.  This places a
new top-level import line:

* into the group that already imports from the same top-level package (``jax``); else into
  a group that holds only its section, else one that holds its section among others (the
  single group of a file that does not separate them);
* at its sorted place when the group is sorted, in the group's own manner: isort's default
  (``import x`` lines before ``from x import y`` lines, each by module) or
  ``force_sort_within_sections`` (by module alone, Google's style); else after the group's
  last import of the same package (``import jax`` itself before its first one, where every
  sorted order puts it), or after its last import of the same section or an earlier one
  (an unsorted group that ends with its relative imports keeps them last);
* when no group fits, as a group of its own between the groups of the sections before and
  after it.

First-party names come from the project (:mod:`migrator.importconfig`, via the settings);
without them every absolute import that is not the standard library counts as third party.
"""

from __future__ import annotations

import sys
from typing import Callable, Collection, Dict, List, Optional, Sequence, Set, Tuple, Union

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.migrator.scope import dotted_name

ImportNode = Union["cst.Import", "cst.ImportFrom"]
FUTURE, STDLIB, THIRD, FIRST, LOCAL = range(5)
_STDLIB = frozenset(
    getattr(sys, "stdlib_module_names", ())  # Python 3.10+; before, the common ones
    or """__future__ abc argparse ast asyncio builtins collections contextlib copy csv
    dataclasses datetime enum functools gc glob gzip hashlib importlib inspect io itertools
    json logging math multiprocessing numbers operator os pathlib pickle platform pprint
    random re shutil signal string struct subprocess sys tempfile textwrap threading time
    traceback types typing unittest warnings weakref zipfile""".split()
)


def import_of(statement: cst.CSTNode) -> Optional[ImportNode]:
    """The import a one-import statement line holds."""
    if (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], (cst.Import, cst.ImportFrom))
    ):
        return statement.body[0]
    return None


def module_of(node: ImportNode) -> str:
    """``a.b`` for ``import a.b as c`` and ``from a.b import c``; ``..x`` for a relative one."""
    if isinstance(node, cst.Import):
        return dotted_name(node.names[0].name) or ""
    dots = "." * len(node.relative)
    return dots + (dotted_name(node.module) or "" if node.module is not None else "")


def section_of(node: ImportNode, first_party: Collection[str]) -> int:
    module = module_of(node)
    if module.startswith("."):
        return LOCAL
    top = module.split(".")[0]
    if top == "__future__":
        return FUTURE
    if top in first_party:
        return FIRST
    if top in _STDLIB:
        return STDLIB
    return THIRD


def _default_key(node: ImportNode) -> Tuple:
    return (isinstance(node, cst.ImportFrom), module_of(node).lower())


def _within_key(node: ImportNode) -> Tuple:
    return (module_of(node).lower(), isinstance(node, cst.ImportFrom))


def _sorted(nodes: Sequence[ImportNode], key: Callable[[ImportNode], Tuple]) -> bool:
    keys = [key(n) for n in nodes]
    return all(a <= b for a, b in zip(keys, keys[1:]))


Group = List[Tuple[int, ImportNode]]  # (index in the body, the import) of one group


def _groups(body: Sequence[cst.CSTNode], end: int) -> List[Group]:
    """The top-level import lines before ``end``, by group: a blank line or a statement that
    is not an import ends a group."""
    groups: List[Group] = []
    previous = -2
    for index in range(end):
        statement = body[index]
        node = import_of(statement)
        if node is None or not isinstance(statement, cst.SimpleStatementLine):
            continue
        blank = any(line.comment is None for line in statement.leading_lines)
        if not groups or previous != index - 1 or blank:
            groups.append([])
        groups[-1].append((index, node))
        previous = index
    return groups


def _top(node: ImportNode) -> str:
    return module_of(node).split(".")[0]


def place(
    body: List[cst.CSTNode],
    line: cst.SimpleStatementLine,
    end: int,
    first_party: Collection[str],
) -> Optional[int]:
    """Inserts ``line`` (one new import) into ``body`` among the import lines before ``end``
    and returns where; None (``body`` untouched) when there are none."""
    new = import_of(line)
    groups = _groups(body, end)
    if new is None or not groups:
        return None
    mine, top = section_of(new, first_party), _top(new)

    def sections(group: Group) -> Set[int]:
        return {section_of(node, first_party) for _i, node in group}

    target = (
        next((g for g in groups if any(_top(node) == top for _i, node in g)), None)
        or next((g for g in groups if sections(g) == {mine}), None)
        or next((g for g in groups if mine in sections(g)), None)
    )
    if target is None:
        return _new_group(body, line, groups, mine, sections)
    key = _order_of([node for _i, node in target], _style(groups), first_party)
    index: Optional[int] = None
    if key is not None:
        index = next((i for i, node in target if key(node) > key(new)), None)
    else:
        same = [i for i, node in target if _top(node) == top]
        if same and isinstance(new, cst.Import) and module_of(new) == top:
            index = same[0]  # ``import jax`` before the rest of jax, as every sorted order has it
        elif same:
            index = same[-1] + 1
        else:  # after the group's last import of its section or one before (not among the
            # relative imports that end a group that mixes sections)
            index = 1 + max(i for i, node in target if section_of(node, first_party) <= mine)
    if index is None:
        index = target[-1][0] + 1
    futures = [i + 1 for i, node in target if section_of(node, first_party) == FUTURE]
    index = max([index, *futures])  # never before ``from __future__``
    first = body[index] if index < len(body) else None
    if index == target[0][0] and isinstance(first, cst.SimpleStatementLine):
        # the group's first line: the new one takes the lines above the group
        line = line.with_changes(leading_lines=first.leading_lines)
        body[index] = first.with_changes(leading_lines=())
    body.insert(index, line)
    return index


def _order_of(
    nodes: Sequence[ImportNode], order: Callable[[ImportNode], Tuple], first_party: Collection[str]
) -> Optional[Callable[[ImportNode], Tuple]]:
    """The key ``nodes`` are sorted by: ``order`` within sections (isort's), else ``order``
    alone (a group that mixes sections, sorted as one), else the same with the other order;
    None: not sorted.  Sections are tried with the project's first-party names and without
    them (a group that sorts its own package among the third-party ones, as Google's style
    does in one group)."""

    other = _within_key if order is _default_key else _default_key
    parties = (first_party, ()) if first_party else (first_party,)
    for plain in (order, other):
        for party in parties:

            def by_section(
                node: ImportNode, plain: Callable = plain, party: Collection[str] = party
            ) -> Tuple:
                return (section_of(node, party), *plain(node))

            if _sorted(nodes, by_section):
                return by_section
        if _sorted(nodes, plain):
            return plain
    return None


def settle_order(
    body: Sequence[cst.CSTNode],
    written: Callable[[cst.CSTNode], bool],
    pinned: Callable[[cst.CSTNode], bool],
    first_party: Collection[str],
    was_sorted: Optional[Callable[[Sequence[cst.CSTNode], Callable], bool]] = None,
) -> Dict[int, Tuple[cst.CSTNode, cst.CSTNode]]:
    """The top-level import lines to swap so that each line ``written`` by the migration
    stands at its sorted place in its group, when the group's other lines are sorted:
    ``{index: (line there now, line to put there)}`` (each keeps the leading lines of the
    place it goes to, so a group's blank line and header comments stay above the group).
    A group where a ``pinned`` line (one a finding points at) would move is left as it is:
    ``--check`` maps findings to the file's own lines by position.  ``was_sorted(rest,
    key)``: was the group of the file as read that holds the lines ``rest`` sorted by
    ``key`` too?  Where it was not, the user does not keep the group sorted, and a line
    rewritten in place stays where it stood."""
    groups = _groups(body, _end_of_imports(body))
    order = _style(groups)
    swaps: Dict[int, Tuple[cst.CSTNode, cst.CSTNode]] = {}
    for group in groups:
        mine = [(i, node) for i, node in group if written(body[i])]
        rest = [(i, node) for i, node in group if not written(body[i])]
        if not mine or not rest:
            continue
        if any(getattr(body[i], "leading_lines", ()) for i, _node in group[1:]):
            continue  # a comment or a blank line inside the group: it belongs to a line
        key = _order_of([node for _i, node in rest], order, first_party)
        if key is None or _sorted([node for _i, node in group], key):
            continue
        if was_sorted is not None and not was_sorted([body[i] for i, _node in rest], key):
            continue
        lines = [body[i] for i, _node in rest]
        for i, node in mine:
            keys = [key(n) for n in _imports_of(lines)]
            at = next((j for j, k in enumerate(keys) if k > key(node)), len(lines))
            lines.insert(at, body[i])
        if any(line is not body[i] and pinned(body[i]) for (i, _n), line in zip(group, lines)):
            continue
        for (i, _node), line in zip(group, lines):
            if line is not body[i]:
                leading = getattr(body[i], "leading_lines", ())
                swaps[i] = (body[i], line.with_changes(leading_lines=leading))
    return swaps


def import_groups(text: str) -> List[List[ImportNode]]:
    """The top-level import groups of the module ``text`` (as :func:`_groups` reads them: a
    blank line, a comment or another statement ends one), each import parsed alone; none
    where the text does not parse."""
    import ast

    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return []
    lines = text.splitlines(keepends=True)
    groups: List[List[ImportNode]] = []
    end = -1
    for statement in tree.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            break
        if not isinstance(statement, (ast.Import, ast.ImportFrom)):
            end = -1
            continue
        start, last = statement.lineno, statement.end_lineno or statement.lineno
        source = "".join(lines[start - 1 : last])
        try:
            node = import_of(cst.parse_statement(source))
        except Exception:  # noqa: BLE001  (two statements on a line, a continuation: unread)
            node = None
        if node is None:
            end = -1
            continue
        if start != end + 1 or not groups:
            groups.append([])
        groups[-1].append(node)
        end = last
    return groups


def sorted_by(nodes: Sequence[ImportNode], key: Callable[[ImportNode], Tuple]) -> bool:
    """Are ``nodes`` in the order of ``key``?"""
    return _sorted(nodes, key)


def _imports_of(lines: Sequence[cst.CSTNode]) -> List[ImportNode]:
    return [node for node in map(import_of, lines) if node is not None]


def _end_of_imports(body: Sequence[cst.CSTNode]) -> int:
    end = 0
    for index, statement in enumerate(body):
        if import_of(statement) is not None:
            end = index + 1
        elif isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            break
    return end


def _style(groups: List[Group]) -> Callable[[ImportNode], Tuple]:
    """isort's default order, unless the file's groups are sorted only by module alone."""
    default = within = 0
    for group in groups:
        nodes = [node for _i, node in group]
        if len(nodes) < 2:
            continue
        by_default, by_module = _sorted(nodes, _default_key), _sorted(nodes, _within_key)
        default += by_default and not by_module
        within += by_module and not by_default
    return _within_key if within > default else _default_key


def _new_group(
    body: List[cst.CSTNode],
    line: cst.SimpleStatementLine,
    groups: List[Group],
    mine: int,
    sections: Callable[[Group], Set[int]],
) -> int:
    """``line`` as a group of its own before the first group of a later section."""
    later = next((g for g in groups if min(sections(g)) > mine), None)
    if later is None:
        index = groups[-1][-1][0] + 1
        body.insert(index, line.with_changes(leading_lines=[cst.EmptyLine()]))
        return index
    index = later[0][0]
    first = body[index]
    if later is not groups[0] or not isinstance(first, cst.SimpleStatementLine):
        # the later group keeps its blank line (and its comments)
        body.insert(index, line.with_changes(leading_lines=[cst.EmptyLine()]))
        return index
    # the file's first import: the lines above it (a header) stay on top
    body[index] = first.with_changes(leading_lines=[cst.EmptyLine()])
    body.insert(index, line.with_changes(leading_lines=first.leading_lines))
    return index


# -- names of one ``from`` import ---------------------------------------------------------------
def by_type(name: str) -> Tuple:
    """ruff's and isort's default ``order-by-type``: CONSTANTS, Classes, then functions."""
    kind = 0 if name.isupper() and len(name) > 1 else 1 if name[:1].isupper() else 2
    return (kind, name.lower())


def _alphabetical(name: str) -> Tuple:
    return (name.lower(),)


def name_order(names: Sequence[str]) -> Optional[Callable[[str], Tuple]]:
    """The order ``names`` of one import are sorted in (None: not sorted)."""
    for key in (by_type, _alphabetical):
        keys = [key(n) for n in names]
        if all(a <= b for a, b in zip(keys, keys[1:])):
            return key
    return None
