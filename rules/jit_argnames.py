"""JAX912 jit-argnames: ``jax.jit`` static/donated argument names and numbers the jitted function
does not take, which JAX ignored until 0.4.26 and rejects from 0.4.27.

Safe.  ``jax/_src/api_util.py`` checks them against ``inspect.signature`` of the function when
``jit`` wraps it: jax 0.2.13 (which added ``static_argnames``) to 0.3.13 did not check them, 0.3.14
to 0.4.26 warned (``SyntaxWarning``, "will be replaced by an error") and went on, and from 0.4.27
the check raises ``ValueError`` (the 0.4.27 changelog; the same check covers ``donate_argnames``,
added in 0.4.14, and ``donate_argnums``).  An entry the function cannot receive selects nothing on
any release before 0.4.27 (a name no call can pass, a position past the parameters, skipped when
a call is made), so dropping it keeps what the code did; observed on jax 0.4.13 (a warning, the
same results) and 0.4.30, 0.6.2 and 0.10.2 (the error, at import for a decorator).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, List, Optional, Tuple

from jaxmigrate.migrator import lazycst as cst, references as refs
from jaxmigrate.migrator.astfacts import Facts
from jaxmigrate.migrator.astview import AstView
from jaxmigrate.migrator.context import Context
from jaxmigrate.migrator.diagnostics import Diagnostic
from jaxmigrate.migrator.rule import Example, Lifecycle, Rule, Safety
from jaxmigrate.migrator.scope import Scope
from jaxmigrate.migrator.version import Version
from jaxmigrate.rules._definitions import scope_definitions
from jaxmigrate.rules._helpers import fitting
from jaxmigrate.rules._jit_arguments import (
    CHANGE,
    COUNTERPART,
    FIX,
    JIT,
    KEYWORDS,
    NAMES,
    NUMBERS,
    PARTIAL,
    UNSURE,
    WARNED_FROM,
    Entry,
    Signature,
    ast_verdicts,
    droppable,
    entry_text,
    signature_of,
    verdicts_at,
)

if TYPE_CHECKING:  # pragma: no cover
    from jaxmigrate.migrator.source import SourceRange

Entries = List[Tuple[Entry, "cst.CSTNode"]]  # each entry with its element (or the whole value)


class JitArgnames(Rule, code="JAX912", safety=Safety.SAFE):
    """@partial(jax.jit, static_argnames=("self", "gone")) -> ("self",) where the function has no
    `gone` (an error from JAX 0.4.27)

    **What it does.** Where `jax.jit` names static or donated arguments (`static_argnames`,
    `donate_argnames`, `static_argnums`, `donate_argnums`, written as a string, a number, or a
    tuple or list of them) and the module shows the jitted function's signature, drops each
    entry the function cannot take, as JAX checks it: a name no parameter can be passed under
    (any name is fine where it takes `**kwargs`), a positional-only or `*args` name, a number
    past the positional parameters (any is fine where it takes `*args`).  The signature is
    shown by a `def` decorated with `@partial(jax.jit, ...)` (`functools.partial`, or a bare
    `jax.jit(...)` decorator) as its innermost decorator, or by the function passed to
    `jax.jit(f, ...)`, `partial(jax.jit, ...)(f)` or `partial(jax.jit, f, ...)`: a lambda, or
    a name whose one binding in its scope is an undecorated `def` (`f = jax.jit(f, ...)`
    rebinding it included); a method keeps `"self"`, a parameter like any other.  A keyword
    left empty is dropped, or kept as `()` where its counterpart (`static_argnums` for
    `static_argnames`, ...) is passed: JAX completes one from the other only when it is
    passed alone.  In code written before 0.4.27 it reports instead: names passed for a
    function the module does not show (imported, a parameter, `self.method`, an alias such as
    `my_jit = partial(jax.jit, ...)`), entries a `def` lacks where other decorators wrap it
    before jit does (one made with `functools.wraps` keeps its signature, one that takes
    `**kwargs` any name), and a negative number out of range.

    It acts where the target reaches 0.4.27, in code not known to be written for 0.4.27 or
    later (`--source-version`, the file's own JAX names, the project's requirement).

    **Why.** Until 0.4.26 JAX ignored such entries (silently, then from 0.3.14 with a
    `SyntaxWarning`); from 0.4.27 `jit` raises `ValueError: Jitted function has invalid
    argnames {'batch_size'} in static_argnames. Function does not take these args.` when it
    wraps the function: for a decorator, when the module is imported (qdax 0.1.0's
    `CMAMEGAEmitter.emit`).  The entries selected nothing before, so dropping them changes
    nothing on any release.

    **Use instead.** Name only parameters the function has.
    """

    lifecycle = Lifecycle(
        deprecated=WARNED_FROM,
        removed=("0.4.27", "invalid static_argnums or static_argnames raise instead of warning"),
    )
    references = (
        refs.source_at(
            WARNED_FROM, "jax/_src/api_util.py", "validate_argnames warns (SyntaxWarning)"
        ),
        refs.source_at("0.4.27", "jax/_src/api_util.py", "_validate_argnames raises ValueError"),
        refs.api(JIT),
    )
    keywords = KEYWORDS
    # Its hooks read their sites, the names they resolve to, and the ``def`` of the function a
    # call jits: where a statement the piecewise path left out binds or reads its name, the
    # whole module answers (``_definition``).
    whole_module = False
    examples = (
        Example(
            title="qdax 0.1.0: a static name the method no longer takes",
            before="""
            from functools import partial

            import jax

            class Emitter:
                @partial(jax.jit, static_argnames=("self", "batch_size"))
                def emit(self, repertoire, emitter_state, random_key):
                    return repertoire.sample(random_key, self._batch_size)
            """,
            after="""
            from functools import partial

            import jax

            class Emitter:
                @partial(jax.jit, static_argnames=("self",))
                def emit(self, repertoire, emitter_state, random_key):
                    return repertoire.sample(random_key, self._batch_size)
            """,
            source_version="0.3.25",
        ),
        Example.reported(
            title="a function the module does not define",
            code="""
            import jax
            from mylib import rollout

            fast_rollout = jax.jit(rollout, static_argnames=("env", "length"))
            """,
            source_version="0.3.25",
        ),
    )

    def runs_for(self, source: "SourceRange") -> bool:
        return source.written_before(CHANGE) is not False

    def for_survey(self, low: Version, high: Optional[Version], unsafe_fixes: bool) -> None:
        """None: its fixes write no name and need no newer JAX (see :meth:`Rule.for_survey`)."""
        return None

    def ast_gate(self, facts: Facts) -> bool:
        """A jit call (or a partial of jax.jit) passing one of the keywords literally, whose
        function's signature, as ``ast`` reads it, rejects an entry, or is not shown here."""
        return bool(ast_verdicts(facts))

    def ast_findings(self, view: AstView) -> Optional[List[Diagnostic]]:
        """Nothing where the target stops before 0.4.27 or the code is newer, or where every
        site is a function not shown here in code not known to be older; else None."""
        if view.upper is not None and view.upper < CHANGE:
            return []
        older = view.written_before(CHANGE)
        verdicts = ast_verdicts(view.facts)
        if older is False or not verdicts:
            return []
        if verdicts_at(verdicts, (FIX, UNSURE)) or older:
            return None
        return []

    def visit_keyword(self, arg: cst.Arg, call: cst.Call, ctx: Context) -> None:
        seen = ctx.memo((self.code, "calls"), set)
        if id(call) in seen:
            return
        seen.add(id(call))
        if not ctx.reaches(CHANGE):
            return
        older, why = ctx.written_before(CHANGE)
        if older is False:
            return
        scope = ctx.scope_of(call)
        kind = _jit_kind(ctx, call, scope)
        if kind is None:
            return
        literal: Dict[str, Tuple[cst.Arg, Entries]] = {}
        for item in call.args:
            keyword = item.keyword.value if item.keyword is not None else ""
            if keyword in KEYWORDS:
                entries = _entries(keyword, item.value)
                if entries is not None:
                    literal[keyword] = (item, entries)
        if not literal:
            return
        found = _signature(ctx, call, kind, scope)
        if found is not None and found[2]:
            _drop(ctx, call, kind, literal, found[0], found[1])
        elif found is not None and older:
            signature, function, _ = found
            for keyword, (item, entries) in literal.items():
                invalid = [e for e, _ in entries if signature.invalid(keyword, e)]
                if invalid:
                    ctx.report(item, *_wrapped(keyword, invalid, function, why))
        elif older:
            for keyword, (item, _) in literal.items():
                if keyword in NAMES:
                    ctx.report(item, *_unseen(keyword, why))


