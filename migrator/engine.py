"""The engine: from source text to migrated text plus fixes and findings.

Cost is proportional to what there is to change.  Each file goes through three gates:

1. a substring prefilter on the trigger words the active rules declare (most files stop here);
2. CPython's ``ast`` (about five times cheaper than LibCST's parser) resolves imports and
   tells whether any rule's names, attributes, keywords or strings really occur;
3. only then LibCST parses the file once, one traversal collects every rule's sites, all fixes
   are applied in one transformer pass, and rounds repeat until nothing changes.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import functools
import re
import threading
from typing import (
    TYPE_CHECKING,
    Callable,
    Dict,
    FrozenSet,
    Iterable,
    Iterator,
    List,
    NamedTuple,
    Optional,
    Sequence,
    Set,
    Tuple,
)

import libcst as cst

from jaxmigrate.migrator import guard
from jaxmigrate.migrator.astfacts import Facts, ast_facts, imports_jax
from jaxmigrate.migrator.context import (
    CannotReference,
    Context,
    Edit,
    Finding,
    NameSite,
    binding_is_legacy,
    module_code,
    names_in as _names_in,
)
from jaxmigrate.migrator.diagnostics import CLEANUP_CODE, CLEANUP_SUMMARY, Diagnostic  # noqa: F401
from jaxmigrate.migrator.imports import add_imports, without_aliases
from jaxmigrate.migrator.layout import realign, realignments
from jaxmigrate.migrator.memory import release_freed_memory
from jaxmigrate.migrator.rule import Rule, Safety, in_run_order
from jaxmigrate.migrator.scope import (
    Analysis,
    Binding,
    Interest,
    analyze,
    cached_children,
    structural_children,
)
from jaxmigrate.migrator.settings import Settings
from jaxmigrate.migrator.textgate import admitted, under
from jaxmigrate.migrator.tidy import Produced, tidy
from jaxmigrate.migrator.wrap import wrap

if TYPE_CHECKING:  # pragma: no cover
    from jaxmigrate.migrator.cache import ResultCache

MAX_ROUNDS = 10
# LibCST's parser peaks at about 750 bytes of memory per source byte (bench/memory.py): bigger
# files (generated code) are refused.
MAX_PARSE_CHARS = 20 * 10**6


class ImportRemoval(NamedTuple):
    """An import statement the engine cuts down because the migration left names unused."""

    statement: cst.CSTNode
    aliases: Set[int]  # ids of the import's alias nodes that go
    code: str  # reported under: the rule whose legacy name it imported, or CLEANUP_CODE


Removals = Dict[int, ImportRemoval]  # by id of the statement


class MigrationError(Exception):
    """A file that cannot be migrated: it does not parse, is nested too deeply, or the
    engine failed on it.  ``cacheable`` is False for what depends on the machine (memory)."""

    def __init__(self, message: str, line: int = 0, column: int = 0, cacheable: bool = True) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column
        self.cacheable = cacheable


class SourceSyntaxError(MigrationError):
    """The input is not valid Python."""


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


# Every trigger word is ASCII: a token of this pattern that equals one is that identifier (a
# non-ASCII letter next to it only splits the token, which can add hits, never lose one).
_ASCII_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


# -- planning: what the active rules want ----------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Plan:
    rules: Tuple[Rule, ...]
    interest: Interest
    words: Tuple[str, ...]
    by_name: Dict[str, Tuple[Rule, ...]]
    by_attribute: Dict[str, Tuple[Rule, ...]]
    by_keyword: Dict[str, Tuple[Rule, ...]]
    by_string: Dict[str, Tuple[Rule, ...]]
    legacy_names: FrozenSet[str]
    legacy_modules: FrozenSet[str]
    masks: Tuple[Tuple[Rule, "re.Pattern[str]"], ...]  # rules with modern_spellings

    text_gated: Tuple[Rule, ...]  # rules gate 1 passes wherever "jax" occurs (Rule.text_gated)
    identifiers: FrozenSet[str]  # trigger words written as one identifier-like token
    substrings: Tuple[str, ...]  # other string-literal trigger words: searched as substrings

    def prefilter(self, text: str) -> Tuple[Rule, ...]:
        """The rules whose trigger words occur in ``text`` outside their modern spellings."""
        return self.prefilter_hits(text)[0]

    def prefilter_hits(self, text: str) -> Tuple[Tuple[Rule, ...], FrozenSet[str]]:
        """Gate 1: the rules whose trigger words occur in ``text`` outside their modern
        spellings, and the trigger words that occur.

        A name, attribute or keyword is only written as a whole identifier, so those words are
        looked up among the text's identifier-like tokens (one regex pass, and ``tree_map``
        no longer matches ``tree_map_with_path``); other string values are searched as substrings."""
        return self.prefilter_tokens(text)[:2]

    def prefilter_tokens(self, text: str) -> Tuple[Tuple[Rule, ...], FrozenSet[str], List[str]]:
        """:meth:`prefilter_hits`, and the text's identifier-like tokens (gate 1b reuses them)."""
        tokens = _ASCII_IDENTIFIER.findall(text)
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
            or any(under(q, rule.legacy_modules) for q in facts.imports)
        )

    def wanted_by(self, rule: Rule, facts: Facts) -> bool:
        """Gate 2 for one rule: one of its sites occurs and its own ``ast_gate`` agrees."""
        return self.has_site(rule, facts) and rule.ast_gate(facts)

    def owner(self, qualname: str) -> Optional[str]:
        """The rule a legacy import is removed under (rules whose names are legacy only)."""
        for rule in self.rules:
            if rule.names_are_legacy and (qualname in rule.names or under(qualname, rule.legacy_modules)):
                return rule.code
        return None


