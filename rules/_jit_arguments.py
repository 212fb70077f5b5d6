"""What ``jax.jit`` checks of its ``static_argnames``/``donate_argnames``/``static_argnums``/
``donate_argnums`` against the jitted function's signature, and where a module lets that
signature be read: the facts of JAX912 (jit-argnames), its LibCST hooks aside.

JAX's own check (``_validate_argnames`` / ``_validate_argnums`` in ``jax/_src/api_util.py``,
unchanged from 0.3.14 to 0.12.0): a name is invalid when it is a positional-only parameter or
the ``*args`` parameter, or, unless the function takes ``**kwargs``, when no parameter can be
passed under it; a number is invalid when the function takes no ``*args`` and it is not an
index of a positional parameter (``-n <= i < n``).  From 0.3.14 to 0.4.26 JAX warned
(``SyntaxWarning``) and then ignored such entries, as every earlier release did silently; from
0.4.27 it raises ``ValueError`` when ``jit`` wraps the function.

This module imports no LibCST: the ``ast`` gate and answers of the rule read it.
"""

from __future__ import annotations

import ast
from typing import Dict, FrozenSet, List, NamedTuple, Optional, Tuple, Union

from jaxmigrate.migrator.astfacts import Facts
from jaxmigrate.migrator.version import parse_version

CHANGE = parse_version("0.4.27")  # invalid entries raise ValueError from this release
WARNED_FROM = "0.3.14"  # ... and were ignored with a SyntaxWarning from this one
JIT = "jax.jit"
PARTIAL = "functools.partial"
NAMES = ("static_argnames", "donate_argnames")
NUMBERS = ("static_argnums", "donate_argnums")
KEYWORDS = frozenset((*NAMES, *NUMBERS))
# A keyword given alone is completed from the signature by its counterpart; given both, JAX
# takes each as it is (``infer_argnums_and_argnames``): an emptied keyword whose counterpart is
# passed stays, as ``()``.
COUNTERPART = {
    "static_argnames": "static_argnums",
    "static_argnums": "static_argnames",
    "donate_argnames": "donate_argnums",
    "donate_argnums": "donate_argnames",
}

Entry = Union[str, int]


class Signature(NamedTuple):
    """What JAX's check reads of ``inspect.signature(f)``."""

    positional: int  # positional-only and positional-or-keyword parameters
    by_name: FrozenSet[str]  # positional-or-keyword and keyword-only parameters
    not_by_name: FrozenSet[str]  # positional-only parameters and the ``*args`` parameter
    var_positional: bool
    var_keyword: bool

    def invalid(self, keyword: str, entry: Entry) -> bool:
        """Does JAX 0.4.27+ reject ``entry`` of ``keyword`` for this function?"""
        if keyword in NAMES:
            return entry in self.not_by_name or (not self.var_keyword and entry not in self.by_name)
        if self.var_positional:
            return False
        return not -self.positional <= int(entry) < self.positional


def signature_of(
    posonly: List[str],
    regular: List[str],
    var_positional: Optional[str],
    kwonly: List[str],
    var_keyword: bool,
) -> Signature:
    not_by_name = {*posonly, var_positional} - {None}
    return Signature(
        len(posonly) + len(regular),
        frozenset((*regular, *kwonly)),
        frozenset(not_by_name),  # type: ignore[arg-type]
        var_positional is not None,
        var_keyword,
    )


def droppable(keyword: str, entry: Entry) -> bool:
    """An invalid entry every JAX before 0.4.27 ignored: a name, or a number past the
    parameters (a negative one out of range raised in the calls of some older releases)."""
    return keyword in NAMES or int(entry) >= 0


def entry_text(keyword: str, entry: Entry) -> str:
    return repr(entry) if keyword in NAMES else str(entry)


# -- the ``ast`` side: gate 2 and the rule's answers without LibCST --------------------------
FIX, REPORT, UNSURE = "fix", "report", "unsure"


def ast_entries(keyword: str, value: ast.AST) -> Optional[List[Entry]]:
    """The entries of a literal value of ``keyword`` (a string, a number, a tuple or list of
    them); None for anything else."""
    items = value.elts if type(value) in (ast.Tuple, ast.List) else [value]  # type: ignore[attr-defined]
    found: List[Entry] = []
    for item in items:
        entry = _ast_entry(keyword, item)
        if entry is None:
            return None
        found.append(entry)
    return found


def _ast_entry(keyword: str, node: ast.AST) -> Optional[Entry]:
    sign = 1
    if keyword in NUMBERS and type(node) is ast.UnaryOp and type(node.op) is ast.USub:
        sign, node = -1, node.operand
    if type(node) is not ast.Constant:
        return None
    value = node.value
    if keyword in NAMES:
        return value if type(value) is str and sign == 1 else None
    return sign * value if type(value) is int else None


