"""Giving LibCST only the top-level statements of a module that can change.

LibCST's parse is most of what a file with a fix costs, and its native parser peaks at about
740 bytes of memory per source byte (a 6 MB generated file with one legacy line would need
4.5 GB parsed whole).  When every rule the gates passed reads only its own sites
(:attr:`migrator.rule.Rule.whole_module` is False), the engine splits the module at its
top-level statements (from CPython's tree, which gate 2 already made) and keeps:

- the first statement (a docstring decides where imports go), every statement with an import
  anywhere inside (also in a ``try``/``if`` block, kept whole), ``__all__``, and any statement
  that names ``globals``, ``locals``, ``vars``, ``exec``, ``eval``, ``__dict__`` ...;
- every statement that may hold a site of an active rule (the later rounds look for every
  active rule's sites): a word that makes an attribute, keyword, string or string annotation
  site, or a dotted name that resolves through an import to one of the rules' names or to a
  private JAX name (:mod:`migrator.piecesites`);
- the first statement whose block starts an indented line (LibCST's ``default_indent``),
  unless it defines something: then its run's marker is a ``def`` whose body carries that
  indentation;
- then, to a fixed point, every statement that shares a module-level name that some
  statement binds with one kept (:mod:`migrator.piecescan`), except the names only plain
  top-level imports bind: name resolution and the uses of every other binding are exactly
  what they would be in the whole module.  Reads of those imports' names by the statements
  left out are checked instead: the migrated imports must bind them as they did.

Each run of statements left out becomes one marker line (a ``def`` when the run defines
something, where imports stop being looked for, of two lines where it carries the first
indentation; else ``pass``), the blank and comment lines around it stay.  The reduced module
goes through the unchanged rounds, and the output is spliced: each marker gives way to its
run, byte for byte.  Positions are moved back by the lines each run took.

Whatever cannot be shown equivalent falls back to parsing the whole module: a marker name in
the source, a construct the scan does not model, a star import, text that does not split
into whole lines, a rule that reads the whole module called on any site, a hook that asks
for a name a statement left out binds or reads (or for the whole module), migrated
statements that share a module-level name with those left out (a fix wrote it) or that bind
an import's name otherwise than it was, an indent LibCST would infer differently, any error,
or a marker that does not come back as written.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import re
from typing import Dict, FrozenSet, Iterable, List, Optional, Set, Tuple

from jaxmigrate.migrator.piecemembers import MemberRun, line_units, member_runs
from jaxmigrate.migrator.piecescan import Scan, Unsure, bound_anywhere
from jaxmigrate.migrator.piecesites import (
    Resolver,
    SiteWords,
    Spec,
    cold_names,
    import_specs,
    top_level_imports,
)

# Files longer than this may go piecewise: below it, scanning the statements costs about what
# leaving some out saves (bench/run.py's legacy corpus, per file size).
PIECEWISE_CHARS = 4_000
# A module longer than this is big: gate 2 reads it in pieces, and a run hands its facts to the
# next run on the same text (:mod:`migrator.handoff`).
BIG_CHARS = 1_000_000

_MARKER = "__jm_piece_"
_BUILTINS = frozenset(dir(builtins))
# Characters str.splitlines breaks lines at, besides "\n" and "\r" (the engine's passes count
# lines both ways: only a file without them gives the same numbers in both paths).
_OTHER_BREAKS = re.compile("[\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
_GAP = re.compile(r"[ \t\f]*(#[^\r\n]*)?\r?\n?\Z")
_INDENTED_COMMENT = re.compile(r"[ \t\f]+#")


class NotEquivalent(Exception):
    """The piecewise run cannot be shown to give what the whole module would."""


@dataclasses.dataclass
class Pieces:
    """A module reduced to the statements that may change, and how to put it back."""

    text: str  # the reduced module: kept statements, the lines between, marker lines
    runs: List[str]  # the text of each run left out, in order
    markers: List[str]  # the line standing for each run (with the run's line ending)
    dropped_binds: FrozenSet[str]  # module-level names the runs bind
    dropped_reads: FrozenSet[str]  # module-level names the runs read
    indent: Optional[str]  # the file's first indentation (LibCST's default_indent), if any
    # what the kept statements share with the runs (migrated, they must share no more)
    shared: "Sharing" = dataclasses.field(default_factory=lambda: Sharing())
    quiet: bool = True  # no run spells "jax"
    # the names the runs bind in any scope (a rule may ask whether a name is free anywhere)
    bound_anywhere: FrozenSet[str] = frozenset()

    @property
    def imports_read(self) -> FrozenSet[str]:
        """The names of the module-level imports (only plain imports bind them) the runs
        may read."""
        return frozenset(name for name, _specs in self.shared.imports)

    def splice(self, output: str) -> Optional[str]:
        """``output`` (of the reduced module) with each marker line given back its run; None
        when a marker is not found where it can only be, whole, in order."""
        parts: List[str] = []
        cursor = 0
        for marker, run in zip(self.markers, self.runs):
            at = output.find(marker, cursor)
            if at < 0 or (at and output[at - 1] != "\n"):
                return None
            if not marker.endswith("\n") and at + len(marker) != len(output):
                return None
            parts += [output[cursor:at], run]
            cursor = at + len(marker)
        parts.append(output[cursor:])
        return "".join(parts)

    def line_map(self, text: str) -> "LineMap":
        """Lines of ``text`` (the reduced module or its output) as lines once spliced."""
        shifts: List[Tuple[int, int, int]] = []
        cursor, line = 0, 1
        for marker, run in zip(self.markers, self.runs):
            at = text.find(marker, cursor)
            if at < 0:
                raise NotEquivalent("a marker went missing")
            line += text.count("\n", cursor, at)
            cursor = at
            taken = run.count("\n") + (0 if run.endswith("\n") else 1)
            span = marker.count("\n") + (0 if marker.endswith("\n") else 1)
            shifts.append((line, taken - span, span))
        return LineMap(shifts)


@dataclasses.dataclass
class LineMap:
    # (first line of a marker, lines its run adds, lines the marker takes)
    shifts: List[Tuple[int, int, int]]

    def __call__(self, line: int) -> int:
        if line <= 0:
            return line
        moved = line
        for at, extra, span in self.shifts:
            if at > line:
                break
            if line < at + span:
                raise NotEquivalent("a position on a marker line")
            moved += extra
        return moved


def reduce(
    text: str,
    tree: ast.Module,
    sites: SiteWords,
    memo: Optional[Dict[str, object]] = None,
) -> Optional[Pieces]:
    """The module ``text`` (whose tree is ``tree``) reduced to the statements that may change,
    given what makes a site of an active rule (:func:`migrator.piecesites.site_words`); None
    when it cannot be split safely or nothing would be left out.  ``memo``: where the
    statements' scans, which depend on the tree alone, are kept for another call on the same
    tree."""
    if _MARKER in text or text.startswith("\ufeff") or not tree.body:
        return None
    if text.count("\r") != text.count("\r\n") or _OTHER_BREAKS.search(text):
        return None  # a lone carriage return, or what str.splitlines also breaks at
    starts = line_starts(text)
    units = _units(tree)
    if units is None or not _splits_cleanly(text, starts, units):
        return None
    scans = _scans(units, {} if memo is None else memo)
    if scans is None:
        return None
    bound = top_level_imports(tree.body)
    if bound is None:
        return None  # a star import: any name may be bound by it
    statements = [unit[2] for unit in units]
    cold = cold_names(statements, scans, bound)
    resolver = Resolver(bound, sites)
    first_block = _first_block(units, text, starts)
    kept = _initial(units, scans, resolver, first_block)
    ignored = _unresolved(scans, cold)
    _close(scans, kept, ignored)
    relevant = frozenset(name for scan in scans for name in scan.binds if name not in ignored)
    opened = _open_classes(units, kept, text, starts, resolver, relevant)
    if all(kept) and not opened:
        return None
    return _build(text, starts, units, scans, kept, cold, opened, first_block)


def _open_classes(
    units: List[Unit],
    kept: List[bool],
    text: str,
    starts: List[int],
    resolver: Resolver,
    relevant: FrozenSet[str],
) -> Dict[int, Tuple[List[MemberRun], ast.ClassDef]]:
    """The kept top-level classes some of whose methods can be left out
    (:mod:`migrator.piecemembers`), by unit: the runs, and the class the reduced module holds."""
    opened: Dict[int, Tuple[List[MemberRun], ast.ClassDef]] = {}
    for index, (unit, keep) in enumerate(zip(units, kept)):
        statements = unit[2]
        if not keep or index == 0 or len(statements) != 1:
            continue
        if not isinstance(statements[0], ast.ClassDef):
            continue
        runs, reduced = member_runs(statements[0], text, starts, resolver, relevant)
        if runs and reduced is not None:
            opened[index] = (runs, reduced)
    return opened


def line_starts(text: str) -> List[int]:
    """The offset of each line of ``text`` (lines end at "\\n"; a final one, if the text ends
    with a line break, starts at its end)."""
    starts = [0]
    at = text.find("\n")
    while at >= 0:
        starts.append(at + 1)
        at = text.find("\n", at + 1)
    return starts


def _at(starts: List[int], line: int, text: str) -> int:
    """Offset of 0-based ``line`` (the end of the text past the last one)."""
    return starts[line] if line < len(starts) else len(text)


Unit = Tuple[int, int, List[ast.stmt]]  # 0-based first line, line after the last, statements
Block = Tuple[int, str]  # the unit holding the first indented block, and its indentation


def _units(tree: ast.Module) -> Optional[List[Unit]]:
    """The top-level statements grouped into whole lines (``a; b`` share one)."""
    return line_units(tree.body, 0)


def _splits_cleanly(text: str, starts: List[int], units: List[Unit]) -> bool:
    """Only blank and comment lines between the statements, and no statement ending in a
    backslash continuation."""
    previous = 0
    for first, end, _statements in units:
        for line in range(previous, first):
            if not _GAP.match(text, starts[line], _at(starts, line + 1, text)):
                return False
        last = text[starts[end - 1] : _at(starts, end, text)].rstrip("\r\n")
        if last.endswith("\\"):
            return False
        previous = end
    return True


def _scans(units: List[Unit], memo: Dict[str, object]) -> Optional[List[Scan]]:
    """Each unit's scan (read only once made), or None when a statement is not modelled."""
    if "scans" not in memo:
        try:
            memo["scans"] = [_scan(statements) for _first, _end, statements in units]
        except (Unsure, RecursionError):
            memo["scans"] = None
    return memo["scans"]  # type: ignore[return-value]


