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
from typing import AbstractSet, Dict, FrozenSet, List, NamedTuple, Set, Tuple

from jaxmigrate.migrator.floorbound import modules_named, words_of
from jaxmigrate.migrator.source import bind_jax_import

# What any docstring that may hold a program the migration reads contains (a superset of
# docpieces' CODE_BLOCK_RE and FENCE_HINT_RE, and the doctest prompt).
_PROGRAM_HINTS = (">>>", "::", "```", "~~~")
_OWNERS = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
# The names a fix's import may bind whatever the module binds (``Context.ref`` adds
# ``import jax``; a docstring's program has the conventional ``jnp`` too).
_ALWAYS_BOUND: Dict[str, Tuple[str, ...]] = {"jax": ("jax",), "jnp": ("jax.numpy",)}


class CodeReading(NamedTuple):
    """What :func:`read_code` reads of a module."""

    words: Set[str]  # (:func:`code_words`)
    chains: Set[Tuple[str, ...]]  # every attribute chain on a name: (name, attr, attr, ...)
    imported: Dict[str, Set[str]]  # JAX/jaxlib imports: the name bound -> qualified names
    modules: Set[str]  # the qualified names those imports name
    module_bound: Set[str]  # names bound in the module's scope (some: those read plainly)


def code_words(tree: ast.Module) -> Set[str]:
    """The words of ``tree``'s identifiers (a dotted import name's parts) and of its string and
    bytes constants other than prose docstrings, as :func:`migrator.floorbound.words_of` reads
    a text's."""
    return read_code(tree).words


def read_code(tree: ast.Module) -> CodeReading:
    """:func:`code_words` of ``tree``, with its attribute chains and its JAX imports, anywhere
    in the module (compatibility code too: a fix may keep one branch of a shim), in one walk."""
    words: Set[str] = set()
    chains: Set[Tuple[str, ...]] = set()
    imported: Dict[str, Set[str]] = {}
    modules: Set[str] = set()
    strings: List[str] = []
    prose: Set[int] = set()  # id() of the docstring constants left out
    stack: List[ast.AST] = [tree]
    add, push, AST = words.update, stack.append, ast.AST
    Constant, Attribute, Name = ast.Constant, ast.Attribute, ast.Name
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is Attribute:  # (the whole chain at once: its parts are words)
            parts = [node.attr]  # type: ignore[attr-defined]
            inner = node.value  # type: ignore[attr-defined]
            while type(inner) is Attribute:
                parts.append(inner.attr)
                inner = inner.value
            words.update(parts)
            if type(inner) is Name:
                parts.append(inner.id)
                words.add(inner.id)
                parts.reverse()
                chains.add(tuple(parts))
            else:
                push(inner)
            continue
        if kind is Constant:
            value = node.value  # type: ignore[attr-defined]
            if type(value) is str and id(node) not in prose:
                strings.append(value)
            elif type(value) is bytes:
                strings.append(value.decode("latin-1"))
            continue
        if isinstance(node, _OWNERS):
            _mark_prose(node, prose)
        elif kind is ast.Import or kind is ast.ImportFrom:
            bind_jax_import(node, imported, modules)
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
    return CodeReading(words, chains, imported, modules, module_bound(tree))


def module_bound(tree: ast.Module) -> Set[str]:
    """Names the module's own statements bind in its scope (imports, functions, classes, and
    assignments, ``for`` and ``with`` targets that are plain names), in blocks too but not in
    functions or classes.  Some only: a fix never imports a name bound there
    (``Context.ref``), and a name left out is only read as one a fix may import."""
    bound: Set[str] = set()
    stack: List[ast.AST] = list(tree.body)
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is ast.Import or kind is ast.ImportFrom:
            for alias in node.names:  # type: ignore[attr-defined]
                bound.add(alias.asname or alias.name.split(".", 1)[0])
        elif kind in _DEFINES:
            bound.add(node.name)  # type: ignore[attr-defined]
            continue
        elif kind is ast.Assign:
            bound.update(t.id for t in node.targets if type(t) is ast.Name)  # type: ignore
        elif kind is ast.AnnAssign or kind is ast.For or kind is ast.AsyncFor:
            if type(node.target) is ast.Name:  # type: ignore[attr-defined]
                bound.add(node.target.id)  # type: ignore[attr-defined]
        elif kind is ast.With or kind is ast.AsyncWith:
            for item in node.items:  # type: ignore[attr-defined]
                if type(item.optional_vars) is ast.Name:
                    bound.add(item.optional_vars.id)
        for field in _BLOCKS:
            block = getattr(node, field, None)
            if type(block) is list:
                stack.extend(block)
        for handler in getattr(node, "handlers", ()):
            stack.extend(handler.body)
    return bound


_DEFINES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_BLOCKS = ("body", "orelse", "finalbody")


def chain_names(reading: CodeReading, words: AbstractSet[str]) -> FrozenSet[str]:
    """Every qualified name the migrated module can reference through a chain or an import of
    its code as it is (with ``words``, those a name of the migrated code is made of): each
    chain read through every import of its name anywhere in the module, through ``import
    jax`` and the conventional ``jnp``, and, where the module's scope does not bind its name
    (:func:`module_bound`), through any JAX module of that last part made of ``words`` (an
    import a fix adds binds the last part of a name it writes), with every prefix of each.
    A name of the migrated code that is none of these is one a fix writes
    (:meth:`Rule.survey_writes`)."""
    names: Set[str] = set()
    imported, bound = reading.imported, reading.module_bound
    for qualname in reading.modules:
        _with_prefixes(qualname, names)
    by_head: Dict[str, Tuple[str, ...]] = {}
    for chain in reading.chains:
        head = chain[0]
        targets = by_head.get(head)
        if targets is None:
            found = set(imported.get(head, ()))
            found.update(_ALWAYS_BOUND.get(head, ()))
            if head not in bound:
                found.update(modules_named(head, words))
            targets = by_head[head] = tuple(found)
        if targets:
            tail = ".".join(chain[1:])
            for target in targets:
                _with_prefixes(f"{target}.{tail}", names)
    return frozenset(names)


def chain_tails(reading: CodeReading) -> Set[Tuple[str, ...]]:
    """Every run of parts after the first of the module's chains and of the names its imports
    name: what stays of a chain where a fix writes its head (``jax.experimental.maps.Mesh`` ->
    ``jax.sharding.Mesh``; an import moved to another module binds its name there)."""
    tails: Set[Tuple[str, ...]] = set()
    chains = [*reading.chains, *(tuple(name.split(".")) for name in reading.modules)]
    for chain in chains:
        size = len(chain)
        for start in range(1, size):
            for end in range(start + 1, size + 1):
                tails.add(chain[start:end])
    return tails


def _with_prefixes(qualname: str, names: Set[str]) -> None:
    while qualname and qualname not in names:
        names.add(qualname)
        qualname = qualname.rpartition(".")[0]


def _mark_prose(node: ast.AST, prose: Set[int]) -> None:
    body = getattr(node, "body", None)
    if not body or type(body[0]) is not ast.Expr:
        return
    value = body[0].value
    if type(value) is ast.Constant and type(value.value) is str:
        if not any(hint in value.value for hint in _PROGRAM_HINTS):
            prose.add(id(value))
