"""One binding of a name: the single ``Binding`` type both analyses of a module produce.

The LibCST analysis (:mod:`migrator.scope`) records imports with their qualified name, alias
node and statement, and plain bindings by name; the cheap ``ast`` pass of gate 2
(:mod:`migrator.astfacts`) records how a name was bound (``kind``) with the assigned value or
annotation.  One class serves both, so a rule or helper reads the same attributes whichever
pass answered.  A leaf module: it imports nothing from the project.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

if TYPE_CHECKING:  # pragma: no cover
    import libcst as cst


class Binding:
    """A name bound in a scope.

    ``kind``: ``"import"`` (``qualname``, ``node`` the ``ImportAlias``, ``statement`` the
    ``Import``/``ImportFrom``, ``guarded`` inside ``try: ... except ImportError``), ``"param"``,
    ``"value"`` (``value``: the assigned expression), ``"def"`` (a function or class, in
    ``value``) or ``"other"``.  ``value`` and ``annotation`` are ``ast`` nodes from gate 2.
    """

    __slots__ = (
        "name",
        "scope",
        "qualname",
        "node",
        "statement",
        "guarded",
        "kind",
        "value",
        "annotation",
        "top",
    )

    def __init__(
        self,
        name: str = "",
        scope: Any = None,
        qualname: Optional[str] = None,
        node: Optional[cst.CSTNode] = None,
        statement: Optional[cst.CSTNode] = None,
        guarded: bool = False,
        *,
        kind: Optional[str] = None,
        value: Any = None,
        annotation: Any = None,
    ) -> None:
        self.name = name
        self.scope = scope  # a migrator.scope.Scope, or an astfacts.AstScope
        self.qualname = qualname  # None for a non-import binding
        self.node = node  # the ImportAlias, for imports
        self.statement = statement  # the Import/ImportFrom, for imports
        self.guarded = guarded
        self.kind = kind or ("import" if qualname is not None else "other")
        self.value = value
        self.annotation = annotation
        # LibCST's analysis: the index of the top-level statement that binds a module-level
        # name when it does so unconditionally (a simple statement, or a top-level def's or
        # class's own name); None otherwise (Scope.flow_qualname)
        self.top: Optional[int] = None

    @property
    def is_import(self) -> bool:
        return self.qualname is not None

    @property
    def imported_name(self) -> str:
        """What the import names: ``jax.util`` for ``import jax.util`` (which binds ``jax``
        to ``jax``), the qualified name otherwise."""
        import libcst as cst  # (the ``ast`` pass of gate 2 makes bindings without LibCST)

        if isinstance(self.statement, cst.Import) and isinstance(self.node, cst.ImportAlias):
            from libcst.helpers import get_full_name_for_node

            return get_full_name_for_node(self.node.name) or self.qualname or ""
        return self.qualname or ""

    def __repr__(self) -> str:
        detail = self.qualname if self.qualname is not None else self.kind
        return f"Binding({self.name or '?'}: {detail})"
