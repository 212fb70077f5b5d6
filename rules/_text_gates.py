"""The gate 1b hooks of the rules that refine them (:meth:`RuleGate.text_gate`,
:meth:`RuleGate.gate_words`), each in a light base the rule derives from.

They read the text and what the rule declares for the gates, plus the per-range data each
base names in ``gate_state``; this module imports neither LibCST, nor the rule modules, nor
the API history, so that :mod:`migrator.gateplan` can answer the gates of a later run from
what it kept, without them.
"""

from __future__ import annotations

import functools
import re
from typing import ClassVar, Dict, FrozenSet, Iterable, Iterator, List, Optional, Set, Tuple

from jaxmigrate.migrator.rulegate import RuleGate
from jaxmigrate.migrator.textgate import FROM_HEAD, Occurrences, TextGate
from jaxmigrate.migrator.textnames import prefixes_of, resolves
from jaxmigrate.migrator.textscan import UNTOLD, imported_items, next_significant, with_items
from jaxmigrate.rules._array_names import ARRAY_PROPERTIES
from jaxmigrate.rules._call_text import (
    called_parameter,
    calls_of,
    checked_by_isinstance,
    loop_variable,
    passed,
    starts_word,
    word_char,
)

_NONE: FrozenSet[str] = frozenset()
_ASCII_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")  # what gate 1's tokens are


# -- JAX404 device-method ------------------------------------------------------------------------
class DeviceMethodGate(RuleGate):
    def text_gate(self, gate: TextGate) -> bool:
        return gate.of("device").empty_call  # ``.device()``, as ast_gate asks


# -- JAX203 host-local-inputs --------------------------------------------------------------------
class HostLocalInputsGate(RuleGate):
    def text_gate(self, gate: TextGate) -> bool:
        return gate.of("in_shardings").keyword or gate.of("in_axis_resources").keyword


# -- JAX402 gda-attributes -----------------------------------------------------------------------
class GdaAttributesGate(RuleGate):
    def text_gate(self, gate: TextGate) -> bool:
        # ast_gate, read from the text: a .mesh/.mesh_axes receiver can only tie to an
        # array if it is an expression (a call, a subscript), an attribute in ARRAY_PROPERTIES or
        # ``.data``, or a name something assigns or annotates.  (ast_gate also says True when a
        # module is too deeply nested to walk; that says nothing about the receivers, so the
        # text gate does not copy it.)
        if gate.of("local_shards").after_dot or gate.of("local_data").after_dot:
            return True
        if "global_device_array" in gate.text:  # a GDA import, maybe
            return True
        for attr in ("mesh", "mesh_axes"):
            found = gate.of(attr)
            if found.unknown or found.on_expression:
                return True
            for head, parent, direct in found.chains:
                if direct and (gate.assigned(head) or _flows_to(gate.text, head)):
                    return True
                if not direct and (parent in ARRAY_PROPERTIES or parent == "data"):
                    return True
                if not direct and gate.stored(parent):  # self.table = <array> in a method
                    return True
        return False


def _flows_to(text: str, name: str) -> bool:
    """Can :mod:`rules._flow` tie ``name`` though nothing assigns it: a loop or comprehension
    variable, a name ``isinstance`` checks, a parameter of a function the module calls."""
    return (
        loop_variable(text, name)
        or checked_by_isinstance(text, name)
        or called_parameter(text, name)
    )


# -- JAX607 with-mesh ---------------------------------------------------------------------------
_MESH_MAKERS = frozenset(
    {"Mesh", "make_mesh"}
)  # the last parts of jax.sharding.Mesh, jax.make_mesh


class WithMeshGate(RuleGate):
    def text_gate(self, gate: TextGate) -> bool:
        # ast_gate, read from the text: a ``with`` item that is a name, or a call whose callee
        # resolves to a Mesh maker through an import (its chain ends in the maker's name, or
        # it is a name an import binds to one: ``from jax.sharding import Mesh as M``).
        makers = _MESH_MAKERS | {n for n, parts in gate.bound().items() if parts & _MESH_MAKERS}
        for item in with_items(gate.text):
            if item is None or not makers.isdisjoint(item):
                return True
            while len(item) > 2 and item[0] == "(" and item[-1] == ")":
                item = item[1:-1]  # ``with (mesh) as m:``
            if len(item) == 1 and item[0].isidentifier():
                return True
        return False


