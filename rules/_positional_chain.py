"""What a ``PositionalSharding`` chain means, for JAX603 (:mod:`rules.positional_sharding`).

A :class:`State` is a PositionalSharding value read statically: the shape of its device grid
and, for each array dimension, the grid axis it is split over.  :func:`climb` collects the
``.reshape``/``.replicate``/``.transpose``/``.T`` chain written on a value and
:func:`apply_ops` follows it, raising :class:`Unsupported` (with the reason the rule reports)
where the chain is not literal or has no ``NamedSharding`` equivalent.  The literal readers
for shapes and axes are here too.
"""

from __future__ import annotations

import dataclasses
from typing import Dict, List, Optional, Sequence, Tuple

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.migrator.context import Context

CHAIN_METHODS = ("reshape", "replicate", "transpose")

# Properties every Sharding has, with the same value for the equivalent NamedSharding (the same
# devices): ``s.replicate().device_set`` keeps its ``.device_set``.
SHARED_PROPERTIES = frozenset({"device_set", "addressable_devices", "is_fully_addressable"})


class Unsupported(Exception):
    """A chain the rule cannot translate statically; the message says why."""


@dataclasses.dataclass(frozen=True)
class State:
    """What a PositionalSharding value is: its device grid and what each array dim maps to."""

    grid: Tuple[Optional[int], ...]  # device-grid shape (None: a 1-D list of unknown length)
    dims: Tuple[Optional[int], ...]  # per array dim: the grid axis it is split over, or None
    pure: bool = True  # no transpose/replicate yet (a reshape is still a plain reshape)

    def mesh_shape(self) -> List[Optional[int]]:
        return [g for g in self.grid if g is None or g > 1]

    def axis_names(self) -> Dict[int, str]:
        kept = [i for i, g in enumerate(self.grid) if g is None or g > 1]
        if len(kept) == 1:
            return {kept[0]: "x"}
        return {axis: "abcdefgh"[n] for n, axis in enumerate(kept)}

    def spec(self) -> List[Optional[str]]:
        names = self.axis_names()
        return [None if d is None else names.get(d) for d in self.dims]


def climb(
    node: cst.BaseExpression, ctx: Context
) -> Tuple[cst.BaseExpression, List[Tuple[str, cst.CSTNode]]]:
    """The outermost expression of ``node.reshape(...).replicate(...).T...`` and its ops."""
    ops: List[Tuple[str, cst.CSTNode]] = []
    while True:
        parent = ctx.parent(node)
        if isinstance(parent, cst.Attribute) and parent.value is node:
            attr = parent.attr.value
            if attr == "T":
                ops.append(("T", parent))
                node = parent
                continue
            grand = ctx.parent(parent)
            if attr in CHAIN_METHODS and isinstance(grand, cst.Call) and grand.func is parent:
                ops.append((attr, grand))
                node = grand
                continue
            if attr in SHARED_PROPERTIES:
                return node, ops  # NamedSharding has it, with the same meaning
            raise Unsupported(f"its .{attr} is used")
        return node, ops


def apply_ops(state: State, ops: Sequence[Tuple[str, cst.CSTNode]]) -> Tuple[State, bool]:
    """Apply the ops; ``fresh`` tells whether a reshape produced a new grid."""
    fresh = False
    for kind, node in ops:
        if kind == "T":
            state = State(state.grid, tuple(reversed(state.dims)), False)
        elif kind == "transpose":
            axes = _int_args(node)  # type: ignore[arg-type]
            if axes is None or sorted(axes) != list(range(len(state.dims))):
                raise Unsupported("its transpose axes are not literal")
            state = State(state.grid, tuple(state.dims[a] for a in axes), False)
        elif kind == "reshape":
            shape = _int_args(node)  # type: ignore[arg-type]
            if shape is None or any(s < 1 for s in shape):
                raise Unsupported("a reshape is not a literal shape")
            if not state.pure:
                raise Unsupported("it is reshaped after a transpose or replicate")
            known = [g for g in state.grid if g is not None]
            if None not in state.grid and _product(known) != _product(shape):
                raise Unsupported("a reshape changes the number of devices")
            state = State(tuple(shape), tuple(range(len(shape))), True)
            fresh = True
        elif kind == "replicate":
            axis = _replicate_axis(node)  # type: ignore[arg-type]
            if axis == "bad":
                raise Unsupported(
                    "a replicate call is not replicate(axis) with a literal axis and keepdims=True"
                )
            if axis is None:
                dims: Tuple[Optional[int], ...] = tuple(None for _ in state.dims)
            else:
                k = axis + len(state.dims) if axis < 0 else axis
                if not 0 <= k < len(state.dims):
                    raise Unsupported("a replicate axis is out of range")
                dims = tuple(None if i == k else d for i, d in enumerate(state.dims))
            state = State(state.grid, dims, False)
    return state, fresh


def _int(node: cst.BaseExpression) -> Optional[int]:
    if isinstance(node, cst.Integer):
        return int(node.value)
    if (
        isinstance(node, cst.UnaryOperation)
        and isinstance(node.operator, cst.Minus)
        and isinstance(node.expression, cst.Integer)
    ):
        return -int(node.expression.value)
    return None


def int_tuple(node: cst.BaseExpression) -> Optional[Tuple[int, ...]]:
    if isinstance(node, (cst.Tuple, cst.List)):
        values = [_int(e.value) for e in node.elements]
        if values and all(v is not None for v in values):
            return tuple(values)  # type: ignore[arg-type]
    return None


def _int_args(call: cst.Call) -> Optional[List[int]]:
    """``f(4, 2)`` or ``f((4, 2))`` -> [4, 2]."""
    if any(a.keyword is not None or a.star for a in call.args):
        return None
    if len(call.args) == 1:
        packed = int_tuple(call.args[0].value)
        if packed is not None:
            return list(packed)
    values = [_int(a.value) for a in call.args]
    if all(v is not None for v in values):
        return values  # type: ignore[return-value]
    return None


def _replicate_axis(call: cst.Call):  # noqa: ANN202  (int, None or "bad")
    axis: object = None
    for index, arg in enumerate(call.args):
        if arg.star:
            return "bad"
        key = (
            arg.keyword.value
            if arg.keyword is not None
            else ("axis", "keepdims")[index]
            if index < 2
            else "?"
        )
        if key == "axis":
            if isinstance(arg.value, cst.Name) and arg.value.value == "None":
                axis = None
            else:
                axis = _int(arg.value)
                if axis is None:
                    return "bad"
        elif key == "keepdims":
            if not (isinstance(arg.value, cst.Name) and arg.value.value == "True"):
                return "bad"
        else:
            return "bad"
    return axis


def _product(values: Sequence[int]) -> int:
    result = 1
    for v in values:
        result *= v
    return result
