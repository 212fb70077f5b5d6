"""The engine: from source text to migrated text plus fixes and findings.

Cost is proportional to what there is to change.  Each file goes through three gates:

1. a substring prefilter on the trigger words the active rules declare (most files stop here);
2. CPython's ``ast`` (about five times cheaper than LibCST's parser) resolves imports and
   tells whether any rule's names, attributes, keywords or strings really occur;
3. only then LibCST parses the file once, one traversal collects every rule's sites, all fixes
   are applied in one transformer pass, and rounds repeat until nothing changes.  A file over
   :data:`migrator.piecewise.PIECEWISE_CHARS` whose candidate rules read only their sites is
   parsed in pieces: only the top-level statements that may change (:mod:`migrator.piecewise`,
   :mod:`migrator.piecerun`), with the whole module as the fallback.

This module holds the entry point, the gates and the error handling around one file.  The
parts live next to it: :mod:`migrator.plan` (what the active rules want), :mod:`migrator.rounds`
(the rounds of rewriting), :mod:`migrator.apply` (the one-pass transformer),
:mod:`migrator.cleanup` (imports left unused), :mod:`migrator.origins` (where a fix is
reported) and :mod:`migrator.errors` (the exceptions).
"""

from __future__ import annotations

import ast
import dataclasses
from typing import (
    TYPE_CHECKING,
    List,
    Optional,
    Sequence,
    Set,
    Tuple,
)

from jaxmigrate.migrator import guard, handoff, lazycst as cst, piecewise
from jaxmigrate.migrator.astfacts import Facts, ast_facts
from jaxmigrate.migrator.astfirst import findings_on_ast
from jaxmigrate.migrator.astfixes import AstEdit, written_on_ast
from jaxmigrate.migrator.astview import AstView
from jaxmigrate.migrator.diagnostics import Diagnostic
from jaxmigrate.migrator.errors import (
    MigrationError,
    PassedOver,
    SourceSyntaxError,
    note_errors,
    one_line,
)
from jaxmigrate.migrator.gatewritten import answer_on, gates_on, wanted
from jaxmigrate.migrator.linelength import for_style
from jaxmigrate.migrator.lossless import SUSPECT, Lost
from jaxmigrate.migrator.memory import release_freed_memory
from jaxmigrate.migrator.piecesites import site_words
from jaxmigrate.migrator.piecewise import Pieces
from jaxmigrate.migrator.plan import MAX_PARSE_CHARS, Plan, make_plan
from jaxmigrate.migrator.rule import Rule
from jaxmigrate.migrator.settings import Settings
from jaxmigrate.migrator.sourcecode import First, first_lines, seed_statement_code
from jaxmigrate.migrator.traversal import Caches, cached_children, statement_caches

if TYPE_CHECKING:  # pragma: no cover
    from jaxmigrate.migrator.cache import ResultCache
    from jaxmigrate.migrator.gateplan import Kept


@dataclasses.dataclass
class Result:
    source: str
    output: str
    fixes: List[Diagnostic]
    findings: List[Diagnostic]
    # Internal errors: a rule hook that raised on a site (code, line: where), whose edits
    # there were dropped while the other rules' fixes were kept.  Not empty means a bug to
    # report, and a run that ends with exit code 2.
    errors: List[Diagnostic] = dataclasses.field(default_factory=list)
    # CPython's tree of ``output``, when the engine has one (it parsed the source and left it
    # unchanged, or parsed the output to check it): the docstring pass and the survey's floor
    # read it instead of parsing again (never cached, never compared)
    tree: Optional[ast.Module] = dataclasses.field(default=None, repr=False, compare=False)

    @property
    def changed(self) -> bool:
        return self.output != self.source

    def to_cache(self) -> dict:
        return {
            "output": self.output if self.changed else None,
            "fixes": [d.as_dict() for d in self.fixes],
            "findings": [d.as_dict() for d in self.findings],
            "errors": [d.as_dict() for d in self.errors],
        }

    @classmethod
    def from_cache(cls, source: str, entry: dict) -> "Result":
        if "error" in entry:
            kind = SourceSyntaxError if entry.get("syntax") else MigrationError
            raise kind(entry["error"], entry.get("line", 0), entry.get("column", 0))
        output = source if entry["output"] is None else entry["output"]
        return cls(
            source,
            output,
            [Diagnostic(**d) for d in entry["fixes"]],
            [Diagnostic(**d) for d in entry["findings"]],
            [Diagnostic(**d) for d in entry.get("errors", ())],
        )


