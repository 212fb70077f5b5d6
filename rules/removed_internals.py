"""JAX805 removed-internals: removed or internal parallelism-era APIs.

All but the last need a person (release notes of the versions named):
* ``jax.soft_pmap`` (deleted 0.3.18);
* ``jax.experimental.sharded_jit`` / ``jax.interpreters.sharded_jit`` (deprecated 0.3.5, file
  gone at 0.3.16);
* ``pmap(..., global_arg_shapes=)`` (removed 0.4.8);
* ``jax.clear_backends`` (deprecated 0.4.26, removed 0.4.36);
* members of ``jax.lib.xla_extension`` / ``xla_client`` / ``xla_bridge`` (deprecated 0.6.0,
  removed 0.8.0; ``jax.lib.xla_extension`` is gone on jax 0.10.2) and of
  ``jaxlib.xla_extension`` (gone);
* members of ``jax.interpreters.pxla`` (deprecated 0.8.2, many removed 0.10.0/0.11.0);
* ``jax.experimental.pjit.AUTO`` (gone on jax 0.10.2);
* ``jax.interpreters.pxla.multi_host_supported_collectives`` (the last release with it is
  0.4.14): where the target range reaches 0.4.16, a statement that only updates it is kept
  under ``if hasattr(pxla, "multi_host_supported_collectives"):`` when the range also holds
  older releases, and deleted when it does not (both safe: see ``_collective_statements``).

Names that other rules migrate (``pxla.ShardedDeviceArray``, ``pxla.Mesh``,
``xla_extension.DeviceArray``, ...) are never reported here: any name another registered rule
declares is skipped.
"""

from __future__ import annotations

import ast
from typing import Callable, Dict, List, Optional, Set

from jaxmigrate.migrator import lazycst as cst, references as refs
from jaxmigrate.migrator.astview import TRIED, AstView
from jaxmigrate.migrator.context import Context
from jaxmigrate.migrator.diagnostics import Diagnostic
from jaxmigrate.migrator.rule import Example, Rule, Safety, owners
from jaxmigrate.migrator.scope import dotted_parts, guards_imports
from jaxmigrate.migrator.version import parse_version
from jaxmigrate.rules._ast_sites import Resolver, legacy_imports_stay
from jaxmigrate.rules._helpers import in_compatibility_code, report_once, up_to

