"""JAX801 device-put-sharded: ``jax.device_put_sharded`` / ``device_put_replicated`` ->
``jax.device_put``.

Deprecated in jax 0.8.1, removed in 0.10.0 (release notes of both); the replacement code is in
JAX's "Migrating to the new jax.pmap" guide.  Run on real JAX, the values are equal but the
sharding changes from ``PmapSharding`` to ``NamedSharding`` and each device's shard keeps a
leading axis of size 1 instead of dropping it, so the fix is unsafe.
"""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Sequence

from jaxmigrate.migrator import lazycst as cst, references as refs
from jaxmigrate.migrator.astfacts import dotted
from jaxmigrate.migrator.astview import AstView
from jaxmigrate.migrator.context import Context, NameSite
from jaxmigrate.migrator.diagnostics import Diagnostic
from jaxmigrate.migrator.rule import Example, Lifecycle, Rule, Safety
from jaxmigrate.migrator.scope import dotted_parts
from jaxmigrate.rules._ast_sites import (
    Resolver,
    called_at,
    held_back,
    legacy_imports_stay,
    name_sites,
)
from jaxmigrate.rules._helpers import called
from jaxmigrate.rules._receivers import receiver_tie

PARAMETERS = {
    "jax.device_put_sharded": ("shards", "devices"),
    "jax.device_put_replicated": ("x", "devices"),
}
# Calls that list devices and may be evaluated twice.
DEVICE_LISTS = frozenset({"jax.devices", "jax.local_devices"})

CAVEAT = (
    "The values are equal, but the result has a NamedSharding over a 1-D mesh ('x',) instead of "
    "a PmapSharding, and each device's shard has shape (1, ...) instead of (...)."
)
# name -> (message, detail)
RECIPE = {
    "jax.device_put_sharded": (
        "jax.device_put_sharded was removed in JAX 0.10.0; use jax.device_put with a NamedSharding",
        "Use jax.device_put(jnp.stack(shards), "
        "NamedSharding(Mesh(np.array(devices), ('x',)), P('x'))) (stack pytrees leaf by leaf with "
        "jax.tree.map(lambda *xs: jnp.stack(xs), *shards)).",
    ),
    "jax.device_put_replicated": (
        "jax.device_put_replicated was removed in JAX 0.10.0; "
        "use jax.device_put with a NamedSharding",
        "Use jax.device_put("
        "jnp.stack([x] * len(devices)), NamedSharding(Mesh(np.array(devices), ('x',)), P('x'))), "
        "or jax.device_put(x, NamedSharding(mesh, P())) for a truly replicated array (the shape "
        "then loses the device axis).",
    ),
}


def _arguments(call: cst.Call, parameters) -> Optional[Dict[str, cst.BaseExpression]]:  # noqa: ANN001
    found: Dict[str, cst.BaseExpression] = {}
    for index, arg in enumerate(call.args):
        if arg.star:
            return None
        if arg.keyword is None:
            key = parameters[index] if index < len(parameters) else None
        else:
            key = arg.keyword.value
        if key is None or key not in parameters or key in found:
            return None
        found[key] = arg.value
    return found if len(found) == len(parameters) else None


