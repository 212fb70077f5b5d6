"""JAX901 missing-api: a JAX name that some release of the target range does not have.

The backstop behind every other rule.  The other rules know particular legacy APIs and how
to rewrite them; this one knows every public name of every JAX release since 0.2.0
(:mod:`rules._api_history`, built from the releases' sources) and reports any reference the
migrated code still makes to a name that is missing from some release between the target
version and the newest JAX: removed names (with the release that removed them and JAX's own
deprecation message) and, for an old target, names that appeared after it.

It reports, but for two rewrites: a flag read as an attribute (safe) and, with
``--unsafe-fixes``, jax.config's removed option definers (:mod:`rules._config_define`).  A
line where another rule already has a finding is left to that rule (the engine drops this
rule's finding there), so each legacy site gets one message.
"""

from __future__ import annotations

import ast
import re
from typing import Dict, FrozenSet, List, Optional, Set, Tuple, Union

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.migrator.astfacts import Facts
from jaxmigrate.migrator.astview import AstView
from jaxmigrate.migrator.context import Context, NameSite
from jaxmigrate.migrator.diagnostics import Diagnostic
from jaxmigrate.migrator.rule import Example, Rule, Safety
from jaxmigrate.migrator.textgate import under
from jaxmigrate.migrator.version import Version, parse_version
from jaxmigrate.rules import _config_define as config_define, _dead_imports as dead_imports
from jaxmigrate.rules._api_history import HISTORY_SOURCES, Absence, history
from jaxmigrate.rules._helpers import is_store, report_once
from jaxmigrate.rules._missing_api_ast import (
    findings as _ast_findings,
    first_missing as _first_missing,
)
from jaxmigrate.rules._names_gate import QualifiedNamesGate

_NONE: FrozenSet[str] = frozenset()
CHANGELOG = "https://docs.jax.dev/en/latest/changelog.html"