# Name -> (message, detail).
EXACT = {
    "jax.soft_pmap": (
        "jax.soft_pmap was removed in JAX 0.3.18; use jax.shard_map under jax.jit, or jax.vmap",
        "Use jax.jit(jax.shard_map(...)) over a mesh, or jax.vmap if no devices are involved.",
    ),
    "jax.clear_backends": (
        "jax.clear_backends was removed in JAX 0.4.36; use jax.clear_caches() (not equivalent)",
        "jax.clear_caches() drops compiled executables; jax.extend.backend.clear_backends() "
        "re-initialises the backends, if that is really needed.  The two are not equivalent.",
    ),
    "jax.experimental.pjit.AUTO": (
        "jax.experimental.pjit.AUTO is gone; leave the shardings of jax.jit unspecified",
        "No public replacement: let jax.jit choose shardings by leaving in_shardings/"
        "out_shardings unspecified, or use jax.sharding.auto_axes.",
    ),
}
_SHARDED_JIT = "Use jax.jit with in_shardings/out_shardings (NamedSharding) instead."
_PUBLIC = "Use the public equivalents: jax.Array, jax.Device, jax.errors.JaxRuntimeError, "
# Module prefix -> (message, detail) about any member used through it: reported once per file
# and module, at the first use, with the count of the uses.
MODULES = {
    "jax.experimental.sharded_jit": (
        "jax.experimental.sharded_jit was removed in JAX 0.3.16; use jax.jit with shardings",
        _SHARDED_JIT,
    ),
    "jax.interpreters.sharded_jit": (
        "jax.interpreters.sharded_jit was removed in JAX 0.3.16; use jax.jit with shardings",
        _SHARDED_JIT,
    ),
    "jax.interpreters.pxla": (
        "jax.interpreters.pxla is JAX-internal and going; use jax.jit, jax.shard_map, jax.sharding",
        "jax.interpreters.pxla is deprecated since JAX 0.8.2 and largely removed in "
        "0.10.0/0.11.0; there is no public replacement: use jax.jit/jax.shard_map and the "
        "jax.sharding APIs.",
    ),
    "jax.lib.xla_extension": (
        "jax.lib.xla_extension's members were removed in JAX 0.8.0; use jax.Array, jax.Device",
        _PUBLIC + "jax.extend.backend.* (removed in 0.8.0; the module in 0.9.0).",
    ),
    "jaxlib.xla_extension": (
        "jaxlib.xla_extension no longer exists; use public APIs (jax.Array, jax.Device)",
        _PUBLIC + "jax.extend.backend.*.",
    ),
    "jax.lib.xla_client": (
        "jax.lib.xla_client's members were removed in JAX 0.8.0; use jax.Array, jax.Device",
        _PUBLIC
        + "jax.extend.backend.* (deprecated in 0.6.0, removed in 0.8.0; the module in 0.9.0).",
    ),
    "jax.lib.xla_bridge": (
        "jax.lib.xla_bridge's members were removed in JAX 0.8.0; "
        "use jax.devices(), jax.extend.backend",
        "Use jax.devices()/jax.default_backend(), or jax.extend.backend.get_backend() "
        "(deprecated in 0.6.0, removed in 0.8.0; the module in 0.9.0).",
    ),
}
GLOBAL_ARG_SHAPES = (
    "pmap(global_arg_shapes=) was removed in JAX 0.4.8; drop it and use jax.jit or shard_map",
    "Drop it and move the computation to jax.jit with NamedSharding inputs (or jax.shard_map), "
    "which see global shapes directly.",
)
PMAP_NAMES = ("jax.pmap",)
# The set of collectives pmap allowed across hosts, and the check that read it: both are in
# jax 0.4.14's pxla and gone from 0.4.16 on, where every collective is allowed multi-host.
COLLECTIVES = frozenset(
    {
        "jax.interpreters.pxla.multi_host_supported_collectives",
        "jax._src.interpreters.pxla.multi_host_supported_collectives",
    }
)
COLLECTIVES_GONE = "0.4.16"
_SET_UPDATES = frozenset({"add", "update", "discard", "remove"})
_COLLECTIVES_SET = "multi_host_supported_collectives"
COLLECTIVES_FIX = "deleted an update of pxla.multi_host_supported_collectives (gone in JAX 0.4.16)"
COLLECTIVES_GUARD = (
    "guarded an update of pxla.multi_host_supported_collectives (gone in JAX 0.4.16)"
)
COLLECTIVES_REPORT = "pxla.multi_host_supported_collectives is gone from JAX 0.4.16; delete this"
COLLECTIVES_DETAIL = (
    "jax.interpreters.pxla.multi_host_supported_collectives and the check that read it are in "
    "jax 0.4.14 and gone from 0.4.16 on, where every collective is allowed on multiple hosts: "
    "a statement that only adds to the set has nothing left to do, and raises AttributeError."
)
# Migrated by other rules (array types, sharding names, device_put); kept here as well so they
# are never reported even if those rules are renamed.
HANDLED_ELSEWHERE = frozenset(
    {
        "jax.interpreters.pxla.ShardedDeviceArray",
        "jax.interpreters.pxla._ShardedDeviceArray",
        "jax.interpreters.pxla.make_sharded_device_array",
        "jax.interpreters.pxla.device_put",
        "jax.interpreters.pxla.PartitionSpec",
        "jax.interpreters.pxla.Mesh",
        "jax.lib.xla_extension.DeviceArray",
        "jax.lib.xla_extension.Buffer",
        "jax.lib.xla_client.Buffer",
        "jaxlib.xla_extension.DeviceArray",
        "jaxlib.xla_extension.Buffer",
    }
)


def _module(qualname: str, handled_elsewhere: Callable[[str], bool]) -> Optional[str]:
    """The entry of EXACT or MODULES that reports ``qualname``, if any."""
    if qualname in EXACT:
        return qualname
    for module in MODULES:
        if qualname.startswith(module + "."):
            member = module + "." + qualname[len(module) + 1 :].split(".", 1)[0]
            if handled_elsewhere(member):
                return None
            return module
    return None