def _scan(statements: List[ast.stmt]) -> Scan:
    scan = Scan.of(statements[0])
    for statement in statements[1:]:
        more = Scan.of(statement)
        scan.reads |= more.reads
        scan.binds |= more.binds
        scan.imported |= more.imported
        scan.imports = scan.imports or more.imports
        scan.defines = scan.defines or more.defines
    return scan


def _initial(
    units: List[Unit], scans: List[Scan], resolver: Resolver, first_block: Optional[Block]
) -> List[bool]:
    """The statements kept for themselves (see the module's docstring)."""
    kept = [
        index == 0 or scan.imports or resolver.holds_site(units[index][2])
        for index, scan in enumerate(scans)
    ]
    if first_block is not None and not scans[first_block[0]].defines:
        kept[first_block[0]] = True  # (a def or class left out: its marker keeps the indent)
    return kept


def _first_block(units: List[Unit], text: str, starts: List[int]) -> Optional[Block]:
    """The unit holding the module's first indented block, and that block's indentation
    (what LibCST takes for the module's ``default_indent``)."""
    for index, (_first, _end, statements) in enumerate(units):
        for statement in statements:
            found = _indentation(statement, text, starts)
            if found is not None:
                return index, found
    return None


def _indentation(statement: ast.stmt, text: str, starts: List[int]) -> Optional[str]:
    """The indentation of the first block of ``statement`` that starts a line of its own."""
    blocks = [getattr(statement, field, None) for field in ("body", "orelse", "finalbody")]
    blocks += [handler.body for handler in getattr(statement, "handlers", ())]
    blocks += [case.body for case in getattr(statement, "cases", ())]
    best: Optional[Tuple[int, str]] = None
    for block in blocks:
        if not isinstance(block, list) or not block or not isinstance(block[0], ast.stmt):
            continue
        inner = block[0]
        line = starts[inner.lineno - 1]
        lead = text[line : line + inner.col_offset]
        if lead and not lead.strip(" \t\f") and (best is None or inner.lineno < best[0]):
            best = (inner.lineno, lead)
    return best[1] if best is not None else None