def _index(rules: Sequence[Rule], field: str) -> Dict[str, Tuple[Rule, ...]]:
    table: Dict[str, List[Rule]] = {}
    for rule in rules:
        for key in getattr(rule, field):
            table.setdefault(key, []).append(rule)
    return {key: tuple(value) for key, value in table.items()}


@functools.lru_cache(maxsize=64)
def make_plan(rules: Tuple[Rule, ...]) -> Plan:
    rules = in_run_order(rules)  # code order, but after the rules each declares it runs after
    names = frozenset().union(*(r.names for r in rules))
    attributes = frozenset().union(*(r.attributes for r in rules))
    keywords = frozenset().union(*(r.keywords for r in rules))
    strings = frozenset().union(*(r.strings for r in rules))
    # Imports under these modules are removed when unused: only rules whose names are legacy.
    modules = frozenset().union(*(r.legacy_modules for r in rules if r.names_are_legacy))
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
        interest=Interest(names, attributes, keywords, strings),
        words=tuple(sorted(words)),
        by_name=_index(rules, "names"),
        by_attribute=_index(rules, "attributes"),
        by_keyword=_index(rules, "keywords"),
        by_string=_index(rules, "strings"),
        legacy_names=frozenset().union(*(r.names for r in rules if r.names_are_legacy)),
        legacy_modules=modules,
        masks=masks,
    )


# -- gate 2: what CPython's ast says is in the file (migrator.astfacts) -------------------------


# -- suppression comments ---------------------------------------------------------------------
_SUPPRESS_RE = re.compile(r"#\s*jaxmigrate:\s*ignore(?:\[([A-Za-z0-9_,\s]*)\])?")


def find_suppressions(text: str) -> Dict[int, Optional[FrozenSet[str]]]:
    """Line number -> suppressed codes (None: every code) for ``# jaxmigrate: ignore[...]``."""
    result: Dict[int, Optional[FrozenSet[str]]] = {}
    if "jaxmigrate" not in text:
        return result
    for number, line in enumerate(text.splitlines(), start=1):
        match = _SUPPRESS_RE.search(line)
        if match:
            codes = match.group(1)
            if codes is None:
                result[number] = None
            else:
                result[number] = frozenset(c.strip() for c in codes.split(",") if c.strip())
    return result


# -- the engine ---------------------------------------------------------------------------------
def migrate_source(
    text: str, settings: Optional[Settings] = None, cache: Optional["ResultCache"] = None
) -> Result:
    """Migrate one module's source.  Raises :class:`MigrationError` for unusable input.

    With a ``cache``, files that pass the prefilter are looked up by content first.
    """
    settings = settings or Settings()
    plan = make_plan(tuple(settings.active_rules()))
    if settings.gates:
        candidates, hits, tokens = plan.prefilter_tokens(text)
        if candidates and len(text) <= MAX_PARSE_CHARS:
            candidates = admitted(text, candidates, hits, tokens)  # gate 1b: written as a site?
    else:
        candidates = plan.rules
    if not candidates:
        return Result(text, text, [], [])
    if cache is None:
        return _noted(_migrate(text, settings, plan, candidates))
    key = text.encode("utf-8", "surrogatepass")
    entry = cache.get(key)
    if entry is not None:
        return _noted(Result.from_cache(text, entry))
    try:
        result = _migrate(text, settings, plan, candidates)
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


# -- internal errors, for callers that migrate a file in several calls -------------------------
_SINKS = threading.local()


