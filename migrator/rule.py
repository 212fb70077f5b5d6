"""The rule framework: what a rule declares and how it is registered.

A rule is a subclass of :class:`Rule` in a module of the ``rules`` package.  Defining the
class registers it; the package imports all its modules, so adding a rule touches nothing
else.  A rule never opens files, prints or parses arguments: it receives the sites it asked
for through :class:`migrator.context.Context` and records fixes and findings there.
"""

from __future__ import annotations

import bisect
import dataclasses
import functools
import inspect
import itertools
import re
import textwrap
from typing import (
    TYPE_CHECKING,
    AbstractSet,
    ClassVar,
    Dict,
    FrozenSet,
    Iterable,
    List,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    Union,
)

from jaxmigrate.migrator.diagnostics import Safety
from jaxmigrate.migrator.references import Reference, release_notes
from jaxmigrate.migrator.rulegate import RuleGate, in_run_order
from jaxmigrate.migrator.version import Version, parse_version

if TYPE_CHECKING:  # pragma: no cover
    import libcst as cst

    from jaxmigrate.migrator.astfacts import Facts
    from jaxmigrate.migrator.astfixes import AstEdit
    from jaxmigrate.migrator.astview import AstView
    from jaxmigrate.migrator.context import Context, NameSite
    from jaxmigrate.migrator.diagnostics import Diagnostic
    from jaxmigrate.migrator.source import SourceRange


@dataclasses.dataclass(frozen=True)
class Example:
    """A before/after pair: shown by ``jaxmigrate explain`` and checked by the tests."""

    before: str
    after: str
    title: str = ""
    target_version: Optional[str] = None
    unsafe_fixes: bool = False
    source_version: Optional[str] = None  # the JAX the example's code was written for

    def __post_init__(self) -> None:
        object.__setattr__(self, "before", textwrap.dedent(self.before).lstrip("\n"))
        object.__setattr__(self, "after", textwrap.dedent(self.after).lstrip("\n"))

    @classmethod
    def reported(
        cls,
        code: str,
        title: str = "",
        target_version: Optional[str] = None,
        source_version: Optional[str] = None,
    ) -> "Example":
        """Code the rule reports and leaves as it is: ``before`` and ``after`` are ``code``."""
        return cls(code, code, title, target_version, source_version=source_version)


# A version with what its release notes say about the change, ``("0.4.22", "x deprecated")``,
# and the package when it is not jax: ``("0.4.1", "y removed", "jaxlib")``.
Note = Tuple[str, ...]


@dataclasses.dataclass(frozen=True)
class Lifecycle:
    """When JAX changed what a rule migrates, in one place.

    ``needs``: the oldest JAX on which the replacement works; below it the rule does not run
    (None: it runs for every target).  ``deprecated`` / ``removed``: the releases that
    deprecated and removed the legacy spelling.  Each of the three is a version or a
    :data:`Note`, a version with the words its release notes are cited under: those citations
    come first among the rule's ``references``, so the version is written once, next to its
    source.
    ``tests/test_references.py`` checks that the references cite every version.  Where the
    gate is the release that added the spelling a rule writes, the rule takes it from the API
    history (``rules._api_history.added_in``).
    """

    needs: Union[str, Note, None] = None
    deprecated: Union[str, Note, None] = None
    removed: Union[str, Note, None] = None

    def versions(self) -> Tuple[Optional[str], Optional[str], Optional[str]]:
        """``needs``, ``deprecated`` and ``removed`` as versions."""
        return _version(self.needs), _version(self.deprecated), _version(self.removed)

    def notes(self) -> Tuple[Reference, ...]:
        """The release notes the :data:`Note` fields cite, in order."""
        changes = (self.needs, self.deprecated, self.removed)
        return tuple(release_notes(*c) for c in changes if isinstance(c, tuple))


def _version(change: Union[str, Note, None]) -> Optional[str]:
    return change[0] if isinstance(change, tuple) else change


def _kebab(class_name: str) -> str:
    """``DevicePutSharded`` -> ``device-put-sharded`` (``EnableX64`` -> ``enable-x64``)."""
    return _WORD_BREAK.sub("-", class_name).lower()


