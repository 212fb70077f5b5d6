"""What the active rules want, computed once per set of rules: the :class:`Plan` that gate 1
(trigger words in the text) and gate 2 (sites in CPython's ``ast``) consult, and the tables
that send each site of the LibCST tree to the rules that handle it.  Kept apart from the
engine because planning depends only on the rules, never on a file."""

from __future__ import annotations

import dataclasses
import functools
import re
from typing import (
    TYPE_CHECKING,
    Dict,
    FrozenSet,
    Optional,
    Sequence,
    Set,
    Tuple,
)

from jaxmigrate.migrator.handoff import keeping_modules
from jaxmigrate.migrator.rulegate import in_run_order
from jaxmigrate.migrator.textgate import admitted, under

if TYPE_CHECKING:  # pragma: no cover
    from jaxmigrate.migrator.astfacts import Facts
    from jaxmigrate.migrator.rule import Rule
    from jaxmigrate.migrator.scope import Interest

# LibCST's parser peaks at about 750 bytes of memory per source byte (bench/memory.py): bigger
# files (generated code) are refused (gate 1b does not read them either: they are refused).
MAX_PARSE_CHARS = 20 * 10**6

# Every trigger word is ASCII: a token of this pattern that equals one is that identifier (a
# non-ASCII letter next to it only splits the token, which can add hits, never lose one).
_ASCII_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# The same tokens of ASCII text, read in C: every character but a letter, a digit or ``_``
# becomes a blank and the text is split at the blanks; a run that starts with digits (``2e5``,
# ``0x1f``) then stands for the token the pattern finds in it, from its first letter on.
_NOT_WORD = str.maketrans({c: " " for c in map(chr, range(128)) if not (c.isalnum() or c == "_")})
_DIGITS = frozenset("0123456789")


_LAST_TOKENS: Tuple[Optional[str], FrozenSet[str]] = (None, frozenset())
# A bigger text's tokens are not kept: they would stay through gate 2's parse, the peak of
# such a file's memory.
KEEP_TOKENS_CHARS = 10**6


# The distinct tokens of texts read ahead (the survey's bounds read every file before the run
# reads it again: migrator.surveyorder), joined by NUL, by the text's length and hash: about a
# fifth of a byte a source byte, split again in a seventh of the time the tokens take to read.
_AHEAD: Dict[Tuple[int, int], str] = {}
_AHEAD_CHARS = [0]
AHEAD_LIMIT_CHARS = 32 * 10**6  # what is read ahead beyond this is read again


def identifier_tokens(text: str) -> FrozenSet[str]:
    """The distinct identifier-like tokens of ``text`` (:data:`_ASCII_IDENTIFIER`), kept for
    the last text asked: a file's docstrings are gated (``docgate.may_change``) on the very text
    its code was.  A text read ahead (:func:`read_ahead`) gives them without reading, once; in
    a survey that keeps what it reads for the run (:func:`migrator.handoff.keeping_modules`),
    until the run asks."""
    global _LAST_TOKENS
    last, tokens = _LAST_TOKENS
    if last is not text:
        packed = _AHEAD.get((len(text), hash(text))) if _AHEAD else None
        if packed is None:
            tokens = read_tokens(text)
        else:
            if not keeping_modules():  # (the survey's gate 1 leaves them for the run's)
                del _AHEAD[len(text), hash(text)]
                _AHEAD_CHARS[0] -= len(packed)
            tokens = frozenset(packed.split("\0")) if packed else frozenset()
        _LAST_TOKENS = (text, tokens) if len(text) <= KEEP_TOKENS_CHARS else (None, frozenset())
    return tokens


