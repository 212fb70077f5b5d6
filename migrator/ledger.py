"""The findings of one round of rewriting (:class:`migrator.context.Context`'s), and the
reports a rule puts off until someone reads them.

A round that edits the module is followed by another, and only the last round's findings are
reported: a report made in an edit round is thrown away.  Some reports cost more than the
rest of their hook (the backstop's: a position, so a codegen pass over the statement, for
every name JAX removed, most of which another rule is about to rewrite).  A rule may put such
a report off (:meth:`Ledger.defer`); it is made when the findings are next read (by the
engine once a round makes no edit, or by a rule that asks which lines have findings), in the
order it was put off, so what is read is what reporting at once would have given.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Dict, List, Optional, Tuple

if TYPE_CHECKING:  # pragma: no cover
    from jaxmigrate.migrator.context import Finding
    from jaxmigrate.migrator.rule import Rule


class Ledger:
    """A round's findings; ``rule`` is the rule whose hook runs (set by the engine)."""

    rule: "Rule"
    _settling: Optional[int] = None  # the order number of the deferred report being made

    def __init__(self) -> None:
        self._findings: List["Finding"] = []
        # the reports put off (defer), with their order numbers and rules
        self._deferred: List[Tuple[int, "Rule", Callable[[], None]]] = []
        self._deferrals = 0  # how many were ever put off this round
        self._settled: Dict[int, int] = {}  # id(finding) -> order number of its deferral

    def add_finding(self, finding: "Finding") -> None:
        self._findings.append(finding)
        if self._settling is not None:
            self._settled[id(finding)] = self._settling

    @property
    def findings(self) -> List["Finding"]:
        """The round's findings so far; reading them first settles the deferred reports."""
        if self._deferred:
            self._settle()
        return self._findings

    def defer(self, report: Callable[[], None]) -> None:
        """Call ``report`` (as the current rule's) when the findings are next read, not now:
        what it records then is what it would record now, in the same order among the
        deferred reports, and a round whose findings nobody reads (one that edits: the next
        round reports) never pays for it, for example for the positions it asks."""
        self._deferred.append((self._deferrals, self.rule, report))
        self._deferrals += 1

    def _settle(self) -> None:
        pending, self._deferred = self._deferred, []
        current = self.rule
        try:
            for number, rule, report in pending:
                self.rule, self._settling = rule, number
                report()
        finally:
            self.rule, self._settling = current, None

    def findings_mark(self) -> Tuple[int, int]:
        """Where the findings stand before a hook, for :meth:`roll_back_findings`."""
        return len(self._findings), self._deferrals

    def roll_back_findings(self, mark: Tuple[int, int]) -> None:
        """Forget the findings and deferred reports a hook that raised made after ``mark``;
        the earlier hooks' deferred reports it had settled (by reading the findings) stay."""
        count, deferrals = mark
        kept: List["Finding"] = []
        for finding in self._findings[count:]:
            if self._settled.get(id(finding), deferrals) < deferrals:
                kept.append(finding)
            else:
                self._settled.pop(id(finding), None)
        self._findings[count:] = kept
        self._deferred = [entry for entry in self._deferred if entry[0] < deferrals]