def _jit_kind(ctx: Context, call: cst.Call, scope: Scope) -> Optional[str]:
    """``jax.jit(...)`` -> "jit", ``functools.partial(jax.jit, ...)`` -> "partial"."""
    called = ctx.qualname(call.func, scope)
    if called == JIT:
        return "jit"
    if called == PARTIAL and call.args and call.args[0].keyword is None:
        if ctx.qualname(call.args[0].value, scope) == JIT:
            return "partial"
    return None


def _entries(keyword: str, value: cst.BaseExpression) -> Optional[Entries]:
    """The entries of a literal value (a string, a number, a tuple or list of them)."""
    if isinstance(value, (cst.Tuple, cst.List)):
        found: Entries = []
        for element in value.elements:
            entry = _entry(keyword, element.value) if isinstance(element, cst.Element) else None
            if entry is None:
                return None
            found.append((entry, element))
        return found
    entry = _entry(keyword, value)
    return None if entry is None else [(entry, value)]


def _entry(keyword: str, node: cst.BaseExpression) -> Optional[Entry]:
    sign = 1
    if (
        keyword in NUMBERS
        and isinstance(node, cst.UnaryOperation)
        and isinstance(node.operator, cst.Minus)
    ):
        sign, node = -1, node.expression
    if keyword in NAMES and isinstance(node, cst.SimpleString) and sign == 1:
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    if keyword in NUMBERS and isinstance(node, cst.Integer):
        return sign * int(node.evaluated_value)
    return None


