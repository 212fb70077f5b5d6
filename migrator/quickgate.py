"""Gate 0: the files gate 1 stops for every rule, told from the rule index alone.

Most files of a project do not name JAX.  Gate 1 (:meth:`migrator.plan.Plan.prefilter`) passes
no rule for such a file unless one of its words is written there: a rule that needs a JAX
import (``Rule.needs_jax_import``) is dropped where the text does not spell ``jax``, a
text-gated rule passes only where it does, and every other rule needs one of its trigger
words.  :func:`idle` asks the same of :mod:`migrator.rule_index`, so the command line settles
such a file without importing the rules, LibCST or the API history.

It over-approximates gate 1 for every selection and target range: the words are those of every
rule and no modern spelling is masked, so it says "idle" only where gate 1 passes no rule, and
the engine would give the text back unchanged with no fix and no finding.
"""

from __future__ import annotations

import re
import sys
from typing import FrozenSet, Optional, Tuple

from jaxmigrate.migrator import rule_index

# Gate 1's tokens (migrator.plan): a trigger word shaped like an identifier is looked up among
# them, any other is searched for as a substring.
_ASCII_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

_Words = Tuple[FrozenSet[str], Tuple[str, ...]]
_WORDS: Optional[_Words] = None


def _words() -> Optional[_Words]:
    """The trigger words of the rules that may act where ``jax`` is not written, as identifiers
    and substrings; None when the index cannot tell (a rule registered at run time, a test's,
    is not in it; such a rule's words may depend on the target range)."""
    global _WORDS
    entries = rule_index.rules()
    # (read where it is: before migrator.rule is imported, no rule is registered)
    framework = sys.modules.get("jaxmigrate.migrator.rule")
    registered = getattr(framework, "REGISTRY", None)
    if registered and registered.keys() != entries.keys():
        return None
    if _WORDS is None:
        without_jax = [entry for entry in entries.values() if not entry.needs_jax_import]
        if any(entry.ranged for entry in without_jax):
            return None
        words = frozenset(word for entry in without_jax for word in entry.words)
        identifiers = frozenset(w for w in words if _ASCII_IDENTIFIER.fullmatch(w))
        _WORDS = identifiers, tuple(sorted(words - identifiers))
    return _WORDS


def idle(text: str) -> bool:
    """True when gate 1 passes no rule for ``text``, whatever the settings select and target.
    False says nothing (the engine decides)."""
    if "jax" in text:
        return False
    words = _words()
    if words is None:
        return False
    identifiers, substrings = words
    if any(word in text for word in substrings):
        return False
    return identifiers.isdisjoint(_ASCII_IDENTIFIER.findall(text))