# -- JAX608 make-mesh-axis-types ---------------------------------------------------------------
class MakeMeshGate(RuleGate):
    def text_gate(self, gate: TextGate) -> bool:
        """ast_gate, read from the text: ``make_mesh`` (or a name an import binds to it)
        called with no ``axis_types``, no ``*``/``**`` argument and fewer than three
        positional ones, or with arguments the text cannot tell."""
        text = gate.text
        names = {"make_mesh"} | {n for n, parts in gate.bound().items() if "make_mesh" in parts}
        for name in names:
            for found in calls_of(text, name):
                how = passed(text, found)
                if how is None:
                    return True
                positional, keywords, starred = how
                if positional < 3 and not starred and "axis_types" not in keywords:
                    return True
        return False


# -- JAX901 missing-api, JAX903 renamed-api --------------------------------------------------
class QualifiedNamesGate(RuleGate):
    """Gate 1b for a rule whose sites are qualified JAX names (:attr:`names` and imports of
    them), by the parts each reference must spell."""

    gate_state: ClassVar[Tuple[str, ...]] = (
        "parents",
        "jax_only",
        "qualified_parents",
        "name_prefixes",
    )

    @functools.cached_property
    def parents(self) -> Dict[str, FrozenSet[str]]:
        """word -> the last parts of the P in each ``P.word`` of :attr:`names`."""
        return {
            word: frozenset(parent.rpartition(".")[2] for parent in found)
            for word, found in self.qualified_parents.items()
        }

    @functools.cached_property
    def qualified_parents(self) -> Dict[str, FrozenSet[str]]:
        """word -> the P of each ``P.word`` of :attr:`names`."""
        found: Dict[str, Set[str]] = {}
        for qualname in self.names:
            parent, _, word = qualname.rpartition(".")
            found.setdefault(word, set()).add(parent)
        return {word: frozenset(parents) for word, parents in found.items()}

    @functools.cached_property
    def jax_only(self) -> bool:
        """Is every name one of ``jax``'s or ``jaxlib``'s?"""
        return all(q.startswith(("jax.", "jaxlib.")) for q in self.names)

    def gate_words(self, gate: TextGate, words: FrozenSet[str]) -> Iterator[str]:
        """A reference to ``P.w`` spells ``w`` and the last part of ``P`` somewhere (in the
        chain, or in the import that binds its head): a ``w`` without any of its parents is
        some other ``w`` (``self.add``, ``np.shape``).  And when every name is a JAX one, gate
        2 resolves a ``w`` only through an import: ``from M import w`` names ``M.w``, and a
        chain ``head. ... .w`` names what an import binds its head to, followed by the rest
        (``from jax._src import core`` makes ``core.Primitive`` no ``jax.core.Primitive``).
        Lazily: gate 1b stops at the first word written as a site, and most files hold many
        of the words (reading each one's occurrences is the cost)."""
        jax_only = self.jax_only
        spelled = self._spelled_with_a_parent(gate, words)
        if spelled and jax_only and not self._resolves(gate):
            spelled = [w for w in spelled if w in self.strings or w in self.annotation_words]
        for word in spelled:
            found = gate.of(word)
            if found.unknown or found.imported_parents:
                yield word
            elif found.quoted and (word in self.strings or word in self.annotation_words):
                yield word  # (a quoted word is a site only as a string: a name needs its import)
            elif found.imported_from and (not jax_only or self._imports(word, found)):
                yield word
            elif found.chains and (not jax_only or self._names_in_chain(gate, word, found)):
                yield word

    def _resolves(self, gate: TextGate) -> bool:
        """May an import or a chain of the text make one of :attr:`names` (or import under one
        of :attr:`legacy_modules`)?  (:func:`migrator.textnames.resolves`)"""
        return resolves(gate.text, self.names, self.legacy_modules, self.name_prefixes)

    @functools.cached_property
    def name_prefixes(self) -> FrozenSet[str]:
        return prefixes_of(self.names)

    def _spelled_with_a_parent(self, gate: TextGate, words: FrozenSet[str]) -> Iterable[str]:
        """The ``words`` one of whose parents (:attr:`parents`) the text spells: from the
        parents gate 1's tokens hold, when it kept them (a file holds hundreds of the words and
        a few of the parents); else word by word."""
        tokens = gate.token_set()
        if tokens is None:
            parents = self.parents
            return [w for w in words if any(gate.has_word(p) for p in parents.get(w, _NONE))]
        by_parent, odd = self._words_by_parent
        near: Set[str] = set()
        for parent in tokens.intersection(by_parent):
            near.update(by_parent[parent])
        for word in words.intersection(odd):  # a parent no token can be: read from the text
            if any(gate.has_word(p) for p in odd[word]):
                near.add(word)
        return words.intersection(near)

    @functools.cached_property
    def _words_by_parent(self) -> Tuple[Dict[str, FrozenSet[str]], Dict[str, FrozenSet[str]]]:
        """:attr:`parents` turned around: each parent that is an ASCII identifier (a token of
        gate 1) -> the words it is a parent of; and word -> its other parents."""
        by_parent: Dict[str, Set[str]] = {}
        odd: Dict[str, FrozenSet[str]] = {}
        for word, parents in self.parents.items():
            other = frozenset(p for p in parents if not _ASCII_IDENTIFIER.fullmatch(p))
            if other:
                odd[word] = other
            for parent in parents - other:
                by_parent.setdefault(parent, set()).add(word)
        return {p: frozenset(found) for p, found in by_parent.items()}, odd

    def _imports(self, word: str, found: Occurrences) -> bool:
        """Does one ``from M import word`` name one of :attr:`names`?"""
        for module in found.imported_from:
            if not module or module == FROM_HEAD or module in self.qualified_parents[word]:
                return True  # (``import word``, ``from word...``: rare, kept)
        return False

    def _names_in_chain(self, gate: TextGate, word: str, found: Occurrences) -> bool:
        """Can one chain ``head. ... .part.word`` name one of :attr:`names`, with ``head``
        bound as an import binds it?"""
        targets = gate.import_targets()
        qualified = self.qualified_parents[word]
        for head, *rest in found.paths:
            for target in targets.get(head, _NONE):
                if target == UNTOLD:
                    return True
                if (".".join((target, *rest)) if rest else target) in qualified:
                    return True
        return False


