"""Receiver ties: is the object an attribute is read from a JAX array?

Rules for legacy *methods and attributes* (``x.device_buffer``, ``gda.local_shards``,
``x.to_py()``...) cannot resolve names: the receiver is any expression.  These helpers decide,
statically and conservatively, what the receiver is.  Shared by JAX402-JAX406 and reusable by
any rule (``from jaxmigrate.rules._receivers import receiver_tie, module_facts``).

A receiver is **tied** (``Tie.kind`` is ``"array"`` or ``"gda"``) when it is

* a call of a JAX API that returns arrays (a qualified name under ``jax.``/``jaxlib.`` that is
  not a known non-array producer: ``jax.devices``, ``jax.jit``, ``jax.sharding.*``,
  ``process_allgather`` (returns NumPy) ...), ``jax.jit(f)(x)`` / ``jax.pmap(f)(x)``,
  or a call of a function of this module decorated with ``jit``/``pmap``/``pjit`` (or a
  module-level name assigned ``jax.jit(f)``);
* a GlobalDeviceArray constructor call (``GlobalDeviceArray(...)``, ``.from_callback`` ...);
* a subscript of a tied expression;
* a local name (``x``) whose *every* binding in the scope it resolves to is one of the above,
  or a parameter annotated ``jax.Array``/``jnp.ndarray``/``DeviceArray``/``GlobalDeviceArray``
  (as a name or a string).  A name with any other binding (a loop target, an unannotated
  parameter, an ``except``/``with`` target...) is not tied.

A receiver is **foreign** (``Tie.kind == "foreign"``) when it is provably not a JAX array:
``self``/``cls`` of a method, an imported module, a name, call or annotation of another
array library or NumPy (``torch.ones(...)``, ``t: torch.Tensor``, ``np.zeros(3)``), a builtin
annotation (``x: int``), or a call of a class or function defined in this module (not
jit-decorated).  Everything else is unknown (``Tie.kind is None``): a call of flax or optax
may return JAX arrays.

``Tie.pmap`` says the value comes from ``pmap`` (shard shapes changed in 0.4.34) and
``Tie.named`` that its sharding is certainly a ``NamedSharding`` (a GDA constructor, or an
array built with a literal ``NamedSharding(...)``).
"""

from __future__ import annotations

import ast
import dataclasses
import enum
from typing import Dict, FrozenSet, List, Optional, Tuple

import libcst as cst

from jaxmigrate.migrator.astfacts import AstScope, Facts, dotted
from jaxmigrate.migrator.context import Context
from jaxmigrate.migrator.scope import Scope, dotted_parts
from jaxmigrate.migrator.traversal import fast_visit
from jaxmigrate.rules import _flow
from jaxmigrate.rules._helpers import ScopeBodyVisitor, target_names

