"""The tool itself supports Python 3.9+ (the tests run on the machine's 3.11): guard the code
against syntax and runtime constructs that 3.9 lacks."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from jaxmigrate.migrator.importtime import postponed_annotations

ROOT = Path(__file__).resolve().parent.parent
TOOL_FILES = sorted((ROOT / "migrator").glob("*.py")) + sorted((ROOT / "rules").glob("*.py"))


def _annotation_nodes(tree: ast.AST) -> set:
    ids = set()
    for node in ast.walk(tree):
        annotations = []
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args
            for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
                if arg is not None and arg.annotation is not None:
                    annotations.append(arg.annotation)
            if node.returns is not None:
                annotations.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            annotations.append(node.annotation)
        for annotation in annotations:
            ids.update(id(n) for n in ast.walk(annotation))
    return ids


@pytest.mark.parametrize("path", TOOL_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_parses_with_the_python_39_grammar(path):
    source = path.read_text(encoding="utf-8")
    ast.parse(source, filename=str(path), feature_version=(3, 9))


@pytest.mark.parametrize("path", TOOL_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_no_runtime_constructs_newer_than_39(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    in_annotation = _annotation_nodes(tree) if postponed_annotations(tree) else set()
    problems = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.BinOp)
            and isinstance(node.op, ast.BitOr)
            and id(node) not in in_annotation
        ):
            # X | None evaluated at run time needs 3.10 (fine inside postponed annotations)
            sides = (node.left, node.right)
            if any(isinstance(s, ast.Constant) and s.value is None for s in sides):
                problems.append(f"line {node.lineno}: `X | None` outside a postponed annotation")
        if isinstance(node, ast.Call):
            for keyword in node.keywords:
                if keyword.arg == "strict" and getattr(node.func, "id", "") == "zip":
                    problems.append(f"line {node.lineno}: zip(strict=) is 3.10+")
                if keyword.arg in ("slots", "kw_only") and "dataclass" in ast.dump(node.func):
                    problems.append(f"line {node.lineno}: dataclass({keyword.arg}=) is 3.10+")
        if isinstance(node, ast.Attribute) and node.attr in ("bit_count",):
            problems.append(f"line {node.lineno}: int.bit_count is 3.10+")
        if isinstance(node, ast.ImportFrom) and node.module == "typing":
            newer = {
                "TypeAlias",
                "ParamSpec",
                "Concatenate",
                "TypeGuard",
                "Self",
                "Never",
                "LiteralString",
            }
            names = {alias.name for alias in node.names} & newer
            if names:
                problems.append(f"line {node.lineno}: typing.{sorted(names)} is newer than 3.9")
    assert not problems, problems
