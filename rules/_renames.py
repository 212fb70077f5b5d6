"""A table-driven base for rules that only move or rename a public name.

A :class:`RenameRule` subclass lists :class:`Move` rows (legacy qualified name -> modern
qualified name, with the JAX versions between which the modern name exists).  The base:

* rewrites ``from legacy.module import Name [as alias]`` statements in place, keeping the
  local name so references need no edit (a mixed statement is split into the kept legacy
  part and a new ``from modern.module import ...`` line);
* renames references bound by such an import when the modern name differs and the import
  had no ``as`` (``MeshPspecSharding(...)`` -> ``NamedSharding(...)``);
* rewrites attribute references (``maps.Mesh``, ``jax.experimental.maps.Mesh``) through
  ``ctx.ref``, which adds the import the modern name needs;
* reports instead of rewriting when the modern name does not exist on the target JAX.

Code inside ``try/except ImportError`` blocks is never reached (the engine skips it).
"""

from __future__ import annotations

import builtins
import dataclasses
import functools
from typing import AbstractSet, ClassVar, Dict, FrozenSet, List, Optional, Sequence, Set, Tuple

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.migrator.binding import Binding
from jaxmigrate.migrator.context import Context, NameSite
from jaxmigrate.migrator.diagnostics import MESSAGE_LIMIT
from jaxmigrate.migrator.imports import with_fewer_names
from jaxmigrate.migrator.rule import Rule
from jaxmigrate.migrator.scope import dotted_expr, dotted_name
from jaxmigrate.migrator.version import Version, parse_version


@dataclasses.dataclass(frozen=True)
class Move:
    legacy: str  # fully qualified legacy name
    modern: str  # fully qualified replacement
    since: Optional[str] = None  # first JAX where ``modern`` exists
    until: Optional[str] = None  # first JAX where ``modern`` is gone again (or deprecated)
    note: str = ""  # what to do when the move cannot be applied on the target (the detail)
    fix: str = ""  # that in a few words, for the message
    deprecated: bool = False  # ``until`` is where JAX deprecated ``modern``, not removed it
    # ``legacy`` is still there, deprecated (an alias that warns), not removed: so say findings
    legacy_stays: bool = False

    @property
    def renamed(self) -> bool:
        return self.legacy.rsplit(".", 1)[1] != self.modern.rsplit(".", 1)[1]

    @property
    def modern_module(self) -> str:
        return self.modern.rsplit(".", 1)[0]

    @property
    def modern_name(self) -> str:
        return self.modern.rsplit(".", 1)[1]


def names_of(moves: Sequence[Move]) -> frozenset:
    return frozenset(move.legacy for move in moves)


@dataclasses.dataclass(frozen=True)
class _MoveIndex:
    """A table's moves for :meth:`RenameRule.survey_writes`: by the last part of the legacy
    name, (its parts, the words of the replacement); and the replacement words of the moves
    whose legacy name the newest JAX still has."""

    by_last: Dict[str, List[Tuple[FrozenSet[str], FrozenSet[str]]]]
    always: FrozenSet[str]


_INDEXES: Dict[int, Tuple[Tuple[Move, ...], _MoveIndex]] = {}


def _move_index(moves: Tuple[Move, ...]) -> _MoveIndex:
    kept = _INDEXES.get(id(moves))
    if kept is not None and kept[0] is moves:
        return kept[1]
    from jaxmigrate.rules._api_history import history

    newest = parse_version(history().newest)
    by_last: Dict[str, List[Tuple[FrozenSet[str], FrozenSet[str]]]] = {}
    always: Set[str] = set()
    for move in moves:
        written = frozenset(move.modern.split("."))
        if maybe_present(move.legacy, newest):
            always |= written
        parts = move.legacy.split(".")
        by_last.setdefault(parts[-1], []).append((frozenset(parts), written))
    index = _MoveIndex(by_last, frozenset(always))
    _INDEXES[id(moves)] = (moves, index)
    return index


