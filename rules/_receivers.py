"""Receiver ties: is the object an attribute is read from a JAX array?

Rules for legacy *methods and attributes* (``x.device_buffer``, ``gda.local_shards``,
``x.to_py()``...) cannot resolve names: the receiver is any expression.  These helpers decide,
statically and conservatively, what the receiver is.  Shared by JAX402-JAX406 and reusable by
any rule (``from jaxmigrate.rules._receivers import receiver_tie``).

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

The evidence this tracing uses lives beside it: the names (:mod:`rules._array_names`), the
whole-module facts (:mod:`rules._module_facts`), what each binding of a scope is
(:mod:`rules._definitions`); the same question on CPython's ``ast`` for gate 2 is
:mod:`rules._receiver_gate`, and what a rule does with the answer is :mod:`rules._verdict`.
"""

from __future__ import annotations

import dataclasses
from typing import List, Optional

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.migrator.context import Context
from jaxmigrate.migrator.scope import Scope
from jaxmigrate.rules import _flow
from jaxmigrate.rules._array_names import (
    ARRAY_PROPERTIES,
    ARRAY_TYPES,
    GDA_CLASS_NAMES,
    GDA_CONSTRUCTORS,
    MAYBE_ARRAY_PREFIXES,
    NOT_ARRAY_METHODS,
    NOT_ARRAY_PREFIXES,
    UNKNOWN,
    Tie,
    is_foreign_library,
    is_jax_name,
    kept,
    under,
)
from jaxmigrate.rules._definitions import scope_definitions
from jaxmigrate.rules._module_facts import module_facts, output_of


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
            return dataclasses.replace(
                inner,
                kind=kept(inner),
                reason=f"an element of {inner.reason}",
                named=False,
                source="",
            )
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
            return Tie(kept(inner), f"a shard of {inner.reason}", pmap=inner.pmap)
    if (
        isinstance(expr, cst.Attribute) and expr.attr.value == "data"
    ):  # for s in x.addressable_shards
        shard = _flow.shard_tie(ctx, expr, scope, receiver_tie, depth)
        if shard is not None:
            return shard
    if isinstance(expr, cst.BinaryOperation):
        sides = [receiver_tie(ctx, e, scope, depth + 1) for e in (expr.left, expr.right)]
        if any(t.kind == "foreign" for t in sides) or not any(t.tied for t in sides):
            return UNKNOWN
        first = next(t for t in sides if t.tied)
        return Tie(kept(*sides), f"arithmetic on {first.reason}", pmap=any(t.pmap for t in sides))
    if isinstance(expr, cst.UnaryOperation):
        inner = receiver_tie(ctx, expr.expression, scope, depth + 1)
        return Tie(kept(inner), inner.reason, pmap=inner.pmap) if inner.tied else UNKNOWN
    if isinstance(expr, cst.Attribute) and expr.attr.value in ARRAY_PROPERTIES:
        inner = receiver_tie(ctx, expr.value, scope, depth + 1)
        if inner.tied:
            return Tie(kept(inner), f"{inner.reason}.{expr.attr.value}", pmap=inner.pmap)
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
            if under(qualname, MAYBE_ARRAY_PREFIXES):
                return UNKNOWN
            if under(qualname, NOT_ARRAY_PREFIXES) or not array_producer_name(qualname):
                # NamedSharding(...), jax.devices(), jax.jit(f): JAX objects, never arrays.
                return Tie("foreign", f"the result of {ctx.code(func)}(...), not an array")
            named = _has_named_sharding_arg(ctx, call, scope)
            return Tie(
                "array", f"the result of {ctx.code(func)}(...)", named=named, source=qualname
            )
        if is_foreign_library(qualname):
            return Tie("foreign", f"the result of {ctx.code(func)}(...), not JAX")
        return UNKNOWN  # another library (flax, optax ...) may well return JAX arrays
    if isinstance(func, cst.Attribute) and func.attr.value not in NOT_ARRAY_METHODS:
        inner = receiver_tie(ctx, func.value, scope, depth + 1)
        if inner.tied:  # x.reshape(...), x.astype(...), jnp.ones(3).sum()
            return Tie(kept(inner), f"{inner.reason}.{func.attr.value}(...)", pmap=inner.pmap)
    if isinstance(func, cst.Call):  # jax.jit(f)(x), jax.pmap(f)(x)
        output = output_of(func, lambda e: ctx.qualname(e, scope))
        if output is not None:
            return _wrapped_output(output, f"the output of {ctx.code(func.func)}")
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
                output = facts.jit_functions[func.value]
                return _wrapped_output(output, f"the output of the jitted {func.value}")
            if all(b.qualname is None for b in bindings):
                return Tie("foreign", f"the result of {func.value}(...), defined here")
    return UNKNOWN


def _wrapped_output(output: str, reason: str) -> Tie:
    """The tie of what a jitted or pmapped function returns, by its ``output`` (see
    :func:`rules._module_facts.output_of`): an array; with a pmap ``out_axes`` that is neither
    0 nor None, only likely one whose shards a rule knows the layout of."""
    if output == "pmap-axes":
        return Tie("likely", f"{reason}, whose out_axes decides its shards' layout")
    return Tie("array", reason, pmap=output == "pmap")


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


def array_producer_name(qualname: str) -> bool:
    """False for classes (``NamedSharding(...)``, ``Mesh(...)``: capitalised) and for anything
    about shardings or meshes (``canonicalize_sharding``, ``jax._src.mesh.*``)."""
    parts = qualname.split(".")
    if parts[-1][:1].isupper():
        return False
    return not any("sharding" in part.lower() or "mesh" in part.lower() for part in parts)


def _has_named_sharding_arg(ctx: Context, call: cst.Call, scope: Scope) -> bool:
    for arg in call.args:
        value = arg.value
        if isinstance(value, cst.Call) and (ctx.qualname(value.func, scope) or "").endswith(
            ".NamedSharding"
        ):
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
        if is_foreign_library(qualname) or all(
            isinstance(b.statement, cst.Import) for b in bindings
        ):
            return Tie("foreign", f"{ident} is the import {qualname}")
        return UNKNOWN
    if any(b.qualname is not None for b in bindings):
        return UNKNOWN
    home = bindings[0].scope
    if any(b.scope is not home for b in bindings):
        return UNKNOWN
    definitions = scope_definitions(ctx, home).get(ident, [])
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
    if (
        isinstance(annotation, cst.Name)
        and annotation.value in _BUILTIN_TYPES
        and scope.lookup(annotation.value) is None
    ):
        return Tie("foreign", f"annotated {annotation.value}")
    return UNKNOWN


_BUILTIN_TYPES = frozenset(
    {"int", "float", "str", "bytes", "bool", "list", "dict", "tuple", "set", "complex"}
)
