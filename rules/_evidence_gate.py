"""Gate 1b of a rule that acts only on code written for a JAX before a change, where the
source of the run leaves that open (a requirement open above, ``jax>=0.3.0``, or none at all):
there, only a file's own JAX names can say so (:func:`migrator.source.evidence`: a reference
to a name JAX removed at or before the change).

A light base, like those of ``rules._text_gates``: it reads the lines of
``rules/data/jax_api_runs.txt.gz`` (:mod:`rules._api_runs`), never the API history, and
imports neither LibCST nor the rule modules, so that :mod:`migrator.gateplan` can keep it.
"""

from __future__ import annotations

import functools
from typing import FrozenSet, Iterable, Optional, Tuple

from jaxmigrate.migrator.rulegate import RuleGate
from jaxmigrate.migrator.textgate import TextGate
from jaxmigrate.migrator.textnames import prefixes_of, resolves


class EvidenceGate(RuleGate):
    """``proven_by``: None where the source decides (every site counts); else the release of
    the change, and the rule acts only in a file that references a JAX name gone by then."""

    gate_state = ("proven_by",)
    proven_by: Optional[str] = None

    def text_gate(self, gate: TextGate) -> bool:
        if self.proven_by is None:
            return True
        tokens = gate.token_set()
        if tokens is not None and tokens.isdisjoint(self._parent_words):
            return False  # (a reference to ``a.b.c`` spells ``b``, in its chain or import)
        names, prefixes = gone_by(self.proven_by)
        return resolves(gate.text, names, frozenset(), prefixes)

    @functools.cached_property
    def _parent_words(self) -> FrozenSet[str]:
        return frozenset(name.rpartition(".")[0].rpartition(".")[2] for name in self.names)


def names_gone(qualnames: Iterable[str], release: str) -> bool:
    """Is one of ``qualnames`` (what gate 2 resolves: the imports, and the chains through
    them), or a module above it, a name gone by ``release`` (:func:`gone_by`)?"""
    from jaxmigrate.migrator.floorbound import below

    gone = gone_by(release)[0]
    return any(below(qualname, gone) for qualname in qualnames)


@functools.lru_cache(maxsize=4)
def gone_by(release: str) -> Tuple[FrozenSet[str], FrozenSet[str]]:
    """Every JAX name (and module) the API history has, whose last run of releases ended
    before ``release`` (a reference to one proves code written for a JAX before it: see
    :func:`migrator.source.evidence`), and their dotted prefixes."""
    from jaxmigrate.migrator.rule_index import releases
    from jaxmigrate.migrator.version import parse_version
    from jaxmigrate.rules import _api_runs

    change = parse_version(release)
    cut = max(i for i, known in enumerate(releases()) if parse_version(known) <= change)
    gone = frozenset(
        f"{module}.{name}"
        for module in _api_runs.modules()
        for name, (_first, last) in _api_runs.runs_of(module)
        if last + 1 <= cut  # (the first release without it is at or before the change)
    )
    return gone, prefixes_of(gone)