def _summary_and_doc(docstring: str) -> Tuple[str, str]:
    """A rule's docstring as its summary (the first paragraph, on one line) and its doc (the
    rest, dedented)."""
    summary, _, doc = inspect.cleandoc(docstring).partition("\n\n")
    return " ".join(summary.split()), doc.strip()


_WORD_BREAK = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_CODE_RE = re.compile(r"^JAX\d{3}$")
_ASCII_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NAME_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")

__all__ = [
    "REGISTRY",
    "Example",
    "Lifecycle",
    "Note",
    "Owners",
    "Rule",
    "Safety",
    "all_rules",
    "in_run_order",
    "owners",
]  # Safety: rules import it from here

REGISTRY: Dict[str, "Rule"] = {}


class Rule(RuleGate):
    """Base class of every rule.

    A rule states who it is on its class line and documents itself in its docstring::

        class ToPy(Rule, code="JAX406", safety=Safety.SAFE):
            '''x.to_py() -> np.asarray(x)

            **What it does.** ...
            '''

    ``code`` is its ``JAXnnn`` code; ``name``, the one users select, is the class name in
    kebab-case unless given (``name="..."``); ``safety`` is how far its fixes can be trusted.
    The docstring's first paragraph is the rule's one-line ``summary`` (``jaxmigrate rules``,
    SARIF's short description), the rest its Markdown ``doc`` (what it does, why, what to use
    instead: ``jaxmigrate explain``).  A class without ``code`` is a helper base, not a rule.
    Subclasses set the other class attributes below, and those the gates read (its sites,
    declared in :class:`migrator.rulegate.RuleGate`), and override hooks.
    """

    name: ClassVar[str]
    summary: ClassVar[str]
    safety: ClassVar[Safety]
    lifecycle: ClassVar[Lifecycle] = Lifecycle()
    # The versions of ``lifecycle``, as the engine, ``explain`` and the reports read them (set
    # from it when the class is made; a rule declares ``lifecycle``, never these).
    needs_jax: ClassVar[Optional[str]] = None
    deprecated_in: ClassVar[Optional[str]] = None
    removed_in: ClassVar[Optional[str]] = None
    # The public sources of the rule's facts: the release notes of ``deprecated_in`` and
    # ``removed_in`` (or, where no changelog entry records the change, JAX's source at that
    # release), the guide section that gives the replacement, the API page of what to use.
    # ``explain``, the reports, JSON and SARIF all show these.
    references: ClassVar[Tuple[Reference, ...]] = ()
    doc: ClassVar[str] = ""  # from the docstring: Markdown, what it does, why, what to use
    examples: ClassVar[Tuple[Example, ...]] = ()

    # Names that are the same object as a name the rule writes, on every release the rule
    # runs for (``jax.numpy.ndarray`` is ``jax.Array``): where a fix leaves both in one
    # ``Union`` or ``isinstance`` tuple, the engine's tidying keeps one (:mod:`migrator.tidy`).
    same_types: ClassVar[Dict[str, str]] = {}

    def __init_subclass__(
        cls,
        code: Optional[str] = None,
        safety: Optional[Safety] = None,
        name: Optional[str] = None,
        **kwargs: object,
    ) -> None:
        super().__init_subclass__(**kwargs)
        life = cls.lifecycle
        cls.needs_jax, cls.deprecated_in, cls.removed_in = life.versions()
        notes = life.notes()
        if notes:  # cited first, once (a subclass may inherit them already in place)
            cls.references = (*notes, *(r for r in cls.references if r not in notes))
        if code is None:  # a helper base, not a rule
            return
        if safety is None and not hasattr(cls, "safety"):  # a family's base may give it
            raise ValueError(f"rule {code} must state its safety on its class line")
        cls.code, cls.safety = code, safety or cls.safety
        cls.name = name or _kebab(cls.__name__)
        cls.summary, cls.doc = _summary_and_doc(cls.__doc__ or "")
        if not cls.summary:
            raise ValueError(f"rule {code} must document itself in its docstring")
        if not _CODE_RE.match(cls.code):
            raise ValueError(f"rule code {cls.code!r} must look like JAX123")
        if not _NAME_RE.match(cls.name):
            raise ValueError(f"rule name {cls.name!r} must be kebab-case")
        if cls.code in REGISTRY:
            raise ValueError(f"rule code {cls.code} registered twice")
        if cls.name in {rule.name for rule in REGISTRY.values()}:
            raise ValueError(f"rule name {cls.name} registered twice")
        for word in cls.trigger_words.func(cls) - cls.strings:  # type: ignore[attr-defined]
            if not _ASCII_IDENTIFIER.fullmatch(word):  # the prefilter's tokens are ASCII
                raise ValueError(f"rule {cls.code}: {word!r} is not an ASCII identifier")
        if "needs_jax_import" not in cls.__dict__:
            declared = (*cls.names, *cls.legacy_modules)
            cls.needs_jax_import = not cls.strings and all(
                n == "jax" or n.startswith(("jax.", "jaxlib")) for n in declared
            )
        REGISTRY[cls.code] = cls()

    # An opt-in rule rewrites code that works on every JAX (a modernisation, not a migration):
    # it runs only when ``select`` names its code exactly, never through a prefix or ALL.
    opt_in: ClassVar[bool] = False

    # A backstop rule speaks only where no other rule does: the engine drops its findings on
    # lines where another rule has a finding (see :func:`migrator.rounds.run_rounds`).
    backstop: ClassVar[bool] = False

    # The codes of the rules whose fixes may write a site of this rule that the file did not
    # spell (JAX604 writes the ``jax.make_mesh`` call JAX608 completes): the survey's reach
    # counts this rule's needs wherever one of those may fix (``with_follow_ups``; the
    # fixtures check that every rule that fixes is a candidate or follows one).
    follows: ClassVar[FrozenSet[str]] = frozenset()

    # Names outside JAX's public API history that the rule's fixes write, with the first
    # release that has each: the default target's survey reads them for the floor
    # (:func:`migrator.source.evidence`).
    writes_since: ClassVar[Mapping[str, str]] = {}

    # Every fix the rule records is UNSAFE (or it records none): without --unsafe-fixes it only
    # reports.  :meth:`migrator.context.Context.replace` holds it to that; the default
    # target's survey, which reads only fixes, skips such a rule there.
    unsafe_fixes_only: ClassVar[bool] = False

    # The newest JAX one of the rule's fixes may need beyond ``needs_jax`` (a replacement
    # that exists only from some release says so itself: ``Context.replace``'s ``needs``;
    # the default target's survey reads it).  :meth:`fix_needs_in` narrows it per file.
    fix_needs: ClassVar[Optional[str]] = None

    # The rule's hooks may read more of the module than their sites and the module-level names
    # those resolve to (every call, def or name of the module, ``report_once``, names that
    # must not clash, the file's whole text).  On a big file the engine gives LibCST only the
    # statements that may change (:mod:`migrator.piecewise`): such a rule, if the gates pass
    # it or any of its hooks runs there, sends the file back to the whole-module path.  True
    # until a rule's hooks are shown to read only that, or to ask first where they read more
    # (``Context.needs_name`` for a name's bindings and uses, ``Context.needs_whole_module``):
    # ``tests/test_piecewise.py`` compares both paths on every fixture.
    whole_module: ClassVar[bool] = True
    # A rule that reads the whole module only past a point where its hooks ask for it
    # (``Context.needs_whole_module``): when the gates pass it the file still takes the
    # whole-module path (its hooks would ask), but a hook a later round calls on a reduced
    # module runs there, and the file stays piecewise unless it asks.
    asks_for_whole: ClassVar[bool] = False

    # The rule reports once per file (its first site, with the count of the others): the
    # programs of a file's docstrings add no finding of it where the file, or an earlier
    # docstring, has one (:func:`migrator.runner.once_per_file`).
    once_per_file: ClassVar[bool] = False
    # ... and once per project: at the first file of a run's project that has it, with how many
    # others do (a behaviour the whole program meets at once: :mod:`migrator.perproject`)
    once_per_project: ClassVar[bool] = False

    # -- version gating -------------------------------------------------------------------
    def runs_on(self, target: Version) -> bool:
        return self.needs_jax is None or parse_version(self.needs_jax) <= target

    def runs_for(self, source: "SourceRange") -> bool:
        """Does the rule run for code written for ``source`` (``--source-version``, else the
        project's requirement)?  Every rule does, but one that acts only on code the user or
        the project says is older than a change (and so stays out of the gates of all other
        code)."""
        return True

    def for_source(self, source: "SourceRange") -> "Rule":
        """The rule as it runs for code written for ``source`` (one it :meth:`runs_for`; open
        above for a requirement such as ``jax>=0.4.30``): itself, unless what it acts on
        depends on what the source leaves open (a copy that then asks a file's own names)."""
        return self

    def for_target(
        self,
        target: Version,
        set_aside: FrozenSet[str] = frozenset(),
        upper: Optional[Version] = None,
    ) -> "Rule":
        """The rule as it runs for the range ``target``..``upper`` (None: the newest JAX):
        itself, unless what it looks for depends on the target range (a rule driven by the
        API history returns a copy with its ``names`` for that range).  ``set_aside``: the names
        of the rules the user switched off with ``select``/``ignore``, which a backstop leaves
        alone too.  Subclasses override :meth:`for_range`."""
        return self.for_range(target, upper, set_aside)

    def for_range(self, low: Version, high: Optional[Version], aside: FrozenSet[str]) -> "Rule":
        """:meth:`for_target` with every argument given (all hashable: a subclass may cache its
        copies by them): the rule itself unless overridden."""
        return self

    def for_survey(
        self, low: Version, high: Optional[Version], unsafe_fixes: bool
    ) -> Optional["Rule"]:
        """The rule as the default target's survey runs it (after :meth:`for_target`), where
        only fixes count (they and the migrated text set the floor; findings are never
        read): itself, unless it can leave out sites where it never fixes (a report-only
        backstop returns a copy looking only for the names it may rewrite).  The survey must
        give every file the same output and floor (``tests/test_survey.py``).

        None: the survey runs without the rule, because nothing it could do there moves the
        floor past the first jax.Array release, the lowest any default target starts at
        (:func:`migrator.target.dated_no_later_than_array_floor`): every name it writes for
        ``low`` and every name it rewrites is that old or gone from the newest JAX, its
        fixes need no newer JAX, and no other rule acts on what it writes.  Only the floor
        must then stay the same (``tests/test_survey.py``): the survey's output is not
        written, and the run applies the rule as always."""
        return self

    def fix_needs_in(self, words: AbstractSet[str]) -> Optional[str]:
        """The newest JAX a fix of the rule may need beyond ``needs_jax`` in a file of
        ``words`` (at most :attr:`fix_needs`; None: nothing more), for the bounds of the
        default target's survey (:func:`migrator.target.survey_reach`)."""
        return self.fix_needs

    def survey_writes(self, words: AbstractSet[str]) -> FrozenSet[str]:
        """The words of the JAX names the rule's fixes may write in the default target's
        survey, in a file of ``words``, beyond what the survey's lower bound and ``needs_jax``
        have (:func:`migrator.target.survey_reach`): a rule that writes from a table whatever
        release added the replacement (a rename) gives the words of those it may write there.
        The default: the words of :attr:`writes_since` (the rule's other names exist where
        its version gate lets it run: ``tests/test_emitted_names.py``)."""
        return frozenset(word for name in self.writes_since for word in name.split("."))

    # -- hooks, called by the engine ------------------------------------------------------
    def ast_gate(self, facts: "Facts") -> bool:
        """Gate 2, refined: False only when the rule certainly does nothing in a module with
        these ``ast`` facts (one of its sites does occur), so LibCST never parses it for this
        rule.  Speed only, and checked: ``tests/test_gates.py`` runs every fixture with the
        gates bypassed and fails if a rule acts where its gate said False."""
        return True

    def ast_findings(self, view: "AstView") -> Optional[List["Diagnostic"]]:
        """What the rule reports in the file, read from CPython's ``ast`` alone
        (:class:`migrator.astview.AstView`), when it is sure that is what its LibCST hooks
        would report and that it has no fix to make there; None otherwise (the default: LibCST
        decides).  When every rule left after gate 2 answers, LibCST never parses the file;
        ``tests/test_gate_equivalence.py`` checks the answers against the LibCST path."""
        return None

    def ast_edits(self, view: "AstView") -> Optional[List["AstEdit"]]:
        """Where :meth:`ast_findings` cannot answer because the rule has fixes in the file:
        those fixes, read from the view, when each replaces one node's text and is what its
        LibCST hooks would write there (no import to add or drop); None otherwise (the
        default).  The engine writes them only where the LibCST path would give the same
        output, fixes and findings (:mod:`migrator.astfixes`)."""
        return None

    def view_words(self, facts: "Facts") -> Optional[FrozenSet[str]]:
        """What :meth:`ast_findings` reads of the tree, as words: the view may leave out a
        statement that spells none of them and does not import (not even in a string or a
        comment), and still give this rule the same answer.  None (the default): every
        statement.  ``tests/test_astview.py`` checks the answers either way."""
        return None

    def visit_name(self, site: "NameSite", ctx: "Context") -> None:
        """A reference (or ``from`` import) of one of :attr:`names`."""

    def visit_attribute(self, node: "cst.Attribute", ctx: "Context") -> None:
        """An attribute access ``<expr>.attr`` with ``attr`` in :attr:`attributes`."""

    def visit_keyword(self, arg: "cst.Arg", call: "cst.Call", ctx: "Context") -> None:
        """A call keyword argument named in :attr:`keywords`."""

    def visit_string(self, node: "cst.SimpleString", ctx: "Context") -> None:
        """A plain string literal whose value is in :attr:`strings`."""

    def visit_module(self, ctx: "Context") -> None:
        """Called once per file after the sites, for rules that look at the whole module."""

    # -- helpers --------------------------------------------------------------------------
    @property
    def slug(self) -> str:
        return f"{self.code}-{self.name}"


