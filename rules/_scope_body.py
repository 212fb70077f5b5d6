"""The base of the read-only visitors over one scope's body.

Apart from :mod:`rules._helpers` because its base is LibCST's visitor: the modules that
subclass it import it where they visit, so that importing the rules leaves LibCST unloaded
(:mod:`migrator.lazycst`).
"""

from __future__ import annotations

import libcst as cst


class ScopeBodyVisitor(cst.CSTVisitor):
    """A read-only visitor over one scope's body: nested lambdas and comprehensions, which
    have scopes of their own, are not entered (subclasses decide about defs and classes)."""

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_ListComp(self, node: cst.ListComp) -> bool:
        return False

    def visit_SetComp(self, node: cst.SetComp) -> bool:
        return False

    def visit_DictComp(self, node: cst.DictComp) -> bool:
        return False

    def visit_GeneratorExp(self, node: cst.GeneratorExp) -> bool:
        return False