GDA_MODULES = ("jax.experimental.global_device_array", "jax._src.global_device_array")
GDA_CLASS_NAMES = frozenset(m + ".GlobalDeviceArray" for m in GDA_MODULES)
GDA_CONSTRUCTORS = frozenset(
    name + suffix
    for name in GDA_CLASS_NAMES
    for suffix in ("", ".from_callback", ".from_batched_callback", ".from_batched_callback_with_devices")
)
ARRAY_TYPES = frozenset(
    {
        "jax.Array",
        "jax.numpy.ndarray",
        "jax.numpy.DeviceArray",
        "jax.interpreters.xla.DeviceArray",
        "jax.interpreters.pxla.ShardedDeviceArray",
        "jax.xla.DeviceArray",
        "jax.pxla.ShardedDeviceArray",
        "jaxlib.xla_extension.DeviceArray",
        "jax.typing.ArrayLike",
        "chex.Array",
        "chex.ArrayDevice",
        "jaxtyping.Array",
        "flax.typing.Array",
    }
)
JIT_WRAPPERS = frozenset(
    {
        "jax.jit",
        "jax.pmap",
        "jax.experimental.pjit.pjit",
        "jax.pjit",
        "jax.api.jit",
        "jax.api.pmap",
        "jax.experimental.maps.xmap",
        "jax.experimental.shard_map.shard_map",
        "jax.shard_map",
    }
)
PMAP_WRAPPERS = frozenset({"jax.pmap", "jax.api.pmap"})
PARTIALS = frozenset({"functools.partial"})
# Calls under jax. that do not return arrays.
NOT_ARRAY_PREFIXES = (
    "jax.devices",
    "jax.local_devices",
    "jax.device_count",
    "jax.local_device_count",
    "jax.process_index",
    "jax.process_count",
    "jax.host_id",
    "jax.host_count",
    "jax.jit",
    "jax.pmap",
    "jax.vmap",
    "jax.grad",
    "jax.value_and_grad",
    "jax.jacfwd",
    "jax.jacrev",
    "jax.checkpoint",
    "jax.remat",
    "jax.custom_jvp",
    "jax.custom_vjp",
    "jax.named_call",
    "jax.make_jaxpr",
    "jax.eval_shape",
    "jax.ShapeDtypeStruct",
    "jax.config",
    "jax.distributed",
    "jax.sharding",
    "jax.make_mesh",
    "jax.tree_util",
    "jax.tree",
    "jax.tree_map",
    "jax.tree_leaves",
    "jax.tree_flatten",
    "jax.experimental.mesh_utils",
    "jax.experimental.maps",
    "jax.experimental.pjit",
    "jax.experimental.shard_map",
    "jax.experimental.multihost_utils.process_allgather",
    "jax.experimental.multihost_utils.sync_global_devices",
    "jax.experimental.multihost_utils.assert_equal",
    "jax.experimental.multihost_utils.reached_preemption_sync_point",
    "jax.interpreters.pxla.Mesh",
    "jax.numpy.dtype",
    "jax.numpy.shape",
    "jax.numpy.ndim",
    "jax.numpy.size",
    "jax.numpy.result_type",
    "jax.numpy.promote_types",
    "jax.numpy.issubdtype",
    "jax.numpy.finfo",
    "jax.numpy.iinfo",
    "jax.dtypes",
    "jax.debug",
    "jax.core",
    "jax.extend",
    "jax.interpreters",
    "jax.lib",
    "jax.named_scope",
    "jax.default_device",
    "jax.ensure_compile_time_eval",
    "jax.disable_jit",
    "jax.transfer_guard",
    "jax.checking_leaks",
    "jax.hessian",
    "jax.jvp",
    "jax.vjp",
    "jax.linearize",
    "jax.linear_transpose",
    "jax.closure_convert",
    "jax.xla_computation",
    "jax.custom_batching",
    "jax.numpy.vectorize",
    "jax.experimental.compilation_cache",
    "jax.profiler",
    "jax.monitoring",
    "jax.stages",
    "jax.export",
    "jax.ffi",
)
# Attributes and methods of a jax.Array that give a jax.Array (or do not).
ARRAY_PROPERTIES = frozenset({"T", "mT", "real", "imag", "at"})
NOT_ARRAY_METHODS = frozenset(
    {
        "tolist",
        "item",
        "tobytes",
        "devices",
        "delete",
        "is_deleted",
        "copy_to_host_async",
        "on_device_size_in_bytes",
        "__array__",
        "__dlpack__",
        "device",
        "to_py",
        "block_host_until_ready",
        "device_buffer",
        "device_buffers",
        "local_data",
    }
)
# Calls under jax. whose result may or may not be an array (pytrees, internals).
MAYBE_ARRAY_PREFIXES = (
    "jax.tree_util",
    "jax.tree",
    "jax.tree_map",
    "jax.tree_multimap",
    "jax.tree_leaves",
    "jax.tree_flatten",
    "jax.tree_unflatten",
    "jax.device_get",
    "jax.interpreters",
    "jax.lib",
    "jax.extend",
    "jax._src",
)
# Array libraries whose objects have look-alike attributes.
FOREIGN_ARRAY_LIBRARIES = (
    "torch",
    "tensorflow",
    "cupy",
    "mxnet",
    "paddle",
    "oneflow",
    "jittor",
    "mindspore",
    "dask",
    "numpy",
)


@dataclasses.dataclass(frozen=True)
class Tie:
    kind: Optional[str]  # "array" | "gda" | "likely" (evidence short of proof) | "foreign" | None
    reason: str = ""
    pmap: bool = False
    named: bool = False
    source: str = ""  # the qualified name of the JAX call that made the value, if one did

    @property
    def tied(self) -> bool:
        return self.kind in ("array", "gda", "likely")


UNKNOWN = Tie(None)


def _kept(*ties: Tie) -> str:
    """The kind of a value derived from ``ties`` (``x[0]``, ``x + 1``): an array, but only as
    likely as the weakest tie it comes from."""
    return "likely" if any(t.kind == "likely" for t in ties) else "array"


def _under(qualname: str, prefixes) -> bool:  # noqa: ANN001
    return any(qualname == p or qualname.startswith(p + ".") for p in prefixes)


def is_foreign_library(qualname: str) -> bool:
    """A name from another array library (or NumPy): its values are not JAX arrays."""
    return qualname.split(".", 1)[0] in FOREIGN_ARRAY_LIBRARIES


def is_jax_name(qualname: Optional[str]) -> bool:
    return bool(qualname) and _under(qualname, ("jax", "jaxlib"))  # type: ignore[arg-type]


# -- whole-module facts -------------------------------------------------------------------------
@dataclasses.dataclass
class ModuleFacts:
    imports_jax: bool  # an unguarded import of jax / jax.* / jaxlib
    imports_gda: bool  # an import of the GlobalDeviceArray module or its names
    foreign_libraries: Tuple[str, ...]  # imported array libraries other than JAX and NumPy
    uses_pmap: bool  # refers to jax.pmap anywhere
    multiprocess: bool  # calls jax.distributed.initialize or reads process_index/process_count
    jit_functions: Dict[str, bool]  # module-level jitted function name -> is pmap
    user_attributes: frozenset  # names defined as methods / self.<attr> in this module's classes