def _unresolved(scans: List[Scan], cold: FrozenSet[str]) -> FrozenSet[str]:
    """The module-level names whose bindings the reduced module need not see whole: the
    ``cold`` ones (only plain imports bind them), and those no import binds anywhere and that
    are not builtins (nothing resolves them to a JAX name, nor asks whether a builtin is
    shadowed).  Their sharing with the runs is checked instead (:func:`couples`)."""
    bound: Set[str] = set()
    imported: Set[str] = set()
    for scan in scans:
        bound |= scan.binds
        imported |= scan.imported
    return frozenset(bound - (imported - cold) - _BUILTINS)


def _close(scans: List[Scan], kept: List[bool], ignored: FrozenSet[str]) -> None:
    """Keep, to a fixed point, every statement sharing a module-level name (that some
    statement binds, other than the ``ignored`` ones) with a kept one."""
    bound_by: Dict[str, List[int]] = {}
    for index, scan in enumerate(scans):
        for name in scan.binds:
            if name not in ignored:
                bound_by.setdefault(name, []).append(index)
    users: Dict[str, List[int]] = {name: [] for name in bound_by}
    for index, scan in enumerate(scans):
        for name in scan.reads | scan.binds:
            if name in users:
                users[name].append(index)
    work = [index for index, keep in enumerate(kept) if keep]
    done: Set[str] = set()
    while work:
        scan = scans[work.pop()]
        for name in scan.reads | scan.binds:
            if name in users and name not in done:
                done.add(name)
                for other in users[name]:
                    if not kept[other]:
                        kept[other] = True
                        work.append(other)


