"""migrator.astparse: a big text parsed in pieces gives CPython's tree of the whole text,
positions included, or raises what the whole parse raises."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, List

import pytest

from jaxmigrate.migrator import astparse

ROOT = Path(__file__).resolve().parent.parent
# Piece sizes: a cut after every line that may start a statement, and a few lines, and more.
SIZES = (1, 40, 300)


def _groups() -> Dict[str, List[Path]]:
    groups: Dict[str, List[Path]] = {}
    for folder in sorted((ROOT / "fixtures").iterdir()):
        if folder.is_dir():
            groups[f"fixtures/{folder.name}"] = sorted(folder.rglob("*.py"))
    groups["tests/programs"] = sorted((ROOT / "tests" / "programs").rglob("*.py"))
    groups["own source"] = sorted(ROOT.glob("migrator/*.py")) + sorted(ROOT.glob("rules/*.py"))
    return {name: paths for name, paths in groups.items() if paths}


GROUPS = _groups()


def _whole(text: str) -> str:
    return ast.dump(ast.parse(text), include_attributes=True)


def _in_pieces(text: str, size: int) -> str:
    return ast.dump(astparse.parse(text, piece_chars=size), include_attributes=True)


@pytest.mark.parametrize("group", sorted(GROUPS))
def test_every_file_gives_the_whole_parse(group):
    for path in GROUPS[group]:
        text = path.read_text(encoding="utf-8")
        try:
            whole = _whole(text)
        except SyntaxError:
            continue  # (a fixture of a broken file: the error cases are below)
        for size in SIZES:
            assert _in_pieces(text, size) == whole, f"{path} in pieces of {size}"


TRICKY = {
    "code-like lines in a string": 'x = 1\nDOC = """\ndef f():\nimport os\n@d\n"""\ny = 2\n',
    "else and except at column 0": (
        "if a:\n    b = 1\nelse:\n    b = 2\ntry:\n    pass\nexcept E:\n    pass\n"
        "finally:\n    pass\nfor i in x:\n    pass\nelse:\n    pass\n"
    ),
    "decorators": "@a\n@b(1)\ndef f():\n    pass\n@c\nclass C:\n    x = 1\ny = 2\n",
    "a backslash continuation": "x = 1 + \\\n2\ny = x\n",
    "brackets over lines": "x = f(\na,\n[b,\nc],\n)\ny = {\n1: 2}\n",
    "CRLF endings": "import jax\r\nx = 1\r\ndef f():\r\n    return 2\r\ny = 3\r\n",
    "CR endings": "import jax\rx = 1\rdef f():\r    return 2\ry = 3\r",
    "mixed endings": "a = 1\r\nb = 2\rc = 3\nd = (\r\n4)\re = 5\n",
    "non-ASCII columns": "é = 'ü'\nx = é + 'ß'; y = 1\ndef ñ():\n    return 'π'\nz = ñ()\n",
    "no final newline": "x = 1\ny = 2\nz = 3",
    "a form feed": "x = 1\n\x0cy = 2\nz = 3\n",
    "comments and blanks at column 0": "x = 1\n# c\n\n#d\ny = (1,\n# e\n2)\n",
    "nested blocks": "class A:\n    def f(self):\n        if x:\n            return 1\nb = A()\n",
    "string prefixes": "x = f'{a}'\nrb'\\d'\nu'x'\n'''\nz'''\n\"q\"\n",
    "numbers and operators at column 0": "x = 1\n-x\n+x\n~x\n.5\n1.5e3\n*a, b = c\n",
    "match statement": "match x:\n    case 1:\n        pass\n    case _:\n        pass\ny = 1\n",
    "a future import that changes the grammar": (
        "from __future__ import barry_as_FLUFL\nx = 1\ny = x != 2\n"
    ),
}


@pytest.mark.parametrize("name", sorted(TRICKY))
def test_tricky_texts_give_the_whole_parse(name):
    text = TRICKY[name]
    whole = _whole(text)
    for size in (1, 2, 5, 12, len(text) - 1):
        assert _in_pieces(text, size) == whole, f"pieces of {size}"


BROKEN = {
    "an error near the end": "x = 1\ny = 2\ndef f(:\n    pass\nz = 3\n",
    "an unclosed string": 'x = 1\ny = """\nz = 3\n',
    "an unclosed bracket": "x = 1\ny = (\nz = 3\n",
    "a stray else": "x = 1\nelse:\n    pass\n",
    "a bad dedent": "if x:\n        a = 1\n    b = 2\nc = 3\n",
    "a null byte": "x = 1\ny = '\x00'\nz = 3\n",
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_a_text_that_does_not_parse_raises_what_the_whole_parse_raises(name):
    text = BROKEN[name]
    with pytest.raises((SyntaxError, ValueError)) as whole:
        ast.parse(text)
    for size in (1, 5, 12):
        with pytest.raises(whole.type) as pieces:
            astparse.parse(text, piece_chars=size)
        assert str(pieces.value) == str(whole.value)
        assert getattr(pieces.value, "lineno", None) == getattr(whole.value, "lineno", None)


def test_a_big_text_is_parsed_a_piece_at_a_time(monkeypatch):
    text = "import jax\n" + "".join(f"def f{n}(a):\n    return a + {n}\n\n" for n in range(3000))
    parsed: List[int] = []
    real = ast.parse

    def recording(source, *args, **kwargs):
        parsed.append(len(source.lstrip("\n")))
        return real(source, *args, **kwargs)

    monkeypatch.setattr(ast, "parse", recording)
    tree = astparse.parse(text, piece_chars=5000)
    monkeypatch.undo()
    assert ast.dump(tree, include_attributes=True) == _whole(text)
    assert len(parsed) >= len(text) // 5000
    assert max(parsed) < 5000 + 100  # (a piece ends at the first cut past its size)