# -- the engine ---------------------------------------------------------------------------------
def migrate_source(
    text: str,
    settings: Optional[Settings] = None,
    cache: Optional["ResultCache"] = None,
    style_of: Optional[str] = None,
    kept: Optional["Kept"] = None,
) -> Result:
    """Migrate one module's source.  Raises :class:`MigrationError` for unusable input.

    With a ``cache``, files that pass the prefilter are looked up by content first.
    ``style_of``: the text whose own style sets the line length where the project configures
    none (:func:`migrator.linelength.for_style`), read only for a file that reaches LibCST (the
    cache needs no key for it: it is the text's, or the file's as read).  ``kept``: the gates
    of ``settings`` kept on disk (:mod:`migrator.gateplan`), which some rule passes for
    ``text``: without a cache, the rules they pass answer first, with only their modules
    imported (the pre-commit hook's case: most files need no other rule).
    """
    settings = settings or Settings()
    if kept is not None and cache is None and settings.gates:
        answered = _from_kept(text, settings, kept, style_of)
        if answered is not None:
            return _noted(answered)
    plan = make_plan(tuple(settings.active_rules()))
    candidates = plan.candidates(text) if settings.gates else plan.rules  # gates 1 and 1b
    if not candidates:
        return Result(text, text, [], [])
    if cache is None:
        return _noted(_migrate(text, settings, plan, candidates, style_of))
    key = text.encode("utf-8", "surrogatepass")
    entry = cache.get(key)
    if entry is not None:
        return _noted(Result.from_cache(text, entry))
    try:
        result = _migrate(text, settings, plan, candidates, style_of)
    except MigrationError as error:
        if error.cacheable:
            cache.put(
                key,
                {
                    "error": error.message,
                    "line": error.line,
                    "column": error.column,
                    "syntax": isinstance(error, SourceSyntaxError),
                },
            )
        raise
    cache.put(key, result.to_cache())
    return _noted(result)


class _EveryRule(Exception):
    """The file needs more than the rules the kept gates passed: the engine runs with all."""


def _from_kept(
    text: str, settings: Settings, kept: "Kept", style_of: Optional[str]
) -> Optional[Result]:
    """What the engine gives for ``text`` from the rules ``kept`` passes alone, as the active
    rules would give it: where gate 2 stops them all, where every one answers on ``ast``, or
    where the fixes written on ``ast`` are all (their text's gates then come from ``kept``
    too).  None where the others may be needed: LibCST's path, or the survey's check."""
    rules = kept.rules(tuple(gate.code for gate in kept.plan.candidates(text)))
    try:
        return _migrate(text, settings, make_plan(rules), rules, style_of, kept)
    except _EveryRule:
        return None


def _noted(result: Result) -> Result:
    note_errors(result.errors)  # for the callers that collect them (migrator.errors)
    return result


def _migrate(
    text: str,
    settings: Settings,
    plan: Plan,
    candidates: Tuple[Rule, ...],
    style_of: Optional[str] = None,
    kept: Optional["Kept"] = None,
) -> Result:
    if len(text) > MAX_PARSE_CHARS:
        raise MigrationError(
            f"{len(text) / 1e6:.1f} MB of source is over the {MAX_PARSE_CHARS // 10**6} MB "
            "that jaxmigrate parses; split the file or exclude it"
        )
    # LibCST recurses once per level of nesting, natively and in Python: the work runs in
    # a thread with a big stack, and files nested beyond the limit are refused (migrator.guard).
    args = (text, settings, plan, candidates, style_of, kept)
    return guard.with_big_stack(_migrate_nested, *args)[0]