def _build(
    text: str,
    starts: List[int],
    units: List[Unit],
    scans: List[Scan],
    kept: List[bool],
    cold: FrozenSet[str],
    opened: Dict[int, Tuple[List[MemberRun], ast.ClassDef]],
    first_block: Optional[Block],
) -> Pieces:
    # what is left out, in the file's order: (first line, line after the last, the marker's
    # indentation, whether it defines something)
    drops: List[Tuple[int, int, str, bool]] = []
    dropped: Set[str] = set()
    dropped_reads: Set[str] = set()
    left_out: List[ast.stmt] = []
    index = 0
    while index < len(units):
        if kept[index]:
            index += 1
            continue
        begin = index
        while index < len(units) and not kept[index]:
            dropped |= scans[index].binds
            dropped_reads |= scans[index].reads
            left_out.extend(units[index][2])
            index += 1
        first, end = units[begin][0], units[index - 1][1]
        upto = units[index][0] if index < len(units) else len(starts)
        for line in range(end, upto):  # comment lines LibCST would give the run's block
            if _INDENTED_COMMENT.match(text, starts[line], _at(starts, line + 1, text)):
                end = line + 1
        drops.append((first, end, "", any(scans[u].defines for u in range(begin, index))))
    anywhere: Set[str] = bound_anywhere(left_out)
    for runs, _reduced in opened.values():
        for member in runs:
            dropped |= member.binds
            dropped_reads |= member.reads
            anywhere |= member.anywhere
            drops.append((member.first, member.end, member.indent, True))
    drops.sort()
    # the first line of the unit whose block LibCST reads the module's indentation from
    block_line = units[first_block[0]][0] if first_block is not None else -1
    parts: List[str] = []
    texts: List[str] = []
    markers: List[str] = []
    cursor = 0  # offset of the text not yet copied
    for first, end, indent, defines in drops:
        run = text[starts[first] : _at(starts, end, text)]
        newline = run[len(run.rstrip("\r\n")) :]
        number = len(texts)
        body = f"def {_MARKER}{number}__(): pass" if defines else f"pass  # {_MARKER}{number}__"
        if first_block is not None and not indent and first <= block_line < end:
            # (the run holds the first indented block, so it defines: see _initial)
            inner = "\r\n" if "\r\n" in run else "\n"
            body = f"def {_MARKER}{number}__():{inner}{first_block[1]}pass"
        parts += [text[cursor : starts[first]], indent + body + newline]
        texts.append(run)
        markers.append(indent + body + newline)
        cursor = starts[first] + len(run)
    parts.append(text[cursor:])
    binds, reads = frozenset(dropped), frozenset(dropped_reads)
    shared = sharing(
        [
            ([opened[i][1]], Scan.of(opened[i][1])) if i in opened else (unit[2], scan)
            for i, (unit, scan, keep) in enumerate(zip(units, scans, kept))
            if keep
        ],
        binds,
        reads | anywhere,
        cold.intersection(reads),
    )
    return Pieces(
        "".join(parts),
        texts,
        markers,
        binds,
        reads,
        first_block[1] if first_block is not None else None,
        shared,
        not any("jax" in run for run in texts),
        frozenset(anywhere),
    )


