"""The gate 1b hooks of the rules that refine them (:meth:`RuleGate.text_gate`,
:meth:`RuleGate.gate_words`), each in a light base the rule derives from.  Two families
live apart, each as long as the rest: the rules whose sites are qualified JAX names
(:mod:`rules._names_gate`) and JAX106's dataclass fields (:mod:`rules._array_field_gate`).

They read the text and what the rule declares for the gates, plus the per-range data each
base names in ``gate_state``; this module imports neither LibCST, nor the rule modules, nor
the API history, so that :mod:`migrator.gateplan` can answer the gates of a later run from
what it kept, without them.
"""

from __future__ import annotations

import functools
import re
from typing import Dict, FrozenSet, List, Optional, Set

from jaxmigrate.migrator.rulegate import RuleGate
from jaxmigrate.migrator.textgate import TextGate
from jaxmigrate.migrator.textscan import next_significant, previous_significant, with_items
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
    # Is a ``.mesh``/``.mesh_axes`` read as a GDA's in a module that does not import GDA (on a
    # receiver tied to an array)?  Not in code written after GDA's removal
    # (``GdaAttributes.for_source``).
    mesh_without_gda: bool = True
    gate_state = ("mesh_without_gda",)

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
        if not self.mesh_without_gda:
            return False
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
    """``keyword =`` (not ``==``) written in ``text`` as a whole word, where an argument list
    may pass it: after ``(`` or ``,`` (blanks, comments and continuations between), or where
    the text cannot tell what comes before (``x = 1`` on a line of its own is no keyword)."""
    if keyword not in text:
        return False
    for found in _KEYWORD(keyword).finditer(text):
        at = found.start()
        if starts_word(text, at):
            before = previous_significant(text, at)
            if before < 0 or text[before] in "(,":
                return True
    return False


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
_IF_OR_ELIF = re.compile(r"\b(?:el)?if\b")
_ASSIGNED = re.compile(r"([A-Za-z_]\w*)[ \t]*=(?!=)")  # ``NAME =`` (or ``x.NAME =``: more)
_NAME = re.compile(r"[A-Za-z_]\w*")
# ``except ... AttributeError ...:``, its clause over several lines inside brackets
_CATCHES_ATTRIBUTE_ERROR = re.compile(r"\bexcept\b[^:]*\bAttributeError\b[^:]*:")
_LONE_EQUALS = re.compile(r"(?<![=<>!])=(?!=)")
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
        if "except" in text and gate.has_word("AttributeError") and _assigning_handler(text):
            return True  # a ``try`` whose fallback may be gone: the ast gate reads it
        for call in _HASATTR.finditer(text):
            asked = _QUOTED.finditer(_hasattr_arguments(text, call.end()))
            if any(match.group(1) in self.absent for match in asked):
                # only a JAX module is asked: the first argument names one through an import
                head = _first_name(text, call.end())
                targets = gate.import_targets()
                if head is None or head in targets or "*" in targets:
                    return True
        return False


def _assigning_handler(text: str) -> bool:
    """Does an ``except`` clause naming ``AttributeError`` start its body with what may be an
    assignment (a lone ``=`` on the statement's first line, or a line that goes on: a bracket
    left open, a backslash)?  The shims JAX907 reads assign in their handler's one statement
    (``rules._dead_fallback``); a handler that returns, raises, passes or calls is none."""
    if "\r" in text:  # (lines as Python reads them: \r alone ends one too)
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    for clause in _CATCHES_ATTRIBUTE_ERROR.finditer(text):
        start = next_significant(text, clause.end())
        end = text.find("\n", start)
        line = text[start : len(text) if end < 0 else end].rstrip()
        if _LONE_EQUALS.search(line) or line.endswith("\\") or _opens_more(line):
            return True
    return False


def _opens_more(line: str) -> bool:
    return sum(map(line.count, "([{")) > sum(map(line.count, ")]}"))


def _version_in_an_if(text: str) -> bool:
    """Is a JAX version read the way :func:`version_answer` reads it, at most 400 characters
    after an ``if`` (a test over several lines included), or assigned to a name (``NAME =``
    at most 400 characters before it) written at most 400 characters after an ``if`` or
    ``elif``?  A superset of what it answers."""
    for read in _ANSWERABLE.finditer(text):
        start = read.start()
        if _IF.search(text, max(0, start - 400), start):
            return True
        for assigned in _ASSIGNED.finditer(text, max(0, start - 400), start):
            if _tested(text, assigned.group(1)):
                return True
    return False


def _tested(text: str, name: str) -> bool:
    """Is ``name`` written at most 400 characters after an ``if`` or ``elif``?"""
    for found in re.finditer(rf"(?<![\w.]){re.escape(name)}(?!\w)", text):
        if _IF_OR_ELIF.search(text, max(0, found.start() - 400), found.start()):
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


# -- JAX915 named-shape --------------------------------------------------------------------------
# each class's word, and how many positional parameters come before its ``named_shape``
_NAMED_SHAPE_PLACES = (("ShapeDtypeStruct", 2), ("ShapedArray", 3))


class NamedShapeGate(RuleGate):
    def text_gate(self, gate: TextGate) -> bool:
        """The word ``named_shape`` (a keyword is spelled), or a call of ``ShapeDtypeStruct``
        or ``ShapedArray`` (by that name or a name it is bound to) passing more positional
        arguments than precede ``named_shape``, a ``*`` argument, or arguments the text
        cannot read."""
        if gate.has_word("named_shape"):
            return True
        text = gate.text
        for word, place in _NAMED_SHAPE_PLACES:
            if not gate.has_word(word):
                continue
            for name in {word} | _aliases(text, word):
                for found in calls_of(text, name):
                    how = passed(text, found)
                    if how is None or how[2] or how[0] > place:
                        return True
        return False


# -- JAX913 primitive-params ---------------------------------------------------------------------
# ``name=`` (a keyword argument, or more: a default, an assignment in a lambda's body)
_KEYWORD_ARGUMENT = re.compile(r"(?<![\w.])[^\W\d]\w*[\s\\]*=(?!=)")


class PrimitiveParamsGate(RuleGate):
    def text_gate(self, gate: TextGate) -> bool:
        """A call of ``bind`` whose argument text names a keyword (or that the text cannot
        read): ``Primitive.bind(x, sizes=[1, 2])``, where ``sig.bind(*args)`` and
        ``sock.bind(("", 0))`` pass none."""
        text = gate.text
        return any(
            not found.plain or _KEYWORD_ARGUMENT.search(text, found.start, found.end) is not None
            for found in calls_of(text, "bind")
        )