def _migrate_nested(
    text: str,
    settings: Settings,
    plan: Plan,
    candidates: Tuple[Rule, ...],
    style_of: Optional[str],
    kept: Optional["Kept"],
    limit: int,
) -> Result:
    try:
        return _migrate_checked(text, settings, plan, candidates, limit, style_of, kept)
    except RecursionError:
        raise MigrationError(guard.too_deep_message(limit)) from None
    except MemoryError:
        raise MigrationError("out of memory while analysing this file", cacheable=False) from None
    except (MigrationError, PassedOver, _EveryRule):
        raise
    except Exception as error:  # noqa: BLE001  (an engine bug must not stop the run)
        raise MigrationError(
            f"internal error: {one_line(error)} (a bug: please report it); file left unchanged"
        ) from error


def _migrate_checked(
    text: str,
    settings: Settings,
    plan: Plan,
    candidates: Tuple[Rule, ...],
    limit: int,
    style_of: Optional[str] = None,
    kept: Optional["Kept"] = None,
) -> Result:
    """``kept``: ``candidates`` are the rules kept gates passed (:func:`_from_kept`), and where
    the others may be needed, :class:`_EveryRule` is raised."""
    unchanged = Result(text, text, [], [])
    passed = candidates  # (gate 1's: what the survey's reach reads)
    candidates, facts = _ast_gate(text, plan, candidates, settings.gates)
    try:
        if not candidates:
            return unchanged if facts is None else Result(text, text, [], [], tree=facts.tree)
        plan = make_plan(candidates)
        if facts is not None and settings.gates and settings.ast_first:
            edits: List[Tuple[AstView, List[Tuple[Rule, AstEdit]]]] = []
            findings = findings_on_ast(text, facts, plan.rules, settings, edits=edits)
            if findings is not None:  # every candidate answered from ``ast``: no LibCST parse
                return Result(text, text, [], findings, tree=facts.tree)
            check = handoff.check_for(text)  # (the survey's: it may pass the module over)
            if kept is not None and (check is not None or not edits):
                raise _EveryRule
            if check is not None and facts.tree is not None:
                check(text, facts.tree, passed, settings)
            if edits:  # renames the rules write from ``ast`` (migrator.astfixes)
                if style_of is not None:  # (read once: LibCST's path lays out by it too)
                    settings, style_of = for_style(settings, style_of), None
                gates = gates_on(settings, plan.rules, kept)
                written = written_on_ast(*edits[0], settings, gates, answer_on(settings))
                if written is not None:
                    output, fixes, found, tree = written
                    return Result(text, output, fixes, found, tree=tree)
        if kept is not None:
            raise _EveryRule
        ast_parsed = facts is not None
        # Refuse before LibCST's native parser can overflow its stack (it cannot be stopped); a
        # file answered on ``ast`` above never reaches it (the walk is 7 ms on a large file).
        problem = _nesting_problem(text, facts, limit)
        if problem is not None:
            raise MigrationError(problem)
        if style_of is not None:  # (what a fix writes is laid out by it: read for LibCST only)
            settings = for_style(settings, style_of)
        pieces = _pieces(text, facts, plan, settings)
        # where each statement starts: the first round's statement code is cut from the source
        firsts = first_lines(facts.tree) if facts is not None and facts.tree is not None else None
    finally:
        if facts is not None:
            facts.release()
    del facts  # CPython's tree (about 80 bytes a source byte), before LibCST's parser starts
    if pieces is not None:
        from jaxmigrate.migrator.piecerun import migrate_pieces  # (the rewriting half: LibCST)

        result = migrate_pieces(text, pieces, plan, settings, _rewrite)
        if result is not None:
            return result
    handoff.drop()  # a kept tree must not sit under LibCST's parse of the whole module
    return _rewrite(text, plan, settings, ast_parsed, firsts=firsts)