def module_facts(ctx: Context) -> ModuleFacts:
    cached = getattr(ctx, "_receiver_facts", None)
    if cached is not None:
        return cached
    module_scope = ctx.analysis.scopes[id(ctx.module)]
    imports_jax = imports_gda = False
    foreign = set()
    for binding in ctx.analysis.imports:
        qualname = binding.qualname or ""
        if binding.guarded:
            if _under(qualname, GDA_MODULES):
                imports_gda = True
            continue
        if is_jax_name(qualname):
            imports_jax = True
        if _under(qualname, GDA_MODULES):
            imports_gda = True
        root = qualname.split(".", 1)[0]
        if root in FOREIGN_ARRAY_LIBRARIES and root != "numpy":
            foreign.add(root)
    # An import removed in an earlier round (its last use was migrated) still counts.
    state = getattr(ctx, "file_state", None)
    if state is not None:
        imports_jax = imports_jax or bool(state.get("receivers.imports_jax"))
        imports_gda = imports_gda or bool(state.get("receivers.imports_gda"))
        state["receivers.imports_jax"] = imports_jax
        state["receivers.imports_gda"] = imports_gda
    collector = _ModuleCollector(ctx, module_scope)
    collector.collect()
    facts = ModuleFacts(
        imports_jax=imports_jax,
        imports_gda=imports_gda,
        foreign_libraries=tuple(sorted(foreign)),
        uses_pmap=collector.uses_pmap,
        multiprocess=collector.multiprocess,
        jit_functions=collector.jit_functions,
        user_attributes=frozenset(collector.user_attributes),
    )
    setattr(ctx, "_receiver_facts", facts)
    return facts


_MULTIPROCESS = frozenset(
    {"jax.distributed.initialize", "jax.process_index", "jax.process_count", "jax.host_id", "jax.host_count"}
)


_FACT_LAST_PARTS = frozenset(name.rsplit(".", 1)[-1] for name in (*PMAP_WRAPPERS, *_MULTIPROCESS))


class _ModuleCollector:
    def __init__(self, ctx: Context, module_scope: Scope) -> None:
        self.ctx = ctx
        self.module_scope = module_scope
        self.uses_pmap = False
        self.multiprocess = False
        self.jit_functions: Dict[str, bool] = {}
        self.user_attributes: set = set()

    def _qual(self, node: cst.CSTNode) -> Optional[str]:
        parts = dotted_parts(node)
        if not parts:
            return None
        # Names resolve at module level; good enough for facts about the whole file.
        head = self.module_scope.resolve_name(parts[0])
        return ".".join([head, *parts[1:]]) if head else None

    def collect(self) -> None:
        """What a full visit would gather, from the round's node lists (module-level defs and
        assignments in source order, so a later binding of a name wins as it would)."""
        ctx = self.ctx
        for attribute in ctx.all_nodes(cst.Attribute):
            self.visit_Attribute(attribute)  # type: ignore[arg-type]
        for name in ctx.all_nodes(cst.Name):
            self._name_fact(name)
        for class_def in ctx.all_nodes(cst.ClassDef):
            self.visit_ClassDef(class_def)  # type: ignore[arg-type]
        for statement in ctx.module.body:
            if isinstance(statement, cst.FunctionDef):
                self.visit_FunctionDef(statement)
            elif isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    if isinstance(small, cst.Assign):
                        self.visit_Assign(small)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value in _FACT_LAST_PARTS:  # a dotted name ends with its attribute
            self._name_fact(node)
        if (
            isinstance(node.value, cst.Name)
            and node.value.value in ("self", "cls")
        ):
            parent = self.ctx.parent(node)
            if isinstance(parent, cst.AssignTarget) or (
                isinstance(parent, cst.AnnAssign) and parent.target is node
            ):
                self.user_attributes.add(node.attr.value)

    def visit_Name(self, node: cst.Name) -> None:
        self._name_fact(node)

    def _name_fact(self, node: cst.CSTNode) -> None:
        qualname = self._qual(node)
        if not qualname:
            return
        if qualname in PMAP_WRAPPERS:
            self.uses_pmap = True
        if qualname in _MULTIPROCESS:
            self.multiprocess = True

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        for statement in node.body.body:
            if isinstance(statement, cst.FunctionDef):
                self.user_attributes.add(statement.name.value)
            elif isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    if isinstance(small, cst.Assign):
                        for target in small.targets:
                            if isinstance(target.target, cst.Name):
                                self.user_attributes.add(target.target.value)
                    elif isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
                        self.user_attributes.add(small.target.value)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        parent = self.ctx.parent(node)
        if isinstance(parent, cst.Module):
            for decorator in node.decorators:
                wrapper = _wrapper_of(decorator.decorator, self._qual)
                if wrapper is not None:
                    self.jit_functions[node.name.value] = wrapper in PMAP_WRAPPERS

    def visit_Assign(self, node: cst.Assign) -> None:
        if isinstance(self.ctx.parent(self.ctx.parent(node)), cst.Module):
            if (
                len(node.targets) == 1
                and isinstance(node.targets[0].target, cst.Name)
                and isinstance(node.value, cst.Call)
            ):
                wrapper = _wrapper_of(node.value, self._qual)
                if wrapper is not None:
                    self.jit_functions[node.targets[0].target.value] = wrapper in PMAP_WRAPPERS


def _wrapper_of(expr: cst.BaseExpression, qual) -> Optional[str]:  # noqa: ANN001
    """``jax.jit``, ``jax.jit(...)``, ``partial(jax.jit, ...)`` -> the wrapper's qualified name."""
    qualname = qual(expr)
    if qualname in JIT_WRAPPERS:
        return qualname
    if isinstance(expr, cst.Call):
        qualname = qual(expr.func)
        if qualname in JIT_WRAPPERS:
            return qualname
        if qualname in PARTIALS and expr.args:
            inner = qual(expr.args[0].value)
            if inner in JIT_WRAPPERS:
                return inner
    return None