class NamesAndModulesGate(QualifiedNamesGate):
    """:class:`QualifiedNamesGate` for a rule that also removes the imports of its
    :attr:`legacy_modules`: the last part of each such module is kept for gate 1b's own reading
    of an import (``import jax.util``), whatever the names say."""

    gate_state = (*QualifiedNamesGate.gate_state, "module_words")

    @functools.cached_property
    def module_words(self) -> FrozenSet[str]:
        return frozenset(module.rpartition(".")[2] for module in self.legacy_modules)

    def gate_words(self, gate: TextGate, words: FrozenSet[str]) -> Iterator[str]:
        yield from words & self.module_words
        yield from super().gate_words(gate, words)


# -- JAX906 removed-keywords ---------------------------------------------------------------------
SOLVE = "jax.scipy.linalg.solve"
CLIP = "jax.numpy.clip"
RESHAPE = "jax.numpy.reshape"
MAKE_MESH = "jax.make_mesh"
PURE_CALLBACK = "jax.pure_callback"
WHERE = "jax.numpy.where"
VMAP_METHOD_SINCE = "0.4.34"  # pure_callback's vmap_method= came, its vectorized= deprecated
# The keywords JAX906 rewrites, by function (it reports the others its history saw dropped).
REWRITTEN: Dict[str, FrozenSet[str]] = {
    SOLVE: frozenset({"sym_pos"}),
    CLIP: frozenset({"a", "a_min", "a_max"}),
    RESHAPE: frozenset({"newshape"}),
    MAKE_MESH: frozenset({"axis_shapes"}),
    PURE_CALLBACK: frozenset({"vectorized"}),
    WHERE: frozenset({"condition", "x", "y"}),
}


class RemovedKeywordsGate(RuleGate):
    gate_state = ("by_word", "called_words")
    # function's last name -> the keywords a call of it must pass for the rule to act: the
    # rewritten ones and (in the rule ``for_range`` gives) the ones a release lacks
    by_word: Dict[str, FrozenSet[str]] = {q.rsplit(".", 1)[1]: k for q, k in REWRITTEN.items()}
    called_words: FrozenSet[str] = frozenset(by_word)

    def text_gate(self, gate: TextGate) -> bool:
        """One of the functions (by its last name) written as a call, or as the first argument
        of a ``partial(...)`` call, that passes, in the text of its arguments, ``keyword=`` for
        a keyword the rule rewrites or the history saw the function drop."""
        text = gate.text
        for word in gate.words_among(self.called_words):
            # (a keyword written so is a whole word of the text: a set look-up first)
            keywords = [k for k in self.by_word[word] if gate.has_word(k) and _keyword_in(text, k)]
            if not keywords:
                continue
            if _passed(text, word, keywords):
                return True
            # ``import pjit as pj``, ``f = x.f``: the other names it is called by
            names = {word} | _aliases(text, word)
            if any(_passed(text, name, keywords) for name in names - {word}):
                return True
            if gate.has_word("partial") and _partial_passes(text, names, keywords):
                return True
        return False