class RemovedInternals(Rule, code="JAX805", safety=Safety.MANUAL):
    """soft_pmap, sharded_jit, pmap(global_arg_shapes=), pxla/xla_bridge/xla_client internals,
    clear_backends, pjit.AUTO: report; guard or drop updates of pxla's multi-host set

    **What it does.** Reports uses of removed or internal APIs from the pmap/pjit era, each
    with what to use instead (and fixes the last of these):

    * `jax.soft_pmap` (removed 0.3.18) -> `jax.jit(jax.shard_map(...))` or `jax.vmap`;
    * `jax.experimental.sharded_jit` (removed 0.3.16) -> `jax.jit` with shardings;
    * `jax.pmap(..., global_arg_shapes=...)` (removed 0.4.8) -> `jax.jit` / `jax.shard_map`;
    * `jax.clear_backends()` (removed 0.4.36) -> `jax.clear_caches()` to drop compiled code, or
      `jax.extend.backend.clear_backends()` to re-initialise backends.  Not rewritten: the two
      do different things;
    * members of `jax.lib.xla_extension`, `jax.lib.xla_client`, `jax.lib.xla_bridge`,
      `jaxlib.xla_extension` (removed 0.8.0) -> `jax.Array`, `jax.Device`,
      `jax.errors.JaxRuntimeError`, `jax.extend.backend.*`;
    * members of `jax.interpreters.pxla` (internal; deprecated 0.8.2) -> no public
      replacement; use `jax.jit`, `jax.shard_map`, `jax.sharding`;
    * `jax.experimental.pjit.AUTO` (gone on current JAX);
    * `jax.interpreters.pxla.multi_host_supported_collectives.add(p)` (the set and the check
      that read it are gone from 0.4.16: every collective is allowed on multiple hosts, and
      the statement raises AttributeError).  Where the target range reaches 0.4.16, such a
      statement (`.add`, `.update`, `.discard`, `.remove`) is rewritten as a safe fix:
      kept under `if hasattr(pxla, "multi_host_supported_collectives"):` when the range
      also holds older releases (it runs there as before), deleted when it does not (in code
      written for a JAX before 0.4.16, with arguments that are plain names).  Where neither
      form applies, a range with older releases deletes it with `--unsafe-fixes` only (those
      releases read the set).

    Uses are reported, not the import lines: a module's once per file, at its first use, with
    the count of the uses (``(3 uses)``); an import of these modules that nothing uses is
    removed where the module is gone from some release of the target range (`jax.lib.xla_bridge`
    from 0.9.0; `jax.interpreters.pxla` still exists, so its import stays: it may be a
    re-export).  Names another rule migrates (`pxla.ShardedDeviceArray`, `pxla.Mesh`,
    `xla_extension.DeviceArray`, ...) are left to that rule.

    **Why.** These fail with AttributeError/ImportError/TypeError on current JAX, and none but
    the multi-host set has a mechanical replacement.
    """

    references = (
        refs.release_notes("0.3.18", "jax.soft_pmap deleted"),
        refs.release_notes("0.4.8", "pmap(global_arg_shapes=) removed"),
        refs.release_notes("0.4.26", "jax.clear_backends deprecated"),
        refs.release_notes("0.6.0", "jax.lib.xla_extension APIs deprecated"),
        refs.release_notes("0.8.0", "deprecated jax.lib functions removed"),
        refs.release_notes("0.8.2", "jax.interpreters.pxla deprecated"),
        refs.source_at(
            "0.4.14",
            "jax/_src/interpreters/pxla.py",
            "multi_host_supported_collectives and its check (gone in 0.4.16)",
        ),
        refs.api_compatibility(),
    )
    names = frozenset(EXACT) | frozenset(MODULES)
    keywords = frozenset({"global_arg_shapes"})
    # (for the gates: visit_module reads each update of the set, through whichever import)
    attributes = frozenset({_COLLECTIVES_SET})
    legacy_modules = frozenset(MODULES)
    # Its hooks read their sites, the uses of its modules (a statement with a name in one of
    # :attr:`legacy_modules` is kept by the piecewise path) and pxla's set's updates (its
    # attribute keeps them): report_once counts every use.
    whole_module = False
    examples = (
        Example.reported(
            title="report only",
            code="""
            import jax

            jax.clear_backends()
            """,
        ),
    )

    def ast_findings(self, view: AstView) -> Optional[List[Diagnostic]]:
        """:meth:`visit_module` on ``ast``: each use of a removed name, and of a removed
        module once with the count; None where the LibCST hooks could do otherwise: a
        ``global_arg_shapes`` keyword, an update of pmap's multi-host set, a use under a guard
        (the hook skips ``try``/``except ImportError`` blocks only) or in an f-string, a head
        the module binds in more than one way, or a legacy import the engine may drop."""
        if "global_arg_shapes" in view.facts.keywords or _COLLECTIVES_SET in view.text:
            return None
        if not legacy_imports_stay(view, self.names, self.legacy_modules):
            return None
        index = owners()

        def handled_elsewhere(name: str) -> bool:
            return name in HANDLED_ELSEWHERE or index.owner(name, self.code) is not None

        resolver = Resolver(view, self.names)
        found: List[Optional[Diagnostic]] = []
        modules: Dict[str, List[ast.AST]] = {}
        for chain in view.chains:
            rest = "".join(f".{part}" for part in chain.parts[1:])
            heads = resolver.bound.get(chain.parts[0], ())
            if all(_module(head + rest, handled_elsewhere) is None for head in heads):
                continue  # whatever the head refers to, nothing this rule reports
            if chain.guarded & TRIED:
                continue  # (compatibility code: _not_a_use)
            sure, head = resolver.resolve(chain.parts[0])
            if not sure or chain.guarded or chain.in_fstring:
                return None  # (the hook reads under a feature test too: LibCST decides)
            entry = None if head is None else _module(head + rest, handled_elsewhere)
            node = chain.nodes[-1]
            if entry in EXACT:
                found.append(view.report(self.code, node, *EXACT[entry]))
            elif entry is not None:
                modules.setdefault(entry, []).append(node)
        for module, uses in modules.items():
            found.append(view.report_once(self.code, uses, *MODULES[module]))
        return [finding for finding in found if finding is not None]

    def visit_keyword(self, arg: cst.Arg, call: cst.Call, ctx: Context) -> None:
        scope = ctx.scope_of(call)
        func = call.func
        if isinstance(func, cst.Call):  # functools.partial(jax.pmap, ...)(f) is not this form
            return
        qualname = ctx.qualname(func, scope)
        if qualname in PMAP_NAMES:
            ctx.report(arg, *GLOBAL_ARG_SHAPES)
            return
        if qualname == "functools.partial" and call.args and not call.args[0].keyword:
            if ctx.qualname(call.args[0].value, scope) in PMAP_NAMES:
                ctx.report(arg, *GLOBAL_ARG_SHAPES)

    def visit_module(self, ctx: Context) -> None:
        def handled_elsewhere(name: str) -> bool:
            return name in HANDLED_ELSEWHERE or ctx.owner(name) is not None

        handled = _collective_statements(ctx)
        modules: Dict[str, List[cst.CSTNode]] = {}
        for node in _uses(ctx):
            if handled and _inside(ctx, node, handled):
                continue  # one message per statement: the fix's, or its finding
            qualname = ctx.qualname(node, ctx.scope_of(node))
            entry = _module(qualname, handled_elsewhere) if qualname is not None else None
            if entry in EXACT:
                ctx.report(node, *EXACT[entry])
            elif entry is not None:
                modules.setdefault(entry, []).append(node)
        for module, uses in modules.items():
            report_once(ctx, uses, *MODULES[module])


