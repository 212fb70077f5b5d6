"""Import management: add the imports fixes need, drop aliases nobody uses any more."""

from __future__ import annotations

from typing import Collection, Dict, Iterable, List, Optional, Sequence, Set, Tuple, Union

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.migrator.importplace import by_type, name_order, place
from jaxmigrate.migrator.scope import dotted_expr, dotted_name

ImportNode = Union["cst.Import", "cst.ImportFrom"]


def without_aliases(
    original: ImportNode, updated: ImportNode, alias_ids: Set[int]
) -> Union[ImportNode, cst.RemovalSentinel]:
    """``updated`` minus the aliases whose original nodes are in ``alias_ids``."""
    if isinstance(original.names, cst.ImportStar) or isinstance(updated.names, cst.ImportStar):
        return updated
    if len(original.names) != len(updated.names):  # another edit changed it: next round
        return updated
    kept = [new for old, new in zip(original.names, updated.names) if id(old) not in alias_ids]
    if len(kept) == len(updated.names):
        return updated
    if not kept:
        return cst.RemovalSentinel.REMOVE
    return with_fewer_names(updated, kept)


def with_fewer_names(updated: ImportNode, kept: List["cst.ImportAlias"]) -> ImportNode:
    """``updated`` importing only ``kept`` (at least one name, fewer than it had), laid out as
    a maintainer would cut it."""
    if isinstance(updated.names, cst.ImportStar):
        return updated
    kept = list(kept)
    parenthesized = isinstance(updated, cst.ImportFrom) and updated.lpar is not None
    if not parenthesized:
        kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return updated.with_changes(names=kept)
    # The last name left ends as the last name did: no ``(a, b, )``, nor a ``(a,`` whose
    # closing parenthesis is left alone on the next line.
    kept[-1] = kept[-1].with_changes(comma=updated.names[-1].comma)
    cut = updated.with_changes(names=kept)
    if not _has_comment(cut) and "\n" not in cst.Module(body=[]).code_for_node(cut):
        # what is left fits the line it starts on: no parentheses, as ``import a, b``
        kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return cut.with_changes(names=kept, lpar=None, rpar=None)
    return cut


def _has_comment(node: cst.CSTNode) -> bool:
    return "#" in cst.Module(body=[]).code_for_node(node)


def _is_docstring(statement: cst.CSTNode) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def _is_import_line(statement: cst.CSTNode) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and all(
        isinstance(small, (cst.Import, cst.ImportFrom)) for small in statement.body
    )


def insertion_index(body: Sequence[cst.CSTNode]) -> int:
    """After the docstring and the last top-level import that precedes any def or class."""
    index = 0
    for position, statement in enumerate(body):
        if position == 0 and _is_docstring(statement):
            index = 1
        elif _is_import_line(statement):
            index = position + 1
        elif isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            break
    return index


def _alias(name: str) -> cst.ImportAlias:
    return cst.ImportAlias(name=dotted_expr(name))


def _extend_from_import(statement: cst.ImportFrom, names: List[str]) -> cst.ImportFrom:
    existing = list(statement.names)  # type: ignore[arg-type]
    present = {dotted_name(alias.name) for alias in existing if alias.asname is None}
    new = [_alias(n) for n in names if n not in present]
    if not new:
        return statement
    order = name_order([dotted_name(alias.name) or "" for alias in existing])
    if order is not None and statement.lpar is None and not _has_comment(statement):
        # one line, sorted: the new names at their sorted places
        everything = existing + new
        everything.sort(key=lambda alias: order(dotted_name(alias.name) or ""))
        comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        everything = [alias.with_changes(comma=comma) for alias in everything[:-1]] + [
            everything[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        ]
        return statement.with_changes(names=everything)
    if statement.lpar is not None and len(existing) >= 2:
        separator = existing[-2].comma
        new = [alias.with_changes(comma=separator) for alias in new[:-1]] + [
            new[-1].with_changes(comma=existing[-1].comma)
        ]
        existing[-1] = existing[-1].with_changes(comma=separator)
    else:
        comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        existing[-1] = existing[-1].with_changes(comma=comma)
        new = [alias.with_changes(comma=comma) for alias in new[:-1]] + [new[-1]]
    return statement.with_changes(names=existing + new)


def add_imports(
    module: cst.Module,
    wanted: Iterable[Tuple[Optional[str], str]],
    first_party: Collection[str] = (),
) -> cst.Module:
    """Add ``import name`` (module None) and ``from module import name`` at the top level:
    into an existing ``from module import`` when there is one, else each into the group of
    its isort section (:mod:`migrator.importplace`; ``first_party``: the project's names)."""
    plain = sorted({name for module_name, name in wanted if module_name is None})
    froms: Dict[str, List[str]] = {}
    for module_name, name in wanted:
        if module_name is not None and name not in froms.setdefault(module_name, []):
            froms[module_name].append(name)
    body: List[cst.CSTNode] = list(module.body)
    for position, statement in enumerate(body):
        if not isinstance(statement, cst.SimpleStatementLine) or not _is_import_line(statement):
            continue
        if len(statement.body) != 1:
            continue
        small = statement.body[0]
        if (
            isinstance(small, cst.ImportFrom)
            and not small.relative
            and not isinstance(small.names, cst.ImportStar)
            and small.module is not None
            and dotted_name(small.module) in froms
        ):
            names = froms.pop(dotted_name(small.module))  # type: ignore[arg-type]
            body[position] = statement.with_changes(body=[_extend_from_import(small, names)])
    lines: List[cst.SimpleStatementLine] = [
        cst.SimpleStatementLine([cst.Import(names=[_alias(name)])]) for name in plain
    ]
    for module_name, names in froms.items():
        from_module = _alias(module_name).name
        lines.append(
            cst.SimpleStatementLine(
                [
                    cst.ImportFrom(
                        module=from_module, names=[_alias(n) for n in sorted(names, key=by_type)]
                    )
                ]
            )
        )
    # ``from x import a, b`` needs the separating commas.
    lines = [_with_commas(line) for line in lines]
    index = insertion_index(body)
    unplaced = []
    for line in lines:
        if place(body, line, index, first_party) is None:
            unplaced.append(line)
        else:
            index += 1
    lines = unplaced
    first = body[0] if body else None
    if (
        index == 0
        and isinstance(first, (cst.SimpleStatementLine, cst.BaseCompoundStatement))
        and lines
    ):
        # Keep the first statement's leading comments/blank lines above the new imports.
        lines[0] = lines[0].with_changes(leading_lines=first.leading_lines)
        body[0] = first.with_changes(leading_lines=())
    body[index:index] = lines
    return module.with_changes(body=body)


def _with_commas(line: cst.SimpleStatementLine) -> cst.SimpleStatementLine:
    small = line.body[0]
    if (
        isinstance(small, cst.ImportFrom)
        and isinstance(small.names, (list, tuple))
        and len(small.names) > 1
    ):
        comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        names = [alias.with_changes(comma=comma) for alias in small.names[:-1]] + [small.names[-1]]
        return line.with_changes(body=[small.with_changes(names=names)])
    return line