@contextlib.contextmanager
def collecting_errors() -> Iterator[List[Diagnostic]]:
    """Collects :attr:`Result.errors` of every :func:`migrate_source` call made inside, in this
    thread (a notebook, a page or a file's docstrings are migrated in several calls)."""
    sinks = getattr(_SINKS, "stack", None)
    if sinks is None:
        sinks = _SINKS.stack = []
    sink: List[Diagnostic] = []
    sinks.append(sink)
    try:
        yield sink
    finally:
        sinks.pop()


def _noted(result: Result) -> Result:
    if result.errors:
        for sink in getattr(_SINKS, "stack", ()):
            sink.extend(result.errors)
    return result


def _migrate(text: str, settings: Settings, plan: Plan, candidates: Tuple[Rule, ...]) -> Result:
    if len(text) > MAX_PARSE_CHARS:
        raise MigrationError(
            f"{len(text) / 1e6:.1f} MB of source is over the {MAX_PARSE_CHARS // 10**6} MB "
            "that jaxmigrate parses; split the file or exclude it"
        )
    # LibCST recurses once per level of nesting, natively and in Python: the work runs in
    # a thread with a big stack, and files nested beyond the limit are refused (migrator.guard).
    return guard.with_big_stack(_migrate_nested, text, settings, plan, candidates)[0]


def _migrate_nested(text: str, settings: Settings, plan: Plan, candidates: Tuple[Rule, ...], limit: int) -> Result:
    try:
        return _migrate_checked(text, settings, plan, candidates, limit)
    except RecursionError:
        raise MigrationError(guard.too_deep_message(limit)) from None
    except MemoryError:
        raise MigrationError("out of memory while analysing this file", cacheable=False) from None
    except MigrationError:
        raise
    except Exception as error:  # noqa: BLE001  (an engine bug must not stop the run)
        raise MigrationError(f"internal error: {_one_line(error)} (a bug: please report it); file left unchanged") from error


def _one_line(error: BaseException) -> str:
    return " ".join(f"{type(error).__name__}: {error}".split())[:200]


def _migrate_checked(text: str, settings: Settings, plan: Plan, candidates: Tuple[Rule, ...], limit: int) -> Result:
    unchanged = Result(text, text, [], [])
    candidates, ast_parsed = _ast_gate(text, plan, candidates, limit, settings.gates)
    if not candidates:
        return unchanged
    plan = make_plan(candidates)
    module = _parse(text, ast_parsed)
    errors: List[Diagnostic] = []
    with cached_children():
        output, fixes, findings = _run_rounds(module, text, plan, settings, errors)
    del module  # the first round's tree: not needed while the output is checked
    if output != text:
        _verify_parses(output, ast_parsed=ast_parsed)
    return Result(text, output, fixes, findings, errors)


def _ast_gate(
    text: str, plan: Plan, candidates: Tuple[Rule, ...], limit: int, gated: bool = True
) -> Tuple[Tuple[Rule, ...], bool]:
    """Gate 2 (unless not ``gated``), and the nesting check: the rules still wanted, and
    whether CPython parses the file.  CPython's tree (about 80 bytes a source byte) is dropped on return, before
    LibCST's parser, the peak of a file's memory, starts."""
    facts = ast_facts(text)
    if facts is not None and gated:
        jax_imported = imports_jax(facts)
        candidates = tuple(
            rule
            for rule in candidates
            if (jax_imported or not rule.needs_jax_import) and plan.wanted_by(rule, facts)
        )
        if not candidates:
            return candidates, True
    # Refuse before LibCST's native parser can overflow its stack (it cannot be stopped).
    problem = guard.nesting_problem(text, facts.tree if facts is not None else None, limit)
    if problem is not None:
        raise MigrationError(problem)
    return candidates, facts is not None


def _parse(text: str, ast_parsed: bool) -> cst.Module:
    """LibCST's tree of ``text``; its parser's scratch memory is handed back at once."""
    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError as error:
        if ast_parsed:  # CPython parses it: LibCST's limit, not the file's fault
            raise MigrationError(
                f"LibCST cannot parse this file (Python can): {error.message}", error.raw_line, error.raw_column + 1
            ) from None
        raise SourceSyntaxError(
            f"not valid Python: {error.message}", error.raw_line, error.raw_column + 1
        ) from None
    finally:
        release_freed_memory(len(text))
    return module


