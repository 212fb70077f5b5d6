"""Code literals in docstrings: ``jax.tree_map`` in reST, `jnp.DeviceArray` in Markdown.

Prose is left as written: a sentence about the old API ("DeviceArray was replaced by ...")
says something true about it.  A code literal that spells a whole JAX name (``jax.``/
``jnp.`` and a dotted chain) is the name itself, written so that readers copy it; it is
migrated the way the code would be, by the same rules on the name alone (with ``import jax``
and ``import jax.numpy as jnp`` as its context), and only when the result is again a plain
name.  A line that talks about the change itself (removed, deprecated, renamed, replaced,
legacy, old, instead) keeps its literal.  Doctest lines are not literals.

Only with ``--docs``: a literal is documentation text rather than code that runs, and
packages written for today's JAX keep some in their docstrings (``bench/modern_corpus.py``:
diffrax's `jax.tree_transpose`, rlax's `jax.numpy.DeviceArray`), which a default run leaves.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from typing import Dict, List, Optional, Sequence, Tuple

from jaxmigrate.migrator.diagnostics import Diagnostic
from jaxmigrate.migrator.segments import migrate_segments
from jaxmigrate.migrator.settings import Settings

PRELUDE = "import jax\nimport jax.numpy as jnp\n"
LITERAL_RE = re.compile(r"(?<!`)(``?)((?:jax|jnp)(?:\.[A-Za-z_][A-Za-z0-9_]*)+)\1(?!`)")
_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_ABOUT_THE_CHANGE = re.compile(
    r"\b(remov|deprecat|renam|replac|legacy|old|instead|former|no longer|used to)", re.I
)
_EXAMPLE_RE = re.compile(r"^\s*(>>>|\.\.\.)(\s|$)")


def docstring_lines(text: str) -> List[Tuple[int, int]]:
    """(first, end) 0-based line ranges of the module's docstrings."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    ranges = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = getattr(node, "body", [])
            if body and isinstance(body[0], ast.Expr):
                value = body[0].value
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    ranges.append((value.lineno - 1, value.end_lineno or value.lineno))
    return ranges


def _sites(lines: Sequence[str], ranges: Sequence[Tuple[int, int]]) -> List[Tuple[int, re.Match]]:
    sites = []
    for first, end in ranges:
        for number in range(first, end):
            line = lines[number]
            if _EXAMPLE_RE.match(line) or _ABOUT_THE_CHANGE.search(line):
                continue
            sites += [(number, match) for match in LITERAL_RE.finditer(line)]
    return sites


def _migrated(names: Sequence[str], settings: Settings) -> Dict[str, Tuple[str, Diagnostic]]:
    """Each name the rules rewrite to another plain name, with the fix that did it."""
    # Each fix must be located to tell which name it belongs to.
    located = dataclasses.replace(settings, locate_fixes=True)
    result = migrate_segments([PRELUDE, *(name + "\n" for name in names)], located)
    fixes: Dict[int, Diagnostic] = {}
    for index, fix in result.fixes:
        fixes.setdefault(index, fix)
    found = {}
    for index, name in enumerate(names, start=1):
        new = result.outputs[index].strip()
        if new != name and _NAME_RE.fullmatch(new) and index in fixes:
            found[name] = (new, fixes[index])
    return found


def migrate_literals(text: str, settings: Settings) -> Tuple[str, List[Diagnostic]]:
    """``text`` with the JAX names in its docstrings' code literals migrated, and the fixes."""
    if "`j" not in text:
        return text, []
    lines = text.splitlines(keepends=True)
    sites = _sites(lines, docstring_lines(text))
    if not sites:
        return text, []
    table = _migrated(sorted({match.group(2) for _n, match in sites}), settings)
    fixes: List[Diagnostic] = []
    for number, match in reversed(sites):
        entry: Optional[Tuple[str, Diagnostic]] = table.get(match.group(2))
        if entry is None:
            continue
        new, fix = entry
        ticks = match.group(1)
        line = lines[number]
        lines[number] = line[: match.start()] + ticks + new + ticks + line[match.end() :]
        fixes.append(
            Diagnostic(
                fix.code,
                f"docstring code literal: {fix.message}",
                number + 1,
                match.start() + 1,
                fix.safety,
            )
        )
    return "".join(lines), fixes[::-1]
