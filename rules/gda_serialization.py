"""JAX308 gda-serialization: ``jax.experimental.gda_serialization`` ->
``jax.experimental.array_serialization``.

Release notes: jax 0.4.9 adds array_serialization and deprecates the old path; 0.4.11 removes
it.  Checked against jax 0.10.2: ``jax.experimental.array_serialization.serialization`` still
provides ``async_serialize``, ``run_serialization``, ``get_tensorstore_spec`` (zarr driver, as
before) and ``GlobalAsyncCheckpointManager``.  The deserialization entry points take shardings
instead of ``(global_meshes, mesh_axes)`` from jax 0.3.22 (the 0.3.21 and 0.3.22 sources): a
call written for shardings moves with the module, any other is reported, not renamed.
"""

from __future__ import annotations

from typing import AbstractSet, Callable, Dict, FrozenSet, List, Optional, Tuple, Union

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.migrator.context import Context, NameSite
from jaxmigrate.migrator.rule import Example, Lifecycle, Rule, Safety
from jaxmigrate.migrator.scope import dotted_name
from jaxmigrate.migrator.version import parse_version
from jaxmigrate.rules._api_history import added_in
from jaxmigrate.rules._gda import all_names
from jaxmigrate.rules._helpers import fitting

OLD = "jax.experimental.gda_serialization"
NEW = "jax.experimental.array_serialization"
# Names of gda_serialization.serialization that keep their meaning under the new path.
SAME = frozenset(
    {
        "async_serialize",
        "run_serialization",
        "get_tensorstore_spec",
        "GlobalAsyncCheckpointManager",
        "GlobalAsyncCheckpointManagerBase",
        "AsyncManager",
        "TS_CONTEXT",
    }
)
# Names whose signature changed (meshes + mesh_axes -> shardings) or that are gone.
# (the message, its detail)
CHANGED = {
    "run_deserialization": (
        "run_deserialization takes shardings now: pass NamedShardings",
        "run_deserialization(shardings, tensorstore_specs, global_shapes, dtypes) takes shardings "
        "now: pass [NamedSharding(mesh, P(*axes)) ...] instead of (global_meshes, mesh_axes)",
    ),
    "async_deserialize": (
        "async_deserialize takes a sharding now: pass NamedSharding(mesh, P(*mesh_axes))",
        "async_deserialize(sharding, tensorstore_spec, global_shape, dtype) takes a sharding now: "
        "pass NamedSharding(mesh, P(*mesh_axes)) instead of (mesh, mesh_axes)",
    ),
    "create_async_gda_from_callback": (
        "create_async_gda_from_callback is gone; use jax.make_array_from_callback",
        "create_async_gda_from_callback is gone; build the array with jax.make_array_from_callback",
    ),
}
# Deserialization took (meshes, mesh axes) until JAX 0.3.21 and shardings from 0.3.22 (their
# sources): each entry point's parameters under each signature, those without a default first.
# The first parameter of async_deserialize was renamed since (in_sharding in 0.4.13,
# user_in_sharding in 0.4.30, in_type in 0.10.2): only a positional one works on every release
# ('' matches no keyword).
SHARDINGS_FROM = parse_version("0.3.22")
Signature = Tuple[Tuple[str, ...], Tuple[str, ...]]
MESH_AXES: Dict[str, Signature] = {
    "run_deserialization": (
        ("global_meshes", "mesh_axes", "tensorstore_specs"),
        ("global_shapes", "dtypes", "concurrent_gb"),
    ),
    "async_deserialize": (
        ("mesh", "mesh_axes", "tensorstore_spec"),
        ("global_shape", "dtype", "byte_limiter"),
    ),
    "deserialize": (
        ("global_meshes", "mesh_axes", "tensorstore_specs"),
        ("global_shapes", "dtypes"),
    ),
}
SHARDINGS: Dict[str, Signature] = {
    "run_deserialization": (
        ("shardings", "tensorstore_specs"),
        ("global_shapes", "dtypes", "concurrent_gb"),
    ),
    "async_deserialize": (("", "tensorstore_spec"), ("global_shape", "dtype", "byte_limiter")),
    "deserialize": (("shardings", "tensorstore_specs"), ("global_shapes", "dtypes")),
}
SHARDING_BY_KEYWORD = (
    "async_deserialize's first parameter was renamed: pass the sharding by position",
    "async_deserialize(in_sharding=...): its first parameter is user_in_sharding in JAX 0.4.30 "
    "and 0.6.2, in_type in 0.10.2; passed by position, the sharding works on every release",
)
KEYWORDS = {"async_serialize": {"gda_inp": "arr_inp"}, "run_serialization": {"gdas": "arrays"}}
THEN = f"then change {OLD} to {NEW}"