def _run_rounds(
    module: cst.Module, text: str, plan: Plan, settings: Settings, errors: Optional[List[Diagnostic]] = None
) -> Tuple[str, List[Diagnostic], List[Diagnostic]]:
    """The rounds of rewriting: the output, the fixes and the findings.  A rule hook that
    raises loses its site, not the file: the failure goes to ``errors`` (code, message, and
    the line in the output, like a finding; 0 for a failure only an earlier round had)."""
    errors = [] if errors is None else errors
    failed_before: Dict[Tuple[str, str], None] = {}  # (code, message) of earlier rounds' failures
    fixes: List[Diagnostic] = []
    originally_used: Optional[Set[Tuple[str, str]]] = None
    added_imports: Set[str] = set()
    suppressions = find_suppressions(text)
    file_state: Dict[str, object] = {}
    enabled: Set[Rule] = set(plan.rules)  # the rules gate 2 let through; see _dispatch
    origins: Optional[_Origins] = None  # when fixes are located: what later trees stand for
    produced = Produced()  # what the fixes wrote: the only nodes the tidying reads
    for _round in range(MAX_ROUNDS):
        if _round == 1:
            # A rewrite can make work for a rule the gates excluded: from the second round
            # on every active rule looks (the traversal costs the same; no new parse).
            plan = make_plan(tuple(settings.active_rules()))
        if _round and suppressions:
            suppressions = find_suppressions(module_code(module))
        analysis = analyze(module, plan.interest)
        if originally_used is None:
            # Bindings are matched across rounds by (name, qualname): a key that also has an
            # originally unused binding (a side-effect ``import jax.experimental.x`` beside a
            # used ``import jax``) is never cleaned up, so no unused import of the input is lost.
            used_keys: Set[Tuple[str, str]] = set()
            unused_keys: Set[Tuple[str, str]] = set()
            for b in analysis.imports:
                (used_keys if analysis.is_used(b) else unused_keys).add((b.name, b.qualname or ""))
            originally_used = used_keys - unused_keys
        ctx = Context(module, analysis, settings, settings.target, suppressions)
        ctx.file_state = file_state
        if settings.locate_fixes and origins is None:
            origins = _Origins(ctx)
        failures = _dispatch(ctx, analysis, plan, enabled)
        removals = _unused_imports(ctx, analysis, plan, originally_used, added_imports)
        if not ctx.edits and not removals and produced:
            tidy(ctx, produced, _same_types(plan))
        if not ctx.edits and not removals and produced and settings.line_length:
            wrap(ctx, produced, text, settings.line_length)
        if not ctx.edits and not removals:
            errors.extend(_failures(ctx, failures, failed_before))
            _report_exported_legacy(ctx, analysis, plan)
            diagnostics = _diagnostics(ctx, _without_backstop_repeats(ctx.findings, ctx, plan))
            # Nothing applied at all: the input, without generating code for the whole tree;
            # else the code the position pass (if one ran this round) already generated.
            output = text if not (fixes or _round) else ctx.generated_code() or module_code(module)
            return output, fixes, diagnostics
        for _node, code, error in failures:
            failed_before[(code, _one_line(error))] = None
        applied = _Apply(ctx.edits, removals, _paths_to(ctx, [e.node for e in ctx.edits.values()] + [r[0] for r in removals.values()]))
        applied.realign = realignments(ctx, ctx.edits)
        if origins is not None:
            applied.trace = origins.tracer(ctx)
        module = module.visit(applied)
        fixes.extend(_fix(origins, ctx, edit) for edit in applied.applied)
        produced.add((edit for edit in applied.applied if id(edit.node) in ctx.edits), ctx)
        # Only imports an applied edit refers to: a deferred edit asks again next round.
        planned = ctx.planned_imports
        used = _names_in((edit.new for edit in applied.applied), {name for _m, name in planned.values()})
        wanted = [planned[k] for k in sorted(planned) if planned[k][1] in used]
        if wanted:
            before = module
            module = add_imports(module, wanted)
            if origins is not None:
                origins.carry_body(before, module, ctx)
            added_imports.update(name for _module, name in wanted)
        if ctx.edits:
            # What the next round's analysis would find unused, removed now when certain.
            left = _left_unused(ctx, analysis, plan, originally_used, added_imports, removals)
            if left:
                module = _remove_top_level(module, left, fixes, ctx, origins)
    raise MigrationError(f"the rules did not settle after {MAX_ROUNDS} rounds (a rule bug)")


def _same_types(plan: Plan) -> Dict[str, str]:
    """The aliases of modern names the active rules declare (see :mod:`migrator.tidy`)."""
    found: Dict[str, str] = {}
    for rule in plan.rules:
        found.update(rule.same_types)
    return found


def _paths_to(ctx: Context, nodes: Iterable[cst.CSTNode]) -> Set[int]:
    """ids of the nodes on the way from the module to each of ``nodes`` (the nodes included):
    the only subtrees the transformer that applies the edits has to enter."""
    wanted: Set[int] = set()
    for node in nodes:
        current: Optional[cst.CSTNode] = node
        while current is not None and id(current) not in wanted:
            wanted.add(id(current))
            current = ctx.parent(current)
    return wanted