def _signature(
    ctx: Context, call: cst.Call, kind: str, scope: Scope
) -> Optional[Tuple[Signature, str, bool]]:
    """The signature of the function the call jits, what to call it, and whether it is sure
    (not the signature of a ``def`` that other decorators wrap first); None where the module
    does not show it."""
    if any(arg.star for arg in call.args):
        return None
    positional = [arg for arg in call.args if arg.keyword is None]
    given = 1 if kind == "jit" else 2  # jax.jit(f, ...) / partial(jax.jit, f, ...)
    outer = call
    if len(positional) >= given:
        function = positional[given - 1].value
    else:
        parent = ctx.parent(call)
        if isinstance(parent, cst.Decorator):
            owner = ctx.parent(parent)
            if not isinstance(owner, cst.FunctionDef):
                return None
            innermost = owner.decorators[-1] is parent
            return _params(owner.params), f"{owner.name.value}()", innermost
        if not (isinstance(parent, cst.Call) and parent.func is call and parent.args):
            return None
        first = parent.args[0]
        if first.keyword is not None or first.star:
            return None
        outer, function = parent, first.value
    if isinstance(function, cst.Lambda):
        return _params(function.params), "the lambda", True
    if not isinstance(function, cst.Name):
        return None
    definition = _definition(ctx, function.value, scope, outer)
    if definition is None:
        return None
    return _params(definition.params), f"{function.value}()", not definition.decorators


