"""Doctest expected output: the reprs of the array types JAX no longer has.

Before jax.Array, a doctest showed ``DeviceArray([1., 2.], dtype=float32)`` (and
``ShardedDeviceArray(...)`` for a ``pmap`` result); every JAX with jax.Array on (0.4.1 and
later, the JAX 0.4.1 release notes) shows ``Array([1., 2.], dtype=float32)``, so the old
output fails the doctest.  Both reprs are built the same way in JAX's source (the old
``DeviceArray.__repr__`` and today's ``ArrayImpl.__repr__``): numpy's ``array2string`` with
the class name and ``(`` as its prefix, continuation lines aligned under the prefix, then
``,`` and ``dtype=...`` (``, weak_type=True``) and ``)``, separated by one space, or by as
many spaces as the prefix has characters when the last line is long (numpy's default
``linewidth`` of 75).

The new repr therefore follows from the old one exactly when no row of numbers was wrapped
(where numpy breaks a long row depends on the prefix's width): continuation lines move left
by the difference in prefix length, and the separator is recomputed.  Everything else is left
as it was: wrapped rows, empty arrays (which print their shape today), a separator that does
not match the default line width (other print options), reprs with anything but numbers in
them.  ``DeviceArray(...)``, doctest's ELLIPSIS pattern for any repr of the type, becomes
``Array(...)``.
"""

from __future__ import annotations

import re
from typing import List, Optional, Sequence, Tuple

NEW_PREFIX = "Array("
LINE_WIDTH = 75  # numpy's default ``linewidth``, which both reprs read
_REPR_RE = re.compile(r"(?<![\w.])(ShardedDeviceArray|DeviceArray)\(")
_INNER_RE = re.compile(
    r"(?P<array>[^()=]*),(?P<sep> +)(?P<dtype>dtype=[a-z0-9_]+(?:, weak_type=True)?)", re.S
)
BLANKLINE = "<BLANKLINE>"


def _matching(text: str, start: int) -> Optional[int]:
    """The index of the ``)`` that closes the ``(`` at ``start``."""
    depth = 0
    for index in range(start, len(text)):
        char = text[index]
        if char in "([":
            depth += 1
        elif char in ")]":
            depth -= 1
            if depth == 0:
                return index if char == ")" else None
    return None


def _long(last_line: str, dtype: str) -> bool:
    """JAX's test for putting ``dtype=`` at prefix distance rather than after one space."""
    return len(last_line) + 2 + len(dtype) + 2 > LINE_WIDTH


def translate(old: str) -> Optional[str]:
    """``DeviceArray(...)``/``ShardedDeviceArray(...)`` as today's JAX prints the same value,
    or None when that is not certain."""
    name = old[: old.index("(")]
    prefix = name + "("
    if old[len(prefix) : -1] == "...":
        return NEW_PREFIX + "...)"  # doctest's ELLIPSIS: any repr of the type
    match = _INNER_RE.fullmatch(old[len(prefix) : -1])
    if match is None:
        return None
    array, sep, dtype = match.group("array"), match.group("sep"), match.group("dtype")
    if "[]" in array or not array.strip():
        return None  # an empty array prints its shape today
    lines = array.split("\n")
    if "\n" in array and not lines[0].startswith("["):
        return None
    delta = len(prefix) - len(NEW_PREFIX)
    moved = [lines[0]]
    for line in lines[1:]:
        if line.strip() == BLANKLINE:
            moved.append(line)
            continue
        body = line.lstrip(" ")
        if len(line) - len(body) < len(prefix) or not body.startswith("["):
            return None  # a wrapped row: where numpy breaks it depends on the prefix
        moved.append(line[delta:])
    if sep != (" " * len(prefix) if _long(lines[-1], dtype) else " "):
        return None  # not numpy's default line width
    new_sep = " " * len(NEW_PREFIX) if _long(moved[-1], dtype) else " "
    return NEW_PREFIX + "\n".join(moved) + "," + new_sep + dtype + ")"


def rewrite_output(
    bodies: Sequence[str], indent: str
) -> Tuple[List[str], List[Tuple[int, int, str]]]:
    """The expected-output lines ``bodies`` (without line ends) of one doctest example whose
    prompt is indented by ``indent``, with old array reprs rewritten; and where each rewrite is
    (0-based line, 1-based column, old type name).  The number of lines never changes."""
    if not any(_REPR_RE.search(body) for body in bodies):
        return list(bodies), []
    if not all(body.startswith(indent) for body in bodies):
        return list(bodies), []
    text = "\n".join(body[len(indent) :] for body in bodies)
    rewrites: List[Tuple[int, int, str]] = []
    position = 0
    while True:
        match = _REPR_RE.search(text, position)
        if match is None:
            break
        close = _matching(text, match.end() - 1)
        new = translate(text[match.start() : close + 1]) if close is not None else None
        if new is None:
            position = match.end()
            continue
        line = text.count("\n", 0, match.start())
        column = match.start() - (text.rfind("\n", 0, match.start()) + 1)
        rewrites.append((line, len(indent) + column + 1, match.group(1)))
        text = text[: match.start()] + new + text[close + 1 :]  # type: ignore[operator]
        position = match.start() + len(new)
    return [indent + line for line in text.split("\n")], rewrites