ImportNode = Union["cst.Import", "cst.ImportFrom"]


def _under(name: Optional[str], root: str) -> bool:
    return bool(name) and (name == root or name.startswith(root + "."))  # type: ignore[union-attr]


def _renamed(name: str) -> str:
    return NEW + name[len(OLD) :]


class GdaSerialization(Rule, code="JAX308", safety=Safety.SAFE):
    """jax.experimental.gda_serialization -> jax.experimental.array_serialization (deserialization
    calls reported)

    **What it does.** Moves imports of `jax.experimental.gda_serialization` (the module, its
    `serialization` submodule or names from it) to `jax.experimental.array_serialization`,
    renames dotted references, and renames the keywords that changed with the types
    (`async_serialize(gda_inp=)` -> `arr_inp=`, `run_serialization(gdas=)` -> `arrays=`).

    **Why.** The GDA checkpointing module was renamed when GlobalDeviceArray gave way to
    jax.Array: the new path exists from JAX 0.4.9, the old one is gone in 0.4.11.

    **Not rewritten.** Deserialization changed its signature in JAX 0.3.22:
    `run_deserialization`, `async_deserialize` and `GlobalAsyncCheckpointManager.deserialize`
    took `(global_meshes, mesh_axes, ...)` and take shardings from then on
    (`NamedSharding(mesh, P(*axes))` for each array).  A call written for shardings moves with
    the module: its arguments fit only that signature (`run_deserialization(shardings, specs)`),
    or the code was written for JAX 0.3.22 or later (its requirement, or names it uses).
    `async_deserialize(in_sharding=...)` is reported: that parameter was renamed since, and
    only a sharding passed by position works on every release.  A file with any other use of
    them, or with `create_async_gda_from_callback` (no counterpart), is reported and left
    alone, since renaming only the import would turn an ImportError into a wrong-argument
    error.
    """

    lifecycle = Lifecycle(
        needs=added_in("jax.experimental.array_serialization.serialization"),
        deprecated=(
            "0.4.9",
            "jax.experimental.array_serialization added, gda_serialization deprecated",
        ),
        removed=("0.4.11", "jax.experimental.gda_serialization removed"),
    )
    names = frozenset(
        {OLD, f"{OLD}.serialization"} | {f"{OLD}.serialization.{n}" for n in SAME | set(CHANGED)}
    )
    legacy_modules = frozenset({OLD})

    def survey_writes(self, words: AbstractSet[str]) -> FrozenSet[str]:
        """A moved import binds its name to the new module: every chain on the name then reads
        a member of it, whatever release added that member."""
        found = super().survey_writes(words)
        if "gda_serialization" in words:
            found |= frozenset(NEW.split(".")) | {"serialization"}
        return found

    examples = (
        Example(
            before="""
            from jax.experimental.gda_serialization import serialization

            serialization.run_serialization(arrays, specs)
            """,
            after="""
            from jax.experimental.array_serialization import serialization

            serialization.run_serialization(arrays, specs)
            """,
        ),
        Example.reported(
            title="deserialization takes shardings now: reported",
            code="""
            from jax.experimental.gda_serialization.serialization import run_deserialization

            arrays = run_deserialization([mesh], [axes], specs)
            """,
        ),
    )

    @staticmethod
    def _sites(ctx: Context) -> List[NameSite]:
        """This round's name sites of the legacy module, collected for visit_module."""
        return ctx.memo(("gda serialization", "sites"), list)

    def visit_name(self, site: NameSite, ctx: Context) -> None:
        self._sites(ctx).append(site)

    def visit_module(self, ctx: Context) -> None:
        sites = self._sites(ctx)
        statements = self._legacy_imports(ctx)
        blockers = self._blockers(ctx, sites, statements)
        if blockers:
            for node, message, detail in blockers:
                ctx.report(node, message, f"{detail}; {THEN}.")
            return
        local_rename = False
        taken = all_names(ctx)
        for statement in statements:
            new, renames_local = self._rewrite_import(statement, "array_serialization" not in taken)
            local_rename = local_rename or renames_local
            if new is None:
                continue
            ctx.replace(statement, new, f"{OLD} -> {NEW}")
        for site in sites:
            if site.is_import:
                continue
            node = site.node
            if site.qualname == OLD:
                if isinstance(node, cst.Attribute):
                    ctx.replace(
                        node,
                        node.with_changes(attr=cst.Name("array_serialization")),
                        f"{OLD} -> {NEW}",
                    )
                elif (
                    isinstance(node, cst.Name)
                    and local_rename
                    and node.value == "gda_serialization"
                ):
                    ctx.replace(node, cst.Name("array_serialization"), f"{OLD} -> {NEW}")
                continue
            last = site.qualname.rsplit(".", 1)[-1]
            parent = site.parent
            if last in KEYWORDS and isinstance(parent, cst.Call) and parent.func is node:
                self._rename_keywords(parent, KEYWORDS[last], ctx)

    # -- helpers -------------------------------------------------------------------------------
    @staticmethod
    def _legacy_imports(ctx: Context) -> List[ImportNode]:
        seen: Dict[int, ImportNode] = {}
        for binding in ctx.analysis.imports:
            statement = binding.statement
            if binding.guarded or statement is None or id(statement) in seen:
                continue
            if isinstance(statement, cst.ImportFrom):
                module = dotted_name(statement.module) if statement.module is not None else None
                if statement.relative or module is None:
                    continue
                if _under(module, OLD) or (
                    module == "jax.experimental"
                    and not isinstance(statement.names, cst.ImportStar)
                    and any(a.name.value == "gda_serialization" for a in statement.names)
                ):
                    seen[id(statement)] = statement
            elif isinstance(statement, cst.Import) and any(
                _under(dotted_name(a.name), OLD) for a in statement.names
            ):
                seen[id(statement)] = statement
        return list(seen.values())

    def _blockers(self, ctx: Context, sites: List[NameSite], statements: List[ImportNode]) -> List:
        blockers = []
        manager = False
        newer = _written_since(ctx)
        for site in sites:
            last = site.qualname.rsplit(".", 1)[-1]
            if (
                site.qualname.startswith(f"{OLD}.serialization.")
                and last in CHANGED
                and not site.is_import
            ):
                call = ctx.parent(site.node)
                if last not in SHARDINGS or not (
                    isinstance(call, cst.Call) and call.func is site.node
                ):
                    blockers.append((site.node, *CHANGED[last]))
                elif _sharding_by_keyword(call, last):
                    blockers.append((site.node, *SHARDING_BY_KEYWORD))
                elif not _takes_shardings(call, last, newer):
                    blockers.append((site.node, *CHANGED[last]))
            if last == "GlobalAsyncCheckpointManager":
                manager = True
        for statement in statements:
            if not isinstance(statement, cst.ImportFrom) or isinstance(
                statement.names, cst.ImportStar
            ):
                if isinstance(statement, cst.ImportFrom):
                    star = "a star import from the old module cannot be checked name by name"
                    blockers.append((statement, star, star))
                continue
            module = dotted_name(statement.module)
            for alias in statement.names:
                name = (
                    alias.name.value
                    if isinstance(alias.name, cst.Name)
                    else dotted_name(alias.name)
                )
                if module == f"{OLD}.serialization" and name not in SAME and name not in CHANGED:
                    full = f"{name} has no counterpart in {NEW}.serialization"
                    short = f"{name} has no counterpart in array_serialization"
                    blockers.append((alias, fitting(full, short), full))
                if module == OLD and name != "serialization":
                    full = f"{OLD}.{name} has no counterpart in {NEW}"
                    blockers.append(
                        (alias, fitting(full, f"{name} has no counterpart in {NEW}"), full)
                    )
        if manager:
            for node in _deserialize_calls(ctx):
                if _takes_shardings(node, "deserialize", newer):
                    continue
                blockers.append(
                    (
                        node,
                        "GlobalAsyncCheckpointManager.deserialize takes shardings now: "
                        "pass NamedShardings",
                        "GlobalAsyncCheckpointManager.deserialize(shardings, tensorstore_specs, "
                        "...) takes shardings now, not (global_meshes, mesh_axes)",
                    )
                )
        return blockers

    @staticmethod
    def _rewrite_import(statement: ImportNode, may_rename_local: bool):
        renames_local = False
        if isinstance(statement, cst.ImportFrom):
            module = dotted_name(statement.module)
            if module is not None and _under(module, OLD):
                return statement.with_changes(module=cst.parse_expression(_renamed(module))), False
            names = []
            for alias in statement.names:  # type: ignore[union-attr]
                if alias.name.value == "gda_serialization":
                    if alias.asname is None and not may_rename_local:
                        alias = alias.with_changes(
                            asname=cst.AsName(name=cst.Name("gda_serialization"))
                        )
                    elif alias.asname is None:
                        renames_local = True
                    alias = alias.with_changes(name=cst.Name("array_serialization"))
                names.append(alias)
            return statement.with_changes(names=names), renames_local
        names = []
        for alias in statement.names:
            name = dotted_name(alias.name)
            if name is not None and _under(name, OLD):
                alias = alias.with_changes(name=cst.parse_expression(_renamed(name)))
            names.append(alias)
        return statement.with_changes(names=names), False

    @staticmethod
    def _rename_keywords(call: cst.Call, renames: Dict[str, str], ctx: Context) -> None:
        changed = False
        args = []
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value in renames:
                arg = arg.with_changes(keyword=cst.Name(renames[arg.keyword.value]))
                changed = True
            args.append(arg)
        if changed:
            ctx.replace(
                call,
                call.with_changes(args=args),
                "gda_serialization keyword renamed for jax.Array",
            )