class Owners:
    """Which registered rules declare each qualified name in their ``names``: the one place a
    rule learns that another rule handles a name (so that it stays out of the way), without
    reading the registry or importing the other rule."""

    def __init__(self, rules: Iterable[Rule]) -> None:
        by_name: Dict[str, List[str]] = {}
        for rule in sorted(rules, key=lambda r: r.code):
            for name in rule.names:
                by_name.setdefault(name, []).append(rule.code)
        self._by_name = {name: tuple(codes) for name, codes in by_name.items()}
        self._sorted = sorted(self._by_name)

    def owner(self, qualname: str, besides: str = "") -> Optional[str]:
        """The code of a rule (the lowest, if several) declaring ``qualname``, other than the
        rule ``besides``; None when no such rule does."""
        return next((code for code in self._by_name.get(qualname, ()) if code != besides), None)

    def owns_under(self, prefix: str, besides: str = "") -> bool:
        """True when a rule other than ``besides`` declares a name inside ``prefix``
        (``prefix.something``): the module or class ``prefix`` is partly another rule's."""
        start = prefix + "."
        at = bisect.bisect_left(self._sorted, start)
        for name in itertools.takewhile(lambda n: n.startswith(start), self._sorted[at:]):
            if self.owner(name, besides) is not None:
                return True
        return False

    def names(self, besides: str = "") -> FrozenSet[str]:
        """Every name some rule other than ``besides`` declares."""
        return frozenset(name for name in self._by_name if self.owner(name, besides) is not None)


