"""Reading the inputs of a pjit/``jax.jit`` call for JAX203 (:mod:`rules.host_local_inputs`).

Which positional inputs a call's ``in_shardings``/``in_axis_resources`` partitions (a
``P(...)`` or ``NamedSharding(mesh, P(...))``, written there or bound once to a name), and
which arguments are global ``jax.Array`` values already (built by a JAX API, an output of
another jitted function, ``device_put`` with a sharding), so need no conversion.  A mixin of
methods because :mod:`rules._multiprocess` calls them on the rule it is given.
"""

from __future__ import annotations

from typing import List, Optional, Tuple

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.migrator.context import Context
from jaxmigrate.migrator.scope import Scope
from jaxmigrate.rules._flow import single_assignment
from jaxmigrate.rules._multiprocess import MULTIHOST
from jaxmigrate.rules._pjit import (
    NAMED_SHARDING_NAMES,
    PARTIAL_NAMES,
    PARTITION_SPEC_NAMES,
    PJIT_NAMES,
    call_qualname,
    get_keyword,
    module_facts,
    qualname_of,
)

JIT_NAMES = PJIT_NAMES | {"jax.jit"}
HOST_RESULTS = frozenset(
    {"jax.device_get", "jax.process_index", "jax.process_count", "jax.local_device_count"}
)
# values that are global jax.Arrays by construction (the multihost_utils converters and friends)
GLOBAL_PRODUCERS = frozenset(
    {
        "jax.make_array_from_callback",
        "jax.make_array_from_single_device_arrays",
        "jax.make_array_from_process_local_data",
        "jax.experimental.multihost_utils.host_local_array_to_global_array",
    }
)