def _nesting_problem(text: str, facts: Optional[Facts], limit: int) -> Optional[str]:
    """:func:`migrator.guard.nesting_problem`, once per tree and limit."""
    if facts is None or facts.tree is None:
        return guard.nesting_problem(text, None, limit)
    key = f"nesting {limit}"
    if key not in facts.of_tree:
        facts.of_tree[key] = guard.nesting_problem(text, facts.tree, limit)
    return facts.of_tree[key]


def _pieces(text: str, facts: Optional[Facts], plan: Plan, settings: Settings) -> Optional[Pieces]:
    """The module reduced to the statements that may change (:mod:`migrator.piecewise`);
    None for the whole-module path: a small file, one CPython does not parse, or a rule the
    gates passed that reads the whole module."""
    if len(text) <= piecewise.PIECEWISE_CHARS or facts is None or facts.tree is None:
        return None
    if not settings.gates or any(rule.whole_module for rule in plan.rules):
        return None
    sites = site_words(tuple(settings.active_rules()))  # the later rounds' rules too
    try:
        return piecewise.reduce(text, facts.tree, sites, facts.of_tree)
    except MemoryError:
        raise
    except Exception:  # noqa: BLE001  (a bug there must not cost the file: parse it whole)
        return None


def _rewrite(
    text: str,
    plan: Plan,
    settings: Settings,
    ast_parsed: bool,
    whole: Optional[str] = None,
    called: Optional[Set[str]] = None,
    indent: Optional[str] = None,
    firsts: Optional[Sequence[First]] = None,
    pieces: Optional[Pieces] = None,
) -> Result:
    """LibCST's parse of ``text`` and the rounds.  For a reduced module (the piecewise path):
    ``whole``, the file's whole text; ``called``, what collects the codes of the rules whose
    hooks run; ``indent``, the indentation LibCST would infer from the whole file;
    ``pieces``, what the piecewise path left out of it.  ``firsts``:
    where CPython's tree says each statement of ``text`` starts (:mod:`migrator.sourcecode`)."""
    module, caches = _parse(text, ast_parsed)
    if whole is not None and indent is not None and module.default_indent != indent:
        raise piecewise.NotEquivalent("LibCST infers another indentation")
    # (the rewriting half, imported where it is first needed: LibCST and the rules' edits)
    from jaxmigrate.migrator.rounds import run_rounds

    errors: List[Diagnostic] = []
    with cached_children(caches) as caches:
        if firsts is not None:
            seed_statement_code(module, text, firsts)
        output, fixes, findings = run_rounds(
            module, text, plan, settings, errors, whole, called, pieces
        )
    if handoff.keeping_modules() and whole is None and len(text) <= piecewise.BIG_CHARS:
        # for the next run on this text (the run after the survey): the tree, and the code and
        # spans of its statements (a reduced module is never parsed again); a tree taken from
        # the survey of a copy of this text is kept once more, for this copy's run
        handoff.keep_module(text, (module, statement_caches(caches, module)))
    del caches
    lost = Lost(text, module.code) if SUSPECT.search(text) else None
    del module  # the first round's tree: not needed while the output is checked
    if lost is not None and lost.blocks:  # LibCST did not give the file back as written
        if output != text:
            output = lost.restore(output) or output
        fixes, findings, errors = (_on_own_lines(d, lost) for d in (fixes, findings, errors))
    tree = _verify_parses(output, ast_parsed=ast_parsed) if output != text else None
    return Result(text, output, fixes, findings, errors, tree=tree)


def _on_own_lines(diagnostics: List[Diagnostic], lost: Lost) -> List[Diagnostic]:
    """``diagnostics`` at the file's own lines (their positions are LibCST's code's)."""
    return [
        dataclasses.replace(
            d, line=lost.line(d.line), end_line=lost.line(d.end_line) if d.end_line else 0
        )
        for d in diagnostics
    ]