def owners() -> Owners:
    """The index over the registry as it is now (built once per set of registered rules)."""
    from jaxmigrate import rules

    rules.load()  # (importing them registers the rules)
    return _owners(tuple(REGISTRY))


@functools.lru_cache(maxsize=4)
def _owners(codes: Tuple[str, ...]) -> Owners:
    return Owners(REGISTRY[code] for code in codes)


def all_rules() -> Dict[str, Rule]:
    """Every registered rule, by code (imports the rule modules on first use)."""
    from jaxmigrate import rules

    rules.load()  # (importing them registers the rules)

    return dict(sorted(REGISTRY.items()))


def with_follow_ups(rules: Sequence["Rule"], active: Iterable["Rule"]) -> Tuple["Rule", ...]:
    """``rules`` and every rule of ``active`` that follows one of them, or one of those, and
    so on (:attr:`Rule.follows`): the rules that may fix in a file where gate 1 passed
    ``rules``."""
    found = list(rules)
    codes = {rule.code for rule in found}
    waiting = [rule for rule in active if rule.follows and rule.code not in codes]
    grew = True
    while waiting and grew:
        grew = False
        for rule in list(waiting):
            if rule.follows & codes:
                found.append(rule)
                codes.add(rule.code)
                waiting.remove(rule)
                grew = True
    return tuple(found)