class MissingApi(QualifiedNamesGate, Rule, code="JAX901", safety=Safety.MANUAL):
    """report any JAX name missing from some release of the target range (from every release's API)

    **What it does.** Reports every reference (``import jax.x``, ``from jax.x import y``,
    ``jax.x.y`` through any alias) to a public JAX name that does not exist on every JAX
    release from the target version to the newest one.  The message names the release that
    removed it (or, for an old target, the release that added it) and quotes JAX's own
    deprecation message, which usually says what to use instead.

    The knowledge comes from the sources of every JAX release since 0.2.0, read without
    importing them: each release's public modules, their names and re-exports, and JAX's
    deprecation tables.  A chain is reported once, at its first missing part
    (``jax.experimental.host_callback`` for ``jax.experimental.host_callback.id_tap``).

    **Why.** A name no rule knows would otherwise pass silently and fail at import time on
    today's JAX.  Other rules rewrite the names they know; on a line where one of them
    already reports, this rule stays quiet.

    **Import shims.** Names imported inside `try: ... except ImportError:` are compatibility
    code, left alone; but where the `try` and its handler both import names the newest JAX
    of the range lacks, no branch can work there and the module dies at import: that is
    reported once, at the `try`.

    **Class members.** A member read through a JAX class itself
    (``jax.core.Primitive.bind``, ``from jax.core import ShapedArray`` then
    ``ShapedArray.strip_weak_type``) is checked like a module member: the history records the
    methods, class attributes, properties and nested classes of every public class, with
    those it inherits inside JAX and those JAX attaches from other modules.  A class whose
    members cannot all be read from the sources (a base from outside JAX, a metaclass, a
    ``__getattr__``, a decorator that may swap it) is *open* in that release: none of its
    members is reported there.  Reads on instances are not judged: their type is unknown.

    **Left alone.** Code under ``try: ... except ImportError/AttributeError`` and under
    ``if hasattr(...)`` or a JAX-version check; names the history does not know (members of
    jaxlib's compiled modules, such as ``jax.lib.xla_client.X``, are judged by their module
    only).  Private names (``jax._src``) are JAX902's.

    **Configuration flags.** A removed flag is reported where it is set or read by name
    (``jax.config.update("jax_array", True)``) and where it is read as an attribute
    (``jax.config.jax_array``).  An attribute read is also reported where the flag exists but
    the release defines it by name only (``jax.config.jax_platform_name``, which every release
    defines with ``DEFINE_string``/``string_flag``: those add no attribute, ``bool_state`` and
    the other ``*_state`` definers do).  Where no release of the range makes the flag an
    attribute, a plain read is rewritten to ``jax.config.read("name")``, which JAX serves for
    such flags on every release (the attribute read raised AttributeError on each of them);
    a store stays a finding (``jax.config.update`` is the spelling).  Where some release of
    the range does make it an attribute, the finding suggests ``jax.config.values["name"]``
    (``read`` refuses those flags).

    **Option definers.** ``jax.config.define_bool_state(name, default, help)`` and its
    siblings (``define_enum_state``, ``define_int_state``, ``define_float_state``,
    ``define_string_state``) left ``jax.config`` in 0.4.25 with no public successor.  From
    0.4.31 on, ``jax._src.config.bool_state`` (and ``enum_state``, ...) takes the same
    arguments and registers the option the same way.  With ``--unsafe-fixes``, where every
    release of the target range is 0.4.31 or later, a call is rewritten to it (hooks passed by
    position become keywords); a call with ``*args``, ``**kwargs`` or a keyword the new
    function lacks stays a finding.  Unsafe because ``jax._src`` is private: JAX may change it
    in any release.  Without the flag, or for an older target, the finding names this recipe.
    """

    whole_module = False  # hooks read their sites and the names those resolve to

    references = (*HISTORY_SOURCES, config_define.SOURCE)
    writes_since = config_define.WRITTEN_SINCE
    names_are_legacy = False
    backstop = True
    examples = (
        Example.reported(
            title="a removed name, with JAX's message",
            code="""
            from jax.experimental import host_callback as hcb

            def log(x):
                return hcb.id_print(x)
            """,
        ),
    )

    def ast_gate(self, facts: Facts) -> bool:
        """A flag name in a string is only read in a ``jax.config.update``/``read`` call
        (:meth:`visit_string`): a string such as ``flags.DEFINE_bool('jax_array', ...)``'s
        alone is no site."""
        if (
            self.names & facts.names
            or self.attributes & facts.attributes
            or self.keywords & facts.keywords
            or any(under(q, self.legacy_modules) for q in facts.imports)
        ):
            return True
        return bool(self.strings) and next(facts.calls_of(set(_FLAG_CALLS)), None) is not None

    def for_range(self, low: Version, high: Optional[Version], aside: FrozenSet[str]) -> Rule:
        return _for_target(self, low, aside, high)

    def for_survey(self, low: Version, high: Optional[Version], unsafe_fixes: bool) -> Rule:
        """Only what it may rewrite: everything else it finds, it only reports."""
        return _for_survey(self, low, high)

    def visit_name(self, site: NameSite, ctx: Context) -> None:
        if not site.is_import:  # imports are judged whole in visit_module (a missing prefix too)
            self._report(site.node, site.qualname, ctx)

    def visit_string(self, node: cst.SimpleString, ctx: Context) -> None:
        """``jax.config.update("jax_flag", ...)``: judged by the releases that define the flag
        by name (an attribute or not), so a removed flag is reported like any removed name."""
        arg = ctx.parent(node)
        call = ctx.parent(arg) if isinstance(arg, cst.Arg) else None
        if not isinstance(call, cst.Call) or not call.args or call.args[0] is not arg:
            return
        if ctx.qualname(call.func, ctx.scope_of(call)) not in _FLAG_CALLS:
            return
        flag = node.evaluated_value
        if not isinstance(flag, str):  # not b"...": JAX's flag names are str
            return
        absence = history().flag_absence(flag, ctx.target, ctx.upper)
        if absence is not None:
            self._record(node, absence, ctx)

    def visit_module(self, ctx: Context) -> None:
        for binding in ctx.analysis.imports:
            if binding.guarded or binding.node is None:
                continue
            qualname = _first_missing(binding.imported_name, self.names)
            if qualname is not None:
                self._report(binding.node, qualname, ctx)
        modules: Dict[str, Tuple[Absence, List[cst.CSTNode]]] = ctx.memo(
            (self.code, "modules"), dict
        )
        self._dead_tries(ctx)
        if modules:  # a removed module: once, with its uses another rule does not speak to
            spoken = {
                ctx.position(finding[0]).start.line
                for finding in ctx.findings
                if finding[1] != self.code
            } | ctx.covered_lines
            for absence, nodes in modules.values():
                left = [n for n in nodes if ctx.position(n).start.line not in spoken]
                report_once(ctx, left, *_message(absence, ctx), cover=False)

    @staticmethod
    def _dead_tries(ctx: Context) -> None:
        """A shim no branch of which imports on the newest JAX of the range, at its ``try``
        (:mod:`rules._dead_imports`)."""
        newest = _newest(ctx.upper)
        release = parse_version(newest)
        if not any(  # (a guarded import the release lacks, before the file is read again)
            binding.guarded and history().present_in(binding.imported_name, release) is False
            for binding in ctx.analysis.imports
        ):
            return
        dead = dead_imports.dead_tries(ast.parse(ctx.module.code), release)
        if not dead:
            return
        tries = {
            (ctx.position(node).start.line, ctx.position(node).start.column): node
            for node in ctx.all_nodes(cst.Try)
        }
        for found, names in dead:
            node = tries.get((found.lineno, found.col_offset))
            if node is not None:
                ctx.report(node, *dead_imports.message(newest, names))

    def ast_findings(self, view: AstView) -> Optional[List[Diagnostic]]:
        """:meth:`visit_name`, :meth:`visit_string` and :meth:`visit_module` on ``ast``
        (:mod:`rules._missing_api_ast`); None where they could differ, and wherever
        :meth:`_report` may make a fix (:func:`_ast_absence`), or a shim fails on the newest
        JAX (LibCST reports it)."""
        release = parse_version(_newest(view.upper))
        if any(
            item.guarded and history().present_in(item.imported, release) is False
            for item in view.imports
        ) and dead_imports.dead_tries(view.tree, release):
            return None
        return _ast_findings(
            view,
            self.code,
            self.names,
            self.strings,
            _FLAG_CALLS,
            lambda qualname: _ast_absence(qualname, view),
            lambda absence: _message(absence, view),
        )

    def _report(self, node: cst.CSTNode, qualname: str, ctx: Context) -> None:
        parent, _, name = qualname.rpartition(".")
        if parent == "jax.config":
            # a flag read as an attribute: missing also where it exists by name only
            absence = history().attribute_flag_absence(name, ctx.target, ctx.upper)
        else:
            absence = history().absence(qualname, ctx.target, ctx.upper)
        if absence is None:
            return
        if parent == "jax.config" and self._read_by_name(node, name, absence, ctx):
            return
        if qualname in config_define.DEFINERS and config_define.rewrite(node, qualname, ctx):
            return
        self._record(node, absence, ctx)

    @staticmethod
    def _read_by_name(node: cst.CSTNode, flag: str, absence: Absence, ctx: Context) -> bool:
        """``jax.config.flag`` read where no release of the range makes the flag an attribute
        (it raised AttributeError on each of them) becomes ``jax.config.read("flag")``, which
        JAX's ``Config`` serves for such flags on every release.  Only a plain read: a store,
        ``del`` or a flag some release does make an attribute stays a finding."""
        if absence.by_name_only is None or not _attribute_nowhere(flag, ctx):
            return False
        if not history().exists_throughout("jax.config.read", ctx.target, ctx.upper):
            return False
        if not isinstance(node, cst.Attribute) or node.attr.value != flag or is_store(ctx, node):
            return False
        read = cst.Call(
            func=cst.Attribute(value=ctx.copy(node.value), attr=cst.Name("read")),
            args=[cst.Arg(cst.SimpleString(f'"{flag}"'))],
        )
        ctx.replace(
            node,
            read,
            f'jax.config.{flag} -> jax.config.read("{flag}")',
            Safety.SAFE,
            detail=f"{flag} is defined by name only on every release of the range, so it is no "
            "attribute of jax.config there; jax.config.read serves it on each of them.",
        )
        return True

    def _record(self, node: cst.CSTNode, absence: Absence, ctx: Context) -> None:
        known = history().lookup(absence.qualname)
        if known is not None and known.is_module:  # (visit_module reads these this round)
            self._settle(node, absence, ctx, True)
        else:  # reported once per name and line: a position, asked only if the round reports
            ctx.defer(lambda: self._settle(node, absence, ctx, False))

    def _settle(self, node: cst.CSTNode, absence: Absence, ctx: Context, module: bool) -> None:
        line = ctx.position(node).start.line
        seen: Set[Tuple[int, str]] = ctx.memo((self.code, "reported"), set)
        if (line, absence.qualname) in seen:
            return
        seen.add((line, absence.qualname))
        if module:
            modules = ctx.memo((self.code, "modules"), dict)
            modules.setdefault(absence.qualname, (absence, []))[1].append(node)
            return
        ctx.report(node, *_message(absence, ctx))


