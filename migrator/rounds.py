"""The rounds of rewriting one parsed module: analyse, call every rule hook on its sites,
apply the edits and import changes in one pass, and repeat until nothing changes.  Also the
``# jaxmigrate: ignore[...]`` suppression comments the rounds honour, and what the last round
reports (rule failures, legacy names kept alive by ``__all__``).  The engine around it
handles the gates, parsing and errors; the rounds only ever see a LibCST tree."""

from __future__ import annotations

from typing import (
    TYPE_CHECKING,
    Dict,
    Iterable,
    List,
    Optional,
    Sequence,
    Set,
    Tuple,
)

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.migrator.analysis import Analysis, analyze
from jaxmigrate.migrator.apply import Apply
from jaxmigrate.migrator.astview import find_suppressions
from jaxmigrate.migrator.cleanup import left_unused, remove_top_level, unused_imports
from jaxmigrate.migrator.context import Context, Finding, NameSite
from jaxmigrate.migrator.diagnostics import MESSAGE_LIMIT, Diagnostic
from jaxmigrate.migrator.errors import LeftOut, MigrationError, one_line
from jaxmigrate.migrator.folds import fold_leftovers
from jaxmigrate.migrator.imports import add_imports
from jaxmigrate.migrator.importwrap import layout_imports, order_imports
from jaxmigrate.migrator.layout import realignments
from jaxmigrate.migrator.naming import CannotReference, bound_name, names_in as _names_in
from jaxmigrate.migrator.origins import Origins, diagnostics_of, located_fix
from jaxmigrate.migrator.plan import Plan, make_plan
from jaxmigrate.migrator.positions import module_code
from jaxmigrate.migrator.realign import realign_written, relayout_long_calls
from jaxmigrate.migrator.rule import Rule
from jaxmigrate.migrator.settings import Settings
from jaxmigrate.migrator.submodules import dead_submodule_imports
from jaxmigrate.migrator.textgate import under
from jaxmigrate.migrator.tidy import Produced, tidy
from jaxmigrate.migrator.wrap import wrap

if TYPE_CHECKING:  # pragma: no cover
    from jaxmigrate.migrator.piecewise import Pieces

MAX_ROUNDS = 10


def run_rounds(
    module: cst.Module,
    text: str,
    plan: Plan,
    settings: Settings,
    errors: Optional[List[Diagnostic]] = None,
    whole: Optional[str] = None,
    called: Optional[Set[str]] = None,
    pieces: Optional[Pieces] = None,
) -> Tuple[str, List[Diagnostic], List[Diagnostic]]:
    """The rounds of rewriting: the output, the fixes and the findings.  A rule hook that
    raises loses its site, not the file: the failure goes to ``errors`` (code, message, and
    the line in the output, like a finding; 0 for a failure only an earlier round had).

    ``whole``: when ``module`` holds only some statements of a file (:mod:`migrator.piecewise`),
    the file's whole text, which the layout passes read for its style and for the text the user
    wrote (and the rules read as the file they migrate).  ``called``: collects the code of
    every rule whose hook runs; ``pieces``: what the piecewise path left out of the file
    (:meth:`Context.needs_name`, :meth:`Context.read_elsewhere`)."""
    contexts: List[Context] = []  # each round's, released once the rounds are over
    try:
        return _rounds(module, text, plan, settings, errors, whole, called, pieces, contexts)
    finally:
        for ctx in contexts:
            ctx.release()