def _deserialize_calls(ctx: Context) -> List[cst.Call]:
    return [
        node
        for node in ctx.nodes(cst.Call)
        if isinstance(node.func, cst.Attribute) and node.func.attr.value == "deserialize"
    ]


def _written_since(ctx: Context) -> Callable[[], bool]:
    """Was the module written for JAX 0.3.22 or later, where deserialization takes shardings
    (asked once, where a call's arguments fit both signatures)?"""
    answer: List[bool] = []

    def since() -> bool:
        if not answer:
            answer.append(ctx.written_before(SHARDINGS_FROM)[0] is False)
        return answer[0]

    return since


def _takes_shardings(call: cst.Call, name: str, newer: Callable[[], bool]) -> bool:
    """Is ``call`` of the deserialization entry point ``name`` written for shardings: its
    arguments fit that signature (with keywords every release since takes), and no call with
    meshes and mesh axes fits them, or the code was written for 0.3.22 or later (``newer``)?
    Then the module's new path runs it as the old one did."""
    if any(arg.star for arg in call.args):
        return False
    positional = sum(1 for arg in call.args if arg.keyword is None)
    keywords = [arg.keyword.value for arg in call.args if arg.keyword is not None]
    return _binds(SHARDINGS[name], positional, keywords) and (
        not _binds(MESH_AXES[name], positional, keywords) or newer()
    )


def _sharding_by_keyword(call: cst.Call, name: str) -> bool:
    """Does ``call`` of ``async_deserialize`` pass its sharding as ``in_sharding=``?"""
    return name == "async_deserialize" and any(
        arg.keyword is not None and arg.keyword.value == "in_sharding" for arg in call.args
    )


def _binds(signature: Signature, positional: int, keywords: List[str]) -> bool:
    """Could ``positional`` arguments and ``keywords`` be passed to ``signature``?"""
    required, optional = signature
    names = required + optional
    if positional > len(names):
        return False
    given = set(names[:positional])
    for keyword in keywords:
        if keyword not in names or keyword in given:
            return False
        given.add(keyword)
    return all(name in given for name in required)