def read_tokens(text: str) -> FrozenSet[str]:
    """The distinct tokens :data:`_ASCII_IDENTIFIER` finds in ``text``, read from the text
    (a fifth faster on ASCII text: :data:`_NOT_WORD`)."""
    if not text.isascii():
        return frozenset(_ASCII_IDENTIFIER.findall(text))
    tokens = set(text.translate(_NOT_WORD).split())
    led = [token for token in tokens if token[0] in _DIGITS]
    if led:
        tokens.difference_update(led)
        tokens.update(word for word in (run.lstrip("0123456789") for run in led) if word)
    return frozenset(tokens)


def read_ahead(text: str, distinct: Set[str]) -> None:
    """Keep ``distinct``, the set of :func:`identifier_tokens` of ``text``, for the next time
    ``text`` is asked for (within :data:`AHEAD_LIMIT_CHARS`; not for a text whose tokens would
    not be kept as the last text's)."""
    if len(text) > KEEP_TOKENS_CHARS or _AHEAD_CHARS[0] > AHEAD_LIMIT_CHARS:
        return
    key = (len(text), hash(text))
    if key not in _AHEAD:
        packed = _AHEAD[key] = "\0".join(distinct)
        _AHEAD_CHARS[0] += len(packed)


def forget_ahead() -> None:
    """Drop what was read ahead (a new survey reads ahead again)."""
    _AHEAD.clear()
    _AHEAD_CHARS[0] = 0


def tokens_ahead(text: str) -> Optional[FrozenSet[str]]:
    """:func:`identifier_tokens` of ``text`` where they are kept (it was the last text asked,
    or it was read ahead), without using them up for the gate 1 that reads them next."""
    last, tokens = _LAST_TOKENS
    if last is text:
        return tokens
    packed = _AHEAD.get((len(text), hash(text))) if _AHEAD else None
    if packed is None:
        return None
    return frozenset(packed.split("\0")) if packed else frozenset()


def tokens_in_hand(text: str) -> Optional[FrozenSet[str]]:
    """:func:`identifier_tokens` of ``text`` if they are kept (it was the last text asked)."""
    last, tokens = _LAST_TOKENS
    return tokens if last is text else None


def keep_tokens(text: str, tokens: Optional[FrozenSet[str]]) -> None:
    """Keep ``tokens`` (:func:`tokens_in_hand` of ``text`` earlier) as the last text's again,
    once other texts were asked in between (a module's docstring programs)."""
    global _LAST_TOKENS
    if tokens is not None and len(text) <= KEEP_TOKENS_CHARS:
        _LAST_TOKENS = (text, tokens)