def _dispatch(ctx: Context, analysis: Analysis, plan: Plan, enabled: Set[Rule]) -> List[Tuple[cst.CSTNode, str, Exception]]:
    """Calls every rule hook on this round's sites.  ``enabled`` (kept across rounds, and
    updated here) holds the rules whose ``visit_module`` runs: the ones gate 2 let through,
    and any rule that later finds one of its sites (guarded ones included) or a legacy-module
    import in the rewritten tree, the gate's own criterion.

    Returns the hooks that raised, as (site, rule code, exception): what such a hook recorded
    is dropped, and the other hooks run on."""
    failures: List[Tuple[cst.CSTNode, str, Exception]] = []
    def call(rule: Rule, site_node: cst.CSTNode, hook, *args) -> None:  # noqa: ANN001
        ctx.begin(rule)
        # what the hook may add to, so that a hook that raises leaves nothing behind
        edits, findings, planned = len(ctx.edits), len(ctx.findings), dict(ctx.planned_imports)
        try:
            hook(*args, ctx)
        except CannotReference as error:
            ctx.report(site_node, f"cannot fix here: {error}")
        except MigrationError:
            raise
        except Exception as error:  # noqa: BLE001  (a rule bug loses its site, not the file)
            _roll_back(ctx, edits, findings, planned)
            failures.append((site_node, rule.code, error))

    for site in analysis.name_sites:
        if isinstance(site.node, cst.ImportAlias):
            qualname: Optional[str] = ".".join(site.parts or ())
        else:
            qualname = ctx.qualname(site.node, site.scope)
        rules = plan.by_name.get(qualname or "", ())
        enabled.update(rules)
        if not site.guarded:
            for rule in rules:
                call(rule, site.node, rule.visit_name, NameSite(site, qualname))  # type: ignore[arg-type]
    for site in analysis.attribute_sites:
        rules = plan.by_attribute.get(site.node.attr.value, ())  # type: ignore[attr-defined]
        enabled.update(rules)
        if not site.guarded:
            for rule in rules:
                call(rule, site.node, rule.visit_attribute, site.node)
    for site in analysis.keyword_sites:
        rules = plan.by_keyword.get(site.node.keyword.value, ())  # type: ignore[attr-defined]
        enabled.update(rules)
        if not site.guarded and isinstance(site.parent, cst.Call):
            for rule in rules:
                call(rule, site.node, rule.visit_keyword, site.node, site.parent)
    for site in analysis.string_sites:
        rules = plan.by_string.get(site.node.evaluated_value, ())  # type: ignore[attr-defined]
        enabled.update(rules)
        if not site.guarded:
            for rule in rules:
                call(rule, site.node, rule.visit_string, site.node)
    for rule in plan.rules:
        if type(rule).visit_module is Rule.visit_module:
            continue
        if rule in enabled or (
            rule.legacy_modules
            and any(under(b.qualname or "", rule.legacy_modules) for b in analysis.imports)
        ):
            call(rule, ctx.module, rule.visit_module)
    return failures


def _roll_back(ctx: Context, edits: int, findings: int, planned: Dict[str, Tuple[Optional[str], str]]) -> None:
    """Forget what a hook recorded after the counts given (edits are never replaced, only added)."""
    for key in list(ctx.edits)[edits:]:
        del ctx.edits[key]
    del ctx.findings[findings:]
    if ctx.planned_imports != planned:
        ctx.planned_imports.clear()
        ctx.planned_imports.update(planned)


def _failures(
    ctx: Context, failures: List[Tuple[cst.CSTNode, str, Exception]], failed_before: Dict[Tuple[str, str], None]
) -> List[Diagnostic]:
    """The hooks that raised, as internal errors: the last round's located in the output (a
    hook fails again on the same site each round, so they are usually all of them), earlier
    rounds' others without a line."""
    found: Dict[Tuple[str, int, str], None] = {}
    for node, code, error in failures:
        try:
            line = ctx.position(node).start.line
        except Exception:  # noqa: BLE001  (a node the position pass cannot place)
            line = 0
        found[(code, line, _one_line(error))] = None
    last = {(code, message) for code, _line, message in found}
    found.update(((code, 0, message), None) for code, message in failed_before if (code, message) not in last)
    return [Diagnostic(code, message, line, 0, "error") for code, line, message in found]


