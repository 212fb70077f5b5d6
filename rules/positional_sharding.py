"""JAX603 positional-sharding: statically known ``PositionalSharding`` chains -> ``NamedSharding``.

``jax.sharding.PositionalSharding`` was deprecated in 0.6.0 and removed in 0.7.0 (recorded in
``jax/sharding.py`` at those releases, not in the changelog).  The equivalence (identical
device -> index maps on real jax 0.4.13 and 0.4.30): the final device-grid shape after the
reshapes names one mesh axis per grid axis larger than 1, replicated or size-1 axes become
``None`` in the spec, and transposes permute the spec.
"""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

from jaxmigrate.migrator import lazycst as cst, references as refs
from jaxmigrate.migrator.context import Context, NameSite
from jaxmigrate.migrator.rule import Example, Lifecycle, Rule, Safety
from jaxmigrate.migrator.scope import Scope
from jaxmigrate.rules._flow import local_function, name_loads, single_assignment
from jaxmigrate.rules._helpers import called_or_report
from jaxmigrate.rules._positional_chain import (
    State,
    Unsupported,
    apply_ops,
    climb,
    int_tuple,
)

LEGACY = "jax.sharding.PositionalSharding"
DEVICE_LISTS = ("jax.devices", "jax.local_devices")
ARRAY_MAKERS = ("numpy.array", "numpy.asarray")
CREATE_DEVICE_MESH = "jax.experimental.mesh_utils.create_device_mesh"

TABLE = (
    "PositionalSharding(devs).reshape(4, 2) == "
    "NamedSharding(Mesh(devs.reshape(4, 2), ('a', 'b')), P('a', 'b')); "
    ".replicate(0) -> P(None, 'b'); .replicate(1) -> P('a', None); .replicate() -> P(); "
    ".T -> P('b', 'a'); "
    "reshape(8, 1) -> NamedSharding(Mesh(devs, ('x',)), P('x', None))"
)


# The device array a PositionalSharding is built on: the expression to reuse, "list" (a Python
# list of devices) or "ndarray", and its literal shape when create_device_mesh gave one.
Devices = Tuple["cst.BaseExpression", str, Optional[Tuple[int, ...]]]