# -- planning: what the active rules want ----------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Plan:
    rules: Tuple[Rule, ...]
    words: Tuple[str, ...]
    masks: Tuple[Tuple[Rule, "re.Pattern[str]"], ...]  # rules with modern_spellings

    text_gated: Tuple[Rule, ...]  # rules gate 1 passes wherever "jax" occurs (Rule.text_gated)
    identifiers: FrozenSet[str]  # trigger words written as one identifier-like token
    substrings: Tuple[str, ...]  # other string-literal trigger words: searched as substrings

    # What the traversal and the clean-up read, made on first use (the gates need none of it).
    @functools.cached_property
    def by_name(self) -> "RulesBy":
        return RulesBy(self.rules, "names")

    @functools.cached_property
    def by_attribute(self) -> "RulesBy":
        return RulesBy(self.rules, "attributes")

    @functools.cached_property
    def by_keyword(self) -> "RulesBy":
        return RulesBy(self.rules, "keywords")

    @functools.cached_property
    def by_string(self) -> "RulesBy":
        return RulesBy(self.rules, "strings")

    @functools.cached_property
    def legacy_names(self) -> FrozenSet[str]:
        return frozenset().union(*(r.names for r in self.rules if r.names_are_legacy))

    @functools.cached_property
    def legacy_modules(self) -> FrozenSet[str]:
        """Imports under these modules are removed when unused: only rules whose names are
        legacy."""
        return frozenset().union(*(r.legacy_modules for r in self.rules if r.names_are_legacy))

    @functools.cached_property
    def interest(self) -> Interest:
        """What the traversal looks for (imported with LibCST, when a file is parsed)."""
        from jaxmigrate.migrator.scope import Interest

        rules = self.rules
        return Interest(
            frozenset().union(*(r.names for r in rules)),
            frozenset().union(*(r.attributes for r in rules)),
            frozenset().union(*(r.keywords for r in rules)),
            frozenset().union(*(r.strings for r in rules)),
        )

    def candidates(self, text: str) -> Tuple[Rule, ...]:
        """Gates 1 and 1b: the rules whose trigger words ``text`` writes as one of their sites
        (gate 1b only reads a text the engine parses: not over :data:`MAX_PARSE_CHARS`).  Once
        one rule passes, gate 2 reads the file anyway: the rules not read yet pass unread
        (:func:`migrator.textgate.admitted`; :meth:`every_candidate` reads them all)."""
        return self._candidates(text, then_all=True)

    def every_candidate(self, text: str) -> Tuple[Rule, ...]:
        """:meth:`candidates`, each rule read by gate 1b (where gate 2 has no tree to read)."""
        return self._candidates(text, then_all=False)

    def _candidates(self, text: str, then_all: bool) -> Tuple[Rule, ...]:
        candidates, hits, tokens = self.prefilter_tokens(text)
        if candidates and len(text) <= MAX_PARSE_CHARS:  # gate 1b: written as a site?
            candidates = admitted(text, candidates, hits, tokens, then_all=then_all)
        return candidates

    def prefilter(self, text: str) -> Tuple[Rule, ...]:
        """The rules whose trigger words occur in ``text`` outside their modern spellings."""
        return self.prefilter_hits(text)[0]

    def prefilter_hits(self, text: str) -> Tuple[Tuple[Rule, ...], FrozenSet[str]]:
        """Gate 1: the rules whose trigger words occur in ``text`` outside their modern
        spellings, and the trigger words that occur.

        A name, attribute or keyword is only written as a whole identifier, so those words are
        looked up among the text's identifier-like tokens (one regex pass, and ``tree_map``
        no longer matches ``tree_map_with_path``); other string values are searched as
        substrings."""
        return self.prefilter_tokens(text)[:2]

    def prefilter_tokens(
        self, text: str
    ) -> Tuple[Tuple[Rule, ...], FrozenSet[str], FrozenSet[str]]:
        """:meth:`prefilter_hits`, and the text's identifier-like tokens (gate 1b reuses them)."""
        tokens = identifier_tokens(text)
        hits = set(self.identifiers.intersection(tokens))
        for word in self.substrings:
            if word in text:
                hits.add(word)
        text_gated = self.text_gated if "jax" in text else ()
        if not hits and not text_gated:
            return (), frozenset(), tokens
        rules = [rule for rule in self.rules if rule.trigger_words & hits or rule in text_gated]
        if "jax" not in text:
            rules = [rule for rule in rules if not rule.needs_jax_import]
        for rule, mask in self.masks:
            if rule in rules:
                masked = mask.sub("", text)
                if not any(word in masked for word in rule.trigger_words & hits):
                    rules.remove(rule)
        return tuple(rules), frozenset(hits), tokens

    def may_pass_parts(self, text: str, extra: FrozenSet[str], jax: bool) -> bool:
        """Gate 1 for every program made of parts of ``text`` (a docstring's examples, run
        with the module's imports): False when no rule could pass gate 1 on any of them.

        ``extra``: identifiers the program may add (import statements); ``jax``: whether JAX
        can be named in it (a program's segment markers spell ``jax``, JAX itself is not
        there).  Over-approximates gate 1 (no modern-spelling masks); a string trigger word
        is looked for in ``text`` itself, so one spanning a line break counts always."""
        if any("\n" in word or "\r" in word for word in self.substrings):
            return True
        hits = set(self.identifiers.intersection(identifier_tokens(text)))
        hits.update(self.identifiers & extra)
        hits.update(word for word in self.substrings if word in text)
        return any(
            (rule.text_gated and jax or not rule.trigger_words.isdisjoint(hits))
            and (jax or not rule.needs_jax_import)
            for rule in self.rules
        )

    @staticmethod
    def has_site(rule: Rule, facts: Facts) -> bool:
        """One of the rule's names, attributes, keywords, strings or legacy modules occurs (a
        text-gated rule's :meth:`Rule.ast_gate` says that itself)."""
        return bool(
            rule.text_gated
            or rule.names & facts.names
            or rule.attributes & facts.attributes
            or rule.keywords & facts.keywords
            or rule.strings & facts.strings
            or rule.annotation_words & facts.annotation_words
            or not rule.legacy_modules.isdisjoint(_import_prefixes(facts))
        )

    def wanted_by(self, rule: Rule, facts: Facts) -> bool:
        """Gate 2 for one rule: one of its sites occurs and its own ``ast_gate`` agrees."""
        return self.has_site(rule, facts) and rule.ast_gate(facts)

    def owner(self, qualname: str) -> Optional[str]:
        """The rule a legacy import is removed under (rules whose names are legacy only)."""
        for rule in self.rules:
            if rule.names_are_legacy and (
                qualname in rule.names or under(qualname, rule.legacy_modules)
            ):
                return rule.code
        return None