# The patterns below start with the word they look for, which CPython's ``re`` finds by a fast
# literal search; what a leading word boundary or look-behind would ask (and made every position
# of the text a start to try) is checked at each match instead.
def _keyword_in(text: str, keyword: str) -> bool:
    """``keyword =`` (not ``==``) written in ``text``, as a whole word."""
    if keyword not in text:
        return False
    return any(starts_word(text, m.start()) for m in _KEYWORD(keyword).finditer(text))


def _passed(text: str, name: str, keywords: List[str]) -> bool:
    """Is ``name`` called somewhere in ``text`` with ``keyword=`` for one of ``keywords`` in the
    text of its arguments?"""
    for found in calls_of(text, name):
        span = text[found.start : found.end]
        if any(_keyword_in(span, keyword) for keyword in keywords):
            return True
    return False


def _partial_passes(text: str, names: Set[str], keywords: List[str]) -> bool:
    """Is one of ``names`` the first argument of a ``partial(...)`` call (by that name or one
    ``partial`` is bound to) whose arguments pass ``keyword=`` for one of ``keywords``?"""
    for partial in {"partial"} | _aliases(text, "partial"):
        for found in calls_of(text, partial):
            span = text[found.start : found.end]
            head = _FIRST_ARGUMENT.match(span)
            if head is not None and head.group(1) in names:
                if any(_keyword_in(span, keyword) for keyword in keywords):
                    return True
    return False


# The last word of a call's first argument when it is a (dotted) name: ``jnp.clip`` -> clip;
# blanks, continuations and comments may stand around each part.
_BLANKS = r"(?:[\s\\]|#[^\r\n]*)*"
_FIRST_ARGUMENT = re.compile(rf"{_BLANKS}(?:\w+{_BLANKS}\.{_BLANKS})*(\w+){_BLANKS}(?:[,)]|$)")


def _aliases(text: str, word: str) -> Set[str]:
    """The names ``word`` is bound to: ``word as NAME``, ``NAME = [...].word`` (a chain of
    words, dots, blanks and continuations ending a line, assigned to one name that starts a
    line)."""
    names: Set[str] = set()
    for match in _ALIAS(word).finditer(text):
        at = match.start()
        if not starts_word(text, at):
            continue
        if match.group(1):
            names.add(match.group(1))
            continue
        name = _assigned_from(text, at)
        if name is not None:
            names.add(name)
    return names


def _assigned_from(text: str, at: int) -> Optional[str]:
    """The NAME of ``NAME = chain`` when the chain that holds ``text[at]`` is assigned so."""
    index = at - 1
    while index >= 0 and (word_char(text[index]) or text[index] in ".\\" or text[index].isspace()):
        index -= 1
    if index < 0 or text[index] != "=":
        return None
    index -= 1
    while index >= 0 and text[index].isspace():
        index -= 1
    last = index
    while index >= 0 and word_char(text[index]):
        index -= 1
    if index == last:
        return None
    name = text[index + 1 : last + 1]
    while index >= 0 and text[index] != "\n":
        if not text[index].isspace():
            return None
        index -= 1
    return name


@functools.lru_cache(maxsize=256)
def _KEYWORD(keyword: str) -> "re.Pattern[str]":  # noqa: N802
    return re.compile(rf"{re.escape(keyword)}\s*=(?!=)")


@functools.lru_cache(maxsize=512)
def _ALIAS(word: str) -> "re.Pattern[str]":  # noqa: N802
    """``word as NAME``, or ``word`` ending a line (blanks after it)."""
    return re.compile(rf"{re.escape(word)}(?:\s+as\s+(\w+)|(?m:\s*$))")


# -- JAX907 dead-feature-test --------------------------------------------------------------------
_HASATTR = re.compile(r"hasattr\s*\(")
_QUOTED = re.compile(r"""["'](\w+)["']""")
_IF = re.compile(r"\bif\b")
_NAME = re.compile(r"[A-Za-z_]\w*")
# the reads rules._version_tests answers: V.split(, __version_info__, parse(V / Version(V
_GAP = r"(?:[\s\\]|#[^\n]*)*"  # white space, continuations and comments between tokens
_ANSWERABLE = re.compile(
    rf"__version_info__|__version__{_GAP}\.{_GAP}split{_GAP}\("
    rf"|(?:parse|Version){_GAP}\((?:[\w.\s\\]|#[^\n]*)*__version__"
)


