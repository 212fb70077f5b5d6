"""What a finding's message says besides the rule's words: the JAX names it recommends that
the target's newest release does not have yet.

A message is one short line (:data:`migrator.diagnostics.MESSAGE_LIMIT`); the longer
``detail`` beside it carries the recipe.  A name in either may be newer than a capped target
range (``--target-version 0.4.30..0.4.38`` and a recipe naming ``jax.set_mesh``): the message
then says which release the name needs, and the detail says that it is past the target.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, List, Optional, Tuple

from jaxmigrate.migrator.diagnostics import MESSAGE_LIMIT
from jaxmigrate.migrator.version import parse_version

if TYPE_CHECKING:  # pragma: no cover
    from jaxmigrate.migrator.version import Version

_JAX_NAME = re.compile(r"\bjax(?:\.[A-Za-z_]\w*)+")


def beyond_target(
    message: str, detail: str, target: "Version", upper: Optional["Version"]
) -> Tuple[str, str]:
    """``message`` and ``detail``, saying so where they recommend a JAX name that the target's
    newest release (``upper``; None: no cap) does not have yet."""
    if upper is None or ("jax." not in message and "jax." not in detail):
        return message, detail
    from jaxmigrate.rules._api_history import history

    h = history()
    late: List[Tuple[str, str]] = []
    for name in dict.fromkeys(_JAX_NAME.findall(f"{message} {detail}")):
        known = h.lookup(name.rstrip("."))
        if known is not None and known.present:
            release = h.releases[known.present[-1][0]]
            if parse_version(release) > upper and not h.exists_throughout(name, target, upper):
                late.append((name, release))
    if not late:
        return message, detail
    said = [(name, release) for name, release in late if name in message]
    if said:  # the longest note that keeps the message within its limit
        releases = ", ".join(dict.fromkeys(release for _name, release in said))
        for note in (
            "; ".join(f"{name} needs JAX {release}" for name, release in said),
            f"needs JAX {releases}",
            "newer than the target",
        ):
            if len(message) + len(note) + 3 <= MESSAGE_LIMIT:
                message = f"{message} ({note})"
                break
    why = "; ".join(f"{name} needs JAX {release}" for name, release in late)
    note = f"{why}, newer than the target ({upper} at most)."
    return message, f"{detail} {note}" if detail else note
