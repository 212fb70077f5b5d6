"""migrator.sourcecode: the code of a freshly parsed module's statements, cut from its source,
is what LibCST generates for each of them, or nothing is cut."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, List

import libcst as cst
import pytest

from jaxmigrate.migrator import Settings, migrate_source
from jaxmigrate.migrator.sourcecode import first_lines, seed_statement_code
from jaxmigrate.migrator.traversal import cached_children

ROOT = Path(__file__).resolve().parent.parent


def _seeded(text: str) -> Dict[int, str]:
    """id(statement) -> the code cut for it (empty when nothing was cut); each checked against
    LibCST's own code for the statement."""
    module = cst.parse_module(text)
    with cached_children() as caches:
        done = seed_statement_code(module, text, first_lines(ast.parse(text)))
        codes = caches[1].get("code", {})
    assert done == bool(codes)
    for statement in module.body if done else ():
        assert codes[id(statement)] == (statement, module.code_for_node(statement))
    return {key: code for key, (_node, code) in codes.items()}


def _files() -> List[Path]:
    paths = sorted((ROOT / "fixtures").rglob("*.py")) + sorted(
        (ROOT / "tests/programs").rglob("*.py")
    )
    return paths + sorted(ROOT.glob("migrator/*.py")) + sorted(ROOT.glob("rules/*.py"))


def test_every_file_is_cut_as_libcst_writes_it():
    cut = tried = 0
    for path in _files():
        text = path.read_text(encoding="utf-8")
        try:
            ast.parse(text)
        except SyntaxError:
            continue
        tried += 1
        try:
            cut += bool(_seeded(text))
        except AssertionError:
            raise AssertionError(f"{path}: a statement's code differs from LibCST's") from None
    assert cut >= 0.95 * tried  # (the few left: odd line ends, except clauses LibCST rewrites)


TRICKY = {
    "header comments and a docstring": '#!/usr/bin/env python\n# c\n\n"""Doc."""\n\nx = 1\n',
    "decorators with comments between": "@a\n# one\n\n@b(\n  1)\n# two\ndef f():\n    pass\n",
    "comments after a block": (
        "def f():\n    return 1\n    # inside, indented\n# at column 0\n\nx = 1\n"
        "class C:\n    y = 2\n        # deeper\n\n\n# before z\nz = 3\n"
    ),
    "small statements on a line": "import a; import b\nx = 1; y = (\n  2); z = 3\n",
    "a statement over lines": "(\na\n) = 1\nb = [\n1,\n]\nc = f(\n)  # c\n",
    "if elif else with comments": (
        "if a:\n    pass\n# between\nelif b:\n    pass\nelse:\n    pass\n"
    ),
    "comments and blanks at the end": "x = 1\n\n# trailing\n\n",
    "whitespace on blank lines": "x = 1\n   \n\t\ny = 2\n  # indented comment\nz = 3\n",
    "async and with": "async def f():\n    async with a:\n        pass\nwith b as c:\n    pass\n",
    "a form feed": "x = 1\n\x0c\ny = 2\n",
    "semicolon and comment": "x = 1;  # c\ny = 2\n",
}


@pytest.mark.parametrize("name", sorted(TRICKY))
def test_tricky_modules_are_cut_right_or_not_at_all(name):
    _seeded(TRICKY[name])  # (a cut that differs from LibCST's code fails inside)


def test_a_decorator_after_a_backslash_is_left_to_codegen():
    assert not _seeded("@\\\ndecorator\ndef f():\n    pass\n")


@pytest.mark.parametrize(
    "text",
    [
        "x = 1\r\ny = 2\r\n",  # odd line ends
        "try:\n    pass\nexcept E :\n    pass\n",  # a clause LibCST does not give back
        "x = 1\ny = 2",  # no final line break
    ],
)
def test_what_libcst_may_not_give_back_is_not_cut(text):
    assert not _seeded(text)


def test_lines_from_another_text_are_refused():
    text = "import jax\n\n# note\nx = jax.tree_map(f, y)\n\n\ndef g():\n    return 1\n"
    module = cst.parse_module(text)
    for other in ("\n" + text, text.replace("# note\n", ""), "import jax\n" + text):
        with cached_children() as caches:
            assert not seed_statement_code(module, text, first_lines(ast.parse(other)))
            assert not caches[1].get("code")


def test_the_first_round_generates_no_code_for_statements_it_keeps(monkeypatch):
    functions = "".join(f"\n\ndef f{n}(a):\n    return a + {n}\n" for n in range(40))
    text = "import jax\n\nx = jax.tree_map(f, y)\n" + functions
    generated: List[str] = []
    real = cst.Module.code_for_node

    def counting(self, node):  # noqa: ANN001, ANN202
        code = real(self, node)
        generated.append(code)
        return code

    monkeypatch.setattr(cst.Module, "code_for_node", counting)
    result = migrate_source(text, Settings(target_version="0.4.1"))
    assert result.output == text.replace("jax.tree_map", "jax.tree_util.tree_map")
    assert not any("return a + " in code for code in generated)
