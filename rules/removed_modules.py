"""JAX806 removed-modules: imports of whole modules that no longer exist.

From JAX's release notes and source (each module verified absent on the installed JAX 0.10.2
with ``importlib.import_module``):

* ``jax.experimental.maps`` (deprecated 0.4.26, file absent at 0.4.31); ``with
  jax.set_mesh(mesh):`` replaces the implicit mesh ``maps.thread_resources`` exposed;
* ``jax.experimental.global_device_array`` and its implementation module
  ``jax._src.global_device_array`` (JAX commit 634035a, file absent at 0.4.7);
* ``jax.experimental.gda_serialization`` (removed 0.4.11);
* ``jax.experimental.sharded_jit`` / ``jax.interpreters.sharded_jit`` (gone at 0.3.16);
* the ``jax.xla`` / ``jax.pxla`` aliases (removed 0.4.14);
* ``jax.lib.xla_extension``, ``jax.lib.xla_client`` and ``jax.lib.xla_bridge`` (their members
  removed 0.8.0, the modules 0.9.0: jax 0.8.3's sdist has them, warning "will be removed in
  JAX v0.9.0", 0.9.0's ``jax/lib`` holds only ``__init__.py``), and ``jaxlib.xla_extension``
  (gone on jax 0.10.2; gated at 0.10.0 because its removal release is not pinned down).

Two things happen:

1. ``import a.b.c`` (dotted, no ``as``) of such a module binds ``a``; once no expression goes
   through ``a.b.c`` any more (other rules rewrite ``jax.experimental.maps.Mesh`` and friends)
   the import is dropped, or narrowed to ``import a`` (or the longest prefix still used, e.g.
   ``import jax.experimental``) when that name is still used and nothing else imports it.
   SAFE: the statement would raise ModuleNotFoundError on the target.
2. Names imported from, or used through, ``jax.experimental.maps``,
   ``jax.experimental.global_device_array`` and ``jax.experimental.gda_serialization`` that no
   other rule migrates (``ResourceEnv``, ``Shard``, ...; ``thread_resources`` where JAX903
   cannot rename it) are reported,
   once per import statement and once per attribute use, with what to do instead.  Members of
   the other modules are reported by JAX805/JAX104, which own them.

3. Code that saves, sets or restores ``maps._positional_semantics`` (gone in 0.4.7) is deleted
   where the code predates that release: an unsafe fix (:mod:`rules._positional_semantics`).

Code inside ``try: ... except ImportError`` compatibility blocks is never touched.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, AbstractSet, Dict, FrozenSet, List, Optional, Set, Tuple

from jaxmigrate.migrator import lazycst as cst, references as refs
from jaxmigrate.migrator.astfacts import iter_statements
from jaxmigrate.migrator.context import Context
from jaxmigrate.migrator.naming import CannotReference
from jaxmigrate.migrator.rule import Example, Lifecycle, Rule, Safety
from jaxmigrate.migrator.scope import dotted_expr, dotted_name, dotted_parts, guards_imports
from jaxmigrate.migrator.version import parse_version
from jaxmigrate.rules import _positional_semantics as positional
from jaxmigrate.rules._gda import GDA_HISTORY
from jaxmigrate.rules._helpers import report_once, up_to
from jaxmigrate.rules._import_chains import (
    inside_import,
    kept_prefix,
    load_chains,
    module_of,
    used_through,
)
from jaxmigrate.rules._removed_modules_ast import leftover_imports

if TYPE_CHECKING:  # pragma: no cover
    from jaxmigrate.migrator.astview import AstView
    from jaxmigrate.migrator.diagnostics import Diagnostic

# Module -> the first JAX release without it (the rule acts where the target reaches that
# release: the import fails on part of the target).
# ``maps.thread_resources`` is ``jax._src.mesh.thread_resources`` from 0.4.7 (its home since,
# read in the sources of 0.4.7 through 0.12.0.1); the public spelling left, deprecated from
# 0.8.2, is not written (JAX903).  Private: an unsafe fix, which JAX902 reports afterwards.
ENV = "jax._src.mesh.thread_resources"
ENV_SINCE = "0.4.7"


REMOVED: Dict[str, str] = {
    "jax.experimental.maps": "0.4.31",
    "jax.experimental.global_device_array": "0.4.7",
    "jax._src.global_device_array": "0.4.7",
    "jax.experimental.gda_serialization": "0.4.11",
    "jax.experimental.sharded_jit": "0.3.16",
    "jax.interpreters.sharded_jit": "0.3.16",
    "jax.xla": "0.4.14",
    "jax.pxla": "0.4.14",
    "jax.lib.xla_extension": "0.9.0",
    "jax.lib.xla_client": "0.9.0",
    "jax.lib.xla_bridge": "0.9.0",
    "jaxlib.xla_extension": "0.10.0",
}

# What to use instead of each module, for an import nothing could migrate.
ADVICE: Dict[str, str] = {
    "jax.experimental.maps": "use jax.sharding.Mesh, jax.shard_map, jax.set_mesh",
    "jax.experimental.global_device_array": "use jax.Array with a NamedSharding",
    "jax._src.global_device_array": "use jax.Array with a NamedSharding",
    "jax.experimental.gda_serialization": "use jax.experimental.array_serialization",
    "jax.experimental.sharded_jit": "use jax.jit with in_shardings/out_shardings",
    "jax.interpreters.sharded_jit": "use jax.jit with in_shardings/out_shardings",
    "jax.xla": "use jax.interpreters.xla or jax.Array/jax.Device",
    "jax.pxla": "use jax.sharding and jax.jit/jax.shard_map",
    "jax.lib.xla_extension": "use jax.Array, jax.Device, jax.extend.backend",
    "jax.lib.xla_client": "use jax.Array, jax.Device, jax.extend.backend",
    "jax.lib.xla_bridge": "use jax.devices() or jax.extend.backend",
    "jaxlib.xla_extension": "use jax.Array, jax.Device, jax.extend.backend",
}

_MAPS_GENERIC = (
    "jax.experimental.maps.{name} was removed in JAX 0.4.31; use jax.sharding.Mesh, jax.shard_map"
)
# Module -> (message for a member, {member: specific message}).
REPORTED: Dict[str, Tuple[str, Dict[str, str]]] = {
    "jax.experimental.maps": (
        _MAPS_GENERIC,
        {
            "thread_resources": (
                "jax.experimental.maps.thread_resources was removed in 0.4.31; "
                "use NamedShardings or jax.set_mesh"
            ),
            **dict.fromkeys(
                ("_positional_semantics", "_PositionalSemantics"),
                "maps' positional semantics went with GDA (JAX 0.4.7): every jax.Array is global; "
                "delete it",
            ),
        },
    ),
    "jax.experimental.global_device_array": (
        "global_device_array.{name} was removed in JAX 0.4.7; use jax.Array with a NamedSharding",
        {},
    ),
    "jax._src.global_device_array": (
        "global_device_array.{name} was removed in JAX 0.4.7; use jax.Array with a NamedSharding",
        {},
    ),
    "jax.experimental.gda_serialization": (
        "gda_serialization.{name} was removed in JAX 0.4.11; "
        "use jax.experimental.array_serialization",
        {},
    ),
}


class RemovedModules(Rule, code="JAX806", safety=Safety.SAFE):
    """imports of removed modules (maps, GDA, sharded_jit, xla_extension...): drop dotted ones left
    unused, report the rest

    **What it does.** Handles imports of modules that no longer exist:
    `jax.experimental.maps` (removed 0.4.31), `jax.experimental.global_device_array` (0.4.7),
    `jax.experimental.gda_serialization` (0.4.11), `jax.experimental.sharded_jit` (0.3.16),
    the `jax.xla`/`jax.pxla` aliases (0.4.14), `jax.lib.xla_extension`, `jax.lib.xla_client`
    and `jax.lib.xla_bridge` (0.9.0; their members went in 0.8.0), and `jaxlib.xla_extension`
    (gone on current JAX).

    * `import jax.experimental.maps` binds `jax`; once nothing goes through
      `jax.experimental.maps` any more (other rules rewrite `maps.Mesh`, `maps.mesh`, ...), the
      line is removed, or becomes `import jax` when `jax` is still used and nothing else
      imports it.
    * Names from `jax.experimental.maps`, `jax.experimental.global_device_array` or
      `jax.experimental.gda_serialization` that no other rule migrates (for example
      `ResourceEnv`) are reported with what to use instead.  `thread_resources` is renamed by
      JAX903 to `jax.interpreters.pxla.thread_resources`, the same object in every release
      that had both (deprecated since JAX 0.8.2).  Where the target range reaches that
      deprecation, `--unsafe-fixes` writes `jax._src.mesh.thread_resources`, the object's home
      from 0.4.7 through the newest release (private: JAX902 reports it); otherwise it is
      reported: pass explicit `NamedSharding(mesh, P(...))` shardings, or enter the mesh with
      `with jax.set_mesh(mesh):` (see JAX607).
    * Any other import of these modules still there when nothing else changes (a name no rule
      could rewrite, a re-export, a use the user suppressed) is reported on its line: it fails
      with ModuleNotFoundError on the target.
    * Code that saves, sets or restores xmap's positional semantics
      (`maps._positional_semantics.val = maps._PositionalSemantics.GLOBAL`, dm-haiku 0.0.9)
      is deleted with `--unsafe-fixes` where the code was written before 0.4.7 and the target
      range reaches it: the setting went with GlobalDeviceArray in 0.4.7 (every `jax.Array`
      is global).  A variable that only saves the value for its restore goes too, an `if`
      left empty goes when its test runs nothing, a `try` left without `finally` gives way to
      its body, other empty blocks keep `pass`; the `maps` import goes once nothing uses it.
      Any other use of the two names leaves the module to the findings.  Unsafe because older
      releases of the range did read the setting.

    Nothing inside `try: ... except ImportError` blocks is touched.  Below the release that
    removed a module (`--target-version`), the rule leaves its imports alone.

    **Why.** On current JAX these imports raise ModuleNotFoundError, so a file that no longer
    uses the module still fails to import while the line is there.

    **Use instead.** Nothing for the import itself; `jax.sharding`, `jax.set_mesh`,
    `jax.shard_map`, `jax.Array` and `jax.experimental.array_serialization` for the members.
    """

    references = (
        refs.release_notes("0.4.11", "jax.experimental.gda_serialization removed"),
        refs.release_notes("0.4.14", "jax.xla and jax.pxla removed"),
        refs.release_notes("0.4.26", "jax.experimental.maps deprecated"),
        GDA_HISTORY[1],
        positional.SOURCE,
    )
    lifecycle = Lifecycle(removed=("0.4.31", "xmap and jax.experimental.maps deleted"))
    names = frozenset(REMOVED)  # the modules themselves: triggers, and unused imports of them go
    legacy_modules = frozenset(REMOVED)
    # Its hooks read the imports, the uses of the removed modules (a statement with a name in
    # one of them is kept by the piecewise path) and, for the positional setting, the reads
    # of the variable that saved it (Context.needs_name).  An import rewritten otherwise than
    # a statement left out needs makes the piecewise path fall back.
    whole_module = False
    writes_since = {ENV: ENV_SINCE}  # (read by the floor survey: migrator.source)

    def survey_writes(self, words: AbstractSet[str]) -> FrozenSet[str]:
        """:data:`ENV` is written only for a ``thread_resources`` of the file's
        (:func:`_redirect_env`)."""
        return super().survey_writes(words) if "thread_resources" in words else frozenset()

    examples = (
        Example(
            title="a dotted import left behind",
            before="""
            import numpy as np
            import jax.experimental.maps
            from jax.sharding import Mesh

            mesh = Mesh(np.array(jax.devices()), ("x",))
            """,
            after="""
            import numpy as np
            import jax
            from jax.sharding import Mesh

            mesh = Mesh(np.array(jax.devices()), ("x",))
            """,
        ),
        Example.reported(
            title="a member with no replacement is reported",
            code="""
            from jax.experimental.maps import ResourceEnv

            def is_env(value):
                return isinstance(value, ResourceEnv)
            """,
        ),
    )

    def ast_findings(self, view: AstView) -> Optional[List[Diagnostic]]:
        """Nothing where no import statement, in any scope, names a removed module or
        something in one: :meth:`visit_module` then returns before it reads anything (its
        deletions too need an import of ``maps``).  Where one does, the report of each
        import left over, when that is all the hook can do
        (:func:`rules._removed_modules_ast.leftover_imports`); else None: LibCST decides."""
        modules = tuple(REMOVED)
        for statement in iter_statements(view.tree):  # ``from M import *`` (not in imports)
            if type(statement) is ast.ImportFrom and not statement.level:
                if module_of(statement.module or "", modules):
                    return None
        for item in view.imports:
            if module_of(item.qualname, modules) or module_of(item.imported, modules):
                return leftover_imports(view, self.code, REMOVED, tuple(REPORTED), ADVICE)
        return []

    def visit_module(self, ctx: Context) -> None:
        deleted = positional.delete(ctx)  # (maps is still there before 0.4.31; the setting not)
        removed = tuple(m for m, v in REMOVED.items() if ctx.reaches(parse_version(v)))
        if not removed or not _imports_removed(ctx, removed):
            return
        guarded: Dict[int, bool] = {}
        self._dotted_imports(ctx, removed, guarded)
        reported = tuple(m for m in REPORTED if m in removed)
        if reported:
            self._report_members(ctx, reported, guarded, deleted)
        self._report_leftovers(ctx, removed, guarded)

    # -- 1. ``import a.b.c`` ------------------------------------------------------------------
    def _dotted_imports(
        self, ctx: Context, removed: Tuple[str, ...], guarded: Dict[int, bool]
    ) -> None:
        for statement in ctx.all_nodes(cst.Import):
            targets = []
            for alias in statement.names:
                if alias.asname is not None:
                    continue
                module = dotted_name(alias.name) or ""
                if "." in module and module_of(module, removed):
                    targets.append((alias, module))
            if not targets or _is_guarded(ctx, statement, guarded):
                continue
            chains = load_chains(ctx)
            names: List[cst.ImportAlias] = []
            changed = False
            for alias in statement.names:
                module = next((m for a, m in targets if a is alias), "")
                if not module:  # not a removed module (those are dotted, never empty)
                    names.append(alias)
                    continue
                if used_through(module, chains):
                    names.append(alias)  # still needed: the uses are reported or rewritten first
                    continue
                changed = True
                keep = kept_prefix(ctx, alias, module, chains, removed)
                if keep is not None:
                    names.append(alias.with_changes(name=dotted_expr(keep)))
            if not changed:
                continue
            # Spell each kept module once.
            seen: Set[str] = set()
            unique = []
            for alias in names:
                key = ctx.code(alias.name) + "|" + (ctx.code(alias.asname) if alias.asname else "")
                if alias.asname is None and key in seen:
                    continue
                seen.add(key)
                unique.append(alias)
            if not unique:
                new: object = cst.RemovalSentinel.REMOVE
            else:
                unique[-1] = unique[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
                new = statement.with_changes(names=unique)
            gone = ", ".join(m for _, m in targets)
            ctx.replace(
                statement,
                new,  # type: ignore[arg-type]
                f"removed the unused import of {gone} (gone from JAX)",
            )

    # -- 2. members nobody migrates --------------------------------------------------------
    def _report_members(
        self, ctx: Context, modules: Tuple[str, ...], guarded: Dict[int, bool], deleted: Set[int]
    ) -> None:
        for statement in ctx.all_nodes(cst.ImportFrom):
            if isinstance(statement.names, cst.ImportStar) or statement.relative:
                continue
            module = dotted_name(statement.module) if statement.module else None
            if not module:
                continue
            owner = module_of(module, modules)
            if owner is None:
                continue
            messages = []
            for alias in statement.names:
                qualname = module + "." + (dotted_name(alias.name) or "")
                message = _message(ctx, owner, qualname)
                if message and message not in messages:
                    messages.append(message)
            if messages and not _is_guarded(ctx, statement, guarded):
                ctx.report(statement, "; ".join(messages))
        imported = {binding.name for binding in ctx.analysis.imports}
        uses: Dict[str, List[cst.CSTNode]] = {}
        for node in ctx.all_nodes(cst.Attribute):
            parts = dotted_parts(node)
            if parts is None or parts[0] not in imported:
                continue
            parent = ctx.parent(node)
            if isinstance(parent, cst.Attribute) and dotted_parts(parent) is not None:
                continue  # only the outermost chain counts
            if inside_import(ctx, node):
                continue
            scope = ctx.scope_of(node)
            # Report a member of a removed module reached through the module itself; a name
            # imported from the module was reported at its import.
            head_q = scope.resolve_name(parts[0])
            if head_q is None:
                continue
            full = ".".join([head_q, *parts[1:]])
            owner = module_of(full, modules)
            if owner is None or full == owner:
                continue
            if module_of(head_q, modules) and head_q != owner:
                continue  # a name imported from the module: reported at its import
            if deleted and ctx.position(node).start.line in deleted:
                continue  # the positional-semantics fix's message (or finding) is on the line
            message = _message(ctx, owner, full)
            if message and not _is_guarded(ctx, node, guarded):
                if not _redirect_env(ctx, node, parts, owner):
                    uses.setdefault(message, []).append(node)
        for message, nodes in uses.items():  # (once a file, at the first use, with the count)
            report_once(ctx, nodes, message)

    # -- 3. whatever import of a removed module is still there -------------------------------
    def _report_leftovers(
        self, ctx: Context, removed: Tuple[str, ...], guarded: Dict[int, bool]
    ) -> None:
        """An import of a removed module that no rule rewrote and no finding covers fails with
        ModuleNotFoundError on the target: say so.  (Findings only count in the round that
        changes nothing, so a statement another rule is still rewriting is never reported.)"""
        if ctx.edits:
            return  # this round changes the module, so its findings are dropped anyway
        hits: List[Tuple[cst.CSTNode, str]] = []
        for statement in ctx.all_nodes(cst.Import):
            for alias in statement.names:
                module = module_of(dotted_name(alias.name) or "", removed)
                if module is not None:
                    hits.append((statement, module))
                    break
        for import_from in ctx.all_nodes(cst.ImportFrom):
            if import_from.relative or not import_from.module:
                continue
            base = dotted_name(import_from.module) or ""
            module = module_of(base, removed)
            if module is None and not isinstance(import_from.names, cst.ImportStar):
                for alias in import_from.names:
                    module = module_of(base + "." + (dotted_name(alias.name) or ""), removed)
                    if module is not None:
                        break
            if module is not None:
                hits.append((import_from, module))
        if not hits:
            return
        covered = {ctx.position(node).start.line for node, _code, _message, _safety in ctx.findings}
        for hit, module in hits:
            if _is_guarded(ctx, hit, guarded):
                continue
            if ctx.position(hit).start.line in covered:
                continue
            ctx.report(
                hit,
                f"{module} was removed in {REMOVED[module]}; {ADVICE[module]}",
            )


def _redirect_env(ctx: Context, node: cst.Attribute, parts: List[str], owner: str) -> bool:
    """``maps.thread_resources`` (inside the chain ``node``, whose names are ``parts``) ->
    ``jax._src.mesh.thread_resources``, the same object, where the target range starts from
    0.4.7 (or in the floor survey): the fix, or without --unsafe-fixes its finding; False
    where it does not apply (the caller reports)."""
    if owner != "jax.experimental.maps" or len(parts) < 2 or parts[1] != "thread_resources":
        return False
    if ctx.target < parse_version(ENV_SINCE) and not ctx.survey:
        return False
    inner: cst.BaseExpression = node
    while isinstance(inner, cst.Attribute) and len(dotted_parts(inner) or ()) > 2:
        inner = inner.value
    try:  # (an unsafe fix left unapplied becomes a finding: it plans no import)
        new = ctx.ref(ENV, ctx.scope_of(node), direct=True) if ctx.unsafe_fixes else None
    except CannotReference:
        return False
    new = new or dotted_expr(ENV.split("."))
    ctx.replace(  # (applied, or a finding without --unsafe-fixes: either way, said here)
        inner,
        new,
        f"maps.thread_resources -> {ENV}: the same object, but private",
        Safety.UNSAFE,
        detail=(
            f"jax.experimental.maps went in JAX 0.4.31; its thread_resources is {ENV} from "
            f"{ENV_SINCE} on. The public jax.interpreters.pxla.thread_resources is deprecated "
            "since 0.8.2. Better: pass NamedSharding(mesh, P(...)) or use jax.set_mesh(mesh)."
        ),
    )
    return True


def _imports_removed(ctx: Context, removed: Tuple[str, ...]) -> bool:
    """Cheap gate from the analysis' import bindings: does anything import a removed module?"""
    for binding in ctx.analysis.imports:
        if module_of(binding.qualname or "", removed):
            return True
        alias = binding.node
        if isinstance(alias, cst.ImportAlias) and isinstance(binding.statement, cst.Import):
            if module_of(dotted_name(alias.name) or "", removed):
                return True
    return False


def _message(ctx: Context, owner: str, qualname: str) -> Optional[str]:
    """What to say about ``qualname`` in the removed module ``owner``; None when another rule
    handles the member (or something inside it)."""
    rest = qualname[len(owner) + 1 :]
    if not rest:
        return None
    first = rest.split(".", 1)[0]
    member = owner + "." + first
    if ctx.owner(member) or ctx.owner(qualname) or ctx.owns_under(member):
        return None
    generic, specific = REPORTED[owner]
    return specific.get(first) or generic.format(name=first)


def _is_guarded(ctx: Context, node: cst.CSTNode, cache: Dict[int, bool]) -> bool:
    """Inside ``try: ... except ImportError`` (or AttributeError) compatibility code."""
    return up_to(ctx, ctx.parent(node), guards_imports, cache)
