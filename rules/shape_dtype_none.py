"""JAX909 shape-dtype-none: ``jax.ShapeDtypeStruct(shape, None)`` -> ``(shape, "float64")``.

Safe.  Up to jax 0.4.1, ``ShapeDtypeStruct.__init__`` stored ``np.dtype(dtype)``, and
``np.dtype(None)`` is float64, so a struct made with no dtype was a float64 one (diffrax
0.2's Brownian paths made theirs so).  jax 0.4.2 added ``if dtype is None: raise
ValueError("ShapeDtypeStruct: dtype must be specified.")`` (``jax/_src/api.py`` in the 0.4.1
and 0.4.2 sdists), and every release since raises.  ``"float64"`` gives the struct the dtype
it had, on every release: the same ``np.dtype``.
"""

from __future__ import annotations

import ast
from typing import Optional

from jaxmigrate.migrator import lazycst as cst, references as refs
from jaxmigrate.migrator.astfacts import Facts
from jaxmigrate.migrator.context import Context, NameSite
from jaxmigrate.migrator.rule import Example, Lifecycle, Rule, Safety
from jaxmigrate.migrator.version import parse_version
from jaxmigrate.rules._helpers import call_target
from jaxmigrate.rules._text_gates import ShapeDtypeNoneGate

STRUCT = "jax.ShapeDtypeStruct"
REJECTED = parse_version("0.4.2")  # the first release whose __init__ raises on dtype=None


class ShapeDtypeNone(ShapeDtypeNoneGate, Rule, code="JAX909", safety=Safety.SAFE):
    """jax.ShapeDtypeStruct(shape, None) -> jax.ShapeDtypeStruct(shape, "float64")

    **What it does.** Gives `jax.ShapeDtypeStruct` the dtype a `None` gave it before JAX
    0.4.2: `ShapeDtypeStruct(shape, None)` (or `dtype=None`) becomes
    `ShapeDtypeStruct(shape, "float64")`.

    **Why.** Through JAX 0.4.1 the struct stored `np.dtype(dtype)`, and NumPy reads `None` as
    float64.  JAX 0.4.2 made the dtype required: `ValueError: ShapeDtypeStruct: dtype must be
    specified.`, raised where the struct is made, often at import or in a library's
    constructor.  `"float64"` is the same `np.dtype` on every release, so the struct, and what
    is built from it, stay as they were (with 64-bit types disabled, JAX truncates float64
    to float32 where it makes an array of it, as it did before).

    **Use instead.** Name the dtype: `jnp.result_type(float)` is the default floating type
    (float32 unless 64-bit types are enabled), if that is what the code meant.
    """

    whole_module = False  # hooks read their sites and the names those resolve to

    lifecycle = Lifecycle(removed=("0.4.2", "ShapeDtypeStruct requires a dtype"))
    references = (refs.api(STRUCT),)
    names = frozenset({STRUCT})
    names_are_legacy = False  # the class stays: never drop its imports
    examples = (
        Example(
            title="a Brownian path's increments (diffrax 0.2)",
            before="""
            import jax

            shape = jax.ShapeDtypeStruct((3,), None)
            """,
            after="""
            import jax

            shape = jax.ShapeDtypeStruct((3,), "float64")
            """,
        ),
    )

    def ast_gate(self, facts: Facts) -> bool:
        """A call of the class with ``None`` for its dtype (the second positional argument or
        ``dtype=``)."""
        return any(
            _none_dtype(call) for call in facts.calls if STRUCT in facts.qualnames(call.func)
        )

    def visit_name(self, site: NameSite, ctx: Context) -> None:
        target = None if site.is_import else call_target(site, ())
        if target is None or not ctx.reaches(REJECTED):
            return
        call = target[0]
        dtype = _dtype_arg(call)
        if dtype is None or not _is_none(dtype.value):
            return
        new = dtype.with_changes(value=cst.SimpleString('"float64"'))
        args = [new if arg is dtype else arg for arg in call.args]
        message = 'ShapeDtypeStruct(..., None) -> "float64": the dtype None gave before jax 0.4.2'
        ctx.replace(call, call.with_changes(args=args), message)


def _none_dtype(call: ast.Call) -> bool:
    if any(type(a) is ast.Starred for a in call.args) or any(k.arg is None for k in call.keywords):
        return False
    values = [k.value for k in call.keywords if k.arg == "dtype"]
    if len(call.args) >= 2:
        values.append(call.args[1])
    return any(type(v) is ast.Constant and v.value is None for v in values)


def _dtype_arg(call: "cst.Call") -> Optional["cst.Arg"]:
    """The argument given for ``dtype`` (None with ``*args``/``**kwargs``: unknown)."""
    if any(arg.star for arg in call.args):
        return None
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "dtype":
            return arg
    positional = [arg for arg in call.args if arg.keyword is None]
    return positional[1] if len(positional) >= 2 else None


def _is_none(value: "cst.BaseExpression") -> bool:
    return isinstance(value, cst.Name) and value.value == "None"
