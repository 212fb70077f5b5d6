"""What a rule declares for gates 1 and 1b, apart from the rest of the rule.

:class:`RuleGate` holds what :class:`migrator.plan.Plan` (gate 1, the trigger words) and
:func:`migrator.textgate.admitted` (gate 1b, how the words are written) read of a rule: its
sites (names, attributes, keywords, strings, legacy modules), its flags and its
:meth:`~RuleGate.text_gate` and :meth:`~RuleGate.gate_words` hooks.  :class:`migrator.rule.Rule`
is one; a rule that refines the two hooks does it in a light base of its own
(``rules._text_gates``, ``rules._private_gate``), whose hooks read only ``gate_state`` besides
these declarations.
So the gates of a run can be kept (:mod:`migrator.gateplan`) and answered in a later process
without importing the rules, LibCST or the API history: this module and those bases import
neither.
"""

from __future__ import annotations

import functools
from typing import ClassVar, FrozenSet, Iterable, List, Tuple, TypeVar

from jaxmigrate.migrator.textgate import SiteTable, TextGate, word_sites

R = TypeVar("R", bound="RuleGate")

# What the gates read of every rule (the rule for the run's target range: ``for_target``).
GATE_FIELDS = (
    "code",
    "trigger_words",
    "names",
    "attributes",
    "keywords",
    "strings",
    "legacy_modules",
    "annotation_words",
    "names_are_legacy",
    "needs_jax_import",
    "modern_spellings",
    "text_gated",
    "runs_after",
)


class RuleGate:
    """A rule as gates 1 and 1b see it (see the module's docstring)."""

    code: ClassVar[str]
    # What the rule wants to see.  The engine derives the textual prefilter, the cheap
    # detection step and the dispatch of the single traversal from these sets.
    names: ClassVar[FrozenSet[str]] = frozenset()  # fully qualified legacy names
    attributes: ClassVar[FrozenSet[str]] = frozenset()  # ``<expr>.attr`` on any receiver
    keywords: ClassVar[FrozenSet[str]] = frozenset()  # call keyword names
    strings: ClassVar[FrozenSet[str]] = frozenset()  # exact string literal values
    # Modules that no longer exist: an import of them left unused is removed.
    legacy_modules: ClassVar[FrozenSet[str]] = frozenset()
    # Words the rule reports where a string annotation spells them (``x: "jnp.DeviceArray"``),
    # import or not: a string annotation that holds one is a site for the gates.
    annotation_words: ClassVar[FrozenSet[str]] = frozenset()
    # False when ``names`` are current APIs the rule only reads as context (for example
    # ``jax.sharding.Mesh``): their unused imports are then not removed as legacy.
    names_are_legacy: ClassVar[bool] = True
    # True when the rule can only act in a file that imports something from ``jax`` or
    # ``jaxlib``: its names are JAX names, and its attribute sites need JAX evidence (a
    # receiver built or annotated with a JAX API).  The engine skips it for files without
    # the word "jax" and for files whose imports name no JAX module.  A rule that can act
    # without such an import (environment-variable or flag strings) sets False.  Left unset,
    # it is True when every name and module the rule declares is a JAX one and it declares no
    # strings.  ``tests/test_engine.py`` checks the claim on every fixture with its JAX
    # imports removed.
    needs_jax_import: ClassVar[bool] = True
    # Regular expressions for modern text that contains a trigger word (for example
    # ``tree_util\.tree_map``).  The prefilter masks them before looking for the words, so
    # files that only use the modern spelling are never parsed.  Speed only: correctness
    # never depends on them.
    modern_spellings: ClassVar[Tuple[str, ...]] = ()
    # A rule whose sites no list of words can name (any private ``_x`` under ``jax``): gate 1
    # passes it for every file with the word "jax", and its :meth:`text_gate` and
    # :meth:`ast_gate` alone decide (it must keep both cheap and exact enough).
    text_gated: ClassVar[bool] = False
    # A rule whose :meth:`text_gate` reads much of the text in most files that pass gate 1:
    # gate 1b reads it after every other rule, so that a file another rule admits first (and
    # gate 2 then reads anyway) never pays for it (:func:`migrator.textgate.admitted`).
    costly_text_gate: ClassVar[bool] = False
    # Codes of rules whose hooks must see a site before this rule's do (within a round, rules
    # are called site by site in this order, then ``visit_module`` in the same order): for a
    # rule that leaves alone what another rule has just edited.  Otherwise rules run in code
    # order.  The engine orders the plan with :func:`in_run_order`; ``tests/test_rule_order.py``
    # checks the declarations.
    runs_after: ClassVar[FrozenSet[str]] = frozenset()
    # The further attributes (set per target range) that :meth:`text_gate` and
    # :meth:`gate_words` read, besides :data:`GATE_FIELDS`: a base that overrides them names
    # them, so that :mod:`migrator.gateplan` keeps them.
    gate_state: ClassVar[Tuple[str, ...]] = ()

    def text_gate(self, gate: TextGate) -> bool:
        """Gate 1b, refined: False only when the rule certainly does nothing in a file whose text
        reads like this (:class:`migrator.textgate.TextGate`), so not even ``ast`` parses it for
        this rule.  It must over-approximate :meth:`ast_gate`; ``tests/test_gates.py`` checks
        that it says True wherever gate 2 does."""
        return True

    def gate_words(self, gate: TextGate, words: FrozenSet[str]) -> Iterable[str]:
        """Gate 1b, narrowed: of the trigger ``words`` the text holds, those that can still make
        one of the rule's sites (the others are not read further; an iterator is read only as
        far as gate 1b needs).  Must keep every word that can; ``tests/test_gates.py`` checks
        it with the rest of gate 1b."""
        return words

    def prelude_only(self, examples: str, prelude: str) -> bool:
        """In a docstring's program (``prelude``: the module's imports its ``examples`` use),
        can the rule fix or report only in the prelude, whose fixes and findings are dropped
        (:func:`migrator.segments.prelude_only`)?  False unless the rule knows.  True must hold
        for any examples and prelude made of parts of these (fewer examples, fewer imports):
        the docstrings' gate asks it once for all of a module's examples and imports
        (:func:`migrator.docgate.may_change`)."""
        return False

    @functools.cached_property
    def word_sites(self) -> SiteTable:
        """What each trigger word stands for, for gate 1b (:mod:`migrator.textgate`)."""
        return word_sites(self)

    @functools.cached_property
    def trigger_words(self) -> FrozenSet[str]:
        """Words one of which must occur in a file for this rule to have anything to do."""
        names = {n.rsplit(".", 1)[-1] for n in self.names | self.legacy_modules}
        return frozenset(
            names | self.attributes | self.keywords | self.strings | self.annotation_words
        )


def in_run_order(rules: Iterable[R]) -> Tuple[R, ...]:
    """``rules`` in code order, except that each comes after the rules it ``runs_after``
    (those among ``rules``; the others are switched off and do not matter)."""
    pending = {rule.code: rule for rule in sorted(rules, key=lambda r: r.code)}
    ordered: List[R] = []
    while pending:
        ready = next(
            (
                rule
                for rule in pending.values()
                if not (rule.runs_after & pending.keys()) - {rule.code}
            ),
            None,
        )
        if ready is None:
            raise ValueError(f"rules {sorted(pending)} declare a cycle in runs_after")
        ordered.append(ready)
        del pending[ready.code]
    return tuple(ordered)