def _definition(
    ctx: Context, name: str, scope: Scope, outer: cst.Call
) -> Optional[cst.FunctionDef]:
    """The ``def`` that is ``name``'s one binding where ``scope`` reads it (besides ``name =
    <outer>``, the name bound again to its jitted self)."""
    ctx.needs_name(name)
    bindings = scope.lookup(name)
    if not bindings or any(binding.is_import for binding in bindings):
        return None
    home = bindings[0].scope
    made = scope_definitions(ctx, home).get(name, [])
    defs = [entry for entry in made if entry[0] == "def"]
    if len(defs) != 1 or any(
        entry[0] != "def" and not (entry[0] == "value" and entry[1] is outer) for entry in made
    ):
        return None
    found = [
        f for f in ctx.nodes(cst.FunctionDef) if f.name.value == name and ctx.scope_of(f) is home
    ]
    return found[0] if len(found) == 1 else None


def _params(params: cst.Parameters) -> Signature:
    star = params.star_arg
    return signature_of(
        [p.name.value for p in params.posonly_params],
        [p.name.value for p in params.params],
        star.name.value if isinstance(star, cst.Param) else None,
        [p.name.value for p in params.kwonly_params],
        params.star_kwarg is not None,
    )


def _drop(
    ctx: Context,
    call: cst.Call,
    kind: str,
    literal: Dict[str, Tuple[cst.Arg, Entries]],
    signature: Signature,
    function: str,
) -> None:
    """Drops the entries ``signature`` rejects; an emptied keyword goes, or stays as ``()``
    where its counterpart is passed (and stays).  A partial left with jax.jit alone becomes
    jax.jit."""
    dropped: Dict[str, List[Entry]] = {}
    kept: Dict[str, Optional[cst.BaseExpression]] = {}  # keyword -> its new value (None: empty)
    for keyword, (arg, entries) in literal.items():
        invalid = {id(node) for entry, node in entries if signature.invalid(keyword, entry)}
        if not invalid:
            continue
        bad = [entry for entry, node in entries if id(node) in invalid]
        if not all(droppable(keyword, entry) for entry in bad):
            ctx.report(arg, *_out_of_range(keyword, bad, function))
            continue
        dropped[keyword] = bad
        kept[keyword] = _without(arg.value, {id(node) for _, node in entries} - invalid)
    if not dropped:
        return
    emptied = {keyword for keyword, value in kept.items() if value is None}
    passed = {a.keyword.value for a in call.args if a.keyword is not None and not _none(a.value)}
    args: List[cst.Arg] = []
    for arg in call.args:
        keyword = arg.keyword.value if arg.keyword is not None else ""
        value = kept.get(keyword, arg.value)
        if value is None and COUNTERPART[keyword] in passed - emptied:
            value = cst.List([]) if isinstance(arg.value, cst.List) else cst.Tuple([])
        if value is not None:
            args.append(arg if value is arg.value else arg.with_changes(value=value))
        elif arg is call.args[-1] and args:  # the one now last takes its comma (or none)
            args[-1] = args[-1].with_changes(comma=arg.comma)
    message, detail = _dropped(dropped, function)
    if kind == "partial" and len(args) == 1:  # @partial(jax.jit) -> @jax.jit
        ctx.replace(call, args[0].value, message, detail=detail)
    else:
        ctx.replace(call, call.with_changes(args=args), message, detail=detail)


def _none(value: cst.BaseExpression) -> bool:
    return isinstance(value, cst.Name) and value.value == "None"