class DeadFeatureTestGate(RuleGate):
    gate_state = ("absent",)
    absent: FrozenSet[str] = frozenset()  # what ``hasattr`` can ask that the newest JAX lacks

    def text_gate(self, gate: TextGate) -> bool:
        text = gate.text
        if "__version" in text and _version_in_an_if(text):
            return True  # a version read near an ``if``: the ast gate reads the file
        for call in _HASATTR.finditer(text):
            asked = _QUOTED.finditer(_hasattr_arguments(text, call.end()))
            if any(match.group(1) in self.absent for match in asked):
                # only a JAX module is asked: the first argument names one through an import
                head = _first_name(text, call.end())
                targets = gate.import_targets()
                if head is None or head in targets or "*" in targets:
                    return True
        return False


def _version_in_an_if(text: str) -> bool:
    """Is a JAX version read the way :func:`version_answer` reads it, at most 400 characters
    after an ``if`` (a test over several lines included)?  A superset of what it answers."""
    for read in _ANSWERABLE.finditer(text):
        if _IF.search(text, max(0, read.start() - 400), read.start()):
            return True
    return False


def _first_name(text: str, start: int) -> Optional[str]:
    """The name the expression at ``start`` begins with (blanks, comments and continuations
    skipped); None when it begins otherwise (a bracket: it may still be a name)."""
    match = _NAME.match(text, next_significant(text, start))
    return match.group(0) if match is not None else None


def _hasattr_arguments(text: str, start: int) -> str:
    """The text from ``start`` to the bracket that closes the call (or 2,000 characters):
    comments and continuations between the arguments stay inside it.  A bracket in a
    comment or a one-line string does not count; a triple quote gives up (the 2,000
    characters: more text can only let more files through)."""
    depth, at, stop = 1, start, min(len(text), start + 2000)
    while at < stop:
        char = text[at]
        if char == "#":
            line_end = text.find("\n", at, stop)
            at = stop if line_end < 0 else line_end
            continue
        if char in "\"'":
            if text.startswith(char * 3, at):
                break
            at = _string_end(text, at, stop)
            continue
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if not depth:
                return text[start:at]
        at += 1
    return text[start : start + 2000]


def _string_end(text: str, at: int, stop: int) -> int:
    """Just past the one-line string literal opening at ``at`` (its line's end if open)."""
    quote, at = text[at], at + 1
    while at < stop and text[at] not in (quote, "\n"):
        at += 2 if text[at] == "\\" else 1
    return at + 1


# -- JAX909 shape-dtype-none ---------------------------------------------------------------------
class ShapeDtypeNoneGate(RuleGate):
    def text_gate(self, gate: TextGate) -> bool:
        """A call of ``ShapeDtypeStruct`` (by that name or a name it is bound to) with the word
        None in the text of its arguments."""
        if not gate.has_word("None"):
            return False
        text = gate.text
        names = {"ShapeDtypeStruct"} | _aliases(text, "ShapeDtypeStruct")
        return any(
            _NONE_WORD.search(text, found.start, found.end) is not None
            for name in names
            for found in calls_of(text, name)
        )


_NONE_WORD = re.compile(r"\bNone\b")


# -- JAX911 pure-callback-vmap -------------------------------------------------------------------
class PureCallbackVmapGate(RuleGate):
    def text_gate(self, gate: TextGate) -> bool:
        """A call of ``pure_callback`` (by that name or a name it is bound to) whose argument
        text names neither ``vmap_method`` nor ``vectorized``."""
        text = gate.text
        names = {"pure_callback"} | _aliases(text, "pure_callback")
        return any(
            "vmap_method" not in text[found.start : found.end]
            and "vectorized" not in text[found.start : found.end]
            for name in names
            for found in calls_of(text, name)
        )


# -- JAX106 array-field-default ------------------------------------------------------------------
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
            if _goes_on(rest) and _rest_calls_a_maker(text, match.end()):
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
    return sum(code.count(c) for c in "([{") - sum(code.count(c) for c in ")]}")


def _goes_on(rest: str) -> bool:
    """Does the statement whose first line ends with ``rest`` go on past it (or may it)?  A
    quote left open there, with no triple quote nor a backslash at the end, is no code: a
    line of prose in a docstring (``name: the layer\'s size``)."""
    code = _code_of(rest)
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
