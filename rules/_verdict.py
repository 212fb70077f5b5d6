"""The policy the JAX4xx attribute rules share: given what the receiver of
``<receiver>.<attr>`` is (:mod:`rules._receivers`), whether to fix it safely, offer an unsafe
fix, report it, or leave it (:class:`Verdict`), plus the small syntax checks those rules make
before asking.
"""

from __future__ import annotations

import enum
from typing import Optional, Tuple

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.migrator.context import Context
from jaxmigrate.migrator.diagnostics import Safety
from jaxmigrate.rules._array_names import UNKNOWN, Tie
from jaxmigrate.rules._helpers import is_store
from jaxmigrate.rules._module_facts import module_facts
from jaxmigrate.rules._receivers import receiver_tie


# -- the policy the JAX4xx attribute rules share -------------------------------------------------
def receiver_of_method(ctx: Context, node: cst.Attribute) -> Optional[cst.Call]:
    """``node`` is ``<recv>.name`` called as ``<recv>.name(...)``: the call, else None."""
    parent = ctx.parent(node)
    if isinstance(parent, cst.Call) and parent.func is node:
        return parent
    return None


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
    if is_store(ctx, node):
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


# Why a FILE verdict's fix is unsafe, as its message says.
UNTIED = "The receiver is not tied to a JAX array; this module is JAX code."


def replace_by_verdict(
    ctx: Context, verdict: Verdict, node: cst.CSTNode, new: cst.CSTNode, message: str
) -> None:
    """Apply a fix as ``verdict`` allows: safe for FIX, unsafe (saying why) for FILE; nothing
    for the other verdicts."""
    if verdict == FIX:
        ctx.replace(node, new, message)
    elif verdict == FILE:
        ctx.replace(node, new, message, Safety.UNSAFE, detail=UNTIED)


def strip_parens(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``(a + b)`` -> ``a + b`` for use as a call argument (tuples keep theirs)."""
    if isinstance(expr, (cst.Tuple, cst.GeneratorExp, cst.Yield)):
        return expr
    if getattr(expr, "lpar", None):
        return expr.with_changes(lpar=[], rpar=[])
    return expr