# -- one receiver ---------------------------------------------------------------------------------
def receiver_tie(ctx: Context, expr: cst.BaseExpression, scope: Scope, depth: int = 0) -> Tie:
    """What ``expr`` (the receiver of an attribute) is, at ``scope``; see the module docstring."""
    if depth > 4:
        return UNKNOWN
    if isinstance(expr, cst.Call):
        return _call_tie(ctx, expr, scope, depth)
    if isinstance(expr, cst.Subscript):
        inner = receiver_tie(ctx, expr.value, scope, depth + 1)
        if inner.tied:
            return dataclasses.replace(inner, kind=_kept(inner), reason=f"an element of {inner.reason}", named=False, source="")
        return UNKNOWN
    if isinstance(expr, cst.Name):
        tie = _name_tie(ctx, expr, scope, depth)
        if tie.kind is None:
            tie = _flow_name_tie(ctx, expr, scope, depth) or tie
        return tie
    if isinstance(expr, cst.NamedExpr):
        return receiver_tie(ctx, expr.value, scope, depth + 1)
    if (
        isinstance(expr, cst.Attribute)
        and expr.attr.value == "data"
        and isinstance(expr.value, cst.Subscript)
        and isinstance(expr.value.value, cst.Attribute)
        and expr.value.value.attr.value in ("addressable_shards", "global_shards", "local_shards")
    ):  # x.addressable_shards[i].data
        inner = receiver_tie(ctx, expr.value.value.value, scope, depth + 1)
        if inner.tied:
            return Tie(_kept(inner), f"a shard of {inner.reason}", pmap=inner.pmap)
    if isinstance(expr, cst.Attribute) and expr.attr.value == "data":  # for s in x.addressable_shards
        shard = _flow.shard_tie(ctx, expr, scope, receiver_tie, depth)
        if shard is not None:
            return shard
    if isinstance(expr, cst.BinaryOperation):
        sides = [receiver_tie(ctx, e, scope, depth + 1) for e in (expr.left, expr.right)]
        if any(t.kind == "foreign" for t in sides) or not any(t.tied for t in sides):
            return UNKNOWN
        first = next(t for t in sides if t.tied)
        return Tie(_kept(*sides), f"arithmetic on {first.reason}", pmap=any(t.pmap for t in sides))
    if isinstance(expr, cst.UnaryOperation):
        inner = receiver_tie(ctx, expr.expression, scope, depth + 1)
        return Tie(_kept(inner), inner.reason, pmap=inner.pmap) if inner.tied else UNKNOWN
    if isinstance(expr, cst.Attribute) and expr.attr.value in ARRAY_PROPERTIES:
        inner = receiver_tie(ctx, expr.value, scope, depth + 1)
        if inner.tied:
            return Tie(_kept(inner), f"{inner.reason}.{expr.attr.value}", pmap=inner.pmap)
    if isinstance(expr, cst.Attribute):
        qualname = ctx.qualname(expr, scope)
        if qualname is not None and is_foreign_library(qualname):
            return Tie("foreign", f"{qualname} is not JAX")
        if isinstance(expr.value, cst.Name):  # self.table = GlobalDeviceArray(...) in __init__
            return _flow.attribute_tie(ctx, expr, scope, receiver_tie, depth) or UNKNOWN
    return UNKNOWN


def _call_tie(ctx: Context, call: cst.Call, scope: Scope, depth: int) -> Tie:
    func = call.func
    qualname = ctx.qualname(func, scope)
    if qualname is not None:
        if qualname in GDA_CONSTRUCTORS:
            return Tie("gda", "a GlobalDeviceArray", named=True, source=qualname)
        if is_jax_name(qualname):
            if _under(qualname, MAYBE_ARRAY_PREFIXES):
                return UNKNOWN
            if _under(qualname, NOT_ARRAY_PREFIXES) or not _array_producer_name(qualname):
                # NamedSharding(...), jax.devices(), jax.jit(f): JAX objects, never arrays.
                return Tie("foreign", f"the result of {ctx.code(func)}(...), not an array")
            named = _has_named_sharding_arg(ctx, call, scope)
            return Tie("array", f"the result of {ctx.code(func)}(...)", named=named, source=qualname)
        if is_foreign_library(qualname):
            return Tie("foreign", f"the result of {ctx.code(func)}(...), not JAX")
        return UNKNOWN  # another library (flax, optax ...) may well return JAX arrays
    if isinstance(func, cst.Attribute) and func.attr.value not in NOT_ARRAY_METHODS:
        inner = receiver_tie(ctx, func.value, scope, depth + 1)
        if inner.tied:  # x.reshape(...), x.astype(...), jnp.ones(3).sum()
            return Tie(_kept(inner), f"{inner.reason}.{func.attr.value}(...)", pmap=inner.pmap)
    if isinstance(func, cst.Call):  # jax.jit(f)(x), jax.pmap(f)(x)
        wrapper = _wrapper_of(func, lambda e: ctx.qualname(e, scope))
        if wrapper is not None:
            return Tie("array", f"the output of {ctx.code(func.func)}", pmap=wrapper in PMAP_WRAPPERS)
    if isinstance(func, cst.Name):
        function = _flow.local_function(ctx, func, scope)
        if function is not None:  # def make(): return jax.device_put(...)
            returned = _flow.helper_return_tie(ctx, function, receiver_tie, depth)
            if returned is not None:
                return returned
        facts = module_facts(ctx)
        bindings = scope.lookup(func.value)
        if bindings and all(b.scope.kind == "module" for b in bindings):
            if func.value in facts.jit_functions and len(bindings) == 1:
                return Tie("array", f"the output of the jitted {func.value}", pmap=facts.jit_functions[func.value])
            if all(b.qualname is None for b in bindings):
                return Tie("foreign", f"the result of {func.value}(...), defined here")
    return UNKNOWN


