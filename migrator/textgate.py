"""Gate 1b: is a trigger word written where it could make one of a rule's sites?

The prefilter (gate 1) only knows that a word such as ``config`` or ``tree_map`` occurs.  Most
modern code writes those words where no rule cares (``jax.tree_util.tree_map``,
``self.config``, ``f(mesh)``), and each such file used to cost a CPython ``ast.parse`` before
gate 2 could say so.  This module reads the few tokens around each occurrence instead and answers
the question gate 2's ``Plan.has_site`` asks, with an over-approximation that never says "no"
where ``has_site`` (computed by :func:`migrator.astfacts.ast_facts`) would say "yes":

- gate 2 resolves a qualified name ``P.w`` (``jax.tree_map``) only through an import statement
  (``from P import w``, ``import P.w``) or an attribute chain ``h. ... .w`` whose head ``h`` an
  import statement binds.  So an occurrence counts when it sits in an import list whose module
  makes ``P.w``, or ends a chain whose head some import binds and whose previous part is the
  last part of ``P`` (or, for ``h.w``, whose head is bound to something named like it);
- a legacy module counts only where an import statement names it (gate 2 looks at imports);
- an attribute site is preceded by a dot, a keyword site followed by ``=``, a string site is
  written between quotes; a rule's annotation word (reported inside string annotations) counts
  wherever it is written.

Blank lines, comments and backslash continuations between tokens are skipped; where the text
cannot tell (a trailing comment on a line that also holds quotes), the answer is "yes".  Words
inside strings and comments are read like code, which can only add "yes" answers.
``tests/test_gates.py`` checks the over-approximation on every fixture and installed jax module.
The character-level reading (and the import statements read from the text) is in
:mod:`migrator.textscan`.
"""

from __future__ import annotations

import functools
import re
from typing import (
    TYPE_CHECKING,
    Collection,
    Dict,
    FrozenSet,
    Iterable,
    List,
    Optional,
    Set,
    Tuple,
)

from jaxmigrate.migrator.textscan import (
    UNKNOWN,
    after_dot as dot_before,
    bound_names,
    ident_char,
    import_list_module,
    import_targets,
    jax_bound_names,
    keyword_before,
    next_significant,
    previous_significant,
    word_before,
)

if TYPE_CHECKING:  # pragma: no cover
    from jaxmigrate.migrator.rule import Rule

_CHAIN_LIMIT = 32
# what can sit right before / after a string constant's whole value: quotes, and the braces and
# colon of an f-string's literal parts and format specs; a backslash-newline inside the quotes
_OPENS_STRING = frozenset("'\"}:")
_CLOSES_STRING = frozenset("'\"{}\\")


# -- occurrences of one word --------------------------------------------------------------------
FROM_HEAD = "<from>"


class Occurrences:
    """How the occurrences of one word are written."""

    __slots__ = ("unknown", "after_dot", "on_expression", "chains", "paths", "imported_parents",
                 "imported_from", "keyword", "empty_call", "quoted")  # fmt: skip

    def __init__(self) -> None:
        self.unknown = False  # some occurrence's surroundings cannot be told from the text
        self.after_dot = False  # ``x.word`` (any x)
        self.on_expression = False  # ``f().word``, ``x[0].word``, ``"s".word``: no name before
        # (head, part before word, whether that part is the head) of ``head. ... .word``
        self.chains: Set[Tuple[str, str, bool]] = set()
        self.paths: Set[Tuple[str, ...]] = set()  # every part of those chains before word
        self.imported_parents: Set[str] = set()  # parts before word in chains inside imports
        # ``from M import word`` -> M; ``import word`` -> ''; ``from word...`` -> FROM_HEAD
        self.imported_from: Set[str] = set()
        self.keyword = False  # ``word =`` (not ``==``)
        self.empty_call = False  # ``.word()``
        self.quoted = False  # ``"word"`` / ``'word'``


def _in_import(text: str, head: int) -> bool:
    """Does the dotted name starting at index ``head`` sit in an import statement?"""
    j = previous_significant(text, head)
    if j == UNKNOWN:
        return True
    if j < 0:
        return False
    before = word_before(text, j)
    if before == "import" or before == "from":
        return True
    return (text[j] == "," or text[j] == "(") and import_list_module(text, head) is not None