def _ast_absence(qualname: str, view: AstView) -> Tuple[Optional[Absence], bool]:
    """What :meth:`MissingApi._report` makes of a site of ``qualname``, for the ``ast`` path:
    the absence it reports (None: nothing), and whether it may make a fix there instead, when
    the ``ast`` path leaves the file to LibCST.  Keep in step with ``_report``: a name any of
    whose sites may be rewritten must answer True."""
    parent, _, name = qualname.rpartition(".")
    if parent == "jax.config":
        absence = history().attribute_flag_absence(name, view.target, view.upper)
        # _read_by_name rewrites a plain read of a flag some release defines by name only;
        # config_define rewrites (or holds back, as an unsafe fix) a removed option definer
        fix = absence is not None and absence.by_name_only is not None
        return absence, fix or qualname in config_define.DEFINERS
    return history().absence(qualname, view.target, view.upper), False


# Names JAX removed with no public successor (so says the changelog of the release that
# removed them), and what to write instead: (in the message, in the detail).
_CONFIG_DEFINE = (
    "use an environment variable or an absl flag",
    "no public successor (the 0.4.25 changelog): define the option in your own code, "
    "from an environment variable or an absl flag",
)
_TEST_CASE = (
    "use absltest with np.testing",
    "no public successor (JAX's changelog: deprecated since 0.3.1, it was JAX's own test "
    "base): subclass absl's parameterized.TestCase and compare with "
    "numpy.testing.assert_allclose (its assertAllClose) or chex.assert_trees_all_close",
)
_NO_SUCCESSOR = {
    "jax.config.define_": _CONFIG_DEFINE,
    "jax.config.DEFINE_": _CONFIG_DEFINE,
    "jax.test_util.JaxTestCase": _TEST_CASE,
    "jax.test_util.JaxTestLoader": _TEST_CASE,
}