def _flow_name_tie(ctx: Context, name: cst.Name, scope: Scope, depth: int) -> Optional[Tie]:
    """A name the bindings alone leave unknown: narrowed by ``isinstance``, or a loop /
    comprehension variable over array buffers or a list of arrays (rules/_flow.py)."""
    check = _flow.narrowed(ctx, name)
    if check is not None:
        return Tie("array", f"narrowed by {check}")
    iterable = _flow.iterated(ctx, name, scope)
    if iterable is not None:
        return _flow.element_tie(ctx, iterable, ctx.scope_of(iterable), receiver_tie, depth)
    return _flow.call_site_tie(ctx, name, scope, receiver_tie, depth)


def _array_producer_name(qualname: str) -> bool:
    """False for classes (``NamedSharding(...)``, ``Mesh(...)``: capitalised) and for anything
    about shardings or meshes (``canonicalize_sharding``, ``jax._src.mesh.*``)."""
    parts = qualname.split(".")
    if parts[-1][:1].isupper():
        return False
    return not any("sharding" in part.lower() or "mesh" in part.lower() for part in parts)


def _has_named_sharding_arg(ctx: Context, call: cst.Call, scope: Scope) -> bool:
    for arg in call.args:
        value = arg.value
        if isinstance(value, cst.Call) and (ctx.qualname(value.func, scope) or "").endswith(".NamedSharding"):
            return is_jax_name(ctx.qualname(value.func, scope))
    return False


def _name_tie(ctx: Context, name: cst.Name, scope: Scope, depth: int) -> Tie:
    ident = name.value
    bindings = scope.lookup(ident)
    if not bindings:
        return UNKNOWN
    qualname = scope.resolve_name(ident)
    if qualname is not None:
        # A module is never an array; an imported name of another array library is not JAX.
        if is_foreign_library(qualname) or all(isinstance(b.statement, cst.Import) for b in bindings):
            return Tie("foreign", f"{ident} is the import {qualname}")
        return UNKNOWN
    if any(b.qualname is not None for b in bindings):
        return UNKNOWN
    home = bindings[0].scope
    if any(b.scope is not home for b in bindings):
        return UNKNOWN
    definitions = _definitions(ctx, home).get(ident, [])
    if len(definitions) != len(bindings):
        return UNKNOWN  # a binding we do not understand (loop target, walrus, global ...)
    ties: List[Tie] = []
    for kind, node, extra in definitions:
        if kind == "self":
            return Tie("foreign", f"{ident} is the method's own object")
        if kind == "def":
            return Tie("foreign", f"{ident} is a function or class defined here")
        if kind == "param":
            tie = _annotation_tie(ctx, node, home)
            if not tie.tied:
                return UNKNOWN if tie.kind is None else tie
            ties.append(tie)
        elif kind == "value":
            if node is None:  # a bare annotation
                tie = _annotation_tie(ctx, extra, home)
            else:
                tie = receiver_tie(ctx, node, home, depth + 1)
                if not tie.tied and extra is not None:
                    tie = _annotation_tie(ctx, extra, home)
            if not tie.tied:
                return tie if tie.kind == "foreign" else UNKNOWN
            ties.append(tie)
        else:
            return UNKNOWN
    if not ties:
        return UNKNOWN
    kind = "gda" if all(t.kind == "gda" for t in ties) else "array"
    return Tie(
        kind,
        f"{ident}, {ties[0].reason}" if len(ties) == 1 else f"{ident}, assigned JAX arrays only",
        pmap=any(t.pmap for t in ties),
        named=all(t.named for t in ties),
        source=ties[0].source if all(t.source == ties[0].source for t in ties) else "",
    )


def _annotation_tie(ctx: Context, annotation: Optional[cst.BaseExpression], scope: Scope) -> Tie:
    if annotation is None:
        return UNKNOWN
    if isinstance(annotation, cst.SimpleString):
        text = annotation.evaluated_value
        if not isinstance(text, str):
            return UNKNOWN
        try:
            annotation = cst.parse_expression(text)
        except cst.ParserSyntaxError:
            return UNKNOWN
    qualname = ctx.qualname(annotation, scope)
    if qualname in GDA_CLASS_NAMES:
        return Tie("gda", "annotated GlobalDeviceArray")
    if qualname in ARRAY_TYPES:
        return Tie("array", f"annotated {qualname}")
    if qualname is not None and (is_foreign_library(qualname) or is_jax_name(qualname)):
        return Tie("foreign", f"annotated {qualname}")  # jax.sharding.Mesh, jax.Device ...
    if isinstance(annotation, cst.Name) and annotation.value in _BUILTIN_TYPES and scope.lookup(annotation.value) is None:
        return Tie("foreign", f"annotated {annotation.value}")
    return UNKNOWN


