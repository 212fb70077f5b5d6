"""Gate 1b of the rules whose sites are qualified JAX names (JAX901 missing-api, JAX903
renamed-api, JAX905 removed-calls): :class:`QualifiedNamesGate` and
:class:`NamesAndModulesGate`, light bases the rules derive from, as those of
``rules._text_gates``.

They read the text and what the rule declares for the gates, plus the tables of its names
each base names in ``gate_state``; this module imports neither LibCST, nor the rule modules,
nor the API history, so that :mod:`migrator.gateplan` can answer the gates of a later run from
what it kept, without them.
"""

from __future__ import annotations

import functools
import re
from typing import ClassVar, Dict, FrozenSet, Iterable, Iterator, Set, Tuple

from jaxmigrate.migrator.rulegate import RuleGate
from jaxmigrate.migrator.textgate import FROM_HEAD, Occurrences, TextGate
from jaxmigrate.migrator.textnames import prefixes_of, resolves
from jaxmigrate.migrator.textscan import UNTOLD

_NONE: FrozenSet[str] = frozenset()
_ASCII_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")  # what gate 1's tokens are


class QualifiedNamesGate(RuleGate):
    """Gate 1b for a rule whose sites are qualified JAX names (:attr:`names` and imports of
    them), by the parts each reference must spell."""

    gate_state: ClassVar[Tuple[str, ...]] = (
        "parents",
        "jax_only",
        "qualified_parents",
        "name_prefixes",
    )

    @functools.cached_property
    def parents(self) -> Dict[str, FrozenSet[str]]:
        """word -> the last parts of the P in each ``P.word`` of :attr:`names`."""
        return {
            word: frozenset(parent.rpartition(".")[2] for parent in found)
            for word, found in self.qualified_parents.items()
        }

    @functools.cached_property
    def qualified_parents(self) -> Dict[str, FrozenSet[str]]:
        """word -> the P of each ``P.word`` of :attr:`names`."""
        found: Dict[str, Set[str]] = {}
        for qualname in self.names:
            parent, _, word = qualname.rpartition(".")
            found.setdefault(word, set()).add(parent)
        return {word: frozenset(parents) for word, parents in found.items()}

    @functools.cached_property
    def jax_only(self) -> bool:
        """Is every name one of ``jax``'s or ``jaxlib``'s?"""
        return all(q.startswith(("jax.", "jaxlib.")) for q in self.names)

    def gate_words(self, gate: TextGate, words: FrozenSet[str]) -> Iterator[str]:
        """A reference to ``P.w`` spells ``w`` and the last part of ``P`` somewhere (in the
        chain, or in the import that binds its head): a ``w`` without any of its parents is
        some other ``w`` (``self.add``, ``np.shape``).  And when every name is a JAX one, gate
        2 resolves a ``w`` only through an import: ``from M import w`` names ``M.w``, and a
        chain ``head. ... .w`` names what an import binds its head to, followed by the rest
        (``from jax._src import core`` makes ``core.Primitive`` no ``jax.core.Primitive``).
        Lazily: gate 1b stops at the first word written as a site, and most files hold many
        of the words (reading each one's occurrences is the cost)."""
        jax_only = self.jax_only
        spelled = self._spelled_with_a_parent(gate, words)
        if spelled and jax_only and not self._resolves(gate):
            spelled = [w for w in spelled if w in self.strings or w in self.annotation_words]
        for word in spelled:
            found = gate.of(word)
            if found.unknown or found.imported_parents:
                yield word
            elif found.quoted and (word in self.strings or word in self.annotation_words):
                yield word  # (a quoted word is a site only as a string: a name needs its import)
            elif found.imported_from and (not jax_only or self._imports(word, found)):
                yield word
            elif found.chains and (not jax_only or self._names_in_chain(gate, word, found)):
                yield word

    def _resolves(self, gate: TextGate) -> bool:
        """May an import or a chain of the text make one of :attr:`names` (or import under one
        of :attr:`legacy_modules`)?  (:func:`migrator.textnames.resolves`)"""
        return resolves(gate.text, self.names, self.legacy_modules, self.name_prefixes)

    @functools.cached_property
    def name_prefixes(self) -> FrozenSet[str]:
        return prefixes_of(self.names)

    def _spelled_with_a_parent(self, gate: TextGate, words: FrozenSet[str]) -> Iterable[str]:
        """The ``words`` one of whose parents (:attr:`parents`) the text spells: from the
        parents gate 1's tokens hold, when it kept them (a file holds hundreds of the words and
        a few of the parents); else word by word."""
        tokens = gate.token_set()
        if tokens is None:
            parents = self.parents
            return [w for w in words if any(gate.has_word(p) for p in parents.get(w, _NONE))]
        by_parent, odd = self._words_by_parent
        near: Set[str] = set()
        for parent in tokens.intersection(by_parent):
            near.update(by_parent[parent])
        for word in words.intersection(odd):  # a parent no token can be: read from the text
            if any(gate.has_word(p) for p in odd[word]):
                near.add(word)
        return words.intersection(near)

    @functools.cached_property
    def _words_by_parent(self) -> Tuple[Dict[str, FrozenSet[str]], Dict[str, FrozenSet[str]]]:
        """:attr:`parents` turned around: each parent that is an ASCII identifier (a token of
        gate 1) -> the words it is a parent of; and word -> its other parents."""
        by_parent: Dict[str, Set[str]] = {}
        odd: Dict[str, FrozenSet[str]] = {}
        for word, parents in self.parents.items():
            other = frozenset(p for p in parents if not _ASCII_IDENTIFIER.fullmatch(p))
            if other:
                odd[word] = other
            for parent in parents - other:
                by_parent.setdefault(parent, set()).add(word)
        return {p: frozenset(found) for p, found in by_parent.items()}, odd

    def _imports(self, word: str, found: Occurrences) -> bool:
        """Does one ``from M import word`` name one of :attr:`names`?"""
        for module in found.imported_from:
            if not module or module == FROM_HEAD or module in self.qualified_parents[word]:
                return True  # (``import word``, ``from word...``: rare, kept)
        return False

    def _names_in_chain(self, gate: TextGate, word: str, found: Occurrences) -> bool:
        """Can one chain ``head. ... .part.word`` name one of :attr:`names`, with ``head``
        bound as an import binds it?"""
        targets = gate.import_targets()
        qualified = self.qualified_parents[word]
        for head, *rest in found.paths:
            for target in targets.get(head, _NONE):
                if target == UNTOLD:
                    return True
                if (".".join((target, *rest)) if rest else target) in qualified:
                    return True
        return False


class NamesAndModulesGate(QualifiedNamesGate):
    """:class:`QualifiedNamesGate` for a rule that also removes the imports of its
    :attr:`legacy_modules`: the last part of each such module is kept for gate 1b's own reading
    of an import (``import jax.util``), whatever the names say."""

    gate_state = (*QualifiedNamesGate.gate_state, "module_words")

    @functools.cached_property
    def module_words(self) -> FrozenSet[str]:
        return frozenset(module.rpartition(".")[2] for module in self.legacy_modules)

    def gate_words(self, gate: TextGate, words: FrozenSet[str]) -> Iterator[str]:
        yield from words & self.module_words
        yield from super().gate_words(gate, words)
