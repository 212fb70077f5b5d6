"""A bound of a text's floor (:func:`migrator.source.floor_of`) read from its words, without
parsing it.

Every JAX name the floor counts is spelled in the text part by part, so the newest name JAX
added all of whose parts are words of the text is at least as new as the floor
(:func:`floor_bound`), and the imports tell which of those names the text can reference at all
(:func:`imported_prefixes`, :func:`may_name_from`).  The default target's survey
(:mod:`migrator.target`) reads these first, and parses only the files whose floor may decide.
The names and the releases that added them come from ``rules/_api_runs.py``'s table of the
history, read on first use.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from typing import (
    AbstractSet,
    Collection,
    Dict,
    FrozenSet,
    Iterable,
    Iterator,
    List,
    Optional,
    Set,
    Tuple,
)

from jaxmigrate.migrator.source import release_version
from jaxmigrate.migrator.version import Version

_WORD = re.compile(r"\w+")


def floor_bound(text: str, tokens: Optional[Collection[str]] = None) -> Optional[Version]:
    """A version no older than :func:`migrator.source.floor_of` ``text``'s, read from the words
    of the text without parsing it (None: no name newer than the oldest release can be
    referenced).

    Every name the floor counts is spelled in the text part by part: the import that binds
    its head spells the module's parts, the attribute chain or ``from`` import the rest.  So
    the newest name added to JAX whose parts are all words of the text (in code, strings or
    comments alike) is at least as new as the newest one the text references.  Identifiers
    are read as Python reads them (NFKC), so a non-ASCII spelling is no way round it.

    ``tokens``: the identifier-like tokens gate 1 read in ``text``, if it has them (they stand
    for its words in an ASCII text: every word a name can be made of is one of them, and a
    word that starts with a digit only adds tokens, which can only raise the bound)."""
    last = _bounded.entry
    if last is not None and last[0] is text and last[1] is tokens:
        return last[2]  # (the runner asks before the survey does, of the same text)
    bound = _bound(text, tokens)
    _bounded.entry = (text, tokens, bound)
    return bound


class _bounded:
    """The last text :func:`floor_bound` read, the tokens it was given, and the bound."""

    entry: Optional[Tuple[str, Optional[Collection[str]], Optional[Version]]] = None


def _bound(text: str, tokens: Optional[Collection[str]]) -> Optional[Version]:
    return bound_of_words(words_of(text, tokens), imported_prefixes(text))


def may_name_from(text: str, version: Version, tokens: Optional[Collection[str]] = None) -> bool:
    """Can :func:`migrator.source.floor_of` ``text`` be ``version`` or newer?  False only where
    no JAX name that new below what the imports bind (:func:`imported_prefixes`) is spelled as
    the imports or a chain through a name they bind (:func:`migrator.textscan.spells_chain`); a
    cheap reading before a parse (:func:`migrator.target.settle_floors`).  ``tokens``: gate 1's
    identifier-like tokens of ``text``, if in hand (:func:`words_of`)."""
    from jaxmigrate.migrator.textscan import import_targets, spells_chain

    under = imported_prefixes(text)
    if under is None:
        return True
    aliases = import_targets(text)
    for added, qualname in _dated_names(words_of(text, tokens), under):
        if added < version:
            continue
        if qualname in under or any(
            spells_chain(text, alias, qualname[len(target) + 1 :])
            for alias, targets in aliases.items()
            for target in targets
            if qualname.startswith(target + ".")
        ):
            return True
    return False


def imported_prefixes(text: str) -> Optional[FrozenSet[str]]:
    """The qualified names the import statements of ``text`` may bind, and the modules a plain
    import names, read from the text (:func:`migrator.textscan.import_targets`): every name
    :func:`migrator.source.jax_references` counts is one of them or a member below one, since
    it resolves a chain only through an absolute import.  None where the text cannot tell: a
    ``from`` import whose module it does not tell, or a text that is not ASCII (an import may
    spell a name in other characters, which Python folds to the ASCII one)."""
    from jaxmigrate.migrator.textscan import UNTOLD, import_targets, imported_items

    if not text.isascii():
        return None
    found: Set[str] = set()
    for targets in import_targets(text).values():
        if UNTOLD in targets:
            return None
        found.update(targets)
    found.update(dotted for module, _, dotted, _ in imported_items(text) if module == "")
    return frozenset(found)


def words_of(text: str, tokens: Optional[Collection[str]] = None) -> Set[str]:
    """The words of ``text`` a name can be made of, as Python reads identifiers (NFKC).
    ``tokens``: gate 1's identifier-like tokens of ``text``, if in hand (:func:`floor_bound`):
    they stand for its ASCII words, so only the words around its other characters are read
    (a token cut from such a word, ``x`` of ``xé``, only adds a word, as one that starts
    with a digit does)."""
    if tokens is not None:
        words = set(tokens)
        if not text.isascii():
            words |= _words_beyond_ascii(text)
        return words
    words = set(_WORD.findall(text))
    if not text.isascii():
        normalize = unicodedata.normalize
        words = {word if word.isascii() else normalize("NFKC", word) for word in words}
    return words


_BEYOND_ASCII = re.compile(r"[^\x00-\x7f]+")


def _words_beyond_ascii(text: str) -> Set[str]:
    """The words of ``text`` that hold a character outside ASCII, as Python reads them (NFKC):
    the whole word around each run of such characters (most are in comments and strings)."""
    found: Set[str] = set()
    normalize, size, done = unicodedata.normalize, len(text), 0
    for run in _BEYOND_ASCII.finditer(text):
        start, end = run.span()
        if end <= done:
            continue  # (inside the words read last; a run that goes on past them is read)
        while start > 0 and (text[start - 1].isalnum() or text[start - 1] == "_"):
            start -= 1
        while end < size and (text[end].isalnum() or text[end] == "_"):
            end += 1
        for word in _WORD.findall(text, start, end):
            found.add(word if word.isascii() else normalize("NFKC", word))
        done = end
    return found


def bound_of_words(words: Set[str], under: Optional[FrozenSet[str]] = None) -> Optional[Version]:
    """The release that added the newest JAX name all of whose parts are among ``words``
    (None: no such name newer than the oldest release); ``under``: only the names that are
    one of these qualified names or below one (:func:`imported_prefixes`)."""
    return max((version for version, _name in _dated_names(words, under)), default=None)


def bound_of_names(
    words: Set[str],
    names: AbstractSet[str],
    written: AbstractSet[str],
    tails: AbstractSet[Tuple[str, ...]],
) -> Optional[Version]:
    """:func:`bound_of_words`, counting only the names that are among ``names``, or whose
    parts are words of ``written`` up to some part and one of ``tails`` from there on (or all
    of them written): a name a fix writes, or writes the head of before a chain's rest."""
    found = None
    for version, qualname in _dated_names(words, None):
        if found is not None and version <= found:
            continue
        if qualname in names:
            found = version
            continue
        parts = qualname.split(".")
        for cut in range(1, len(parts) + 1):
            if parts[cut - 1] not in written:
                break
            if cut == len(parts) or tuple(parts[cut:]) in tails:
                found = version
                break
    return found