_BUILTIN_TYPES = frozenset({"int", "float", "str", "bytes", "bool", "list", "dict", "tuple", "set", "complex"})


Definition = Tuple[str, Optional[cst.CSTNode], Optional[cst.CSTNode]]


def _definitions(ctx: Context, scope: Scope) -> Dict[str, List[Definition]]:
    """name -> how each binding in ``scope`` was made: ("param", annotation, None),
    ("value", value or None, annotation), ("self", ...), ("def", ...) or ("other", ...)."""
    cache = getattr(ctx, "_receiver_definitions", None)
    if cache is None:
        cache = {}
        setattr(ctx, "_receiver_definitions", cache)
    found = cache.get(id(scope.node))
    if found is not None:
        return found
    result: Dict[str, List[Definition]] = {}
    node = scope.node
    if isinstance(node, (cst.FunctionDef, cst.Lambda)):
        params = node.params
        all_params = [*params.posonly_params, *params.params, *params.kwonly_params]
        in_class = isinstance(node, cst.FunctionDef) and _is_method(ctx, node)
        for index, param in enumerate(all_params):
            if index == 0 and in_class and not _is_staticmethod(node) and not param.annotation:
                result.setdefault(param.name.value, []).append(("self", None, None))
                continue
            annotation = param.annotation.annotation if param.annotation else None
            result.setdefault(param.name.value, []).append(("param", annotation, None))
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param):
                result.setdefault(star.name.value, []).append(("other", None, None))
    if not isinstance(node, (cst.Lambda, cst.FunctionDef, cst.ClassDef, cst.Module)):
        pass  # a comprehension: its targets stay unknown
    elif not isinstance(node, cst.Lambda):
        collector = _DefinitionCollector(result)
        body = node.body
        if isinstance(body, cst.BaseSuite):
            fast_visit(body, collector)
        elif isinstance(node, cst.Module):
            for statement in node.body:
                fast_visit(statement, collector)
    cache[id(scope.node)] = result
    return result


def _is_method(ctx: Context, node: cst.FunctionDef) -> bool:
    parent = ctx.parent(node)
    grand = ctx.parent(parent) if parent is not None else None
    return isinstance(grand, cst.ClassDef)


def _is_staticmethod(node: cst.FunctionDef) -> bool:
    return any(
        isinstance(d.decorator, cst.Name) and d.decorator.value == "staticmethod" for d in node.decorators
    )


class _DefinitionCollector(ScopeBodyVisitor):
    """Bindings made directly in one scope body (nested functions/classes are not entered)."""

    def __init__(self, result: Dict[str, List[Definition]]) -> None:
        super().__init__()
        self.result = result

    def _add(self, name: str, entry: Definition) -> None:
        self.result.setdefault(name, []).append(entry)

    def _other(self, target: cst.CSTNode) -> None:
        for name in target_names(target):
            self._add(name, ("other", None, None))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self._add(node.name.value, ("def", None, None))
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self._add(node.name.value, ("def", None, None))
        return False

    def visit_Assign(self, node: cst.Assign) -> bool:
        for target in node.targets:
            if isinstance(target.target, cst.Name):
                self._add(target.target.value, ("value", node.value, None))
            else:
                self._other(target.target)
        return True

    def visit_AnnAssign(self, node: cst.AnnAssign) -> bool:
        if isinstance(node.target, cst.Name):
            self._add(node.target.value, ("value", node.value, node.annotation.annotation))
        return True

    def visit_AugAssign(self, node: cst.AugAssign) -> bool:
        self._other(node.target)
        return True

    def visit_For(self, node: cst.For) -> bool:
        self._other(node.target)
        return True

    def visit_WithItem(self, node: cst.WithItem) -> bool:
        if node.asname is not None:
            self._other(node.asname.name)
        return True

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> bool:
        if node.name is not None:
            self._other(node.name.name)
        return True

    def visit_NamedExpr(self, node: cst.NamedExpr) -> bool:
        self._other(node.target)
        return True

    def visit_Del(self, node: cst.Del) -> bool:
        self._other(node.target)
        return True

    def visit_Import(self, node: cst.Import) -> bool:
        for alias in node.names:
            bound = alias.asname.name if alias.asname else alias.name
            while isinstance(bound, cst.Attribute):
                bound = bound.value
            self._other(bound)
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        if not isinstance(node.names, cst.ImportStar):
            for alias in node.names:
                self._other(alias.asname.name if alias.asname else alias.name)
        return False

    def visit_Global(self, node: cst.Global) -> bool:
        for item in node.names:
            self._add(item.name.value, ("other", None, None))
        return False

    def visit_Nonlocal(self, node: cst.Nonlocal) -> bool:
        for item in node.names:
            self._add(item.name.value, ("other", None, None))
        return False


