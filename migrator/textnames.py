"""Gate 1b for a rule whose sites are qualified JAX names: can the text make one of them?

Gate 2 (:func:`migrator.astfacts.ast_facts`) resolves a qualified name only through an import
statement: the import itself (``import a.b``, ``from m import n``), or an attribute chain
``head.x.y`` whose head an import binds (``import jax.numpy as jnp`` makes ``jnp.ones``
``jax.numpy.ones``).  :func:`resolves` reads both from the text: the import statements once
(:func:`migrator.textscan.imported_items`), and every chain on a name an import binds to
what some name starts with (``jax``, ``jax.numpy``) with one regular expression over the text,
each distinct chain looked up part by part.

Reading the occurrences of each of a rule's words instead (:mod:`migrator.textgate`) costs a
pass over the text per word, and a file that uses ``jax.numpy`` spells hundreds of the words
of the API history's names (``dtype``, ``array``, ``ones``), almost never as one of them.

Errs towards "yes", as every gate 1b must (``tests/test_gates.py``): a chain is matched
wherever its head's letters start one (``self.jnp.ones``, ``myjnp.ones`` read as
``jnp.ones``), in strings and comments too; blanks, line breaks, comments and backslash
continuations between the parts are skipped; an import whose module the text does not tell
answers "yes".
"""

from __future__ import annotations

import re
from typing import Dict, FrozenSet, List, Optional, Set, Tuple

from jaxmigrate.migrator.textscan import SEP, import_targets, imported_items, star_imported

_CHAINS: Dict[FrozenSet[str], "re.Pattern[str]"] = {}
# the last text asked, and its chains read for each set of heads asked of it
_LAST: Tuple[Optional[str], Dict[FrozenSet[str], List[Tuple[str, List[str]]]]] = (None, {})
# the last text asked, and :func:`_imports_of` it
_LAST_IMPORTS: Tuple[Optional[str], Tuple[Optional[FrozenSet[str]], Dict[str, Set[str]]]] = (
    None,
    (None, {}),
)
_NOT_DOTTED = re.compile(r"[^\w.]")  # what a chain holds besides its parts and dots
_BETWEEN = re.compile(r"[\s\\]|#[^\r\n]*")  # what lies between a chain's parts


def resolves(
    text: str, names: FrozenSet[str], modules: FrozenSet[str], prefixes: FrozenSet[str]
) -> bool:
    """May an import of ``text``, or an attribute chain on a name an import binds, resolve to
    one of ``names`` (qualified JAX names), or import something at or under one of
    ``modules``?  False only where gate 2 finds none of them (see the module's docstring).
    ``prefixes``: every proper dotted prefix of ``names`` (:func:`prefixes_of`): a chain can
    only make one of them on a head bound to one of these."""
    imported, targets = _imports_of(text)
    if imported is None:
        return True  # ``from M import x`` (or ``*``) whose M the text does not tell
    if not imported.isdisjoint(names) or not imported.isdisjoint(modules):
        return True  # an import of one, or of something under one
    heads: Dict[str, Set[str]] = {}
    for head, bound in targets.items():  # (no UNTOLD: that import said "yes")
        reaching = bound & prefixes
        if reaching:
            heads[head] = reaching
    if not heads:
        return False
    for head, parts in _chains_of(text, frozenset(heads)):
        for target in heads[head]:
            qualname = target
            for part in parts:
                qualname = f"{qualname}.{part}"
                if qualname in names:
                    return True
                if qualname not in prefixes:
                    break  # (no name goes on from it)
    return False


def _imports_of(
    text: str,
) -> Tuple[Optional[FrozenSet[str]], Dict[str, Set[str]]]:
    """What the imports of ``text`` name, read once for the last text asked (the gates of
    several rules ask for the same text in turn, each for its own names): the qualified
    name of each absolute import (``M.*`` for ``from M import *``) with every dotted prefix
    of it, so that one of ``names`` is imported, or something under it, where the two sets
    meet (None: a ``from`` import whose module the text does not tell, where any may be);
    and :func:`migrator.textscan.import_targets`."""
    global _LAST_IMPORTS
    if _LAST_IMPORTS[0] is text:
        return _LAST_IMPORTS[1]
    imported: Set[str] = set()
    untold = False
    for module, on_line, dotted, _ in imported_items(text):
        if module is None:
            continue  # relative: gate 2 resolves nothing through it
        untold = untold or (module == "" and on_line)
        imported.add(f"{module}.{dotted}" if module else dotted)
    for module in star_imported(text):  # ``from M import *``: gate 2 reads ``M.*``
        untold = untold or module == ""
        if module:
            imported.add(f"{module}.*")
    found = (
        None if untold else frozenset(imported) | prefixes_of(frozenset(imported)),
        import_targets(text),
    )
    _LAST_IMPORTS = (text, found)
    return found


def prefixes_of(names: FrozenSet[str]) -> FrozenSet[str]:
    """Every proper dotted prefix of ``names`` (``a`` and ``a.b`` of ``a.b.c``)."""
    found: Set[str] = set()
    for name in names:
        end = name.rfind(".")
        while end > 0 and name[:end] not in found:
            found.add(name[:end])
            end = name.rfind(".", 0, end)
    return frozenset(found)


def _chains_of(text: str, heads: FrozenSet[str]) -> List[Tuple[str, List[str]]]:
    """Each distinct chain ``head.a.b`` on one of ``heads`` in ``text``: (head, [a, b]).  Read
    once for the last text asked and each set of heads (the rules that ask ask for the same
    file in turn, some with the same heads)."""
    global _LAST
    if _LAST[0] is not text:
        _LAST = (text, {})
    found = _LAST[1].get(heads)
    if found is None:
        found = []
        for head, rest in set(_chains(heads).findall(text)):
            if _NOT_DOTTED.search(rest):
                rest = _BETWEEN.sub("", rest)
            found.append((head, rest.split(".")[1:]))  # (``rest`` starts with a dot)
        _LAST[1][heads] = found
    return found


def _chains(heads: FrozenSet[str]) -> "re.Pattern[str]":
    """``head.a.b`` for any of ``heads``: (head, ``.a.b`` with what lies between the parts).
    The longest head first, where one starts another (``jax``, ``jax_utils``)."""
    found = _CHAINS.get(heads)
    if found is None:
        alternatives = "|".join(re.escape(h) for h in sorted(heads, key=len, reverse=True))
        found = re.compile(rf"({alternatives})((?:{SEP}\.{SEP}\w+)+)")
        if len(_CHAINS) < 256:
            _CHAINS[heads] = found
    return found
