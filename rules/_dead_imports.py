"""A ``try: import ... except ImportError: import ...`` none of whose branches imports on the
newest JAX of the target range: the module dies at import there, though every rule leaves the
shim alone as compatibility code (JAX901 reports it, at the ``try``).

jaxlie 1.3.3 writes ``try: from jax.random import KeyArray`` / ``except ImportError:
KeyArray = Any``: the fallback works and the shim is live.  With an import in the fallback as
well (``from jax.interpreters.xla import DeviceArray as KeyArray``), both are gone from the
newest JAX, and ``import`` of the module raises ``ImportError`` from inside the handler.
Read on CPython's ``ast``, by both of JAX901's layers: one reading, the same answer.
"""

from __future__ import annotations

import ast
from typing import List, Optional, Tuple

from jaxmigrate.migrator.version import Version
from jaxmigrate.rules._api_history import history

# What catches the ImportError a missing module or name raises at import.
_CATCHERS = frozenset({"ImportError", "Exception", "BaseException"})


def dead_tries(tree: ast.Module, newest: Version) -> List[Tuple[ast.Try, List[str]]]:
    """Each ``try`` whose body imports a JAX name ``newest`` lacks and whose first handler
    that catches ``ImportError`` does too, with those names (the body's first, the handler's
    first).  Only imports written directly in the two blocks count: a nested shim decides
    for itself."""
    found = []
    for node in ast.walk(tree):
        if type(node) is not ast.Try:
            continue
        handler = next((h for h in node.handlers if _catches_import(h)), None)
        if handler is None:
            continue
        first = _gone_import(node.body, newest)
        if first is None:
            continue
        second = _gone_import(handler.body, newest)
        if second is not None:
            found.append((node, [first, second]))
    return found


def _catches_import(handler: ast.ExceptHandler) -> bool:
    kind = handler.type
    if kind is None:
        return True
    for candidate in kind.elts if type(kind) is ast.Tuple else [kind]:
        name = candidate.attr if type(candidate) is ast.Attribute else getattr(candidate, "id", "")
        if name in _CATCHERS:
            return True
    return False


def _gone_import(body: List[ast.stmt], newest: Version) -> Optional[str]:
    """The first JAX name an import statement of ``body`` imports that ``newest`` lacks."""
    h = history()
    for statement in body:
        if type(statement) is ast.Import:
            names = [alias.name for alias in statement.names]
        elif type(statement) is ast.ImportFrom and not statement.level and statement.module:
            names = [f"{statement.module}.{alias.name}" for alias in statement.names]
        else:
            continue
        for qualname in names:
            if qualname.split(".", 1)[0] in ("jax", "jaxlib") and not _present(h, qualname, newest):
                return qualname
    return None


def _present(h: object, qualname: str, newest: Version) -> bool:
    """Is ``qualname`` there in ``newest``, or its module, for ``from m import *``?  A name the
    history does not know counts as there (nothing says it fails)."""
    if qualname.endswith(".*"):
        qualname = qualname[:-2]
    return h.present_in(qualname, newest) is not False  # type: ignore[attr-defined]


def message(newest: str, names: List[str]) -> Tuple[str, str]:
    """The finding, at the ``try``: one line, and the names in the detail."""
    return (
        f"no branch of this try imports on JAX {newest}: the module fails at import",
        f"On JAX {newest} the try imports {names[0]} and its ImportError handler imports "
        f"{names[1]}; that release has neither, so importing the module raises ImportError.  "
        "Rules leave a shim alone, so no other finding names the replacements: import what "
        "that release has instead (JAX's changelog says what replaced each name).",
    )
