"""The nesting limit read with the source at hand (``migrator.guard.tree_depth`` with ``text``):
a statement too short to nest past the limit is not walked, and the answer about the limit is
the full walk's, on constructs built to nest as much as their length allows and on every
fixture."""

from __future__ import annotations

import ast
from typing import Dict, Iterator

import pytest

from jaxmigrate.migrator import guard
from tests.fixture_support import fixture_cases

N = 60  # levels of each construct


def _constructs() -> Dict[str, str]:
    return {
        "unary": "x = " + "-" * N + "y",
        "not": "x = " + "not " * N + "y",
        "invert": "x = " + "~" * N + "y",
        "lambda": "f = " + "lambda:" * N + "0",
        "call": "x = " + "f(" * N + ")" * N,
        "subscript": "x = " + "a[" * N + "0" + "]" * N,
        "list": "x = " + "[" * N + "]" * N,
        "conditional": "x = " + "a if b else " * N + "c",
        "attribute": "x = a" + ".b" * N,
        "walrus": "x = " + "(a:=" * N + "1" + ")" * N,
        "dict unpacking": "x = " + "{**" * N + "{}" + "}" * N,
        "starred": "f(" + "*(" * N + "x," + ")," * N + ")",
        "yield": "def f():\n    x = " + "(yield " * N + ")" * N,
        "power": "x = " + "2**" * N + "2",
        "f-string": "x = f\"{f'{x}'}\"",
        "decorator": "@" + "f(" * N + ")" * N + "\ndef g(): pass",
        "class keyword": "class A(metaclass=" + "f(" * N + ")" * N + "): pass",
        "and chain": "x = " + "a or " * N + "b",
        "nested and": "x = " + "(a and " * N + "b" + ")" * N,
        "generator": "x = " + "(a for a in " * N + "b" + ")" * N,
        "for clauses": "x = [a " + "for a in b " * N + "]",
        "match": "match x:\n    case " + "[" * N + "y" + "]" * N + ":\n        pass",
        "class pattern": "match x:\n    case " + "A(" * N + ")" * N + ":\n        pass",
        "elif": "if a:\n    pass\n" + "elif a:\n    pass\n" * N,
        "with": "with " + "f(" * N + ")" * N + " as x: pass",
        "except": "try:\n    pass\nexcept " + "f(" * N + ")" * N + ":\n    pass",
        "annotation": "x: " + "List[" * N + "int" + "]" * N,
        "default": "def f(*, a=" + "f(" * N + ")" * N + "): pass",
        "nested def": "".join("    " * i + "def f():\n" for i in range(N)) + "    " * N + "pass",
        "crlf": "if a:\r\n    x = " + "-" * N + "y\r\n",
    }


def _height(node: ast.AST) -> int:
    """The levels of ``node`` and below, counted as ``tree_depth`` counts them."""
    best, stack = 0, [(node, 1)]
    while stack:
        below, depth = stack.pop()
        if isinstance(below, ast.BoolOp):
            depth += len(below.values) - 1
        elif isinstance(below, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            depth += len(below.generators) - 1
        best = max(best, depth)
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(below))
    return best


def _sources() -> Iterator[str]:
    yield from _constructs().values()
    for _name, before, _after in fixture_cases():
        yield before.read_text(encoding="utf-8")


@pytest.mark.parametrize("name", sorted(_constructs()))
def test_the_answer_about_the_limit_is_the_full_walks(name: str) -> None:
    text = _constructs()[name]
    tree = ast.parse(text)
    assert guard._line_starts(text) is not None
    full = guard.tree_depth(tree, 10_000)
    for limit in range(4, full + 12, 3):
        assert (guard.tree_depth(tree, limit, text) > limit) == (full > limit), limit


def test_a_statement_never_nests_more_than_its_length_allows() -> None:
    """What :func:`guard._short_enough` rests on, on every statement of the constructs and
    the fixtures."""
    checked = 0
    for text in _sources():
        starts = guard._line_starts(text)
        if starts is None:
            continue
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.stmt):
                height = _height(node)
                assert not guard._short_enough(node, starts, height - 2), ast.dump(node)[:200]
                checked += 1
    assert checked > 1000


def test_fixtures_are_answered_alike_and_skipping_does_happen() -> None:
    skipped = 0
    for text in _sources():
        tree = ast.parse(text)
        full = guard.tree_depth(tree, 10_000)
        for limit in (full - 1, full, 40):
            assert (guard.tree_depth(tree, limit, text) > limit) == (full > limit)
        skipped += guard.tree_depth(tree, 10_000, text) < full
    assert skipped > 100  # the bound is used, not only the walk


@pytest.mark.parametrize("text", ["x = 'é'\n", "x = 1\ry = 2\n"])
def test_other_texts_are_walked_whole(text: str) -> None:
    assert guard._line_starts(text) is None
