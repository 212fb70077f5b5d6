"""JAX308 gda-serialization: ``jax.experimental.gda_serialization`` ->
``jax.experimental.array_serialization``.

Release notes: jax 0.4.9 adds array_serialization and deprecates the old path; 0.4.11 removes
it.  Checked against jax 0.10.2: ``jax.experimental.array_serialization.serialization`` still
provides ``async_serialize``, ``run_serialization``, ``get_tensorstore_spec`` (zarr driver, as
before) and ``GlobalAsyncCheckpointManager``; the deserialization entry points now take
shardings instead of ``(global_meshes, mesh_axes)``, so code using them is reported, not
renamed.
"""

from __future__ import annotations

from typing import AbstractSet, Dict, FrozenSet, List, Optional, Union

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.migrator.context import Context, NameSite
from jaxmigrate.migrator.rule import Example, Lifecycle, Rule, Safety
from jaxmigrate.migrator.scope import dotted_name
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

    **Not rewritten.** Deserialization changed its signature: `run_deserialization`,
    `async_deserialize` and `GlobalAsyncCheckpointManager.deserialize` took
    `(global_meshes, mesh_axes, ...)` and now take shardings
    (`NamedSharding(mesh, P(*axes))` for each array); `create_async_gda_from_callback` has
    no counterpart.  A file that uses any of them is reported and left alone, since
    renaming only the import would turn an ImportError into a wrong-argument error.
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
        for site in sites:
            last = site.qualname.rsplit(".", 1)[-1]
            if (
                site.qualname.startswith(f"{OLD}.serialization.")
                and last in CHANGED
                and not site.is_import
            ):
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