def _message(absence: Absence, ctx: Union[Context, AstView]) -> Tuple[str, str]:
    """One line (what is missing, since when, and the replacement JAX names, if it names one),
    and the detail (JAX's own words, or where the changelog is)."""
    target = ".".join(str(p) for p in ctx.target)
    text = absence.describe(target)
    if absence.by_name_only is not None:
        recipe = _flag_recipe(absence.qualname.rpartition(".")[2], ctx)
        return f"jax.config.{absence.qualname.rpartition('.')[2]} is no attribute; {recipe}", text
    successor = next(
        (pair for prefix, pair in _NO_SUCCESSOR.items() if absence.qualname.startswith(prefix)),
        None,
    )
    if successor is not None and absence.removed_in is not None:
        detail = f"{absence.qualname} was removed in JAX {absence.removed_in}; {successor[1]}"
        private = config_define.recipe(absence.qualname)
        return (
            f"{absence.qualname} has no public successor; {successor[0]}",
            detail if private is None else f"{detail}; {private}",
        )
    short = text.split("; JAX says:", 1)[0].split(" (deprecated since", 1)[0]
    if absence.message is None and absence.removed_in is not None:
        return (
            f"{short}; see the JAX {absence.removed_in} changelog",
            f"{text}; JAX's changelog for {absence.removed_in} says what replaces it: {CHANGELOG}",
        )
    use = _USE.search(absence.message or "")
    said = None if use is None else use.group(1).rstrip(".")
    named = None if use is None else _named_now(absence.message or "", use, ctx)
    if said is not None and named is None and absence.removed_in is not None:
        return (  # (no name JAX's message names is on every release of the range)
            f"{short}; see the JAX {absence.removed_in} changelog",
            f"{text} (not every release from {target} has {said}); JAX's changelog for "
            f"{absence.removed_in} says what replaces it: {CHANGELOG}",
        )
    if named is not None and len(short) + len(named) < 90:
        return f"{short}; use {named}", text
    return short, text


_JAX_NAME = re.compile(r"`?\bjax(?:\.\w+)+(?:\(\))?`?")


def _named_now(message: str, use: "re.Match[str]", ctx: Union[Context, AstView]) -> Optional[str]:
    """What to tell the user to use, of the names JAX's deprecation ``message`` offers from
    its "use" on (``use jax.tree.leaves (jax v0.4.25 or newer) or jax.tree_util.tree_leaves
    (any JAX version)``): the first every release of the target range has (or the history
    does not date); else the first, with the release from which the range has it
    (``(JAX 0.4.25 on)``); None where the range's newest release lacks it too (haiku 0.0.5's
    ``xla_call_p``: JAX named ``jax.experimental.pjit.pjit_p``, which JAX 0.7.0 renamed)."""
    h = history()
    offered = [use.group(1).rstrip(".")]
    offered += [m.group(0) for m in _JAX_NAME.finditer(message, use.end())]
    for spelled in offered:
        name = spelled.strip("`").removesuffix("()")
        if h.lookup(name) is None or h.exists_throughout(name, ctx.target, ctx.upper):
            return spelled
    known = h.lookup(offered[0].strip("`").removesuffix("()"))
    if known is not None and known.present[-1][1] == len(h.releases) - 1:
        return f"{offered[0]} (JAX {h.releases[known.present[-1][0]]} on)"
    return None