class DevicePutSharded(Rule, code="JAX801", safety=Safety.UNSAFE):
    """jax.device_put_sharded / device_put_replicated -> jax.device_put(jnp.stack(...),
    NamedSharding(...))

    **What it does.** Rewrites
    `jax.device_put_sharded(shards, devices)` as
    `jax.device_put(jnp.stack(shards), NamedSharding(Mesh(np.array(devices), ('x',)), P('x')))`
    and `jax.device_put_replicated(x, devices)` as
    `jax.device_put(jnp.stack([x] * len(devices)), NamedSharding(Mesh(np.array(devices), ('x',)), P('x')))`
    (the drop-in code of JAX's pmap migration guide).  `device_put_replicated` is rewritten only
    when `devices` is a name, an attribute or a `jax.devices()`/`jax.local_devices()` call,
    because the expression is used twice; other uses are reported with the recipe.

    **Why.** Both were deprecated in JAX 0.8.1 and removed in 0.10.0 (AttributeError).

    **Why unsafe.** The values are the same, but the sharding type changes from
    `PmapSharding` to a `NamedSharding` over a one-axis mesh, and each device's shard now has
    shape `(1, ...)` (the rank is kept) instead of `(...)`.  Code that reads
    `addressable_shards`/`sharding` or feeds the result to `pmap` should be checked.
    `device_put_replicated` produced stacked copies; for a truly replicated array use
    `jax.device_put(x, NamedSharding(mesh, P()))` (no leading device axis, so not automatic).
    Both functions took pytrees (a dict of params, a list of per-device dicts): unless the value
    is visibly arrays (a JAX call, a list display of them), the rewrite maps over the leaves,
    `jax.tree_util.tree_map(lambda leaf: jax.device_put(jnp.stack([leaf] * n), ...), tree)` and
    `jax.tree_util.tree_map(lambda *leaves: jax.device_put(jnp.stack(leaves), ...), *shards)`,
    which is the same for a plain array.
    """  # noqa: E501

    unsafe_fixes_only = True  # (all its fixes are unsafe: the survey runs it only with them)
    lifecycle = Lifecycle(
        needs="0.4.1",
        deprecated=("0.8.1", "device_put_sharded and device_put_replicated deprecated"),
        removed=("0.10.0", "device_put_sharded and device_put_replicated removed"),
    )
    references = (refs.pmap_migration(),)
    names = frozenset(PARAMETERS)
    examples = (
        Example(
            unsafe_fixes=True,
            before="""
            import jax
            import jax.numpy as jnp
            import numpy as np
            from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

            a = jnp.ones(3)
            b = jnp.zeros(3)
            xs = jax.device_put_sharded([a, b], devices)
            ys = jax.device_put_replicated(a, jax.local_devices())
            ps = jax.device_put_replicated(params, devices)
            """,
            after="""
            import jax
            import jax.numpy as jnp
            import numpy as np
            from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

            a = jnp.ones(3)
            b = jnp.zeros(3)
            xs = jax.device_put(jnp.stack([a, b]), NamedSharding(Mesh(np.array(devices), ('x',)), P('x')))
            ys = jax.device_put(jnp.stack([a] * len(jax.local_devices())), NamedSharding(Mesh(np.array(jax.local_devices()), ('x',)), P('x')))
            ps = jax.tree_util.tree_map(lambda leaf: jax.device_put(jnp.stack([leaf] * len(devices)), NamedSharding(Mesh(np.array(devices), ('x',)), P('x'))), params)
            """,  # noqa: E501
        ),
        Example.reported(
            title="without --unsafe-fixes it is reported",
            code="""
            import jax

            xs = jax.device_put_sharded(shards, devices)
            """,
        ),
    )

    def visit_name(self, site: NameSite, ctx: Context) -> None:
        if site.is_import:
            return  # the import goes once nothing uses it
        call = called(site)
        arguments = _arguments(call, PARAMETERS[site.qualname]) if call is not None else None
        if call is None or arguments is None:
            ctx.report(site.node, *RECIPE[site.qualname])
            return
        devices = arguments["devices"]
        if site.qualname == "jax.device_put_replicated" and not self._repeatable(
            devices, site, ctx
        ):
            message, detail = RECIPE[site.qualname]
            ctx.report(
                call,
                message,
                detail + " Not rewritten: devices is used twice; bind it to a name first.",
            )
            return
        scope = site.scope
        names = {
            "put": ctx.code(ctx.ref("jax.device_put", scope)),
            "stack": ctx.code(ctx.ref("jax.numpy.stack", scope)),
            "array": ctx.code(ctx.ref("numpy.array", scope)),
            "sharding": ctx.code(ctx.ref("jax.sharding.NamedSharding", scope, prefer_from=True)),
            "mesh": ctx.code(ctx.ref("jax.sharding.Mesh", scope, prefer_from=True)),
            "spec": ctx.code(ctx.ref("jax.sharding.PartitionSpec", scope, prefer_from=True)),
        }
        devices_code = ctx.code(devices)
        sharded = site.qualname == "jax.device_put_sharded"
        value = arguments["shards"] if sharded else arguments["x"]
        # A pytree (a dict of params, a list of dicts) is stacked leaf by leaf; jnp.stack only
        # takes arrays.  The plain form is kept where the value is visibly arrays.
        tree = not _visibly_arrays(ctx, value, site.scope, sharded)
        if tree and "leaf" in devices_code:
            message, detail = RECIPE[site.qualname]
            ctx.report(
                call,
                message,
                detail + " Not rewritten: the value may be a pytree; map over its leaves.",
            )
            return
        if sharded:
            stacked = (
                f"{names['stack']}(leaves)" if tree else f"{names['stack']}({ctx.code(value)})"
            )
        else:
            item = "leaf" if tree else ctx.code(value)
            stacked = f"{names['stack']}([{item}] * len({devices_code}))"
        text = (
            f"{names['put']}({stacked}, {names['sharding']}({names['mesh']}("
            f"{names['array']}({devices_code}), ('x',)), {names['spec']}('x')))"
        )
        if tree:
            tree_map = ctx.code(ctx.ref("jax.tree_util.tree_map", scope))
            text = (
                f"{tree_map}(lambda *leaves: {text}, *{ctx.code(value)})"
                if sharded
                else f"{tree_map}(lambda leaf: {text}, {ctx.code(value)})"
            )
        legacy = site.qualname.rsplit(".", 1)[-1]
        ctx.replace(
            call,
            cst.parse_expression(text),
            f"jax.{legacy} (removed in 0.10.0) -> jax.device_put with a NamedSharding",
            detail=CAVEAT,
        )

    def ast_findings(self, view: AstView) -> Optional[List[Diagnostic]]:
        """:meth:`visit_name` on ``ast`` where its fixes are held back (no ``--unsafe-fixes``):
        each site's recipe, or its fix's message marked held back.  None where LibCST must
        decide: fixes to write, sites the view cannot be sure of, an import the engine may
        drop, a devices expression it cannot resolve, or a value that may be a pytree whose
        rewrite would spell ``leaf`` twice (``_visibly_arrays`` reads the receiver's flow)."""
        if view.unsafe_fixes or not legacy_imports_stay(view, self.names, self.legacy_modules):
            return None
        resolved = Resolver(view, self.names)
        sites = name_sites(view, resolved)
        if sites is None:
            return None
        calls = called_at(view, sites)
        found: List[Optional[Diagnostic]] = []
        for node, qualname in sites:
            call = calls.get(id(node))
            arguments = None if call is None else _ast_arguments(call, PARAMETERS[qualname])
            if call is None or arguments is None:
                found.append(view.report(self.code, node, *RECIPE[qualname]))
                continue
            if qualname == "jax.device_put_replicated":
                repeatable = _ast_repeatable(arguments["devices"], resolved)
                if repeatable is None:
                    return None
                if not repeatable:
                    message, detail = RECIPE[qualname]
                    detail += " Not rewritten: devices is used twice; bind it to a name first."
                    found.append(view.report(self.code, call, message, detail))
                    continue
            if "leaf" in (ast.get_source_segment(view.text, call) or "leaf"):
                return None
            legacy = qualname.rsplit(".", 1)[-1]
            message = f"jax.{legacy} (removed in 0.10.0) -> jax.device_put with a NamedSharding"
            found.append(held_back(view, self.code, call, message, CAVEAT))
        return [finding for finding in found if finding is not None]

    @staticmethod
    def _repeatable(node: cst.BaseExpression, site: NameSite, ctx: Context) -> bool:
        if dotted_parts(node) is not None:
            return True
        if isinstance(node, cst.Call) and dotted_parts(node.func) is not None:
            return ctx.qualname(node.func, site.scope) in DEVICE_LISTS
        return False