@dataclasses.dataclass(frozen=True)
class Sharing:
    """The module-level names some statements share with the runs left out."""

    reads: FrozenSet[str] = frozenset()  # that the runs bind
    # that the runs bind (in any scope) or read, but by a cold import
    binds: FrozenSet[str] = frozenset()
    # the runs' cold names (only plain imports bind them), with what those imports bind
    imports: Tuple[Tuple[str, Tuple[Spec, ...]], ...] = ()


def sharing(
    units: Iterable[Tuple[List[ast.stmt], Scan]],
    binds: FrozenSet[str],
    reads: FrozenSet[str],
    cold: FrozenSet[str],
) -> Sharing:
    """What ``units`` (statements on the same lines, with their scan) share with runs that
    bind ``binds`` at module level and ``reads`` (names read, or bound in any scope), of which
    ``cold`` are only imported."""
    shared_reads: Set[str] = set()
    shared_binds: Set[str] = set()
    imported: Dict[str, List[Spec]] = {name: [] for name in cold}
    for statements, scan in units:
        shared_reads |= binds.intersection(scan.reads)
        touched = set((binds | reads).intersection(scan.binds))
        if not touched:
            continue
        for statement in statements:
            for name, spec in import_specs(statement) or ():
                if name in imported:
                    imported[name].append(spec)
        if all(import_specs(statement) is not None for statement in statements):
            touched.difference_update(imported)
        shared_binds |= touched
    return Sharing(
        frozenset(shared_reads),
        frozenset(shared_binds),
        tuple(sorted((name, tuple(sorted(specs))) for name, specs in imported.items())),
    )


def couples(output: ast.Module, pieces: Pieces) -> bool:
    """Whether the migrated reduced module (``output``) shares module-level names with the
    statements left out otherwise than the reduced module did: reads a name only they bind
    that it did not read, binds one they bind (in any scope) or read that it did not bind (or
    no longer binds one), or binds one of their imported names otherwise than the same plain
    imports did.  A fix made it: one that the whole module would have seen taken, or used."""
    found = sharing(
        [([statement], Scan.of(statement)) for statement in output.body],  # Unsure: falls back
        pieces.dropped_binds,
        pieces.dropped_reads | pieces.bound_anywhere,
        pieces.imports_read,
    )
    expected = pieces.shared
    return not (
        found.reads <= expected.reads
        and found.binds == expected.binds
        and found.imports == expected.imports
    )
