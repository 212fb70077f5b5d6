"""What a migration tells its reader: diagnostics, their safety, and the engine's own codes.

A leaf module: it imports nothing from the project, so the reporters (text, JSON, SARIF,
Markdown), the runner, the notebook and documentation drivers can all read results without
importing the engine, and the rule framework can share :class:`Safety` with them.
``tests/test_layers.py`` keeps it a leaf.
"""

from __future__ import annotations

import dataclasses
import enum

CLEANUP_CODE = "JAX000"  # engine housekeeping, not a rule: imports a migration left unused
CLEANUP_SUMMARY = "remove imports the migration left unused"
# the project's jax requirement raised to admit the target (--update-requirements)
REQUIREMENT_CODE = "JAX001"
REQUIREMENT_SUMMARY = "raise the project's jax requirement so that it admits the target"
INTERNAL_ERROR_CODE = "JAX999"  # a file the tool could not process (SARIF needs a rule id)
MESSAGE_LIMIT = 100  # a finding's message: one line of at most this many characters
UNSAFE_NOTE = "[unsafe fix]"  # ends a fix held back until --unsafe-fixes
UNSAFE_HINT = "An unsafe fix, held back: --unsafe-fixes applies it."  # ends its detail


class Safety(str, enum.Enum):
    """How far a rule's edit can be trusted; a rule records it, the engine alone decides."""

    SAFE = "safe"  # keeps behaviour wherever the replacement exists
    UNSAFE = "unsafe"  # may change behaviour in edge cases: applied only with --unsafe-fixes
    MANUAL = "manual"  # report only: a person has to decide


@dataclasses.dataclass(frozen=True)
class Diagnostic:
    """A fix that was applied, or a finding that needs a person (or --unsafe-fixes).

    ``safety`` is a :class:`Safety` value, or ``"error"`` for a rule that failed on a site.
    ``message`` is one line of at most :data:`MESSAGE_LIMIT` characters: what is wrong and the
    fix in a few words, as the text format prints it.  ``detail`` is the rest, when there is
    more to say at this site (the exact recipe, why a fix is unsafe): JSON, SARIF, GitHub
    annotations and the Markdown report carry it; ``jaxmigrate explain CODE`` has the rule's.
    """

    code: str
    message: str
    line: int
    column: int  # 1-based, as editors count
    safety: str
    end_line: int = 0
    detail: str = ""
    # (a fix) the oldest JAX its replacement needs, where that is newer than what its rule
    # needs (``Rule.needs_jax``): the default target's survey reads it (``target.fix_floor``)
    needs: str = ""

    def as_dict(self) -> dict:
        fields = dataclasses.asdict(self)
        if not self.needs:
            del fields["needs"]  # (said only where a fix has one: reports stay as they were)
        return fields