# ``Use jax.Array.``, ``Please use jax.experimental.pjit.pjit_p instead``: the name JAX names
_USE = re.compile(r"\b[Uu]se (`?jax[\w.]*\w(?:\(\))?`?)")


def _flag_recipe(flag: str, ctx: Union[Context, AstView]) -> str:
    """How to read a flag on every release of the range.  JAX's ``Config.read`` refuses the
    flags that are attributes (those with a context manager) from 0.4 on, so it only serves
    where the flag is an attribute nowhere in the range; ``jax.config.values`` (a dict of every
    flag: an attribute of ``Config`` set in ``__init__`` in old releases, a property in new
    ones) serves everywhere it exists."""
    h = history()
    if _attribute_nowhere(flag, ctx):
        return f'read it with jax.config.read("{flag}")'
    if h.exists_throughout("jax.config.values", ctx.target, ctx.upper):
        return f'read it with jax.config.values["{flag}"]'
    return f'read it by name (jax.config.read("{flag}") where it is no attribute)'


def _attribute_nowhere(flag: str, ctx: Union[Context, AstView]) -> bool:
    """No release of the target range makes ``flag`` an attribute of ``jax.config``."""
    h = history()
    attribute = h.lookup(f"jax.config.{flag}")
    low, high = h.first_index(ctx.target), h.last_index(ctx.upper)
    return attribute is None or all(b < low or a > high for a, b in attribute.present)


_COPIES: Dict[tuple, MissingApi] = {}  # per target range and selection
_SURVEY_COPIES: Dict[tuple, MissingApi] = {}
# Calls whose first argument names a configuration flag.
_FLAG_CALLS = frozenset({"jax.config.update", "jax.config.read", "jax.config.config.update"})


def _for_target(
    rule: MissingApi,
    target: Version,
    set_aside: FrozenSet[str],
    upper: Optional[Version],
) -> MissingApi:
    """The rule for one target range.  Names of rules the user switched off are left out: a
    user who ignores JAX101 has decided about DeviceArray."""
    key = (target, upper, set_aside)
    copy = _COPIES.get(key)
    if copy is None:
        names = history().first_missing(target, upper) - set_aside
        # Flags set or read by name (``jax.config.update("jax_array", True)``) that some
        # release lacks by name: a flag every release defines, as an attribute or not, is no
        # site, however many releases lack the attribute (``visit_string`` asks the same).
        # Not every flag is named ``jax_``: ``experimental_xmap_spmd_lowering`` went in 0.4.19.
        flags = (
            q.rpartition(".")[2] for q in names if q.startswith("jax.config.") and q.count(".") == 2
        )
        strings = frozenset(f for f in flags if history().flag_absence(f, target, upper))
        copy = _COPIES[key] = _looking_for(names, strings)
    return copy


def _for_survey(rule: MissingApi, target: Version, upper: Optional[Version]) -> MissingApi:
    """The rule looking only for the names :meth:`MissingApi._report` may rewrite (flags read
    as attributes where releases define them by name only, and the option definers), and for
    no flag string (those are only reported)."""
    key = (target, upper, rule.names)
    copy = _SURVEY_COPIES.get(key)
    if copy is None:
        fixable = frozenset(
            q
            for q in rule.names
            if q in config_define.DEFINERS
            or q.startswith("jax.config.")
            and q.count(".") == 2
            and _by_name_only(q.rpartition(".")[2], target, upper)
        )
        copy = _SURVEY_COPIES[key] = _looking_for(fixable, frozenset())
    return copy


def _by_name_only(flag: str, target: Version, upper: Optional[Version]) -> bool:
    absence = history().attribute_flag_absence(flag, target, upper)
    return absence is not None and absence.by_name_only is not None


def _looking_for(names: FrozenSet[str], strings: FrozenSet[str]) -> MissingApi:
    copy = object.__new__(MissingApi)
    copy.names = names  # type: ignore[misc]
    # Imports of and from a missing name (``from jax.lib.xla_extension import Device``,
    # ``import jax.experimental.sharded_jit as sj``): judged at the import.
    copy.legacy_modules = names  # type: ignore[misc]
    copy.strings = strings  # type: ignore[misc]
    return copy


def _newest(upper: Optional[Version]) -> str:
    """The newest release of a range that ends at ``upper`` (None: the newest of all)."""
    h = history()
    return (h.newest_at_most(upper) if upper is not None else None) or h.newest
