"""Text no fix touched stays as written, and positions are the file's own lines, where LibCST
does not give a file back byte for byte (``except E :`` and ``except E \\`` + newline + ``:``
lose the white space before the colon)."""

from __future__ import annotations

import ast

import libcst as cst
import pytest

from jaxmigrate.migrator import Settings, migrate_source
from jaxmigrate.migrator.lossless import SUSPECT, Lost

HEADERS = [
    "except ValueError \\\n:",
    "except ValueError :",
    "except (KeyError, ValueError)\t:",
    "except ValueError \\\n  \\\n  :",
    "except (KeyError,\n        ValueError) :",
]


@pytest.mark.parametrize("header", HEADERS)
def test_libcst_still_loses_it(header):
    """The case this module exists for (when LibCST fixes it, :class:`Lost` finds no block)."""
    source = f"try:\n    pass\n{header}\n    pass\n"
    assert SUSPECT.search(source)
    assert cst.parse_module(source).code != source


@pytest.mark.parametrize("header", HEADERS)
def test_a_fix_elsewhere_keeps_the_header_and_the_positions(header):
    source = (
        "import jax\n"
        "try:\n"
        "    pass\n"
        f"{header}\n"
        "    pass\n"
        "x = jax.tree_map(f, y)\n"
        "c = jax.xla_computation(f)\n"
    )
    result = migrate_source(source, Settings())
    assert f"{header}\n" in result.output
    assert result.output == source.replace("jax.tree_map", "jax.tree.map")
    lines = source.splitlines()
    tree_map = next(n for n, text in enumerate(lines, 1) if "tree_map" in text)
    xla = next(n for n, text in enumerate(lines, 1) if "xla_computation" in text)
    assert [(d.code, d.line) for d in result.fixes] == [("JAX701", tree_map)]
    assert [(d.code, d.line) for d in result.findings] == [("JAX802", xla)]
    again = migrate_source(result.output, Settings())
    assert again.output == result.output  # a second run changes nothing


def test_a_fix_on_the_header_itself_is_written_as_libcst_writes_it():
    source = (
        "import jax\n"
        "try:\n"
        "    pass\n"
        "except jax.core.ConcretizationTypeError \\\n"
        ":\n"
        "    pass\n"
        "x = jax.tree_map(f, y)\n"
    )
    result = migrate_source(source, Settings())
    assert "except ConcretizationTypeError:\n    pass\nx = jax.tree.map(f, y)\n" in result.output
    assert [(d.code, d.line) for d in result.fixes] == [("JAX903", 4), ("JAX701", 7)]
    ast.parse(result.output)


def test_files_libcst_gives_back_are_not_touched():
    source = "import jax\ntry:\n    pass\nexcept ValueError as e :\n    pass\n"
    assert Lost(source, cst.parse_module(source).code).blocks == []


def test_lost_lines_map_onto_the_file():
    source = "try:\n    a\nexcept E \\\n:\n    b\nc\n"
    lost = Lost(source, cst.parse_module(source).code)
    assert [lost.line(n) for n in (1, 2, 3, 4, 5)] == [1, 2, 3, 5, 6]
    assert lost.restore("try:\n    a\nexcept E:\n    b\nC\n") == source.replace("c\n", "C\n")
    assert lost.restore("try:\n    a\nexcept F:\n    b\nc\n") is None  # a fix on the lost line


@pytest.mark.parametrize(
    "where",
    [
        "{}",
        "def f():\n    {}",
        "class C:\n    def m(self):\n        {}",
        "try:\n    pass\nexcept E:\n    {}",
        "with c:\n    for x in y:\n        {}",
        "match v:\n    case 1:\n        {}",
    ],
)
@pytest.mark.parametrize("header", ["except :", "except (A, B) :", "except* E :"])
def test_the_ast_path_finds_the_header_at_any_depth(where, header):
    from jaxmigrate.migrator.astfirst import _loses_except

    indent = where.rsplit("\n", 1)[-1].split("{}")[0]
    block = f"try:\n    pass\n{header}\n    pass\n".replace("\n", "\n" + indent).rstrip(" ")
    text = "import jax\n" + where.format(block)
    tree = ast.parse(text)
    assert _loses_except(text, tree)
    assert not _loses_except(text.replace(" :", ":"), ast.parse(text.replace(" :", ":")))