def occurrences(text: str, word: str) -> Occurrences:
    found = Occurrences()
    size = len(word)
    n = len(text)
    i = text.find(word)
    while i >= 0:
        after = i + size
        before_char = text[i - 1] if i else ""
        if (not before_char or not ident_char(before_char)) and (
            after >= n or not ident_char(text[after])
        ):
            if before_char in _OPENS_STRING and after < n and text[after] in _CLOSES_STRING:
                found.quoted = True
            j = previous_significant(text, i)
            if j == UNKNOWN:
                found.unknown = True
                return found
            if j >= 0 and text[j] == ".":
                found.after_dot = True
                if not _chain(text, j, found):
                    found.unknown = True
                    return found
            elif j >= 0:
                before = word_before(text, j)
                if before == "from":
                    found.imported_from.add(FROM_HEAD)
                elif text[j] == "," or text[j] == "(" or before == "import":
                    module = import_list_module(text, i)
                    if module is not None:
                        found.imported_from.add(module)
            k = next_significant(text, after)
            if k < n:
                if text[k] == "=" and text[k + 1 : k + 2] != "=":
                    found.keyword = True
                elif text[k] == "(" and found.after_dot and j >= 0 and text[j] == ".":
                    close = next_significant(text, k + 1)
                    if close < n and text[close] == ")":
                        found.empty_call = True
        i = text.find(word, after)
    return found


def _chain(text: str, dot: int, found: Occurrences) -> bool:
    """Record the chain ``head. ... .part.word`` whose last dot is at ``dot``; False if the text
    cannot tell."""
    parts: List[str] = []  # from the last part before the dot back to the head
    j = dot
    for length in range(1, _CHAIN_LIMIT + 1):
        k = previous_significant(text, j)
        if k == UNKNOWN:
            return False
        name = word_before(text, k) if k >= 0 else ""
        if not name:  # ``f().word``, ``x[0].word``: gate 2 resolves no name through these
            found.on_expression = True
            return True
        parts.append(name)
        start = k - len(name) + 1
        j = previous_significant(text, start)
        if j == UNKNOWN:
            return False
        if j < 0 or text[j] != ".":
            parent = parts[0]
            found.chains.add((name, parent, length == 1))
            found.paths.add(tuple(reversed(parts)))
            if _in_import(text, start):
                found.imported_parents.add(parent)
            return True
    return False


# -- what a rule would accept -------------------------------------------------------------------
class WordSites:
    """For one trigger word, what a rule would accept as a site spelled with it."""

    __slots__ = ("attribute", "keyword", "string", "annotation", "parents", "module_parents",
                 "qualnames", "modules")  # fmt: skip

    def __init__(self, modules: FrozenSet[str]) -> None:
        self.attribute = False
        self.keyword = False
        self.string = False
        self.annotation = False  # the rule reports the word in a string annotation, import or not
        self.parents: Set[str] = set()  # last part of P for each name site P.word ('' if none)
        self.module_parents: Set[str] = set()  # the same, for each legacy module P.word
        self.qualnames: Set[str] = set()  # the name sites and legacy modules P.word themselves
        self.modules = modules  # the rule's legacy modules (an import under one is a site)

    def imported(self, word: str, module: str) -> bool:
        """Is ``from module import word`` (``import word`` for '') one of these sites?"""
        if module == FROM_HEAD:
            return "" in self.parents or "" in self.module_parents
        qualname = f"{module}.{word}" if module else word
        return qualname in self.qualnames or under(qualname, self.modules)


@functools.lru_cache(maxsize=64)  # (a rule's set of words: the same set for every file)
def _not_tokens(words: FrozenSet[str]) -> Tuple[str, ...]:
    """The ``words`` no identifier-like token of gate 1 can be."""
    return tuple(w for w in words if not (w.isascii() and w.isidentifier()))


def under(qualname: str, modules: FrozenSet[str]) -> bool:
    """Is ``qualname`` one of ``modules`` or inside one (``a.b.c`` is under ``a.b``)?  One set
    look-up per dotted prefix, so the cost does not grow with the number of modules."""
    if qualname in modules:
        return True
    end = qualname.rfind(".")
    while end > 0:
        if qualname[:end] in modules:
            return True
        end = qualname.rfind(".", 0, end)
    return False


def word_sites(rule: object) -> "SiteTable":
    """What a rule's trigger words stand for: attributes, keywords, strings, qualified names."""
    return SiteTable(rule)


