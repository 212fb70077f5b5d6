"""Gate 1b of JAX902 (private-api), and what its docstring programs can report.

A light base of :class:`rules.private_api.PrivateApi`, like those of ``rules._text_gates``:
it imports neither LibCST, nor the rule modules, nor the API history.
"""

from __future__ import annotations

import re
from typing import Dict, Optional

from jaxmigrate.migrator.rulegate import RuleGate
from jaxmigrate.migrator.textgate import TextGate
from jaxmigrate.migrator.textscan import SEP, import_targets

# ``from jax.x import (a, _b)``: a private name imported from a JAX module (its import list).
# The module is one logical line: blanks and backslash continuations, never a bare line break
# (which let "from jax import x" run on into the next import's module).
# (Starts with a literal, which the regex engine finds fast; a ``from`` ending a longer word
# only adds matches.)
_FROM_JAX = re.compile(
    r"from(?:[ \t\f]|\\(?:\r\n?|\n))+(jax(?:lib)?\b(?:[\w. \t\f]|\\(?:\r\n?|\n))*)"
    r"\bimport\b[ \t\\]*(\([^)]*\)?|[^\r\n]*)"
)
_PRIVATE_PART = re.compile(r"\.[\s\\]*_(?!_)\w")  # ``jaxlib._jax``, ``jax . _src``
_PRIVATE_WORD = re.compile(r"(?<![\w.])_(?!_)\w")
_CHAINS: Dict[str, "re.Pattern[str]"] = {}
_SPACED_DOT = re.compile(r"\w[\s\\]+\.")  # a dot after blanks or a continuation
_BLANKS_DOT = re.compile(r"[\s\\]*\.")
# (the docstrings' check: comments between the parts too, as gate 2 reads them)
_AFTER_DOT = re.compile(rf"\.{SEP}_(?!_)\w")  # ``x._y``
_SRC = "jax._src"
# what ``[\s\\]`` matches in ASCII text (``\s`` takes the four separators 0x1c-0x1f too)
_ASCII_BLANKS = " \t\n\r\f\v\x1c\x1d\x1e\x1f\\"


def _spaced_dot(text: str) -> bool:
    """Is a dot written after a blank or a backslash somewhere?  True wherever
    :data:`_SPACED_DOT` finds a word before them; a literal search for each pair in ASCII
    text (that pattern, trying every word character, read the whole text slowly)."""
    if not text.isascii():  # (other characters are blanks to ``\s`` too)
        return _SPACED_DOT.search(text) is not None
    return any(blank + "." in text for blank in _ASCII_BLANKS)


def _before_dot(text: str, head: str) -> bool:
    """Is ``head`` followed by a dot somewhere, after blanks or continuations?"""
    i = text.find(head)
    while i >= 0:
        if _BLANKS_DOT.match(text, i + len(head)):
            return True
        i = text.find(head, i + 1)
    return False


def _private_chain(head: str) -> "re.Pattern[str]":
    """``head.a.b._x`` (blanks and continuations between the parts).  One pattern per head, which
    starts with the head's letters (found fast); ``xhead._x`` matches too: more is harmless."""
    found = _CHAINS.get(head)
    if found is None:
        found = re.compile(rf"{re.escape(head)}(?:[\s\\]*\.[\s\\]*\w+)*?[\s\\]*\.[\s\\]*_(?!_)\w")
        if len(_CHAINS) < 1024:
            _CHAINS[head] = found
    return found


class PrivateApiGate(RuleGate):
    def text_gate(self, gate: TextGate) -> bool:
        """``_src`` written as a site, or a private name at the end of a chain whose head an
        import binds to JAX, or in a ``from jax... import`` list."""
        if "_src" in gate.hits and gate.admits(self.word_sites, frozenset({"_src"})):
            return True
        text = gate.text
        if _PRIVATE_PART.search(text):  # (what every private chain ends with)
            spaced: Optional[bool] = None  # (read once, when a head is not followed by ".")
            for head in gate.jax_bound():  # (a pattern is made only for a head before a dot)
                if head + "." not in text:
                    if spaced is None:
                        spaced = _spaced_dot(text)
                    if not spaced or not _before_dot(text, head):
                        continue
                if _private_chain(head).search(text):
                    return True
        return any(
            _PRIVATE_PART.search(match.group(1)) or _PRIVATE_WORD.search(match.group(2))
            for match in _FROM_JAX.finditer(text)
        )

    def prelude_only(self, examples: str, prelude: str) -> bool:
        """In a docstring's program (``prelude``, the module's imports its examples use, then
        ``examples``), a finding goes where a private module is first named, and a fix only
        drops an unused private import: neither lands in the examples unless they import,
        spell ``_src`` or a private part (``x._y``), import a private name of a JAX module
        (``from jax.x import _y``; their public imports, ``import jax.numpy as jnp``, land
        nothing: flax's examples import flax), or read a name the prelude binds to
        ``jax._src`` itself (``from jax import _src as s``; ``s.core`` names ``jax._src.core``,
        which the prelude need not import).  A chain on a name bound to some other private
        module (``jnp.ones``, ``jnp`` from ``jax._src.numpy``) counts a use of the prelude's
        import, where its finding stays."""
        if "_src" in examples or _AFTER_DOT.search(examples):
            return False
        if "import" in examples and any(
            _PRIVATE_PART.search(match.group(1)) or _PRIVATE_WORD.search(match.group(2))
            for match in _FROM_JAX.finditer(examples)
        ):
            return False
        aliases = [n for n, targets in import_targets(prelude).items() if _SRC in targets]
        return not any(re.search(rf"(?<!\w){re.escape(n)}(?!\w)", examples) for n in aliases)
