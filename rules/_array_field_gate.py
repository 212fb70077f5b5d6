"""Gate 1b of JAX106 array-field-default: :class:`ArrayFieldDefaultGate`, a light base the
rule derives from, as those of ``rules._text_gates``, with the array makers and the dataclass
makers it looks for (:mod:`rules._array_fields` reads the same ones on ``ast``).

It reads the text and what the rule declares for the gates; this module imports neither
LibCST, nor the rule modules, nor the API history, so that :mod:`migrator.gateplan` can answer
the gates of a later run from what it kept, without them.
"""

from __future__ import annotations

import functools
import re
from typing import FrozenSet, Optional

from jaxmigrate.migrator.rulegate import RuleGate
from jaxmigrate.migrator.textgate import TextGate
from jaxmigrate.migrator.textnames import prefixes_of, resolves
from jaxmigrate.migrator.textscan import imported_items
from jaxmigrate.rules._call_text import starts_word

_NONE: FrozenSet[str] = frozenset()

# The jax.numpy functions that make an array (the rule's names are these, under jax.numpy).
ARRAY_MAKERS = frozenset(
    {
        "array", "asarray", "zeros", "ones", "full", "empty", "arange", "linspace", "logspace",
        "eye", "identity", "zeros_like", "ones_like", "full_like", "empty_like", "tri",
        "float16", "float32", "float64", "bfloat16", "int8", "int16", "int32", "int64",
        "uint8", "uint16", "uint32", "uint64", "bool_", "complex64", "complex128",
    }
)  # fmt: skip
# The jax.random functions that make a key (an array too): ``key: PRNGKey = PRNGKey(0)`` is
# the most common array default of all (jumanji 0.1.3's environment states).
KEY_MAKERS = frozenset({"PRNGKey", "key", "split", "fold_in"})
# What makes a class a dataclass: a decorator (each calls ``dataclasses.dataclass``), or a base
# whose subclasses are made dataclasses (``__init_subclass__``, or a metaclass).
DATACLASS_DECORATORS = frozenset(
    {"dataclasses.dataclass", "flax.struct.dataclass", "chex.dataclass"}
)
DATACLASS_BASES = frozenset(
    {"flax.struct.PyTreeNode", "flax.linen.Module", "flax.linen.module.Module", "equinox.Module"}
)
_DATACLASS_MAKERS = DATACLASS_DECORATORS | DATACLASS_BASES
_DATACLASS_PREFIXES = prefixes_of(_DATACLASS_MAKERS)
# (a reference to ``a.b.Module`` spells ``Module``: in its chain, or in the import of its head)
_DATACLASS_WORDS = frozenset(name.rpartition(".")[2] for name in _DATACLASS_MAKERS)
# An annotated name ``name: ...`` at the start of a line (or after ``class C:`` on its line),
# with what follows its colon (the annotation, and the ``= value`` if there is one) where that
# may call a maker or go on to the next line: an open bracket, a backslash or a quote in it.
# (Matched after the newline before the line: a pattern that starts with a plain character is
# looked for fast, where ``^`` would be tried at every position.)
_ANNOTATED = re.compile(
    r"\n[ \t]*(?:class\b[^\n]*?:[ \t]*)?(?!(?:lambda|else|try|finally|except)\b)"
    r"[A-Za-z_]\w*[ \t]*:(?!=)([^\n]*[(\[{\\'\"][^\n]*)"
)
_MAKER_WORDS = ARRAY_MAKERS | KEY_MAKERS
_MAKERS_RE = "|".join(sorted(_MAKER_WORDS))
_MAKER_CALL = re.compile(rf"\b(?:{_MAKERS_RE})[ \t]*\(")
# Blanks, line ends, continuations and comments (each read to its line's end, or a word in
# one could be taken for what comes after it).
_BETWEEN = r"(?:[ \t\n\r\f\\]|#[^\n]*(?=\n|\Z))"
_IMPORT_STAR = re.compile(r"import" + _BETWEEN + r"*\*")  # (led by a plain word: sought fast)


@functools.cache
def _call_of(maker: str) -> "re.Pattern[str]":
    """``maker`` followed by an opening parenthesis, across blanks, line ends, comments and
    backslashes (a call however it is written, but for the word before it).  Led by the
    maker's name, the pattern is sought fast: one led by a word boundary or an alternation
    would have the engine try it at every position."""
    return re.compile(re.escape(maker) + _BETWEEN + r"*\(")


def _written(pattern: "re.Pattern[str]", text: str) -> bool:
    """Does ``pattern`` match where a word starts (its name is no other word's end)?"""
    return any(starts_word(text, found.start()) for found in pattern.finditer(text))