class PjitInputs:
    """The input side of a pjit/jit call: partitioned inputs and global arguments."""

    # -- matching -------------------------------------------------------------------------
    @staticmethod
    def _jit_call(ctx: Context, call: cst.Call, scope: Scope) -> Optional[bool]:
        name = qualname_of(ctx, call.func, scope)
        if name in JIT_NAMES:
            return False
        if name in PARTIAL_NAMES and call.args and call.args[0].keyword is None:
            if qualname_of(ctx, call.args[0].value, scope) in JIT_NAMES and isinstance(
                ctx.parent(call), cst.Decorator
            ):
                return True
        return None

    @staticmethod
    def _is_pjit(ctx: Context, call: cst.Call, scope: Scope) -> bool:
        if qualname_of(ctx, call.func, scope) in PJIT_NAMES:
            return True
        return bool(call.args) and qualname_of(ctx, call.args[0].value, scope) in PJIT_NAMES

    @staticmethod
    def _argument_leaves(value: cst.BaseExpression) -> List[Optional[cst.BaseExpression]]:
        """One entry per positional argument for a tuple/list literal; else [value] (a prefix
        that applies to every argument)."""
        if isinstance(value, (cst.Tuple, cst.List)):
            return [e.value for e in value.elements]
        return [value]

    def _spec_of(
        self, ctx: Context, leaf: Optional[cst.BaseExpression], scope: Scope
    ) -> Tuple[Optional[cst.BaseExpression], Optional[cst.BaseExpression]]:
        """(mesh or None, spec) for a P(...) or NamedSharding(mesh, P(...)) leaf, or a name bound
        once to one; (None, None) else."""
        if isinstance(leaf, cst.Name):
            assign = single_assignment(ctx, leaf.value, scope)
            if assign is None:
                return None, None
            leaf, scope = assign.value, ctx.scope_of(assign)
        if leaf is None or not isinstance(leaf, cst.Call):
            return None, None
        name = call_qualname(ctx, leaf, scope)
        if name in PARTITION_SPEC_NAMES:
            return None, leaf
        if (
            name in NAMED_SHARDING_NAMES
            and len(leaf.args) == 2
            and all(a.keyword is None for a in leaf.args)
        ):
            spec = leaf.args[1].value
            if call_qualname(ctx, spec, scope) in PARTITION_SPEC_NAMES:
                return leaf.args[0].value, spec
        return None, None

    def _partitioned(self, ctx: Context, leaf: Optional[cst.BaseExpression], scope: Scope) -> bool:
        _mesh, spec = self._spec_of(ctx, leaf, scope)
        if spec is None:
            return False
        return any(
            not (isinstance(a.value, cst.Name) and a.value.value == "None")
            for a in spec.args  # type: ignore[attr-defined]
        )

    # -- values that are global already -------------------------------------------------
    def _jitted_names(self, ctx: Context, facts) -> frozenset:
        """Names bound (anywhere) from a pjit/jit call or defined under a jit decorator: their
        outputs are global jax.Arrays."""
        names = set()
        for (_scope, name), assigns in facts.assigns.items():
            for assign in assigns:
                value = assign.value
                if (
                    isinstance(value, cst.Call)
                    and self._jit_call(ctx, value, ctx.scope_of(value)) is False
                ):
                    names.add(name)
        for call in facts.calls:
            parent = ctx.parent(call)
            if (
                isinstance(parent, cst.Decorator)
                and self._jit_call(ctx, call, ctx.scope_of(call)) is not None
            ):
                definition = ctx.parent(parent)
                if isinstance(definition, cst.FunctionDef):
                    names.add(definition.name.value)
        names.update(self._decorated_defs(ctx))
        return frozenset(names)

    @staticmethod
    def _decorated_defs(ctx: Context) -> List[str]:
        """``@jax.jit`` / ``@pjit`` without arguments."""
        found: List[str] = []
        for node in ctx.nodes(cst.FunctionDef):  # the analysis traversal's index, in order
            for decorator in node.decorators:
                if qualname_of(ctx, decorator.decorator, ctx.scope_of(node)) in JIT_NAMES:
                    found.append(node.name.value)
        return found

    def _global_value(
        self,
        ctx: Context,
        value: cst.BaseExpression,
        scope: Scope,
        jitted: frozenset,
        legacy: bool = False,
    ) -> bool:
        """Is ``value`` a global jax.Array?  For a legacy pjit (``legacy``) a value JAX made in
        this process (``jnp.ones``) was this process's share too: only the global producers,
        ``device_put`` with a sharding and outputs of compiled functions count."""
        if not isinstance(value, cst.Call):
            return False
        while isinstance(value.func, cst.Attribute) and isinstance(value.func.value, cst.Call):
            value = value.func.value  # jnp.arange(n).reshape(...)
        name = call_qualname(ctx, value, scope)
        if name in GLOBAL_PRODUCERS:
            return True
        if (
            not legacy
            and name is not None
            and name.startswith("jax.")
            and (name not in HOST_RESULTS and not name.startswith(MULTIHOST))
        ):
            # built by a JAX API (jnp.ones, jax.random...): a jax.Array, the same in every process
            return True
        if name == "jax.device_put" and (
            len(value.args) >= 2 or get_keyword(value.args, "device") is not None
        ):
            return True  # device_put with a sharding (global when the sharding spans every process)
        if isinstance(value.func, cst.Name) and value.func.value in jitted:
            return True  # an output of another jitted call
        if isinstance(value.func, cst.Name) and _compat_producer(value.func, scope):
            return True  # try: from jax import <producer> / except ImportError: def <producer>(...)
        if isinstance(value.func, cst.Call) and self._jit_call(ctx, value.func, scope) is False:
            return True  # jax.jit(f)(...)
        return False

    def _provably_global(
        self,
        ctx: Context,
        expr: cst.BaseExpression,
        scope: Scope,
        jitted: frozenset,
        legacy: bool = False,
    ) -> bool:
        if isinstance(expr, cst.Call):
            return self._global_value(ctx, expr, scope, jitted, legacy)
        last = self._last_assignment(ctx, expr)
        return last is not None and self._global_value(
            ctx, last.value, ctx.scope_of(last), jitted, legacy
        )

    @staticmethod
    def _last_assignment(ctx: Context, expr: cst.BaseExpression) -> Optional[cst.Assign]:
        """The assignment a name read at ``expr`` last got its value from, when every binding
        of the name is an assignment (``x = host_local_array_to_global_array(x, ...)`` after
        ``x = np...`` counts)."""
        if not isinstance(expr, cst.Name):
            return None
        bindings = ctx.scope_of(expr).lookup(expr.value)
        if not bindings or any(b.is_import for b in bindings):
            return None
        assigns = module_facts(ctx).assigns.get((id(bindings[0].scope), expr.value), [])
        if not assigns or len(assigns) < len(bindings):
            return None
        line = ctx.position(expr).start.line
        before = [a for a in assigns if ctx.position(a).start.line < line]
        if not before:
            return None
        return max(before, key=lambda a: ctx.position(a).start.line)


def _compat_producer(name: cst.Name, scope: Scope) -> bool:
    """``name`` is a global-array producer imported inside ``try``/``except ImportError`` with
    the project's own fallback bound under the same name: a deliberate compatibility shim (the
    convention every rule follows for such blocks), so its result counts as global."""
    bindings = scope.lookup(name.value)
    if not bindings:
        return False
    imports = [b for b in bindings if b.is_import]
    return bool(imports) and all(b.guarded and b.qualname in GLOBAL_PRODUCERS for b in imports)
