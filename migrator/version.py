"""JAX version numbers as comparable tuples."""

from __future__ import annotations

import re
from typing import Tuple

Version = Tuple[int, int, int]

# The newest JAX release the rule tables know about (jax 0.11.0, released 2026-07-16).
LATEST_KNOWN_JAX = "0.11.0"

_VERSION_RE = re.compile(r"^\s*v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:\.\d+)?\s*$")


def parse_version(text: str) -> Version:
    """Parse ``"0.4"`` / ``"0.4.13"`` into ``(0, 4, 13)``; raise ValueError otherwise.  A fourth
    part (JAX released ``0.12.0.1``) is accepted and compares as its release (0.12.0)."""
    match = _VERSION_RE.match(text)
    if not match:
        raise ValueError(f"not a JAX version: {text!r} (expected X.Y or X.Y.Z)")
    return tuple(int(part or 0) for part in match.groups())  # type: ignore[return-value]