def maybe_present(qualname: str, release: Version) -> bool:
    """May ``release`` have ``qualname``?  Where the history does not know the name, only when
    its parent is a module ``release`` has (whose every public name the history records)."""
    from jaxmigrate.rules._api_history import history

    present = history().present_in(qualname, release)
    if present is not None:
        return present
    parent = qualname.rpartition(".")[0]
    known = history().lookup(parent) if parent else None
    if known is None:
        return bool(parent) and maybe_present(parent, release)
    return known.is_module and bool(history().present_in(parent, release))


def _kept_throughout(qualname: str, ctx: Context) -> Optional[bool]:
    """Is ``qualname`` on every release of the target range (a range capped below the release
    that removed it)?  None where some release lacks it; True where none of them deprecates
    it either; False where one does (it warns there)."""
    from jaxmigrate.rules._api_history import history

    if ctx.survey or ctx.upper is None or not ctx.exists_throughout(qualname):
        return None
    known = history().lookup(qualname)
    since = None if known is None else known.deprecated_since
    return since is None or since > history().last_index(ctx.upper)


_BUILTINS = frozenset(dir(builtins))


@functools.cache
def _comma() -> "cst.Comma":
    return cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))


class RenameRule(Rule):
    """Abstract: subclasses set ``moves`` (and ``names = names_of(moves)``) plus the metadata."""

    moves: ClassVar[Tuple[Move, ...]] = ()
    # True when modern names may live in submodules their package does not import (the
    # reference then imports the name from its own module, see ``Context.ref``).
    import_directly: ClassVar[bool] = False

    def survey_writes(self, words: AbstractSet[str]) -> FrozenSet[str]:
        """In the survey every move applies, its replacement whatever release added it: the
        words of the replacements of the legacy names all of whose parts are ``words`` (the
        file's own).  Another rule's fix may write a legacy name the newest JAX still has
        only where this rule follows that rule (:attr:`Rule.follows`: the survey then reads
        this rule for that one's candidates too); then those replacements count wherever the
        rule is read."""
        index = _move_index(self.moves)
        found: Set[str] = set(super().survey_writes(words))
        if self.follows:
            found |= index.always
        for word in index.by_last.keys() & words:
            for legacy_parts, modern_words in index.by_last[word]:
                if legacy_parts <= words:
                    found |= modern_words
        return frozenset(found)

    # -- table lookups -------------------------------------------------------------------
    def move_for(self, qualname: str) -> Optional[Move]:
        for move in self.moves:
            if move.legacy == qualname:
                return move
        return None

    def allowed(self, move: Move, ctx: Context) -> bool:
        """The replacement exists on every release of the target range: from its lower bound
        (``since``) up to its upper bound (``until``; an open range reaches the newest JAX)."""
        return self._arrived(move, ctx) and not self._gone_within(move, ctx)

    @staticmethod
    def _arrived(move: Move, ctx: Context) -> bool:
        """The new name exists from the target's lower bound on.  In the floor survey every
        rename of a removed name arrives: the release that added the new name is then the
        floor the migrated code needs (a rename is required to run on the newest JAX)."""
        return move.since is None or ctx.survey or ctx.target >= parse_version(move.since)

    @staticmethod
    def _gone_within(move: Move, ctx: Context) -> bool:
        """Is the replacement gone again on some release of the target range?"""
        return move.until is not None and (
            ctx.upper is None or ctx.upper >= parse_version(move.until)
        )

    def _cannot(self, node: cst.CSTNode, move: Move, ctx: Context) -> None:
        """Report a move the target does not allow, unless only its replacement's deprecation
        stops it: the removed name is then another rule's to report, with what to write
        (a deprecated name is no replacement)."""
        if move.deprecated and self._arrived(move, ctx):
            return
        if not move.legacy_stays and _kept_throughout(move.legacy, ctx) is True:
            return  # (a range capped below the removal: the name works, and never warns, there)
        ctx.report(node, *self.cannot_message(move, ctx))

    def cannot_message(self, move: Move, ctx: Context) -> Tuple[str, str]:
        """The finding where the move cannot be applied on the target: (message, detail)."""
        stays = move.legacy_stays or _kept_throughout(move.legacy, ctx) is not None
        gone = f"{move.legacy} " + ("is deprecated" if stays else "no longer exists")
        went = "is deprecated" if move.deprecated else "is gone too"
        if move.until is not None and ctx.target >= parse_version(move.until):
            detail = f"{gone}; its rename {move.modern} {went} from JAX {move.until}"
            candidates = [f"{gone}; its rename {move.modern_name} {went}"]
        elif self._gone_within(move, ctx) and self._arrived(move, ctx):
            detail = (
                f"{gone}; its rename {move.modern} {went.replace(' too', '')} from JAX "
                f"{move.until}, "
                f"inside the target range {ctx.target_range} "
                f"(give an upper bound below {move.until} to rename)"
            )
            candidates = [f"{gone}; cap the target below {move.until} to rename it"]
        elif move.since is not None:
            detail = f"{gone}; {move.modern} needs JAX {move.since}, newer than the target"
            candidates = [
                f"{gone}; {move.modern} needs JAX {move.since}",
                f"{gone}; its rename needs JAX {move.since}",
            ]
        else:
            detail, candidates = gone, [gone]
        if move.fix:
            candidates = [f"{c}; {move.fix}" for c in candidates] + [f"{gone}; {move.fix}"]
        message = next((c for c in candidates if len(c) <= MESSAGE_LIMIT), candidates[-1])
        return message, f"{detail}: {move.note}." if move.note else f"{detail}."

    # -- per-binding decisions (the import site and its references must agree) ----------
    def _local_for(self, alias: cst.ImportAlias, move: Move, ctx: Context) -> str:
        """The name the rewritten import binds."""
        if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
            return alias.asname.name.value
        if not move.renamed:
            return move.modern_name
        legacy_name = move.legacy.rsplit(".", 1)[1]
        if legacy_name in ctx.analysis.exported or _unused_at_module_level(alias, ctx):
            # listed in ``__all__``, or imported and never used here (a re-export: flax's
            # linen/activation.py imports jax.nn.normalize for linen/__init__.py): other
            # modules import it by that name
            return legacy_name
        if self._name_free(move.modern_name, move.modern, ctx):
            return move.modern_name
        return move.legacy.rsplit(".", 1)[1]  # ``from m import Modern as Legacy``

    def _name_free(self, name: str, qualname: str, ctx: Context) -> bool:
        """No binding of ``name`` anywhere, except imports that mean (or become) ``qualname``;
        never a builtin's name (``from jax.numpy import all`` would shadow ``all``)."""
        if name in _BUILTINS:
            return False
        for scope in ctx.analysis.scopes.values():
            for binding in scope.bindings.get(name, ()):
                if binding.qualname == qualname:
                    continue
                other = self.move_for(binding.qualname or "")
                if other is None or other.modern != qualname or binding.guarded:
                    return False
        return True

    def _in_place_binding(self, binding: Binding, ctx: Context) -> Optional[Move]:
        """The move applied to ``binding``'s import statement in place, if any."""
        if binding.guarded or not isinstance(binding.statement, cst.ImportFrom):
            return None
        move = self.move_for(binding.qualname or "")
        if move is None or not self.allowed(move, ctx):
            return None
        if binding.node is not None and (
            ctx.is_suppressed(binding.node) or ctx.is_suppressed(binding.statement)
        ):
            return None  # ``# jaxmigrate: ignore`` on the import: it stays, so must its users
        return move

    def _pending(self, move: Move, ctx: Context) -> bool:
        """True if an import of ``move.modern`` is being written in place this round."""
        for binding in ctx.analysis.imports:
            other = self._in_place_binding(binding, ctx)
            if other is not None and other.modern == move.modern:
                return True
        return False

    # -- the hook -------------------------------------------------------------------------
    def visit_name(self, site: NameSite, ctx: Context) -> None:
        move = self.move_for(site.qualname)
        if move is None:
            return
        if site.is_import:
            self._visit_import(site, move, ctx)
        elif isinstance(site.node, cst.Name):
            self._visit_bare_name(site, move, ctx)
        else:
            self._visit_attribute_ref(site, move, ctx)

    def _visit_import(self, site: NameSite, move: Move, ctx: Context) -> None:
        statement = site.parent
        if isinstance(statement, cst.Import):
            self._rewrite_module_alias(site, move, ctx)
            return
        if not isinstance(statement, cst.ImportFrom):
            return
        if not self.allowed(move, ctx):
            self._cannot(site.node, move, ctx)
            return
        self._rewrite_import(statement, site, ctx)

    def _rewrite_module_alias(self, site: NameSite, move: Move, ctx: Context) -> None:
        """``import legacy.module as m`` -> ``import modern.module as m``: references through
        ``m`` need no edit.  (Without ``as``, the references are rewritten one by one and the
        import goes when nothing uses it.)"""
        alias = site.node
        if not isinstance(alias, cst.ImportAlias) or alias.asname is None:
            return
        if dotted_name(alias.name) != move.legacy:
            return
        if not self.allowed(move, ctx):
            self._cannot(alias, move, ctx)
            return
        ctx.replace(
            alias,
            alias.with_changes(name=dotted_expr(move.modern)),
            f"{move.legacy} -> {move.modern}",
        )

    def _visit_bare_name(self, site: NameSite, move: Move, ctx: Context) -> None:
        bindings = site.scope.lookup(site.node.value)  # type: ignore[attr-defined]
        if not bindings:
            return
        for binding in bindings:
            if self._in_place_binding(binding, ctx) is None or binding.node is None:
                return
        local = self._local_for(bindings[0].node, move, ctx)  # type: ignore[arg-type]
        if local != site.node.value:  # type: ignore[attr-defined]
            ctx.replace(site.node, cst.Name(local), f"{site.node.value} -> {move.modern}")  # type: ignore[attr-defined]

    def _visit_attribute_ref(self, site: NameSite, move: Move, ctx: Context) -> None:
        if not self.allowed(move, ctx):
            self._cannot(site.node, move, ctx)
            return
        if self._pending(move, ctx):
            return  # the next round sees the rewritten import and reuses it
        new = ctx.ref(move.modern, site.scope, prefer_from=True, direct=self.import_directly)
        ctx.replace(site.node, new, f"{ctx.code(site.node)} -> {move.modern}")

    # -- rewriting one ``from ... import ...`` statement ----------------------------------
    def _provided_elsewhere(
        self,
        statement: cst.ImportFrom,
        alias: cst.ImportAlias,
        local: str,
        move: Move,
        ctx: Context,
    ) -> bool:
        """True if another import in the same scope already binds ``local`` to ``move.modern``
        (or will, being an earlier legacy import of it rewritten in place)."""
        mine = None
        for index, binding in enumerate(ctx.analysis.imports):
            if binding.node is alias:
                mine = (index, binding.scope)
        if mine is None:
            return False
        for index, binding in enumerate(ctx.analysis.imports):
            if binding.statement is statement or binding.name != local or binding.guarded:
                continue
            if binding.scope is not mine[1]:
                continue
            if binding.qualname == move.modern:
                return True
            other = self._in_place_binding(binding, ctx)
            if other is not None and other.modern == move.modern and index < mine[0]:
                node = binding.node
                if isinstance(node, cst.ImportAlias) and self._local_for(node, other, ctx) == local:
                    return True
        return False

    def _rewrite_import(self, statement: cst.ImportFrom, site: NameSite, ctx: Context) -> None:
        if isinstance(statement.names, cst.ImportStar) or statement.relative:
            return
        module = dotted_name(statement.module) if statement.module is not None else None
        if module is None:
            return
        in_place: List[cst.ImportAlias] = []  # what this statement keeps, in order
        kept_legacy = False
        moved: Dict[str, List[cst.ImportAlias]] = {}  # to new statements, by module
        changes: List[str] = []
        bound_here = set()
        kept = self._kept_names(statement, module, ctx)
        for alias in statement.names:
            name = dotted_name(alias.name) or ""
            move = self.move_for(f"{module}.{name}")
            if move is None or not self.allowed(move, ctx):
                in_place.append(alias)
                kept_legacy = True
                continue
            changes.append(f"{module}.{name} -> {move.modern}")
            local = self._local_for(alias, move, ctx)
            if (
                local in bound_here
                or kept.get(local) == move.modern
                or self._provided_elsewhere(statement, alias, local, move, ctx)
            ):
                continue  # ``from m import Mesh, mesh``: one ``Mesh`` serves both
            bound_here.add(local)
            asname = None
            if local != move.modern_name:
                asname = alias.asname or cst.AsName(name=cst.Name(local))
            new_alias = alias.with_changes(name=cst.Name(move.modern_name), asname=asname)
            if move.modern_module == module:
                in_place.append(new_alias)
            else:
                moved.setdefault(move.modern_module, []).append(new_alias)
        if not changes:
            return
        message, detail = "; ".join(changes), ""
        if len(message) > MESSAGE_LIMIT:  # several names: where they move, the rest in detail
            targets = sorted(
                {change.rpartition(" -> ")[2].rpartition(".")[0] for change in changes}
            )
            message, detail = f"imports from {module} -> {', '.join(targets)}", f"{message}."
        if not kept_legacy and len(moved) == 1 and not in_place:
            ((target_module, aliases),) = moved.items()
            new_statement = self._with_names(statement, aliases).with_changes(
                module=dotted_expr(target_module)
            )
            ctx.replace(statement, new_statement, message, detail=detail)
            return
        if not moved:
            if in_place:
                ctx.replace(
                    statement,
                    self._with_names(statement, in_place),
                    message,
                    detail=detail,
                )
            else:
                target = self._removal(statement, site, ctx)
                if target is not None:
                    ctx.replace(target, cst.RemovalSentinel.REMOVE, message, detail=detail)
            return
        line = site.ancestors[-2] if len(site.ancestors) >= 2 else None
        if not isinstance(line, cst.SimpleStatementLine):
            return
        body = []
        for small in line.body:
            if small is not statement:
                body.append(small)
            elif in_place:
                body.append(self._with_names(statement, in_place))
        lines: List[cst.BaseStatement] = []
        if body:
            lines.append(line.with_changes(body=body))
        for index, (target_module, aliases) in enumerate(moved.items()):
            aliases = [a.with_changes(comma=_comma()) for a in aliases[:-1]] + [
                aliases[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            ]
            new_line = cst.SimpleStatementLine(
                body=[cst.ImportFrom(module=dotted_expr(target_module), names=aliases)]
            )
            if not body and index == 0:
                new_line = new_line.with_changes(
                    leading_lines=line.leading_lines, trailing_whitespace=line.trailing_whitespace
                )
            lines.append(new_line)
        ctx.replace(line, cst.FlattenSentinel(lines), message, detail=detail)

    def _kept_names(self, statement: cst.ImportFrom, module: str, ctx: Context) -> Dict[str, str]:
        """The names ``statement`` binds that it keeps as they are, with what each means:
        ``from jax.tree_util import (tree_map, tree_multimap)`` keeps ``tree_map``, which
        then serves the renamed ``tree_multimap`` too."""
        kept: Dict[str, str] = {}
        for alias in statement.names:  # type: ignore[union-attr]
            name = dotted_name(alias.name) or ""
            move = self.move_for(f"{module}.{name}")
            if move is not None and self.allowed(move, ctx):
                continue
            asname = alias.asname.name if alias.asname is not None else None
            local = asname.value if isinstance(asname, cst.Name) else name
            kept[local] = f"{module}.{name}"
        return kept

    @staticmethod
    def _removal(statement: cst.ImportFrom, site: NameSite, ctx: Context) -> Optional[cst.CSTNode]:
        line = site.ancestors[-2] if len(site.ancestors) >= 2 else None
        if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1:
            return line
        return None

    @staticmethod
    def _with_names(statement: cst.ImportFrom, kept: List[cst.ImportAlias]) -> cst.ImportFrom:
        """``statement`` importing ``kept``: where it loses names, cut as the unused-import
        cleanup cuts one (no ``(a, )``, no parentheses left around what fits the line)."""
        if len(kept) < len(statement.names):  # type: ignore[arg-type]
            return with_fewer_names(statement, kept)  # type: ignore[return-value]
        if statement.lpar is None:
            kept = list(kept)
            kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return statement.with_changes(names=kept)


def _unused_at_module_level(alias: cst.ImportAlias, ctx: Context) -> bool:
    """Is ``alias`` a module-level import whose name nothing in the module reads?"""
    module_scope = ctx.analysis.scopes.get(id(ctx.module))
    for binding in ctx.analysis.imports:
        if binding.node is alias:
            return binding.scope is module_scope and not ctx.analysis.is_used(binding)
    return False