def modules_named(last: str, words: AbstractSet[str]) -> List[str]:
    """The modules the API history dates names of whose last part is ``last`` and all of whose
    parts are among ``words``."""
    return [module for module, parts in _modules_by_last_part().get(last, ()) if parts <= words]


def _dated_names(words: Set[str], under: Optional[FrozenSet[str]]) -> Iterator[Tuple[Version, str]]:
    """(the release that added it, its qualified name) of each name :func:`bound_of_words`
    counts."""
    for module in _modules_within(words):
        added = _added_in(module)
        names: Iterable[str] = words & _names_added_in(module)  # (the smaller set is read)
        if under is not None and not below(module, under):
            names = [name for name in names if f"{module}.{name}" in under]
        for name in names:
            yield added[name], f"{module}.{name}"


def below(qualname: str, prefixes: FrozenSet[str]) -> bool:
    """Is ``qualname`` one of ``prefixes``, or below one?"""
    end = len(qualname)
    while end > 0:
        if qualname[:end] in prefixes:
            return True
        end = qualname.rfind(".", 0, end)
    return False


@functools.lru_cache(maxsize=1)
def _modules_by_last_part() -> Dict[str, List[Tuple[str, FrozenSet[str]]]]:
    """Every module the API history dates names of, with its parts, by its last part."""
    from jaxmigrate.rules._api_runs import modules

    table: Dict[str, List[Tuple[str, FrozenSet[str]]]] = {}
    for module in modules():
        parts = frozenset(module.split("."))
        table.setdefault(module.rpartition(".")[2], []).append((module, parts))
    return table


@functools.lru_cache(maxsize=1)
def _last_parts() -> FrozenSet[str]:
    return frozenset(_modules_by_last_part())


def _modules_within(words: Set[str]) -> Iterator[str]:
    """The modules all of whose parts are among ``words`` (the only ones whose names a text of
    these words can reference)."""
    table = _modules_by_last_part()
    for last in words & _last_parts():  # (the smaller set is read)
        for module, parts in table[last]:
            if parts <= words:
                yield module


@functools.cache
def _names_added_in(module: str) -> FrozenSet[str]:
    return frozenset(_added_in(module))


@functools.cache
def _added_in(module: str) -> Dict[str, Version]:
    """The names of ``module`` whose run of releases reaching the newest starts after the oldest
    (the names :func:`migrator.source.evidence` dates), with the release that run starts at."""
    from jaxmigrate.migrator.rule_index import releases
    from jaxmigrate.rules._api_runs import runs_of

    known = releases()
    newest = len(known) - 1
    return {
        name: release_version(known[first])
        for name, (first, last) in runs_of(module)
        if last == newest and first > 0
    }