def _rounds(
    module: cst.Module,
    text: str,
    plan: Plan,
    settings: Settings,
    errors: Optional[List[Diagnostic]],
    whole: Optional[str],
    called: Optional[Set[str]],
    pieces: Optional[Pieces],
    contexts: List[Context],
) -> Tuple[str, List[Diagnostic], List[Diagnostic]]:
    style = text if whole is None else whole
    errors = [] if errors is None else errors
    failed_before: Dict[Tuple[str, str], None] = {}  # (code, message) of earlier rounds' failures
    fixes: List[Diagnostic] = []
    originally_used: Optional[Set[Tuple[str, str]]] = None
    added_imports: Set[str] = set()
    suppressions = find_suppressions(text)
    file_state: Dict[str, object] = {"text": style}  # the file as read: what it was written for
    enabled: Set[Rule] = set(plan.rules)  # the rules gate 2 let through; see _dispatch
    origins: Optional[Origins] = None  # when fixes are located: what later trees stand for
    produced = Produced()  # what the fixes wrote: the only nodes the tidying reads
    for _round in range(MAX_ROUNDS):
        if _round == 1:
            # A rewrite can make work for a rule the gates excluded: from the second round
            # on every active rule looks (the traversal costs the same; no new parse).
            plan = make_plan(tuple(settings.active_rules()))
        if _round and suppressions:
            suppressions = find_suppressions(module_code(module))
        analysis = analyze(module, plan.interest)
        ctx = Context(module, analysis, settings, settings.target, suppressions)
        contexts.append(ctx)
        ctx.file_state = file_state
        ctx.pieces = pieces
        if originally_used is None:
            # Bindings are matched across rounds by (name, qualname): a key that also has an
            # originally unused binding (a side-effect ``import jax.experimental.x`` beside a
            # used ``import jax``) is never cleaned up, so no unused import of the input is lost.
            used_keys: Set[Tuple[str, str]] = set()
            unused_keys: Set[Tuple[str, str]] = set()
            unsure: Set[Tuple[str, str]] = set()  # unused here, maybe not in the whole file
            for b in analysis.imports:
                key = (b.name, b.qualname or "")
                (used_keys if analysis.is_used(b) else unused_keys).add(key)
                if ctx.read_elsewhere(b) and not analysis.is_used(b):
                    unsure.add(key)
            if unsure & used_keys:
                ctx.needs_whole_module()  # is the key used throughout? the whole module knows
            originally_used = used_keys - unused_keys
        if not _round:
            ctx.source = text  # the module is its parse until a round applies edits
        if settings.locate_fixes and origins is None:
            origins = Origins(ctx)
        failures = _dispatch(ctx, analysis, plan, enabled, called)
        removals = unused_imports(ctx, analysis, plan, originally_used, added_imports)
        removals.update(dead_submodule_imports(ctx, analysis, removals))
        if not ctx.edits and not removals and produced:
            tidy(ctx, produced, _same_types(plan))
        if not ctx.edits and not removals and (fixes or _round):
            fold_leftovers(ctx, produced)
        if not ctx.edits and not removals and (fixes or _round):
            order_imports(ctx, style, settings.first_party or ())
        if not ctx.edits and not removals and produced and settings.line_length:
            realign_written(ctx, produced, style, settings.line_length)
        if not ctx.edits and not removals and produced and settings.line_length:
            relayout_long_calls(ctx, produced, text, style, settings.line_length)
        if not ctx.edits and not removals and produced and settings.line_length:
            wrap(ctx, produced, text, settings.line_length, style)
        if not ctx.edits and not removals and (fixes or _round) and settings.line_length:
            layout_imports(ctx, produced, style, settings.line_length)
        if not ctx.edits and not removals:
            errors.extend(_failures(ctx, failures, failed_before))
            _report_exported_legacy(ctx, analysis, plan)
            diagnostics = diagnostics_of(ctx, _without_backstop_repeats(ctx.findings, ctx, plan))
            # Nothing applied at all: the input, without generating code for the whole tree;
            # else the code the position pass (if one ran this round) already generated.
            output = text if not (fixes or _round) else ctx.generated_code() or module_code(module)
            return output, fixes, diagnostics
        for _node, code, error in failures:
            failed_before[(code, one_line(error))] = None
        applied = Apply(
            ctx.edits,
            removals,
            _paths_to(
                ctx, [e.node for e in ctx.edits.values()] + [r[0] for r in removals.values()]
            ),
        )
        if settings.line_length != 0:  # (0: the survey's, which lays nothing out)
            applied.realign = realignments(ctx, ctx.edits)
        if origins is not None:
            applied.trace = origins.tracer(ctx)
        module = module.visit(applied)
        fixes.extend(located_fix(origins, ctx, e) for e in applied.applied if e.reported)
        produced.add((edit for edit in applied.applied if id(edit.node) in ctx.edits), ctx)
        # Only imports an applied edit refers to: a deferred edit asks again next round.
        planned = ctx.planned_imports
        used = _names_in(
            (edit.new for edit in applied.applied),
            {bound_name(name) for _m, name in planned.values()},
        )
        wanted = [planned[k] for k in sorted(planned) if bound_name(planned[k][1]) in used]
        if wanted:
            before = module
            module = add_imports(module, wanted, settings.first_party or ())
            if origins is not None:
                origins.carry_body(before, module, ctx)
            added_imports.update(name for _module, name in wanted)
        if ctx.edits:
            # What the next round's analysis would find unused, removed now when certain.
            left = left_unused(ctx, analysis, plan, originally_used, added_imports, removals)
            if left:
                module = remove_top_level(module, left, fixes, ctx, origins)
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


