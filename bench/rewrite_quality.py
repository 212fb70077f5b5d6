"""How a migration reads: what is left that a maintainer would have written differently.

Compares a tree as read (``BEFORE``) with the same tree after ``jaxmigrate --unsafe-fixes``
(``AFTER``), file by file, and counts, only on lines the migration changed:

* repeated members: an ``isinstance``/``issubclass`` class tuple, a ``Union[...]`` or a ``|``
  chain that names one type twice (``jax.numpy.ndarray`` counts as ``jax.Array``);
* long lines: changed lines longer than the project's configured line length (``[tool.ruff]``
  / ``[tool.black]`` ``line-length``, flake8's or pylint's ``max-line-length`` in
  ``pyproject.toml``, ``setup.cfg``, ``tox.ini``, ``.flake8`` or ``.pylintrc``; 88, black's
  default, when none is set: ``jaxmigrate.migrator.linelength``) that the hunk did not
  already have (a hunk that turns one long line into one long line adds none);

and, over the whole migrated tree:

* flag plumbing left: ``jax_array`` words in code (``jax.config.jax_array``,
  ``FLAGS.jax_array``, ``jax_config.jax_array(True)``, flag definitions, test parameters);
* legacy spellings left in docstrings (``DeviceArray``, ``tree_multimap``, ``jax.tree_map``,
  ``in_axis_resources``, ``GlobalDeviceArray``, ...).

Usage (see bench/legacy_corpus.py for building the corpus)::

    python bench/rewrite_quality.py /tmp/jaxmigrate-legacy-corpus /tmp/legacy-migrated
"""

from __future__ import annotations

import ast
import difflib
import io
import re
import sys
import tokenize
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Set, Tuple

from jaxmigrate.migrator.linelength import line_length_for

LEGACY_IN_DOCS = re.compile(
    r"\b(DeviceArray|ShardedDeviceArray|GlobalDeviceArray|tree_multimap|in_axis_resources|"
    r"out_axis_resources|jax\.tree_map|jax\.tree_leaves|jax\.tree_flatten|jax\.tree_unflatten)\b"
)
ALIASES = {"jnp.ndarray": "jax.Array", "jax.numpy.ndarray": "jax.Array"}


def line_length(root: Path) -> int:
    """The project's configured line length: the rule the tool itself wraps by (see
    ``jaxmigrate.migrator.linelength``), so that the count and the tool agree on it."""
    return line_length_for(root)


def changed_lines(before: str, after: str) -> Tuple[Set[int], int]:
    """Line numbers (1-based, in ``after``) that the migration wrote, and long lines added
    (computed by the caller from the hunks)."""
    lines: Set[int] = set()
    matcher = difflib.SequenceMatcher(None, before.splitlines(), after.splitlines(), autojunk=False)
    for tag, _i1, _i2, j1, j2 in matcher.get_opcodes():
        if tag in ("replace", "insert"):
            lines.update(range(j1 + 1, j2 + 1))
    return lines, 0


def long_lines_added(before: str, after: str, limit: int) -> int:
    old, new = before.splitlines(), after.splitlines()
    added = 0
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag in ("replace", "insert"):
            was = sum(len(line) > limit for line in old[i1:i2])
            now = sum(len(line) > limit for line in new[j1:j2])
            added += max(0, now - was)
    return added


def _members(node: ast.expr) -> Optional[List[ast.expr]]:
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("isinstance", "issubclass")
    ):
        if len(node.args) == 2 and isinstance(node.args[1], ast.Tuple):
            return list(node.args[1].elts)
    if isinstance(node, ast.Subscript) and ast.unparse(node.value) in ("Union", "typing.Union"):
        inner = node.slice
        return list(inner.elts) if isinstance(inner, ast.Tuple) else [inner]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        found: List[ast.expr] = []
        current: ast.expr = node
        while isinstance(current, ast.BinOp) and isinstance(current.op, ast.BitOr):
            found.append(current.right)
            current = current.left
        found.append(current)
        if any(ast.unparse(m) in ("jax.Array", "Array") for m in found):
            return found
    return None


def repeated_members(tree: ast.AST, lines: Set[int]) -> int:
    count = 0
    for node in ast.walk(tree):
        if not isinstance(node, ast.expr) or node.lineno not in lines:
            continue
        if isinstance(node, ast.BinOp) and isinstance(getattr(node, "_parent", None), ast.BinOp):
            continue
        members = _members(node)
        if not members:
            continue
        names = [ALIASES.get(ast.unparse(m), ast.unparse(m)) for m in members]
        count += len(names) - len(set(names))
    return count


def _mark_parents(tree: ast.AST) -> None:
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            child._parent = node  # type: ignore[attr-defined]


def flag_plumbing(text: str) -> int:
    """``jax_array`` words in code (names, attributes, strings), comments left out."""
    count = 0
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type in (tokenize.NAME, tokenize.STRING) and re.search(
                r"\bjax_array\b", token.string
            ):
                if token.type == tokenize.STRING and token.string.lstrip("rbuRBU").startswith(
                    ('"""', "'''")
                ):
                    continue  # docstrings
                count += 1
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass
    return count


def legacy_in_docstrings(tree: ast.AST) -> int:
    count = 0
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc:
                count += len(LEGACY_IN_DOCS.findall(doc))
    return count


def projects(before_root: Path) -> Iterator[Path]:
    # jax's own sdists are JAX itself, which jaxmigrate does not walk
    return iter(
        sorted(p for p in before_root.iterdir() if p.is_dir() and not p.name.startswith("jax-"))
    )


def measure(before_root: Path, after_root: Path) -> Dict[str, int]:
    totals = {
        "files changed": 0,
        "repeated members": 0,
        "long lines added": 0,
        "flag plumbing left": 0,
        "legacy spellings in docstrings": 0,
    }
    for project in projects(before_root):
        limit = line_length(project)
        for path in sorted(project.rglob("*.py")):
            after_path = after_root / path.relative_to(before_root)
            if not after_path.exists():
                continue
            before = path.read_text(encoding="utf-8", errors="surrogateescape")
            after = after_path.read_text(encoding="utf-8", errors="surrogateescape")
            try:
                tree = ast.parse(after)
            except SyntaxError:
                continue
            totals["flag plumbing left"] += flag_plumbing(after)
            totals["legacy spellings in docstrings"] += legacy_in_docstrings(tree)
            if before == after:
                continue
            totals["files changed"] += 1
            lines, _ = changed_lines(before, after)
            _mark_parents(tree)
            totals["repeated members"] += repeated_members(tree, lines)
            totals["long lines added"] += long_lines_added(before, after, limit)
    return totals


def main(argv: List[str]) -> int:
    if len(argv) != 2:
        print(__doc__)
        return 2
    for key, value in measure(Path(argv[0]), Path(argv[1])).items():
        print(f"{key}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