def _import_prefixes(facts: Facts) -> FrozenSet[str]:
    """Every import of ``facts`` and each of its dotted prefixes (a module ``under`` which an
    import is one of them), once per file."""
    found = facts.derived.get("import prefixes")
    if found is None:
        prefixes = set(facts.imports)
        for qualname in facts.imports:
            end = qualname.rfind(".")
            while end > 0:
                prefixes.add(qualname[:end])
                end = qualname.rfind(".", 0, end)
        found = facts.derived["import prefixes"] = frozenset(prefixes)
    return found


class RulesBy:
    """The rules (in run order) whose ``field`` (``names``, ``attributes``, ...) holds a key,
    found for each key the traversal asks about.  A plan is made for each set of candidates a
    file leaves, and an index of every key of every rule (JAX901 and JAX907 have thousands)
    cost more than a file's look-ups: 0.8 s over the legacy corpus."""

    def __init__(self, rules: Sequence[Rule], field: str) -> None:
        self._keys = [(rule, getattr(rule, field)) for rule in rules]
        self._found: Dict[object, Tuple[Rule, ...]] = {}

    def get(self, key: object, default: Tuple[Rule, ...] = ()) -> Tuple[Rule, ...]:
        found = self._found.get(key)
        if found is None:
            found = self._found[key] = tuple(rule for rule, keys in self._keys if key in keys)
        return found or default

    def __getitem__(self, key: object) -> Tuple[Rule, ...]:
        found = self.get(key)
        if not found:
            raise KeyError(key)
        return found


@functools.lru_cache(maxsize=64)
def make_plan(rules: Tuple[Rule, ...]) -> Plan:
    rules = in_run_order(rules)  # code order, but after the rules each declares it runs after
    words = frozenset().union(*(r.trigger_words for r in rules))
    masks = tuple(
        (rule, re.compile("|".join(f"(?:{p})" for p in rule.modern_spellings)))
        for rule in rules
        if rule.modern_spellings
    )
    # A string site's value is exact, so a value shaped like an identifier is written between
    # quotes as that very token: it is looked up with the identifiers (one set lookup per
    # token), not searched for as a substring (one scan of the text per value).
    string_words = frozenset(
        word for r in rules for word in r.strings if not _ASCII_IDENTIFIER.fullmatch(word)
    )
    return Plan(
        text_gated=tuple(rule for rule in rules if rule.text_gated),
        identifiers=frozenset(words - string_words),
        substrings=tuple(sorted(string_words)),
        rules=rules,
        words=tuple(sorted(words)),
        masks=masks,
    )