class SiteTable:
    """The :class:`WordSites` of a rule's trigger words, each made when gate 1b first asks for it:
    a rule may declare thousands of names, and a file holds a few of their words."""

    def __init__(self, rule: object) -> None:
        self._rule = rule
        self._modules = frozenset(rule.legacy_modules)  # type: ignore[attr-defined]
        self._made: Dict[str, Optional[WordSites]] = {}
        self._by_word: Optional[Dict[str, List[Tuple[str, bool]]]] = None

    def get(self, word: str) -> Optional[WordSites]:
        """The sites ``word`` stands for, None when it is none of the rule's trigger words."""
        try:
            return self._made[word]
        except KeyError:
            made = self._made[word] = self._make(word)
            return made

    def _make(self, word: str) -> Optional[WordSites]:
        rule = self._rule
        named = self._qualnames().get(word, ())
        flags = (
            word in rule.attributes,  # type: ignore[attr-defined]
            word in rule.keywords,  # type: ignore[attr-defined]
            word in rule.strings,  # type: ignore[attr-defined]
            word in getattr(rule, "annotation_words", ()),
        )
        if not named and not any(flags):
            return None
        site = WordSites(self._modules)
        for qualname, legacy in named:
            parent = qualname.rpartition(".")[0].rpartition(".")[2]
            (site.module_parents if legacy else site.parents).add(parent)
            site.qualnames.add(qualname)
        site.attribute, site.keyword, site.string, site.annotation = flags
        return site

    def _qualnames(self) -> Dict[str, List[Tuple[str, bool]]]:
        """The rule's names and legacy modules (with True for the latter), by their last part."""
        if self._by_word is None:
            table: Dict[str, List[Tuple[str, bool]]] = {}
            names = self._rule.names  # type: ignore[attr-defined]
            for qualnames, legacy in ((names, False), (self._modules, True)):
                for qualname in qualnames:
                    table.setdefault(qualname.rpartition(".")[2], []).append((qualname, legacy))
            self._by_word = table
        return self._by_word