class PositionalShardingRule(Rule, code="JAX603", name="positional-sharding", safety=Safety.SAFE):
    """PositionalSharding(devs).reshape/.replicate/.T -> NamedSharding(Mesh(...), P(...))

    **What it does.** Rewrites `PositionalSharding` values whose device array and chain of
    `.reshape(...)`, `.replicate(axis)`, `.T`/`.transpose(...)` calls are known statically to
    the equivalent `NamedSharding(Mesh(devices, names), P(...))`:

    * the final device-grid shape gives the mesh; each grid axis larger than 1 becomes a mesh
      axis (`'x'` when there is one, else `'a'`, `'b'`, ...);
    * an array dim over a replicated (or size-1) grid axis becomes `None` in the spec;
    * transposes permute the spec.

    The device array is `mesh_utils.create_device_mesh(<literal shape>)`, `jax.devices()`,
    `jax.local_devices()`, `np.array(...)` of those, or a variable bound once by a plain
    assignment of one of them (the sharding tutorial's `devices = mesh_utils.create_device_mesh(
    (8,))` then `PositionalSharding(devices)`); the mesh then reuses the variable.

    A variable `s = PositionalSharding(...)...` becomes a `NamedSharding`; later chains on it
    (`s.replicate(0)`) become `NamedSharding(s.mesh, P(...))`, also inside same-file functions
    that receive `s` as an argument (like a jitted function taking the sharding as a static
    argument), when every call passes the same sharding.  `.device_set`,
    `.addressable_devices` and `.is_fully_addressable` after a chain stay (every sharding has
    them, with the same devices).  Anything else (`replicate(keepdims=
    False)`, reshapes with `-1`, other attributes, shardings passed in from elsewhere) is
    reported with the equivalence table.

    **Why.** `PositionalSharding` was deprecated in JAX 0.6.0 and removed in 0.7.0.  The
    `NamedSharding` forms give identical device-to-index maps (checked on 0.4.13 and 0.4.30).

    **Use instead.** `NamedSharding(Mesh(devs.reshape(shape), names), P(...))`; keep the device
    order of the old code (for example `mesh_utils.create_device_mesh`).
    """

    lifecycle = Lifecycle(needs="0.4.1", deprecated="0.6.0", removed="0.7.0")
    references = (
        refs.source_at("0.6.0", "jax/sharding.py", "PositionalSharding deprecated"),
        refs.source_at("0.7.0", "jax/sharding.py", "PositionalSharding removed"),
        refs.module("jax.sharding"),
    )
    names = frozenset({LEGACY})
    examples = (
        Example(
            before="""
            import jax
            from jax.experimental import mesh_utils
            from jax.sharding import Mesh, NamedSharding, PositionalSharding
            from jax.sharding import PartitionSpec as P

            s = PositionalSharding(mesh_utils.create_device_mesh((8,))).reshape(4, 2)
            y = jax.device_put(x, s.replicate(0))
            """,
            after="""
            import jax
            from jax.experimental import mesh_utils
            from jax.sharding import Mesh, NamedSharding
            from jax.sharding import PartitionSpec as P

            s = NamedSharding(Mesh(mesh_utils.create_device_mesh((8,)).reshape((4, 2)), ('a', 'b')), P('a', 'b'))
            y = jax.device_put(x, NamedSharding(s.mesh, P(None, 'b')))
            """,  # noqa: E501
        ),
        Example.reported(
            title="a sharding whose origin is not visible: report with the table",
            code="""
            import jax

            def place(x, sharding):
                return jax.device_put(x, sharding.replicate(0))

            s = jax.sharding.PositionalSharding(devices_from_config())  # expect: JAX603
            """,
        ),
    )

    # -- entry ------------------------------------------------------------------------------
    def visit_name(self, site: NameSite, ctx: Context) -> None:
        message = "PositionalSharding was removed in JAX 0.7.0; use NamedSharding"
        call = called_or_report(site, ctx, message, f"The equivalents: {TABLE}.")
        if call is None:
            return
        try:
            edits = self._plan(call, site.scope, ctx)
        except Unsupported as reason:
            ctx.report(
                call,
                "PositionalSharding was removed in JAX 0.7.0; rewrite with NamedSharding by hand",
                f"PositionalSharding is removed in JAX 0.7.0 and {reason}: "
                f"rewrite by hand ({TABLE}).",
            )
            return
        for node, new in edits:
            ctx.replace(node, new, "PositionalSharding -> NamedSharding(Mesh(...), P(...))")

    def _plan(
        self, call: cst.Call, scope: Scope, ctx: Context
    ) -> List[Tuple[cst.CSTNode, cst.BaseExpression]]:
        state, devices = self._initial(call, scope, ctx)
        outer, ops = climb(call, ctx)
        state, fresh = apply_ops(state, ops)
        sharding = self._named(state, self._mesh(state, devices, scope, ctx), scope, ctx)
        edits: List[Tuple[cst.CSTNode, cst.BaseExpression]] = [(outer, sharding)]
        parent = ctx.parent(outer)
        if (
            isinstance(parent, cst.Assign)
            and len(parent.targets) == 1
            and isinstance(parent.targets[0].target, cst.Name)
        ):
            name = parent.targets[0].target
            assign_scope = ctx.scope_of(parent)
            edits.extend(self._uses(name, assign_scope, state, ctx, depth=2))
        return edits

    # -- the device array -------------------------------------------------------------------
    def _initial(self, call: cst.Call, scope: Scope, ctx: Context) -> Tuple[State, Devices]:
        if (
            len(call.args) != 1
            or call.args[0].keyword not in (None,)
            and call.args[0].keyword.value != "devices"
            or call.args[0].star
        ):
            raise Unsupported("its arguments are not a single device array")
        devs = call.args[0].value
        if isinstance(devs, cst.Name):
            # The tutorial spelling: ``devices = mesh_utils.create_device_mesh((8,))`` and then
            # ``PositionalSharding(devices)``.  The variable must have exactly one binding, a
            # plain assignment of a device array the rule knows; the mesh then reuses the name.
            assign = single_assignment(ctx, devs, scope)
            if assign is None:
                raise Unsupported(
                    f"its device array {devs.value} is not bound once by a plain assignment"
                )
            state, (_, kind, shape) = self._known_devices(assign.value, ctx.scope_of(assign), ctx)
            return state, (devs, kind, shape)
        state, devices = self._known_devices(devs, scope, ctx)
        return state, devices

    @staticmethod
    def _known_devices(
        devs: cst.BaseExpression, scope: Scope, ctx: Context
    ) -> Tuple[State, Devices]:
        if isinstance(devs, cst.Call) and ctx.qualname(devs.func, scope) == CREATE_DEVICE_MESH:
            shape = (
                int_tuple(devs.args[0].value)
                if devs.args and devs.args[0].keyword is None
                else None
            )
            if shape is None:
                raise Unsupported("the device mesh shape is not a literal")
            return State(shape, tuple(range(len(shape)))), (devs, "ndarray", shape)
        if isinstance(devs, cst.Call) and ctx.qualname(devs.func, scope) in DEVICE_LISTS:
            return State((None,), (0,)), (devs, "list", None)
        if (
            isinstance(devs, cst.Call)
            and ctx.qualname(devs.func, scope) in ARRAY_MAKERS
            and len(devs.args) == 1
            and isinstance(devs.args[0].value, cst.Call)
            and ctx.qualname(devs.args[0].value.func, scope) in DEVICE_LISTS
        ):
            return State((None,), (0,)), (devs, "ndarray", None)
        raise Unsupported("the shape of its device array is not known statically")

    # -- building the replacement -----------------------------------------------------------
    def _mesh(
        self, state: State, devices: Devices, scope: Scope, ctx: Context
    ) -> cst.BaseExpression:
        devs, kind, original = devices
        devs = ctx.copy(devs)
        shape = state.mesh_shape()
        if kind == "list":
            devs = cst.Call(func=ctx.ref("numpy.array", scope), args=[cst.Arg(devs)])
        if None not in shape and (original is None or list(original) != shape):
            devs = _call_method(
                devs, "reshape", [cst.Tuple([cst.Element(cst.Integer(str(s))) for s in shape])]
            )
        return self._mesh_call(devs, state, scope, ctx)

    @staticmethod
    def _mesh_call(
        devices: cst.BaseExpression, state: State, scope: Scope, ctx: Context
    ) -> cst.BaseExpression:
        names = [cst.Element(cst.SimpleString(f"'{n}'")) for n in state.axis_names().values()]
        if len(names) == 1:
            names[0] = names[0].with_changes(comma=cst.Comma())
        return cst.Call(
            func=ctx.ref("jax.sharding.Mesh", scope, prefer_from=True),
            args=[cst.Arg(devices), cst.Arg(cst.Tuple(names))],
        )

    @staticmethod
    def _named(
        state: State, mesh: cst.BaseExpression, scope: Scope, ctx: Context
    ) -> cst.BaseExpression:
        spec_args = [
            cst.Arg(cst.Name("None") if entry is None else cst.SimpleString(f"'{entry}'"))
            for entry in state.spec()
        ]
        if all(entry is None for entry in state.spec()):
            spec_args = []
        spec = cst.Call(
            func=ctx.ref("jax.sharding.PartitionSpec", scope, prefer_from=True), args=spec_args
        )
        return cst.Call(
            func=ctx.ref("jax.sharding.NamedSharding", scope, prefer_from=True),
            args=[cst.Arg(mesh), cst.Arg(spec)],
        )

    # -- uses of a variable -----------------------------------------------------------------
    def _uses(
        self, name: cst.Name, scope: Scope, state: State, ctx: Context, depth: int
    ) -> List[Tuple[cst.CSTNode, cst.BaseExpression]]:
        bindings = scope.lookup(name.value)
        if not bindings or len(bindings) != 1:
            raise Unsupported(f"{name.value} is assigned more than once")
        binding = bindings[0]
        edits: List[Tuple[cst.CSTNode, cst.BaseExpression]] = []
        for use in _names(ctx, name.value):
            if use is name:
                continue
            use_bindings = ctx.scope_of(use).lookup(name.value)
            if not use_bindings or use_bindings[0] is not binding:
                continue
            edits.extend(self._use(use, state, ctx, depth))
        return edits

    def _use(
        self, use: cst.Name, state: State, ctx: Context, depth: int
    ) -> List[Tuple[cst.CSTNode, cst.BaseExpression]]:
        scope = ctx.scope_of(use)
        parent = ctx.parent(use)
        if isinstance(parent, cst.Attribute) and parent.value is use:
            if parent.attr.value in ("mesh", "spec"):
                return []  # already NamedSharding-compatible
            outer, ops = climb(use, ctx)
            if not ops:
                return []  # s.device_set: the NamedSharding has it too
            new_state, fresh = apply_ops(state, ops)
            if fresh and new_state.mesh_shape() == state.mesh_shape():
                fresh = False  # the same mesh: only the spec changes
            if fresh:
                if not state.pure:
                    raise Unsupported(f"{use.value} is reshaped after a transpose or replicate")
                devices = _call_method(
                    cst.Attribute(
                        value=cst.Attribute(value=cst.Name(use.value), attr=cst.Name("mesh")),
                        attr=cst.Name("devices"),
                    ),
                    "reshape",
                    [cst.Tuple([cst.Element(cst.Integer(str(s))) for s in new_state.mesh_shape()])],
                )
                mesh = self._mesh_call(devices, new_state, scope, ctx)
            else:
                mesh = cst.Attribute(value=cst.Name(use.value), attr=cst.Name("mesh"))
            edits: List[Tuple[cst.CSTNode, cst.BaseExpression]] = [
                (outer, self._named(new_state, mesh, scope, ctx))
            ]
            assign = ctx.parent(outer)
            if (
                isinstance(assign, cst.Assign)
                and len(assign.targets) == 1
                and isinstance(assign.targets[0].target, cst.Name)
            ):
                if depth <= 0:
                    raise Unsupported("it is assigned through too many variables")
                edits.extend(
                    self._uses(
                        assign.targets[0].target, ctx.scope_of(assign), new_state, ctx, depth - 1
                    )
                )
            return edits
        if isinstance(parent, (cst.Arg,)) and parent.value is use:
            call = ctx.parent(parent)
            if isinstance(call, cst.Call) and isinstance(call.func, cst.Name):
                function = local_function(ctx, call.func, ctx.scope_of(call))
                if function is not None:
                    return self._into_function(function, call, parent, state, ctx, depth)
        if isinstance(parent, (cst.Assign, cst.AugAssign, cst.Del)):
            raise Unsupported(f"{use.value} is reassigned")
        return []  # used as a sharding: a NamedSharding works there

    def _into_function(
        self,
        function: cst.FunctionDef,
        call: cst.Call,
        arg: cst.Arg,
        state: State,
        ctx: Context,
        depth: int,
    ) -> List[Tuple[cst.CSTNode, cst.BaseExpression]]:
        """``f(..., s, ...)`` with ``f`` defined here: follow ``s`` into the parameter."""
        params = [p for p in function.params.posonly_params] + [p for p in function.params.params]
        if arg.keyword is not None:
            matches = [
                p
                for p in params + list(function.params.kwonly_params)
                if p.name.value == arg.keyword.value
            ]
            param = matches[0] if matches else None
        else:
            index = [a for a in call.args if a.keyword is None].index(arg)
            param = params[index] if index < len(params) else None
        if param is None or depth <= 0:
            raise Unsupported(
                f"it is passed to {function.name.value} in a way the rule cannot follow"
            )
        inner_scope = ctx.analysis.scopes.get(id(function))
        if inner_scope is None:
            raise Unsupported(f"the scope of {function.name.value} is unknown")
        # Every call of the function must pass the same sharding variable in the same place,
        # and the function must not escape (be passed around) under its name.
        calls = _calls_of(ctx, function.name.value)
        callees = {id(c.func) for c in calls}
        for use in _names(ctx, function.name.value):
            if use is not function.name and id(use) not in callees:
                raise Unsupported(f"{function.name.value} is used other than by calls here")
        for other in calls:
            if other is not call and not _same_argument(other, call, arg):
                raise Unsupported(f"{function.name.value} is called with other shardings")
        return self._uses(param.name, inner_scope, state, ctx, depth - 1)