def _report_exported_legacy(ctx: Context, analysis: Analysis, plan: Plan) -> None:
    """A removed name listed in ``__all__`` keeps its import alive (it is never dropped as
    unused), and that import fails on current JAX: report it, unless a finding is already on
    the line.  Runs in the round that changes nothing, like every finding."""
    if not analysis.exported:
        return
    covered = None
    for binding in analysis.imports:
        if binding.guarded or binding.name not in analysis.exported or binding.node is None:
            continue
        qualname = binding.qualname or ""
        rule = next(
            (
                r
                for r in plan.rules
                if r.removed_in and r.names_are_legacy and (qualname in r.names or under(qualname, r.legacy_modules))
            ),
            None,
        )
        if rule is None:
            continue
        if covered is None:
            backstops = {r.code for r in plan.rules if r.backstop}
            covered = {ctx.position(node).start.line for node, code, _m, _s in ctx.findings if code not in backstops}
        if ctx.position(binding.node).start.line in covered:
            continue
        ctx.begin(rule)
        ctx.report(
            binding.node,
            f"{qualname} is re-exported through __all__ but was removed in JAX {rule.removed_in}: "
            f"this import fails with ImportError; export the replacement instead ({rule.summary})",
        )


def _unused_imports(
    ctx: Context,
    analysis: Analysis,
    plan: Plan,
    originally_used: Set[Tuple[str, str]],
    added_imports: Set[str],
) -> Removals:
    """Imports to drop: legacy ones nothing uses, and ones the migration left unused."""
    # A name this round's edits start to use is not unused, whatever the old tree says.
    unused = [
        binding
        for binding in analysis.imports
        if not (binding.guarded or binding.name in analysis.exported or analysis.is_used(binding))
        and id(binding.statement) not in ctx.edits
    ]
    if unused and ctx.edits:
        wanted_by_edits = _names_in((edit.new for edit in ctx.edits.values()), {b.name for b in unused})
        unused = [binding for binding in unused if binding.name not in wanted_by_edits]
    return _removals(unused, plan, originally_used, added_imports, ctx)


def _removals(
    bindings: Iterable[Binding],
    plan: Plan,
    originally_used: Set[Tuple[str, str]],
    added_imports: Set[str],
    ctx: Context,
) -> Removals:
    """The unused import ``bindings`` to remove, by statement, with the code each removal is
    reported under: a legacy name's rule, or cleanup of an import that was used before (or
    that the migration added).  Other unused imports are the user's business.  A legacy
    name that JAX's API history shows on every release of the target range is not legacy
    there (``from jax.interpreters import pxla`` in a package's ``__init__`` re-exports it)."""
    removals: Removals = {}
    for binding in bindings:
        name = binding.name
        owner = None
        if binding_is_legacy(binding, plan.legacy_names, plan.legacy_modules) and not ctx.exists_throughout(
            binding.qualname or ""
        ):
            owner = plan.owner(binding.qualname or "")
        elif (name, binding.qualname or "") in originally_used or name in added_imports:
            owner = CLEANUP_CODE
        if owner is None:
            continue
        statement = binding.statement
        if statement is None:  # an import binding always has its statement
            continue
        entry = removals.setdefault(id(statement), ImportRemoval(statement, set(), owner))
        entry.aliases.add(id(binding.node))
    return removals


def _left_unused(
    ctx: Context,
    analysis: Analysis,
    plan: Plan,
    originally_used: Set[Tuple[str, str]],
    added_imports: Set[str],
    removals: Removals,
) -> Removals:
    """Imports this round's edits leave unused, found now rather than by the next round's
    analysis (which would remove them alone, in a round of its own).

    Only the certain cases: every ``Name`` spelling the import's name, anywhere outside import
    statements, lies inside a node an edit replaces this round, and no replacement spells
    it, so the new tree reads the name nowhere, whatever its scopes.  Anything less certain
    is left to the next round, which decides as before."""
    edits = ctx.edits
    applied = {
        key: edit
        for key, edit in edits.items()
        if not any(id(up) in edits for up in ctx.ancestors(edit.node))  # else it waits a round
    }

    def replaced(node: cst.CSTNode) -> bool:
        return id(node) in applied or any(id(up) in applied for up in ctx.ancestors(node))

    candidates = [
        binding
        for binding in analysis.imports
        if not binding.guarded
        and binding.name not in analysis.exported
        and id(binding.statement) not in edits
        and id(binding.statement) not in removals
        and _top_level_line(ctx, binding.statement) is not None  # type: ignore[arg-type]
        and analysis.is_used(binding)
    ]
    if not candidates:
        return {}
    names = {binding.name for binding in candidates}
    read = _names_in((edit.new for edit in applied.values()), names)
    for name in ctx.all_nodes(cst.Name):
        value = name.value  # type: ignore[attr-defined]
        if value in names and value not in read and not replaced(name):
            if not any(isinstance(up, (cst.Import, cst.ImportFrom)) for up in ctx.ancestors(name)):
                read.add(value)
    left = [b for b in candidates if b.name not in read and not replaced(b.statement)]  # type: ignore[arg-type]
    return _removals(left, plan, originally_used, added_imports, ctx)