def _without(value: cst.BaseExpression, left: set) -> Optional[cst.BaseExpression]:
    """``value`` with only the elements in ``left`` (ids), in its own layout; None if none."""
    if not isinstance(value, (cst.Tuple, cst.List)):
        return None
    elements = [e for e in value.elements if id(e) in left]
    if not elements:
        return None
    if elements[-1] is not value.elements[-1]:  # the last one takes the last comma (or none)
        elements[-1] = elements[-1].with_changes(comma=value.elements[-1].comma)
    if isinstance(value, cst.Tuple) and len(elements) == 1:
        if not isinstance(elements[0].comma, cst.Comma):  # ("self",), not ("self")
            elements[0] = elements[0].with_changes(comma=cst.Comma())
    return value.with_changes(elements=elements)


def _dropped(dropped: Dict[str, List[Entry]], function: str) -> Tuple[str, str]:
    listed = "; ".join(
        f"{keyword} {', '.join(entry_text(keyword, e) for e in entries)}"
        for keyword, entries in dropped.items()
    )
    what = "them" if sum(map(len, dropped.values())) > 1 else "it"
    message = fitting(
        f"{listed} dropped: {function} does not take {what} (an error from JAX 0.4.27)",
        f"{listed} dropped: {function} does not take {what}",
        f"jit entries {function} does not take dropped (an error from JAX 0.4.27)",
        "jit arguments the function does not take dropped (an error from JAX 0.4.27)",
    )
    keyword, entries = next(iter(dropped.items()))
    if keyword in NAMES:
        names = ", ".join(map(repr, entries))
        error = f"invalid argnames {{{names}}} in {keyword}. Function does not take these args."
    else:
        error = f"{keyword}=(...), but only accepts N positional arguments."
    detail = (
        f'From JAX 0.4.27 jit raises "ValueError: Jitted function has {error}" when it wraps '
        f"{function} (for a decorator, when the module is imported).  Every earlier release "
        f"ignored these entries (from {WARNED_FROM} with a SyntaxWarning): without them the "
        "code does what it did."
    )
    return message, detail


def _out_of_range(keyword: str, entries: List[Entry], function: str) -> Tuple[str, str]:
    listed = ", ".join(map(str, entries))
    message = fitting(
        f"{keyword} {listed} is out of range for {function}: an error from JAX 0.4.27",
        f"{keyword} {listed} is out of range: an error from JAX 0.4.27",
    )
    detail = (
        f'JAX 0.4.27 and later raise ValueError when jit wraps {function} ("Jitted function '
        f'has {keyword}=..., but only accepts N positional arguments."); a negative index '
        "out of range raised when the function was called on some older releases, so it is "
        "left for a person to remove."
    )
    return message, detail


def _wrapped(keyword: str, entries: List[Entry], function: str, why: str) -> Tuple[str, str]:
    listed = ", ".join(entry_text(keyword, e) for e in entries)
    message = fitting(
        f"{keyword} {listed}: not in {function}'s signature; JAX 0.4.27 raises unless a "
        "decorator adds it",
        f"{keyword} {listed}: not in {function}'s signature (an error from JAX 0.4.27)",
        f"{keyword}: entries not in {function}'s signature (an error from JAX 0.4.27)",
    )
    detail = (
        f"{why}.  From JAX 0.4.27 jit raises ValueError when the function it wraps cannot take "
        f"an entry of {keyword}; earlier releases ignored such entries.  Here jit wraps what "
        f"the decorators below it made of {function}: with functools.wraps that has "
        f"{function}'s signature, which lacks these entries.  Drop them unless the decorators "
        "give the function parameters of their own."
    )
    return message, detail


def _unseen(keyword: str, why: str) -> Tuple[str, str]:
    message = (
        f"{keyword} for a function whose signature is not shown here: JAX 0.4.27 rejects "
        "names it lacks"
    )
    detail = (
        f'{why}.  From JAX 0.4.27 jit raises ValueError ("Jitted function has invalid '
        f'argnames ... in {keyword}. Function does not take these args.") when it wraps a '
        "function that lacks one of the names listed (and takes no **kwargs); earlier releases "
        "ignored such names.  This module does not show the function's signature: check each "
        "name against it and drop those it lacks."
    )
    return message, detail