def ast_verdicts(facts: Facts) -> List[str]:
    """What the rule's hooks may do at each jit call of the module passing a literal keyword it
    checks: :data:`FIX` (a signature the module shows rejects an entry), :data:`REPORT` (names
    for a function whose signature it does not show, or entries the ``def`` under other
    decorators lacks) or :data:`UNSURE` (the ``ast`` reading cannot tell).  Calls with nothing
    to do are left out.  Read once per file."""
    found = facts.derived.get("jit-argnames")
    if found is None:
        found = facts.derived["jit-argnames"] = _verdicts(facts)
    return found


def _verdicts(facts: Facts) -> List[str]:
    if not facts.keywords & KEYWORDS:
        return []
    sites = [
        call
        for call in facts.calls
        if any(k.arg in KEYWORDS for k in call.keywords) and _jit_kind(facts, call) is not None
    ]
    if not sites:
        return []
    decorated: Dict[int, Tuple[ast.AST, bool]] = {}  # a decorator -> (its def, innermost)
    for binder in facts.binders:
        decorators: List[ast.expr] = getattr(binder, "decorator_list", None) or []
        for decorator in decorators:
            decorated[id(decorator)] = (binder, decorator is decorators[-1])
    applied = {id(call.func): call for call in facts.calls if type(call.func) is ast.Call}
    verdicts = []
    for call in sites:
        literal = {
            k.arg: entries
            for k in call.keywords
            if k.arg in KEYWORDS and (entries := ast_entries(k.arg, k.value)) is not None
        }
        if not literal:
            continue
        found = _ast_signature(facts, call, decorated, applied)
        if isinstance(found, str):
            verdicts.append(UNSURE)
        elif found is None:
            if any(keyword in NAMES for keyword in literal):
                verdicts.append(REPORT)
        else:
            signature, sure = found
            if any(
                signature.invalid(keyword, entry)
                for keyword, entries in literal.items()
                for entry in entries
            ):
                verdicts.append(FIX if sure else REPORT)
    return verdicts


def _jit_kind(facts: Facts, call: ast.Call) -> Optional[str]:
    """``jax.jit(...)`` -> "jit", ``functools.partial(jax.jit, ...)`` -> "partial"."""
    called = facts.qualnames(call.func)
    if JIT in called:
        return "jit"
    if PARTIAL in called and call.args and JIT in facts.qualnames(call.args[0]):
        return "partial"
    return None


def _ast_signature(
    facts: Facts,
    call: ast.Call,
    decorated: Dict[int, Tuple[ast.AST, bool]],
    applied: Dict[int, ast.Call],
) -> Union[Tuple[Signature, bool], str, None]:
    """The signature of the function the call jits, and whether it is sure (not the signature
    of a ``def`` that other decorators wrap first); None where the module does not show it,
    :data:`UNSURE` where this reading cannot tell."""
    if any(type(a) is ast.Starred for a in call.args) or any(k.arg is None for k in call.keywords):
        return None  # (``*args`` or ``**kwargs`` passed to jit: what it gets is not shown)
    given = 1 if _jit_kind(facts, call) == "jit" else 2  # jit(f) / partial(jit, f)
    outer = call
    if len(call.args) >= given:
        function: Optional[ast.AST] = call.args[given - 1]
    elif id(call) in decorated:
        owner, innermost = decorated[id(call)]
        if type(owner) is ast.ClassDef:
            return None
        return _ast_params(owner), innermost
    elif id(call) in applied:
        outer = applied[id(call)]
        function = outer.args[0] if outer.args else None
    else:
        return None
    if type(function) is ast.Lambda:
        return _ast_params(function), True
    if type(function) is not ast.Name:
        return None
    if facts.scopes() is None:
        return UNSURE
    scope = facts.scope_of(call)
    bindings = scope.lookup(function.id) if scope is not None else None
    if bindings is None:
        return UNSURE  # (a global or nonlocal name)
    defs = [b for b in bindings if b.kind == "def"]
    if len(defs) != 1 or any(b.kind != "def" and not _is_rebound(b, outer) for b in bindings):
        return None
    definition = defs[0].value
    if type(definition) is ast.ClassDef:
        return None
    return _ast_params(definition), not definition.decorator_list


def _is_rebound(binding: object, outer: ast.Call) -> bool:
    """``f = jax.jit(f, ...)``: the name bound again to its own jitted function."""
    return getattr(binding, "kind", None) == "value" and getattr(binding, "value", None) is outer


def _ast_params(function: ast.AST) -> Signature:
    args: ast.arguments = function.args  # type: ignore[attr-defined]
    return signature_of(
        [a.arg for a in args.posonlyargs],
        [a.arg for a in args.args],
        args.vararg.arg if args.vararg is not None else None,
        [a.arg for a in args.kwonlyargs],
        args.kwarg is not None,
    )


def verdicts_at(verdicts: List[str], kinds: Tuple[str, ...]) -> bool:
    return any(verdict in kinds for verdict in verdicts)