def _top_level_line(ctx: Context, statement: cst.CSTNode) -> Optional[cst.CSTNode]:
    line = ctx.parent(statement)
    return line if line is not None and ctx.parent(line) is ctx.module else None


def _remove_top_level(
    module: cst.Module,
    removals: Removals,
    fixes: List[Diagnostic],
    ctx: Context,
    origins: Optional["_Origins"],
) -> cst.Module:
    """Applies ``removals`` of top-level imports to the module this round produced: those
    whose line the round kept as it was (the others wait for the next round)."""
    lines = {
        id(small): line
        for line in module.body
        if isinstance(line, cst.SimpleStatementLine)
        for small in line.body
        if id(small) in removals
    }
    present = {key: entry for key, entry in removals.items() if key in lines}
    if not present:
        return module
    paths = {id(module)} | {id(lines[key]) for key in present} | set(present)
    applied = _Apply({}, present, paths)
    if origins is not None:
        applied.trace = origins.tracer(ctx)
    module = module.visit(applied)
    fixes.extend(_fix(origins, ctx, edit) for edit in applied.applied)  # imports of ctx's tree
    return module


class _Apply(cst.CSTTransformer):
    """Applies every recorded edit in one pass; an edit inside a replaced node waits a round."""

    def __init__(
        self,
        edits: Dict[int, Edit],
        removals: Removals,
        paths: Optional[Set[int]] = None,
    ) -> None:
        super().__init__()
        self.edits = edits
        self.removals = removals
        self.applied: List[Edit] = []
        self.paths = paths  # when given, subtrees holding no edit are not entered
        # id(call) -> how its continuation lines move (see migrator.layout)
        self.realign: Dict[int, Tuple[int, int, int]] = {}
        # called with (node, what replaces it) for every node the pass rebuilds or replaces
        self.trace: Optional[Callable[[cst.CSTNode, object], None]] = None

    def on_visit(self, node: cst.CSTNode) -> bool:
        if id(node) in self.edits:
            return False
        return self.paths is None or id(node) in self.paths

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode):  # noqa: ANN201
        result = self._leave(original_node, updated_node)
        if self.trace is not None and result is not original_node:
            self.trace(original_node, result)
        return result

    def _leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode):  # noqa: ANN202
        edit = self.edits.get(id(original_node))
        if edit is not None:
            self.applied.append(edit)
            return edit.new
        shift = self.realign.get(id(original_node))
        if shift is not None:
            return realign(updated_node, *shift)  # type: ignore[arg-type]
        removal = self.removals.get(id(original_node))
        if removal is not None:
            statement, alias_ids, code = removal
            new = without_aliases(original_node, updated_node, alias_ids)  # type: ignore[arg-type]
            if new is not updated_node:
                message = "removed an import the migration left unused"
                if code != CLEANUP_CODE:
                    message = "removed an import of a name that no longer exists in JAX"
                self.applied.append(Edit(statement, new, code, message, Safety.SAFE))
            return new
        return updated_node


def _diagnostic(ctx: Context, node: cst.CSTNode, code: str, message: str, safety: str) -> Diagnostic:
    code_range = ctx.position(node)
    return Diagnostic(
        code=code,
        message=message,
        line=code_range.start.line,
        column=code_range.start.column + 1,
        safety=safety,
        end_line=code_range.end.line,
    )


def _fix(origins: Optional["_Origins"], ctx: Context, edit: Edit) -> Diagnostic:
    """An applied edit's fix: located in the input when fixes are located, else on line 0."""
    if origins is None:
        return Diagnostic(edit.code, edit.message, 0, 0, edit.safety.value)
    return origins.locate(ctx, edit.node, edit.code, edit.message, edit.safety.value)


