"""The line diff ``--diff`` prints (``migrator.linediff``): difflib's format, without the
changes its autojunk heuristic invents in long files."""

from __future__ import annotations

import difflib
import random
import re
from typing import List

from jaxmigrate.migrator.linediff import LineMatcher, unified, unified_diff
from jaxmigrate.migrator.linemap import line_map

HUNK = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def _apply(old: List[str], diff: List[str]) -> List[str]:
    """``old`` patched with ``diff`` (checking that each hunk's old side is there)."""
    out: List[str] = []
    at = 0
    lines = iter(diff[2:])
    for header in lines:
        found = HUNK.match(header)
        assert found, header
        start, length = int(found[1]), int(found[2] or 1)
        begin = start - 1 if length else start
        out += old[at:begin]
        at = begin
        new_length = int(found[4] or 1)
        taken = added = 0
        while taken < length or added < new_length:
            line = next(lines)
            if line[0] in " -":
                assert old[at] == line[1:], (old[at], line)
                at, taken = at + 1, taken + 1
            if line[0] in " +":
                out.append(line[1:])
                added += 1
    return out + old[at:]


def _text(rng: random.Random, size: int) -> List[str]:
    pool = ["\n", "  return x\n", "\n", "def f(x):\n", "import jax\n"]
    return [
        rng.choice(pool) if rng.random() < 0.6 else f"y = {rng.randrange(50)}\n"
        for _ in range(size)
    ]


def _edited(rng: random.Random, old: List[str]) -> List[str]:
    new = list(old)
    for _ in range(rng.randrange(1, 6)):
        i = rng.randrange(len(new) + 1)
        kind = rng.randrange(3)
        if kind == 0 and i < len(new):
            changed = new[i].replace("x", "jax.tree_util.tree_map(x)")
            new[i] = changed if changed != new[i] else "z = 1\n"
        elif kind == 1:
            new.insert(i, "import jax.numpy as jnp\n")
        elif new:
            del new[min(i, len(new) - 1)]
    return new


def test_short_texts_diff_exactly_as_difflib():
    rng = random.Random(7)
    for _ in range(300):
        old = _text(rng, rng.randrange(0, 150))
        new = _edited(rng, old)
        ours = list(unified(old, new, "a/f.py", "b/f.py"))
        assert ours == list(difflib.unified_diff(old, new, "a/f.py", "b/f.py"))


def test_long_texts_give_diffs_that_apply_and_are_no_longer_than_difflibs():
    rng = random.Random(11)
    for _ in range(60):
        old = _text(rng, rng.randrange(200, 1200))
        new = _edited(rng, old)
        ours = list(unified(old, new, "a/f.py", "b/f.py"))
        if old == new:
            assert ours == []
            continue
        assert _apply(old, ours) == new
        theirs = list(difflib.unified_diff(old, new, "a/f.py", "b/f.py"))
        changed = [line for line in ours[2:] if line[0] in "+-"]
        assert len(changed) <= len([line for line in theirs[2:] if line[0] in "+-"])


def test_a_one_line_change_in_a_long_module_is_one_line_removed_and_one_added():
    functions = "".join(f"def f{i}(x):\n  return x\n\n\n" for i in range(60))
    before = f"import jax\n\n{functions}def g(t):\n  return jax.tree_map(f0, t)\n\n  return x\n"
    after = before.replace("jax.tree_map", "jax.tree_util.tree_map")
    diff = unified_diff("m.py", before, after)
    changed = [line for line in diff.splitlines()[2:] if line[:1] in "+-"]
    assert changed == [
        "-  return jax.tree_map(f0, t)",
        "+  return jax.tree_util.tree_map(f0, t)",
    ]
    # and a finding on the line after the change stays on its own line
    after_lines = after.splitlines()
    last = len(after_lines)
    assert line_map(before, after)(last) == len(before.splitlines())


def test_a_region_too_big_to_match_again_keeps_the_heuristics_opcodes():
    old = ["a\n"] * 600 + ["b\n"] * 600
    new = ["c\n"] + old[1:]
    # (every line is popular: the heuristic matches none, and 1,200 x 1,200 is over the limit)
    assert LineMatcher(old, new).get_opcodes() == [("replace", 0, 1200, 0, 1200)]
    assert _apply(old, list(unified(old, new, "a", "b"))) == new