# -- the same question asked of CPython's ast, for the engine's gate 2 ------------------------------
ARRAY_TYPE_TAILS = frozenset(name.rsplit(".", 1)[-1] for name in ARRAY_TYPES | GDA_CLASS_NAMES)
_SHARD_LISTS = ("addressable_shards", "global_shards", "local_shards")


def ast_may_tie(facts: Facts, expr: ast.AST, scope: Optional[AstScope], seen: FrozenSet[str] = frozenset()) -> bool:
    """Could :func:`receiver_tie` find ``expr`` (read in ``scope``) tied?  An
    over-approximation on ``ast`` facts (*some* binding of a name instead of every one, any
    resolution of an import): False only when no reading of the module ties it.  Call
    ``facts.scopes()`` first and answer True yourself when it is None."""
    kind = type(expr)
    if kind is ast.Call:
        func = expr.func  # type: ignore[attr-defined]
        qualnames = facts.qualnames(func)
        for qualname in qualnames:
            if qualname in GDA_CONSTRUCTORS:
                return True
            if (
                is_jax_name(qualname)
                and not _under(qualname, MAYBE_ARRAY_PREFIXES)
                and not _under(qualname, NOT_ARRAY_PREFIXES)
                and _array_producer_name(qualname)
            ):
                return True
        if qualnames:
            head = dotted(func)[0]  # type: ignore[index]
            if not any(b.kind != "other" for b in facts.bindings(head, scope)):
                return False  # only an import: receiver_tie stops at its qualified name
        if type(func) is ast.Attribute and func.attr not in NOT_ARRAY_METHODS:
            return ast_may_tie(facts, func.value, scope, seen)
        if type(func) is ast.Call:  # jax.jit(f)(x)
            return _ast_wrapper(facts, func)
        if type(func) is ast.Name:  # a jitted function of this module
            for binding in facts.bindings(func.id, scope):
                if binding.kind == "def" and any(_ast_wrapper(facts, d) for d in getattr(binding.value, "decorator_list", ())):
                    return True
                if binding.kind == "value" and binding.value is not None and _ast_wrapper(facts, binding.value):
                    return True
        return False
    if kind is ast.Subscript:
        return ast_may_tie(facts, expr.value, scope, seen)  # type: ignore[attr-defined]
    if kind is ast.Name:
        ident = expr.id  # type: ignore[attr-defined]
        if ident in seen:
            return False  # a tie through a cycle also exists without it
        seen = seen | {ident}
        for binding in facts.bindings(ident, scope):
            if binding.annotation is not None and _ast_annotation_may_tie(binding.annotation):
                return True
            if (
                binding.kind == "value"
                and binding.value is not None
                and ast_may_tie(facts, binding.value, binding.scope, seen)
            ):
                return True
        return False
    if kind is ast.NamedExpr:
        return ast_may_tie(facts, expr.value, scope, seen)  # type: ignore[attr-defined]
    if kind is ast.BinOp:
        return ast_may_tie(facts, expr.left, scope, seen) or ast_may_tie(facts, expr.right, scope, seen)  # type: ignore[attr-defined]
    if kind is ast.UnaryOp:
        return ast_may_tie(facts, expr.operand, scope, seen)  # type: ignore[attr-defined]
    if kind is ast.Attribute:
        inner = expr.value  # type: ignore[attr-defined]
        if expr.attr in ARRAY_PROPERTIES:  # type: ignore[attr-defined]
            return ast_may_tie(facts, inner, scope, seen)
        if type(inner) is ast.Name and _ast_attribute_may_tie(facts, expr.attr, seen):  # type: ignore[attr-defined]
            return True  # self.table, assigned an array in a method (see _flow.attribute_tie)
        if (
            expr.attr == "data"  # type: ignore[attr-defined]
            and type(inner) is ast.Subscript
            and type(inner.value) is ast.Attribute
            and inner.value.attr in _SHARD_LISTS
        ):
            return ast_may_tie(facts, inner.value.value, scope, seen)
    return False


def _ast_attribute_may_tie(facts: Facts, attr: str, seen: FrozenSet[str]) -> bool:
    """Some ``<name>.attr = value`` in the module whose value may tie."""
    key = "." + attr
    if key in seen:
        return False
    stores = getattr(facts, "_attribute_stores", None)
    if stores is None:
        stores = {}
        for node in ast.walk(facts.tree) if facts.tree is not None else ():
            if type(node) is ast.Assign:
                targets, value = node.targets, node.value
            elif type(node) is ast.AnnAssign and node.value is not None:
                targets, value = [node.target], node.value
            else:
                continue
            for target in targets:
                if type(target) is ast.Attribute and type(target.value) is ast.Name:
                    stores.setdefault(target.attr, []).append(value)
        setattr(facts, "_attribute_stores", stores)
    return any(
        ast_may_tie(facts, value, facts.scope_of(value), seen | {key}) for value in stores.get(attr, ())
    )


def _ast_wrapper(facts: Facts, expr: ast.AST) -> bool:
    """``jax.jit``, ``jax.jit(...)``, ``partial(jax.jit, ...)`` (as :func:`_wrapper_of`)."""
    if facts.qualnames(expr) & JIT_WRAPPERS:
        return True
    if type(expr) is ast.Call:
        func_names = facts.qualnames(expr.func)  # type: ignore[attr-defined]
        if func_names & JIT_WRAPPERS:
            return True
        if func_names & PARTIALS and expr.args:  # type: ignore[attr-defined]
            return bool(facts.qualnames(expr.args[0]) & JIT_WRAPPERS)  # type: ignore[attr-defined]
    return False