def _dispatch(
    ctx: Context,
    analysis: Analysis,
    plan: Plan,
    enabled: Set[Rule],
    called: Optional[Set[str]] = None,
) -> List[Tuple[cst.CSTNode, str, Exception]]:
    """Calls every rule hook on this round's sites.  ``enabled`` (kept across rounds, and
    updated here) holds the rules whose ``visit_module`` runs: the ones gate 2 let through,
    and any rule that later finds one of its sites (guarded ones included) or a legacy-module
    import in the rewritten tree, the gate's own criterion.

    Returns the hooks that raised, as (site, rule code, exception): what such a hook recorded
    is dropped, and the other hooks run on."""
    failures: List[Tuple[cst.CSTNode, str, Exception]] = []

    def call(rule: Rule, site_node: cst.CSTNode, hook, *args) -> None:  # noqa: ANN001
        ctx.begin(rule)
        if called is not None:
            called.add(rule.code)
        # what the hook may add to, so that a hook that raises leaves nothing behind
        edits, findings, planned = len(ctx.edits), ctx.findings_mark(), dict(ctx.planned_imports)
        try:
            hook(*args, ctx)
        except CannotReference as error:
            ctx.report(site_node, f"cannot fix here: {error}")
        except (MigrationError, LeftOut):
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


def _roll_back(
    ctx: Context,
    edits: int,
    findings: Tuple[int, int],
    planned: Dict[str, Tuple[Optional[str], str]],
) -> None:
    """Forget what a hook recorded after the counts given (edits are never replaced, only added)."""
    for key in list(ctx.edits)[edits:]:
        del ctx.edits[key]
    ctx.roll_back_findings(findings)
    if ctx.planned_imports != planned:
        ctx.planned_imports.clear()
        ctx.planned_imports.update(planned)


def _failures(
    ctx: Context,
    failures: List[Tuple[cst.CSTNode, str, Exception]],
    failed_before: Dict[Tuple[str, str], None],
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
        found[(code, line, one_line(error))] = None
    last = {(code, message) for code, _line, message in found}
    found.update(
        ((code, 0, message), None) for code, message in failed_before if (code, message) not in last
    )
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
                if r.removed_in
                and r.names_are_legacy
                and (qualname in r.names or under(qualname, r.legacy_modules))
            ),
            None,
        )
        if rule is None:
            continue
        if covered is None:
            backstops = {r.code for r in plan.rules if r.backstop}
            covered = {
                ctx.position(node).start.line
                for node, code, _m, _s in ctx.findings
                if code not in backstops
            }
        if ctx.position(binding.node).start.line in covered:
            continue
        ctx.begin(rule)
        message = f"{qualname} is in __all__ but was removed in JAX {rule.removed_in}"
        if len(message) > MESSAGE_LIMIT - len("; export its replacement"):
            message = (
                f"{qualname.rpartition('.')[2]} in __all__ was removed in JAX {rule.removed_in}"
            )
        ctx.report(
            binding.node,
            f"{message}; export its replacement",
            f"{qualname} is re-exported through __all__ but was removed in JAX {rule.removed_in}:"
            " this import fails with ImportError; export the replacement instead"
            f" ({rule.summary}).",
        )


def _without_backstop_repeats(
    findings: Sequence[Finding], ctx: Context, plan: Plan
) -> Sequence[Finding]:
    """A backstop rule's findings, less those on a line where another rule has one (or counts a
    use in a once-per-module finding) or where a ``# jaxmigrate: ignore[...]`` comment silences
    some rule (the user has seen that line)."""
    backstops = {rule.code for rule in plan.rules if rule.backstop}
    if not backstops or not any(f[1] in backstops for f in findings):
        return findings
    spoken = {
        ctx.position(node).start.line for node, code, _m, _s in findings if code not in backstops
    }
    spoken.update(ctx.suppressed_lines())
    spoken.update(ctx.covered_lines)
    return [
        f for f in findings if f[1] not in backstops or ctx.position(f[0]).start.line not in spoken
    ]
