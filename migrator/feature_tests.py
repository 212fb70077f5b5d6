"""What makes an ``if`` a compatibility shim: a test of a feature (``hasattr(...)``) or of the
*JAX* version.

The branches of such a test are deliberate compatibility code, left as they are.  Only a JAX
version counts: ``jax.__version__``, ``jax.version``, ``jax.lib.version``,
``jaxlib.__version__``, ``jax.__version_info__`` (and so ``version.parse(jax.__version__)``
or a tuple comparison of them), or a name that says so (``jax_version``, ``_JAXLIB_VERSION``).
Anything else, an attribute merely named ``version`` (``if state.version: ...``) or a Python
version check (``sys.version_info``), is ordinary code and is migrated.

A ``hasattr`` on the instance or class a method has (``if not hasattr(self, "_f"):``, a cache
filled on first use: coax 0.1.12's) tests the program's own object, not a feature of JAX: the
walkers hand it over as :data:`OWN_HASATTR`, which is no feature test, and read its other
arguments as usual.

One rule for the LibCST engine (:func:`migrator.scope.is_feature_test`) and the ``ast`` readers
(:func:`migrator.source.jax_references`): both hand over the dotted chains a test reads.
"""

from __future__ import annotations

import ast
from typing import Iterable, Sequence

_VERSION_WORDS = frozenset({"__version__", "__version_info__", "version_info", "version"})
_JAX_ROOTS = frozenset({"jax", "jaxlib"})
OWN = frozenset({"self", "cls"})  # what a method's first parameter is conventionally named
OWN_HASATTR = ("hasattr", "self")  # the chain handed over for ``hasattr(self, ...)``


def reads_feature_or_jax_version(chains: Iterable[Sequence[str]]) -> bool:
    """True when one of the dotted ``chains`` a test reads (``("jax", "__version__")``,
    ``("hasattr",)``) is ``hasattr`` or names a JAX version."""
    for chain in chains:
        if not chain:
            continue
        if chain[0] == "hasattr" and len(chain) == 1:
            return True
        if chain[0] in _JAX_ROOTS and any(_is_version_word(part) for part in chain[1:]):
            return True
        if any(_is_version_word(part) and "jax" in part.lower() for part in chain):
            return True
    return False


def _is_version_word(word: str) -> bool:
    lowered = word.lower()
    return lowered in _VERSION_WORDS or lowered.endswith(("_version", "_version_info"))


def own_hasattr(call: ast.Call) -> bool:
    """``hasattr(self, ...)`` (or ``cls``): a test of the program's own object
    (:data:`OWN_HASATTR`), read with ``ast``."""
    func, args = call.func, call.args
    return (
        type(func) is ast.Name
        and func.id == "hasattr"
        and bool(args)
        and type(args[0]) is ast.Name
        and args[0].id in OWN
    )