def _ast_annotation_may_tie(annotation: ast.AST) -> bool:
    if type(annotation) is ast.Constant and isinstance(annotation.value, str):  # type: ignore[attr-defined]
        try:
            annotation = ast.parse(annotation.value.strip(), mode="eval").body  # type: ignore[attr-defined]
        except (SyntaxError, ValueError):
            return False
    parts = dotted(annotation)
    return bool(parts) and parts[-1] in ARRAY_TYPE_TAILS  # type: ignore[index]


def ast_imports_gda(facts: Facts) -> bool:
    return any(_under(name, GDA_MODULES) for name in facts.imports)


def ast_called_without_arguments(facts: Facts, attr: str) -> bool:
    """Does ``<expr>.attr()`` (no arguments at all) occur?"""
    return any(
        type(call.func) is ast.Attribute and call.func.attr == attr and not call.args and not call.keywords
        for call in facts.calls
    )


def ast_called(facts: Facts, attr: str) -> bool:
    """Does ``<expr>.attr(...)`` occur?"""
    return any(type(call.func) is ast.Attribute and call.func.attr == attr for call in facts.calls)


# -- the policy the JAX4xx attribute rules share ----------------------------------------------------
def receiver_of_method(ctx: Context, node: cst.Attribute) -> Optional[cst.Call]:
    """``node`` is ``<recv>.name`` called as ``<recv>.name(...)``: the call, else None."""
    parent = ctx.parent(node)
    if isinstance(parent, cst.Call) and parent.func is node:
        return parent
    return None


def is_assignment_target(ctx: Context, node: cst.CSTNode) -> bool:
    parent = ctx.parent(node)
    if isinstance(parent, (cst.AssignTarget, cst.Del)):
        return True
    if isinstance(parent, (cst.AnnAssign, cst.AugAssign)) and parent.target is node:
        return True
    if isinstance(parent, (cst.Element, cst.StarredElement)):
        return is_assignment_target(ctx, ctx.parent(parent))  # type: ignore[arg-type]
    if isinstance(parent, (cst.Tuple, cst.List)):
        return is_assignment_target(ctx, parent)
    return False


class Verdict(str, enum.Enum):
    """What an attribute rule does with ``<receiver>.<attr>`` (see :func:`decide`)."""

    FIX = "fix"  # tied to a JAX array: a safe fix
    FILE = "file"  # clearly JAX array code, short of proof: an unsafe fix
    REPORT = "report"  # JAX code, receiver unknown: a finding
    SKIP = "skip"  # not JAX's attribute: nothing


FIX, FILE, REPORT, SKIP = Verdict.FIX, Verdict.FILE, Verdict.REPORT, Verdict.SKIP


def decide(ctx: Context, node: cst.Attribute, specific: bool) -> Tuple[Verdict, Tie]:
    """How an attribute rule treats ``<receiver>.<attr>``:

    * ``"fix"``: the receiver is tied to a JAX array (``Tie.tied``);
    * ``"file"``: the receiver is only *likely* a JAX array (``Tie.kind == "likely"``: an
      element of ``x.device_buffers`` whose ``x`` is unknown, ...; see rules/_flow.py), or not
      tied, but ``specific`` (an attribute name only JAX arrays ever had), the
      module imports JAX and no other array library, and the module does not define an
      attribute or method of that name itself: "clearly JAX array code".  Rules apply this
      fix only with --unsafe-fixes (or report it);
    * ``"report"``: the module imports JAX, the receiver is not provably foreign;
    * ``"skip"``: a foreign receiver, an assignment target, the module's own attribute, or a
      module that never imports JAX.
    """
    attr = node.attr.value
    if is_assignment_target(ctx, node):
        return SKIP, UNKNOWN
    facts = module_facts(ctx)
    scope = ctx.scope_of(node)
    tie = receiver_tie(ctx, node.value, scope) if attr in facts.user_attributes else None
    if tie is not None and not tie.tied:
        return SKIP, UNKNOWN  # the module's own attribute, on a receiver not tied to an array
    tie = tie or receiver_tie(ctx, node.value, scope)
    if tie.kind == "likely":  # evidence short of proof: applied like a JAX-only name
        return (FILE, tie) if facts.imports_jax or facts.imports_gda else (SKIP, tie)
    if tie.tied:
        return FIX, tie
    if tie.kind == "foreign" or not (facts.imports_jax or facts.imports_gda):
        return SKIP, tie
    if isinstance(node.value, cst.Name) and node.value.value in ("self", "cls"):
        return SKIP, tie
    if specific and not facts.foreign_libraries:
        return FILE, tie
    return REPORT, tie


def strip_parens(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``(a + b)`` -> ``a + b`` for use as a call argument (tuples keep theirs)."""
    if isinstance(expr, (cst.Tuple, cst.GeneratorExp, cst.Yield)):
        return expr
    if getattr(expr, "lpar", None):
        return expr.with_changes(lpar=[], rpar=[])
    return expr