class _Origins:
    """Where the nodes of a later round's tree stood in the file as read, so that a fix is
    located in the input's lines and columns whichever round applied it (an earlier round's
    added or removed lines would otherwise shift it).

    A node of a later round is one of three things: a node of the first round's tree (a
    transformer keeps the subtrees it does not enter), a node the rewriting rebuilt or put
    in place of another (recorded here with the first-round node it stands for), or a node
    inside such a replacement, which stands where the replacement does."""

    def __init__(self, first: Context) -> None:
        self.first = first
        # id(node) -> (node, the first-round node it stands for); the node is kept alive
        # with its entry, so its id is not reused
        self.roots: Dict[int, Tuple[cst.CSTNode, cst.CSTNode]] = {}

    def root(self, node: cst.CSTNode, ctx: Context) -> Optional[cst.CSTNode]:
        """The first-round node that ``node`` (a node of ``ctx``'s tree) is or stands for."""
        return self._root(node, ctx)[0]

    def _root(self, node: cst.CSTNode, ctx: Context) -> Tuple[Optional[cst.CSTNode], Optional[cst.CSTNode]]:
        """:meth:`root`, and the replacement ``node`` lies inside (None if it is one itself,
        or a first-round node)."""
        first = self.first
        current: Optional[cst.CSTNode] = node
        while current is not None:
            entry = self.roots.get(id(current))
            if entry is not None and entry[0] is current:
                return entry[1], (current if current is not node else None)
            if current is first.module or first.parent(current) is not None:
                return current, None
            current = ctx.parent(current)
        return None, None

    def _counterpart(self, node: cst.CSTNode, ctx: Context, replacement: cst.CSTNode, root: cst.CSTNode) -> cst.CSTNode:
        """The node of ``root``'s subtree that ``node`` (inside ``replacement``, which stands
        for ``root``) was copied from, when the rewriting kept its code: the same k-th node of
        its type and code in both; else ``root`` itself."""
        kind, code = type(node), ctx.module.code_for_node(node)

        def same(subtree: cst.CSTNode, module: cst.Module) -> List[cst.CSTNode]:
            found, stack = [], [subtree]
            while stack:
                current = stack.pop()
                if type(current) is kind and module.code_for_node(current) == code:
                    found.append(current)
                stack.extend(reversed(structural_children(current)))
            return found

        ordinal = next(i for i, n in enumerate(same(replacement, ctx.module)) if n is node)
        originals = same(root, self.first.module)
        return originals[ordinal] if ordinal < len(originals) else root

    def tracer(self, ctx: Context) -> Callable[[cst.CSTNode, object], None]:
        """What a transformer over ``ctx``'s tree calls with each node it rebuilds or replaces."""

        def trace(original: cst.CSTNode, result: object) -> None:
            root = self.root(original, ctx)
            if root is not None:
                for node in result.nodes if isinstance(result, cst.FlattenSentinel) else (result,):
                    if isinstance(node, cst.CSTNode):
                        self.roots[id(node)] = (node, root)

        return trace

    def carry_body(self, before: cst.Module, after: cst.Module, ctx: Context) -> None:
        """Records what the statements of ``after`` that import management changed or
        inserted stand for: the statement of ``before`` changed in place, or the one an
        inserted statement went in front of."""
        module_root = self.root(before, ctx)
        if module_root is not None:
            self.roots[id(after)] = (after, module_root)
        old, kept = before.body, {id(statement) for statement in after.body}
        index = 0
        for statement in after.body:
            if index < len(old) and old[index] is statement:
                index += 1
                continue
            stands_for = old[index] if index < len(old) else None
            if stands_for is not None and id(stands_for) not in kept:
                index += 1  # changed in place
            root = self.root(stands_for, ctx) if stands_for is not None else None
            if root is not None:
                self.roots[id(statement)] = (statement, root)

    def locate(self, ctx: Context, node: cst.CSTNode, code: str, message: str, safety: str) -> Diagnostic:
        """A fix on ``node`` of ``ctx``'s tree, located in the input."""
        if ctx is not self.first:
            root, replacement = self._root(node, ctx)
            if root is not None and (root is not self.first.module or isinstance(node, cst.Module)):
                if replacement is not None:
                    root = self._counterpart(node, ctx, replacement, root)
                return _diagnostic(self.first, root, code, message, safety)
        return _diagnostic(ctx, node, code, message, safety)


def _without_backstop_repeats(
    findings: Sequence[Finding], ctx: Context, plan: Plan
) -> Sequence[Finding]:
    """A backstop rule's findings, less those on a line where another rule has one or where a
    ``# jaxmigrate: ignore[...]`` comment silences some rule (the user has seen that line)."""
    backstops = {rule.code for rule in plan.rules if rule.backstop}
    if not backstops or not any(f[1] in backstops for f in findings):
        return findings
    spoken = {ctx.position(node).start.line for node, code, _m, _s in findings if code not in backstops}
    spoken.update(ctx.suppressed_lines())
    return [f for f in findings if f[1] not in backstops or ctx.position(f[0]).start.line not in spoken]


def _diagnostics(ctx: Context, entries: Sequence[Finding]) -> List[Diagnostic]:
    found = {_diagnostic(ctx, *entry) for entry in entries}
    return sorted(found, key=lambda d: (d.line, d.column, d.code, d.message))


def _verify_parses(output: str, ast_parsed: bool) -> None:
    try:
        if ast_parsed:
            ast.parse(output)
        else:
            cst.parse_module(output)
    except (SyntaxError, cst.ParserSyntaxError) as error:
        raise MigrationError(f"internal error: the migrated text does not parse ({error})") from None
