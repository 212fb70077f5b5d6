"""The words of a module that its migrated code can spell a JAX name with, read from CPython's
tree: every identifier and every string, but neither comments nor prose docstrings.

The default target's survey bounds a file's floor by the newest JAX name made of the file's
words (:func:`migrator.target.survey_reach`).  Read from the text, those words include its
comments and docstrings, where a long file names almost anything (``Key`` in an argument's
description, ``stage`` in a comment): its bound is then a release far newer than its floor,
and the survey migrates it for nothing.  The floor counts only the JAX names of the migrated
code (:func:`migrator.source.floor_of` parses it) and what its fixes need.  A name part in that
code is either written by a fix (the rules say which words: :meth:`Rule.survey_writes`) or
was in the file's code before, as an identifier or in a string some rule may read (a feature
test's ``hasattr(jax, "name")``): no rule reads a comment, and a docstring is only read as the
program of its examples.  So these words bound the floor as the text's do.

A docstring is prose, and left out, when it can hold no program the migration reads
(:func:`migrator.docpieces.docstring_pieces`): no ``>>>`` prompt, no ``::`` (a reST code block
or literal block), no Markdown fence.
"""

from __future__ import annotations

import ast
from typing import List, Set

from jaxmigrate.migrator.floorbound import words_of

# What any docstring that may hold a program the migration reads contains (a superset of
# docpieces' CODE_BLOCK_RE and FENCE_HINT_RE, and the doctest prompt).
_PROGRAM_HINTS = (">>>", "::", "```", "~~~")
_OWNERS = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


def code_words(tree: ast.Module) -> Set[str]:
    """The words of ``tree``'s identifiers (a dotted import name's parts) and of its string and
    bytes constants other than prose docstrings, as :func:`migrator.floorbound.words_of` reads
    a text's."""
    words: Set[str] = set()
    strings: List[str] = []
    prose: Set[int] = set()  # id() of the docstring constants left out
    stack: List[ast.AST] = [tree]
    add, push, AST, Constant = words.update, stack.append, ast.AST, ast.Constant
    while stack:
        node = stack.pop()
        if isinstance(node, _OWNERS):
            _mark_prose(node, prose)
        elif type(node) is Constant:
            value = node.value
            if type(value) is str and id(node) not in prose:
                strings.append(value)
            elif type(value) is bytes:
                strings.append(value.decode("latin-1"))
            continue
        for field in node._fields:
            value = getattr(node, field, None)
            if type(value) is list:
                for item in value:
                    if isinstance(item, AST):
                        push(item)
                    elif type(item) is str:  # (Global/Nonlocal names, match keyword names)
                        add(item.split("."))
            elif isinstance(value, AST):
                push(value)
            elif type(value) is str:  # an identifier (an import's dotted module or name)
                add(value.split("."))
    words |= words_of("\n".join(strings))
    return words


def _mark_prose(node: ast.AST, prose: Set[int]) -> None:
    body = getattr(node, "body", None)
    if not body or type(body[0]) is not ast.Expr:
        return
    value = body[0].value
    if type(value) is ast.Constant and type(value.value) is str:
        if not any(hint in value.value for hint in _PROGRAM_HINTS):
            prose.add(id(value))