def _collective_statements(ctx: Context) -> Set[int]:
    """Each statement that only updates pmap's multi-host collective set, where the target
    range reaches 0.4.16 (the set is gone there and the statement raises AttributeError):

    * a range that also holds older releases keeps it under ``if hasattr(<pxla>, "...")``,
      which does what it did where the set exists and nothing where every collective is
      allowed (safe; the module reached through an import that exists throughout the range);
    * a range that starts at 0.4.16 or later deletes it (safe: it ran on no release of the
      range), in code written before 0.4.16 and when its arguments run nothing;
    * where neither applies, a range with older releases deletes it as an unsafe fix (those
      releases read the set); else it is reported.

    One that compatibility code holds (a ``try`` or a feature test: such as the guard above)
    is left alone and not reported.  The ids of the statements handled, compatibility code's
    included; none when the whole range has the set."""
    gone = parse_version(COLLECTIVES_GONE)
    handled: Set[int] = set()
    if not ctx.reaches(gone):
        return handled
    for expr in ctx.all_nodes(cst.Expr):
        call = expr.value
        if not (
            isinstance(call, cst.Call)
            and isinstance(call.func, cst.Attribute)
            and call.func.attr.value in _SET_UPDATES
            and ctx.qualname(call.func.value, ctx.scope_of(call)) in COLLECTIVES
        ):
            continue
        handled.add(id(expr))  # (under a feature test or ``try``, it needs nothing)
        if in_compatibility_code(ctx, expr):
            continue
        if ctx.target < gone and _guard(ctx, expr, call):
            continue
        written_before, why = ctx.written_before(gone)
        if not (written_before and _plain_arguments(call)):
            ctx.report(expr, COLLECTIVES_REPORT, COLLECTIVES_DETAIL)
            continue
        _delete(ctx, expr, call, why, ctx.target >= gone)
    return handled


