"""The import statements gate 1b reads from the text (:mod:`migrator.textscan`): read once per
text for its three readings, and a ``from`` told without copying the text between it and the
``import`` when a line ends there.  Each is checked against the plain reading it replaced."""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Dict, Optional, Set

import pytest

from jaxmigrate.migrator import textscan
from jaxmigrate.migrator.textscan import (
    _CONTINUATION,
    _DOTTED_BLANKS,
    _MODULE,
    UNTOLD,
    _from_module,
    _imported_items,
    _is_jax,
    bound_names,
    import_targets,
    jax_bound_names,
    keyword_before,
)


def _line_start(text: str, start: int) -> int:
    return max(text.rfind("\n", 0, start), text.rfind("\r", 0, start)) + 1


def _plain_from_module(text: str, start: int) -> Optional[str]:
    head = keyword_before(text, "from", start)
    if head >= 0:
        module = _CONTINUATION.sub("", text[head + 4 : start])
        if "\n" not in module and "\r" not in module:
            module = "".join(module.split())
            if module.startswith("."):
                return None
            if _MODULE.fullmatch(module):
                return module
    return ""


def _plain_readings(text: str):  # noqa: ANN202
    """The three readings, each walking the import statements itself."""
    bound: Dict[str, Set[str]] = {}
    jax: Set[str] = set()
    targets: Dict[str, Set[str]] = {}
    for start, item in _imported_items(text):
        module = _plain_from_module(text, start)
        from_on_line = keyword_before(text, "from", start) >= _line_start(text, start)
        name = _DOTTED_BLANKS.sub("", item.group(1))
        dotted, alias = name.split("."), item.group(2)
        if alias:
            bound.setdefault(alias, set()).add(dotted[-1])
        else:
            head = dotted[0] if module == "" else dotted[-1]
            bound.setdefault(head, set()).add(head)
        from_jax = from_on_line if module == "" else module is None or _is_jax(module)
        if from_jax or _is_jax(dotted[0]):
            jax.add(alias or (dotted[-1] if module else dotted[0]))
        if module is None:
            continue
        if module == "" and from_on_line:
            targets.setdefault(alias or name.rpartition(".")[2], set()).add(UNTOLD)
        elif module:
            targets.setdefault(alias or name, set()).add(f"{module}.{name}")
        else:
            targets.setdefault(alias or dotted[0], set()).add(name if alias else dotted[0])
    return bound, jax, targets


_PARTS = [
    "from jax",
    "from jax.experimental",
    "from . ",
    "from .sub",
    "import jax",
    "import numpy as np",
    "import jax.numpy as jnp",
    " import pjit",
    " import (a, b as c,\n    d)",
    " \\\n import e",
    " \\\r\n import f",
    " \\\r import g",
    "\n",
    "\r\n",
    "\r",
    "  # from x import y\n",
    "x = 'from'  # import z\n",
    "def f():\n    from jax import config\n",
]


@pytest.mark.parametrize("size", [1, 2, 3])
def test_readings_match_the_plain_reading(size: int) -> None:
    """Every text made of ``size`` of the parts: the shared reading gives what each reading
    gave walking the statements itself, and the ``from`` of each ``import`` is told alike."""
    for parts in itertools.product(_PARTS, repeat=size):
        text = "".join(parts)
        assert (bound_names(text), jax_bound_names(text), import_targets(text)) == (
            _plain_readings(text)
        ), repr(text)
        for found in re.finditer(r"import", text):
            assert _from_module(text, found.start()) == _plain_from_module(text, found.start()), (
                repr(text)
            )


def test_items_are_read_once_per_text() -> None:
    text = "import jax\nfrom jax import numpy as jnp\n"
    first = textscan.imported_items(text)
    assert textscan.imported_items(text) is first
    assert textscan.imported_items(text + "\n") is not first  # another text: read again


def test_keyword_before_within_bounds() -> None:
    text = "from a import b\nimport c\n"
    start = text.rindex("import")
    assert keyword_before(text, "from", start) == 0
    assert keyword_before(text, "from", start, text.index("\n") + 1) == -1
    assert keyword_before(text, "import", start, 5) == text.index("import")


def test_parents_read_from_the_tokens_as_word_by_word() -> None:
    """JAX901's and JAX903's parent check (:class:`QualifiedNamesGate`) reads the parents the
    text's tokens hold; without tokens it reads each word's parents from the text.  Both
    give the same words, on every fixture and every installed ``jax`` module."""
    import jax

    from jaxmigrate.migrator.plan import identifier_tokens
    from jaxmigrate.migrator.settings import Settings
    from jaxmigrate.migrator.textgate import TextGate
    from jaxmigrate.rules._names_gate import QualifiedNamesGate
    from tests.fixture_support import FIXTURES

    rules = [r for r in Settings().active_rules() if isinstance(r, QualifiedNamesGate)]
    assert {r.code for r in rules} >= {"JAX901", "JAX903"}
    paths = [*sorted(FIXTURES.glob("*/*.py")), *sorted(Path(jax.__file__).parent.rglob("*.py"))]
    spelled = 0
    for path in paths:
        text = path.read_text(encoding="utf-8")
        tokens = list(identifier_tokens(text))
        for rule in rules:
            words = rule.trigger_words.intersection(tokens)
            fast = rule._spelled_with_a_parent(TextGate(text, words, tokens), words)
            slow = rule._spelled_with_a_parent(TextGate(text, words), words)
            assert set(fast) == set(slow), (path, rule.code)
            spelled += bool(fast)
    assert spelled > 100  # (the check reads files with such words)


def test_line_start_reads_back_to_the_last_line_end_only() -> None:
    """:func:`textscan.line_start` gives what the two ``rfind`` calls over the whole text gave
    (``\\r`` ends a line too), at every index of texts made of two of the parts."""
    for parts in itertools.product([*_PARTS, "a\rb", "\r\n\r"], repeat=2):
        text = "".join(parts)
        for index in range(len(text) + 1):
            assert textscan.line_start(text, index) == _line_start(text, index), (repr(text), index)


@pytest.mark.parametrize(
    "text, items",
    [
        ("with a, b as c:\n  pass\n", [("a",), ("b",)]),
        ("if x:\n    async with m:\n        pass\n", [("m",)]),
        ("async \\\n  with m:\n  pass\n", [("m",)]),
        ("x = 1\rwith m:\r  pass\r", [("m",)]),
        ("\fwith (m):\n  pass\n", [("m",)]),
        ("# run f with m: done\nwith n:\n  pass\n", [("n",)]),  # prose: no header
        ("x = f(y) with m:\n", []),
        ("'''Runs with m:\n'''\n", []),
    ],
)
def test_with_items_are_read_where_a_line_begins_with_with(text: str, items) -> None:  # noqa: ANN001
    """A ``with`` statement is compound: it begins a line (after blanks, or ``async``), so a
    ``with`` elsewhere is prose and its "header" is not read."""
    assert list(textscan.with_items(text)) == items