def _ast_arguments(call: ast.Call, parameters: Sequence[str]) -> Optional[Dict[str, ast.expr]]:
    """:func:`_arguments` on ``ast`` (positional arguments come before keywords there too)."""
    found: Dict[str, ast.expr] = {}
    for index, value in enumerate(call.args):
        if type(value) is ast.Starred or index >= len(parameters) or parameters[index] in found:
            return None
        found[parameters[index]] = value
    for keyword in call.keywords:
        if keyword.arg is None or keyword.arg not in parameters or keyword.arg in found:
            return None
        found[keyword.arg] = keyword.value
    return found if len(found) == len(parameters) else None


def _ast_repeatable(node: ast.expr, resolved: Resolver) -> Optional[bool]:
    """:meth:`DevicePutSharded._repeatable` on ``ast``; None where the view cannot resolve
    the function a call calls."""
    if dotted(node) is not None:
        return True
    if type(node) is not ast.Call:
        return False
    parts = dotted(node.func)
    if parts is None:
        return False
    sure, head = resolved.resolve(parts[0])
    if not sure:
        return None
    return head is not None and ".".join([head, *parts[1:]]) in DEVICE_LISTS


def _visibly_arrays(ctx: Context, value: cst.BaseExpression, scope, sharded: bool) -> bool:  # noqa: ANN001
    """The replicated value is a JAX array, or the shards a list display / comprehension of
    JAX arrays (proven ties only); anything else may be a pytree."""
    if not sharded:
        return receiver_tie(ctx, value, scope).kind in ("array", "gda")
    if isinstance(value, cst.ListComp):
        inner = ctx.analysis.scopes.get(id(value))
        return inner is not None and receiver_tie(ctx, value.elt, inner).kind in ("array", "gda")
    if isinstance(value, (cst.List, cst.Tuple)) and value.elements:
        return all(
            receiver_tie(ctx, e.value, scope).kind in ("array", "gda") for e in value.elements
        )
    return False