class TextGate:
    """One file's text, read lazily: which trigger words are written as which sites."""

    def __init__(
        self,
        text: str,
        hits: FrozenSet[str] = frozenset(),
        tokens: Optional[Collection[str]] = None,
    ) -> None:
        self.text = text
        self.hits = hits  # the trigger words gate 1 found among the text's identifiers
        self._tokens = tokens  # gate 1's identifier-like tokens of the text, when it kept them
        self._token_set: Optional[FrozenSet[str]] = None
        self._words: Dict[str, bool] = {}
        self._seen: Dict[str, Occurrences] = {}
        self._bound: Optional[Dict[str, Set[str]]] = None
        self._jax_bound: Optional[Set[str]] = None
        self._targets: Optional[Dict[str, Set[str]]] = None

    def token_set(self) -> Optional[FrozenSet[str]]:
        """Gate 1's identifier-like tokens of the text as a set (None when it did not keep
        them): :meth:`has_word` of an ASCII identifier is a look-up in it."""
        if self._token_set is None and self._tokens is not None:
            self._token_set = frozenset(self._tokens)
        return self._token_set

    def has_word(self, word: str) -> bool:
        """Does the identifier ``word`` occur in the text as a whole word?"""
        found = self._words.get(word)
        if found is None:
            if self._tokens is not None and _ASCII_WORD.fullmatch(word):
                # One set lookup instead of a scan of the text.  A token is cut at a non-ASCII
                # letter, so this can say "yes" for ``éword``: more "yes" is harmless here.
                return word in self.token_set()  # type: ignore[operator]
            found = self._words[word] = keyword_before(self.text, word, len(self.text)) >= 0
        return found

    def words_among(self, words: FrozenSet[str]) -> FrozenSet[str]:
        """The identifiers of ``words`` that occur in the text as whole words
        (:meth:`has_word` of each; one set intersection when gate 1 kept its tokens)."""
        tokens = self.token_set()
        if tokens is not None:
            found = words & tokens  # (tokens are ASCII words: the others, one by one)
            return found | frozenset(w for w in _not_tokens(words) if self.has_word(w))
        return frozenset(w for w in words if self.has_word(w))

    def bound(self) -> Dict[str, Set[str]]:
        if self._bound is None:
            self._bound = bound_names(self.text)
        return self._bound

    def jax_bound(self) -> Set[str]:
        """The names an import may bind to something of ``jax`` (:func:`jax_bound_names`)."""
        if self._jax_bound is None:
            self._jax_bound = jax_bound_names(self.text)
        return self._jax_bound

    def import_targets(self) -> Dict[str, Set[str]]:
        """The qualified names an import may bind each name to (:func:`import_targets`)."""
        if self._targets is None:
            self._targets = import_targets(self.text)
        return self._targets

    def of(self, word: str) -> Occurrences:
        """How ``word`` (an ASCII identifier) is written in the file."""
        found = self._seen.get(word)
        if found is None:
            found = self._seen[word] = occurrences(self.text, word)
        return found

    def assigned(self, name: str, after_dot: bool = False) -> bool:
        """Is ``name`` ever followed by ``=`` (not ``==``) or ``:``, as where an assignment, an
        annotation or a walrus binds it?  (``name`` is an identifier.)  ``after_dot``: only
        where a dot precedes it (:meth:`stored`)."""
        text, n, size = self.text, len(self.text), len(name)
        i = text.find(name)
        while i >= 0:
            after = i + size
            if (
                (i == 0 or not ident_char(text[i - 1]))
                and (after >= n or not ident_char(text[after]))
                and (not after_dot or dot_before(text, i))
            ):
                k = next_significant(text, after)
                if k < n and (text[k] == ":" or (text[k] == "=" and text[k + 1 : k + 2] != "=")):
                    return True
            i = text.find(name, after)
        return False

    def stored(self, attr: str) -> bool:
        """Is ``.attr`` ever followed by ``=`` (not ``==``) or ``:``, as where an assignment or
        an annotated one stores an attribute?  (``attr`` is an identifier.)"""
        return self.assigned(attr, after_dot=True)

    def admits(self, sites: SiteTable, words: Iterable[str]) -> bool:
        """Is one of ``words`` written as one of ``sites``?"""
        for word in words:
            site = sites.get(word)
            if site is None or (site.string and not _ASCII_WORD.fullmatch(word)):
                return True  # a word this module cannot read: keep the rule
            if site.annotation:
                return True  # a string annotation can hold it anywhere (even triple-quoted)
            found = self.of(word)
            if found.unknown:
                return True
            if site.string and found.quoted:
                return True
            if site.attribute and found.after_dot:
                return True
            if site.keyword and found.keyword:
                return True
            if any(site.imported(word, module) for module in found.imported_from):
                return True
            if site.module_parents & found.imported_parents:
                return True
            if site.parents and self._chain_resolves(found.chains, site.parents):
                return True
        return False

    def _chain_resolves(self, chains: Set[Tuple[str, str, bool]], parents: Set[str]) -> bool:
        bound = self.bound()
        for head, parent, direct in chains:
            targets = bound.get(head)
            if targets is None:
                continue  # gate 2 resolves a chain only through an imported head
            if direct:  # ``head.word``: the head is bound to something named like P's last part
                if targets & parents:
                    return True
            elif parent in parents:  # ``head. ... .parent.word``
                return True
        return False


_ASCII_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def admitted(
    text: str,
    rules: Tuple["Rule", ...],
    hits: FrozenSet[str],
    tokens: Optional[Collection[str]] = None,
    then_all: bool = False,
) -> Tuple["Rule", ...]:
    """The rules among ``rules`` with a trigger word in ``hits`` written as one of their sites,
    and whose own :meth:`Rule.text_gate` agrees.  ``tokens``: the text's identifier-like tokens,
    when gate 1 has them.

    ``then_all``: once one rule is admitted, admit the others not read yet.  The file then goes to
    gate 2, which reads every rule's sites in CPython's tree at least as strictly as this gate
    (its over-approximation: ``tests/test_gates.py``), so gate 2's answer is the same either
    way, and reading the text for the others costs more than gate 2's set look-ups (on JAX's
    own sources, where every file imports ``jax._src``, most of a run's gate 1b).  The rules
    whose gate is cheap (the text-gated ones) are read first, those whose text gate is costly
    (:attr:`RuleGate.costly_text_gate`) last; the order given is kept."""
    gate = TextGate(text, hits, tokens)

    def admits(rule: "Rule") -> bool:
        return rule.text_gate(gate) and (  # the cheaper test first
            rule.text_gated  # its text_gate decides alone
            or gate.admits(rule.word_sites, rule.gate_words(gate, rule.trigger_words & hits))
        )

    if not then_all:
        return tuple(rule for rule in rules if admits(rule))
    refused = set()
    for rule in sorted(rules, key=lambda rule: (rule.costly_text_gate, not rule.text_gated)):
        if admits(rule):
            return tuple(rule for rule in rules if id(rule) not in refused)
        refused.add(id(rule))
    return ()