def _ast_gate(
    text: str, plan: Plan, candidates: Tuple[Rule, ...], gated: bool = True
) -> Tuple[Tuple[Rule, ...], Optional[Facts]]:
    """Gate 2 (unless not ``gated``): the rules still wanted, and CPython's facts of the file
    (None when it does not parse), for the rules that answer from them
    (:mod:`migrator.astfirst`); the caller drops them before LibCST's parser, the peak of a
    file's memory, starts."""
    facts = _facts(text)
    if facts is None and gated:  # LibCST decides: gate 1b reads each rule gate 2 would have
        candidates = tuple(r for r in plan.every_candidate(text) if r in candidates)
    if facts is not None and gated:
        candidates = wanted(plan, candidates, facts)
    return candidates, facts


def _facts(text: str) -> Optional[Facts]:
    """:func:`ast_facts`, or those a run before this one kept for the same text
    (:mod:`migrator.handoff`: a big module's, or the survey's in one process); what gates
    derived from them is not kept (a rule may run for another target there)."""
    big = len(text) > piecewise.BIG_CHARS
    facts = handoff.take(text) if big else handoff.take_facts(text)
    if facts is not None:
        facts.derived.clear()
        return facts
    facts = ast_facts(text)
    if facts is not None and big and handoff.enabled():
        handoff.keep(text, facts)
    elif facts is not None and not big and handoff.keeping_modules():
        handoff.keep_facts(text, facts)
    return facts


def _parse(text: str, ast_parsed: bool) -> Tuple[cst.Module, Optional[Caches]]:
    """LibCST's tree of ``text``; its parser's scratch memory is handed back at once.  A tree
    an earlier run on the same text kept is taken instead, with what the read-only passes
    found in it (:mod:`migrator.handoff`)."""
    kept = handoff.take_module(text)
    if kept is not None:
        return kept
    try:
        module = _parse_module(text)
    except cst.ParserSyntaxError as error:
        if ast_parsed:  # CPython parses it: LibCST's limit, not the file's fault
            raise MigrationError(
                f"LibCST cannot parse this file (Python can): {error.message}",
                error.raw_line,
                error.raw_column + 1,
            ) from None
        line, column, message = _python_says(text, error)
        raise SourceSyntaxError(f"not valid Python: {message}", line, column) from None
    finally:
        release_freed_memory(len(text))
    return module, None


def _parse_module(text: str) -> cst.Module:
    """``cst.parse_module(text)`` without LibCST checking each node its parser makes
    (``CSTNode.__post_init__`` validates the fields of every node: an eighth of the parse of
    the legacy corpus).  The parser makes nodes only of text its grammar took; the nodes the
    rules make are still checked (one parse at a time: the engine thread's)."""
    base = cst.CSTNode
    check = base.__dict__.get("__post_init__")
    if check is None:  # (another LibCST)
        return cst.parse_module(text)
    setattr(base, "__post_init__", _unchecked)  # noqa: B010  (mypy: a method)
    try:
        return cst.parse_module(text)
    finally:
        setattr(base, "__post_init__", check)  # noqa: B010


def _unchecked(node: cst.CSTNode) -> None:
    pass


def _python_says(text: str, error: cst.ParserSyntaxError) -> Tuple[int, int, str]:
    """Where and why CPython rejects ``text`` (the message users know from Python itself),
    else LibCST's own (a file Python parses but LibCST does not is handled above)."""
    try:
        compile(text, "<file>", "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as python:
        return python.lineno or error.raw_line, python.offset or 1, f"{python.msg}"
    except (ValueError, MemoryError, RecursionError):
        pass
    return error.raw_line, error.raw_column + 1, error.message


def _verify_parses(output: str, ast_parsed: bool) -> Optional[ast.Module]:
    """CPython's tree of ``output`` (None where CPython did not parse the input: LibCST's
    parser checks it); raises :class:`MigrationError` when it does not parse."""
    try:
        if ast_parsed:
            return ast.parse(output)
        cst.parse_module(output)
        return None
    except (SyntaxError, cst.ParserSyntaxError) as error:
        raise MigrationError(
            f"internal error: the migrated text does not parse ({error})"
        ) from None
