"""What the API-history rules share: feature/version-check shims, and what an import names."""

from __future__ import annotations

import re
from typing import Iterable

import libcst as cst

from migrator.context import Context
from migrator.scope import Binding, dotted_name

# ``hasattr(jax, "x")``, ``jax.__version__ >= ...``, ``jax.__version_info__``, ``jax.version``,
# ``jaxlib.version.__version__``, ``version.parse(...)``: what a test of a JAX feature reads.
_FEATURE_TEST = re.compile(r"\bhasattr\s*\(|__version|\bversion\b|_version\b")


def version_guarded(ctx: Context, ancestors: Iterable[cst.CSTNode]) -> bool:
    """Is a node with these ``ancestors`` inside an ``if``/``elif``/``else`` (or a conditional
    expression) whose test checks for a feature or a version?"""
    for node in ancestors:
        if isinstance(node, (cst.If, cst.IfExp, cst.While)) and _FEATURE_TEST.search(ctx.code(node.test)):
            return True
    return False


def imported_name(binding: Binding) -> str:
    """What an import binding names: ``jax.util`` for ``import jax.util`` (which binds ``jax``),
    the binding's qualified name otherwise."""
    if isinstance(binding.statement, cst.Import) and isinstance(binding.node, cst.ImportAlias):
        return dotted_name(binding.node.name) or binding.qualname or ""
    return binding.qualname or ""