def _guard(ctx: Context, expr: cst.Expr, call: cst.Call) -> bool:
    """Puts the statement of ``expr`` under a test that the set exists; False when it cannot
    (a statement sharing its line, or a set not read as an attribute of a module that exists
    on every release of the range)."""
    line = ctx.parent(expr)
    owner = call.func.value  # type: ignore[attr-defined]
    if not (
        isinstance(line, cst.SimpleStatementLine)
        and len(line.body) == 1
        and isinstance(owner, cst.Attribute)
        and owner.attr.value == _COLLECTIVES_SET
    ):
        return False
    module = ctx.qualname(owner.value, ctx.scope_of(call))
    if module is None or not ctx.exists_throughout(module):
        return False
    test = cst.Call(
        func=cst.Name("hasattr"),
        args=[
            cst.Arg(
                ctx.copy(owner.value), comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
            ),
            cst.Arg(cst.SimpleString(f'"{_COLLECTIVES_SET}"')),
        ],
    )
    guarded = cst.If(
        test=test,
        body=cst.IndentedBlock(body=[line.with_changes(leading_lines=[])]),
        leading_lines=line.leading_lines,
    )
    ctx.replace(
        line,
        guarded,
        COLLECTIVES_GUARD,
        Safety.SAFE,
        detail=f"Kept `{ctx.code(call)}` under a test that the set exists. {COLLECTIVES_DETAIL} "
        "On the older releases of the range the statement runs as before.",
    )
    return True


def _delete(ctx: Context, expr: cst.Expr, call: cst.Call, why: str, safe: bool) -> None:
    line = ctx.parent(expr)
    target: cst.CSTNode = expr
    new: object = cst.RemovalSentinel.REMOVE
    if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1:
        target = line
        block = ctx.parent(line)
        if isinstance(block, cst.IndentedBlock) and len(block.body) == 1:
            new = line.with_changes(body=[cst.Pass()])  # the block's only statement
    elif isinstance(line, cst.SimpleStatementLine):  # ``a = 1; <update>``: no ``;`` left over
        rest = [statement for statement in line.body if statement is not expr]
        rest[-1] = rest[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
        target, new = line, line.with_changes(body=rest)
    why = f"{why[:1].upper()}{why[1:]}"
    ctx.replace(
        target,
        new,  # type: ignore[arg-type]
        COLLECTIVES_FIX,
        Safety.SAFE if safe else Safety.UNSAFE,
        detail=f"Deleted `{ctx.code(call)}`. {COLLECTIVES_DETAIL} {why}; "
        + (
            "no release of the range has the set, so the statement ran on none of them."
            if safe
            else "unsafe because older releases of the range did read the set."
        ),
    )


def _plain_arguments(call: cst.Call) -> bool:
    """Only names and attribute chains (in tuples, lists or sets): deleting the call drops
    nothing that runs."""
    stack: List[cst.BaseExpression] = [arg.value for arg in call.args]
    while stack:
        value = stack.pop()
        if isinstance(value, (cst.Tuple, cst.List, cst.Set)):
            stack.extend(element.value for element in value.elements)
        elif dotted_parts(value) is None:
            return False
    return True


def _inside(ctx: Context, node: cst.CSTNode, ids: Set[int]) -> bool:
    return any(id(ancestor) in ids for ancestor in ctx.ancestors(node))


def _uses(ctx: Context) -> List[cst.CSTNode]:
    """Outermost dotted names and plain names in load position, outside import statements
    and outside ``try: ... except ImportError`` compatibility blocks (not ``def``/``class``
    names, keyword names or parameter names), read from the per-round node index.  Only a
    name whose head is bound by an import can resolve to a qualified name, so only those."""
    imported = {binding.name for binding in ctx.analysis.imports}
    if not imported:
        return []
    blocked: Dict[int, bool] = {}
    found: List[cst.CSTNode] = []
    for name in ctx.all_nodes(cst.Name):
        if name.value not in imported:
            continue
        parent = ctx.parent(name)
        if isinstance(parent, (cst.FunctionDef, cst.ClassDef, cst.Param)) and parent.name is name:
            continue  # names that are not references
        if isinstance(parent, cst.Arg) and parent.keyword is name:
            continue
        if not up_to(ctx, parent, _not_a_use, blocked):
            found.append(name)
    for node in ctx.all_nodes(cst.Attribute):
        parts = dotted_parts(node)
        if parts is None or parts[0] not in imported:
            continue
        if not up_to(ctx, ctx.parent(node), _not_a_use, blocked):
            found.append(node)
    return found


def _not_a_use(node: cst.CSTNode) -> bool:
    """What is below ``node`` is not a use: it is an import, a dotted name (only the outermost
    one counts), or a ``try: ... except ImportError`` block."""
    return (
        isinstance(node, (cst.Import, cst.ImportFrom))
        or (isinstance(node, cst.Attribute) and dotted_parts(node) is not None)
        or guards_imports(node)
    )