def _renames_a_maker(gate: TextGate) -> bool:
    """Does an import bind a maker to another name (``from jax.numpy import zeros as z``: gate 2
    resolves a call's name through the imports only), or does the text write ``import *`` (a
    maker that may then be called by another name)?  The import statements are read once for
    the file (:func:`migrator.textscan.imported_items`, which other gates read too)."""
    makers = gate.words_among(_MAKER_WORDS)
    if makers and any(
        alias is not None and dotted.rpartition(".")[2] in makers
        for _module, _on_line, dotted, alias in imported_items(gate.text)
    ):
        return True
    return _written(_IMPORT_STAR, gate.text)


def _calls_a_maker(gate: TextGate) -> bool:
    """Does the text call one of the makers by its name anywhere?"""
    return any(_written(_call_of(maker), gate.text) for maker in gate.words_among(_MAKER_WORDS))


class ArrayFieldDefaultGate(RuleGate):
    text_gated = True  # (the text gate decides: the makers' words are everywhere)
    costly_text_gate = True  # (it reads every annotated line of most modules that use JAX)

    # A maker's name is written in each call of it, or in the import that renames it.  (Not
    # declared as ``names``: the makers are no legacy names, and a rule that declares a name
    # owns it, which other rules then leave alone.)
    @functools.cached_property
    def trigger_words(self) -> FrozenSet[str]:
        return _MAKER_WORDS

    def text_gate(self, gate: TextGate) -> bool:
        """ast_gate, read from the text: a dataclass's word, and an annotated name whose
        statement (its line, and the lines its open brackets or a backslash carry it on to)
        calls one of the makers.  A maker imported under another name (or ``import *``) may be
        called by any name; where a maker is called somewhere, a statement whose end the
        reading cannot find (a triple-quoted string, or very long) may call it: kept."""
        text = gate.text
        if not gate.words_among(_DATACLASS_WORDS):
            return False
        if not resolves(text, _DATACLASS_MAKERS, _NONE, _DATACLASS_PREFIXES):
            return False  # (no decorator nor base can name one: gate 2 reads them so)
        if _renames_a_maker(gate):
            return True
        if not _calls_a_maker(gate):
            return False
        if "\r" in text:  # (lines as Python reads them: \r alone ends one too)
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        text = "\n" + text  # (the first line's newline: see _ANNOTATED)
        for match in _ANNOTATED.finditer(text):
            rest = match.group(1)
            code = _code_of(rest)  # (a call in a string or a comment is none)
            if _MAKER_CALL.search(rest if code is None else code):
                return True
            if _goes_on(rest, code) and _rest_calls_a_maker(text, match.end()):
                return True
        return False


_STRING = re.compile(r"'(?:[^'\\\n]|\\.)*'" + r'|"(?:[^"\\\n]|\\.)*"')
_STATEMENT_LINES = 60  # a statement read further than this is kept unread


def _code_of(line: str) -> Optional[str]:
    """``line`` without its one-line strings and its comment; None where a quote is left
    open on it (a triple-quoted string, a string a backslash carries on, or prose)."""
    if "'''" in line or '"""' in line:
        return None
    code = _STRING.sub('""', line).split("#", 1)[0]
    if "'" in code.replace('""', "") or '"' in code.replace('""', ""):
        return None
    return code


def _depth(code: str) -> int:
    count = code.count
    return count("(") + count("[") + count("{") - count(")") - count("]") - count("}")


def _goes_on(rest: str, code: Optional[str]) -> bool:
    """Does the statement whose first line ends with ``rest`` (whose :func:`_code_of` is
    ``code``) go on past it (or may it)?  A quote left open there, with no triple quote nor a
    backslash at the end, is no code: a line of prose in a docstring (``name: the layer\'s
    size``)."""
    if code is None:
        return "'''" in rest or '"""' in rest or rest.rstrip().endswith("\\")
    return _depth(code) > 0 or code.rstrip().endswith("\\")


def _rest_calls_a_maker(text: str, end: int) -> bool:
    """Reading on from ``end`` (the end of a statement's first line, which goes on) to where
    its brackets close: does it call a maker?  True where the end cannot be found."""
    depth = _depth(_code_of(text[text.rfind("\n", 0, end) + 1 : end]) or "(")
    position = end
    for _line in range(_STATEMENT_LINES):
        if position >= len(text):
            return True
        stop = text.find("\n", position + 1)
        stop = len(text) if stop < 0 else stop
        code = _code_of(text[position + 1 : stop])
        if code is None or _MAKER_CALL.search(code):
            return True
        depth += _depth(code)
        if depth <= 0 and not code.rstrip().endswith("\\"):
            return False
        position = stop
    return True