def _same_argument(other: cst.Call, call: cst.Call, arg: cst.Arg) -> bool:
    if arg.keyword is not None:
        found = [
            a for a in other.args if a.keyword is not None and a.keyword.value == arg.keyword.value
        ]
    else:
        index = [a for a in call.args if a.keyword is None].index(arg)
        positional = [a for a in other.args if a.keyword is None]
        found = positional[index : index + 1]
    return bool(found) and not found[0].star and found[0].value.deep_equals(arg.value)


def _names(ctx: Context, value: str) -> List[cst.Name]:
    """The references to ``value``, in source order, from the flow layer's index (rebinding
    it shows as a second binding, which the callers refuse)."""
    return name_loads(ctx).get(value, [])


def _calls_of(ctx: Context, value: str) -> List[cst.Call]:
    """The calls ``value(...)``, in source order."""
    calls = []
    for use in _names(ctx, value):
        parent = ctx.parent(use)
        if isinstance(parent, cst.Call) and parent.func is use:
            calls.append(parent)
    return calls


def _call_method(
    receiver: cst.BaseExpression, method: str, args: Sequence[cst.BaseExpression]
) -> cst.Call:
    return cst.Call(
        func=cst.Attribute(value=receiver, attr=cst.Name(method)), args=[cst.Arg(a) for a in args]
    )
