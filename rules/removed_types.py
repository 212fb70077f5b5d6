"""JAX904 removed-types: type names JAX removed, replaced where they are used as types.

``jax.random.KeyArray`` / ``PRNGKeyArray`` (removed in JAX 0.4.24),
``jax.interpreters.batching.BatchTracer`` (removed in 0.9.0) and ``jax.core.Shape`` (removed
in 0.4.29) have no same-object replacement, but JAX's deprecation messages say what to write
instead.  Annotations and type expressions take the replacement type; ``isinstance`` checks
take the predicate JAX names; other uses are reported with it.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from typing import AbstractSet, Dict, FrozenSet, Optional, Set, Tuple

from jaxmigrate.migrator import lazycst as cst, references as refs
from jaxmigrate.migrator.context import Context, NameSite
from jaxmigrate.migrator.floorbound import words_of
from jaxmigrate.migrator.rule import Example, Safety
from jaxmigrate.migrator.scope import dotted_parts
from jaxmigrate.migrator.version import parse_version
from jaxmigrate.rules._api_history import ActsWhereMissing
from jaxmigrate.rules._arrays import expr_code
from jaxmigrate.rules._ast_sites import AnswersAtSites
from jaxmigrate.rules._helpers import (
    fitting,
    in_type_expression,
    is_class_base,
    isinstance_position,
)
from jaxmigrate.rules._renames import maybe_present

_TYPE_ALIAS = frozenset({"typing.TypeAlias", "typing_extensions.TypeAlias"})


@functools.lru_cache(maxsize=1)
def _rows_written() -> Tuple[Tuple[FrozenSet[str], FrozenSet[str], bool], ...]:
    """For each row: the parts of its removed name, the words it writes, and whether the
    newest JAX may still have the removed name."""
    from jaxmigrate.rules._api_history import history

    newest = parse_version(history().newest)
    rows = []
    for legacy, row in TABLE.items():
        spelled = (row.annotation, row.predicate or "", row.predicate_class or "")
        written = frozenset(words_of(" ".join(spelled)))
        rows.append((frozenset(legacy.split(".")), written, maybe_present(legacy, newest)))
    return tuple(rows)


@dataclasses.dataclass(frozen=True)
class TypeReplacement:
    legacy: Tuple[str, ...]  # every spelling of the removed type
    annotation: str  # the type to write in annotations and type aliases
    # ``isinstance(x, LEGACY)`` becomes this (``{x}``: the checked value; ``{q:NAME}``: a
    # reference to the qualified name NAME); None: reported.
    predicate: Optional[str]
    predicate_needs: Optional[str]  # the oldest JAX the predicate's names exist on
    what_changes: str  # how the predicate differs from the legacy check (it is an unsafe fix)
    source: str  # where JAX says so
    other_uses: str  # the recipe for any other use (calls, values)
    # The predicate is ``isinstance(x, CLASS)``: the class replaces the legacy one in place,
    # in class tuples and issubclass too.
    predicate_class: Optional[str] = None

    @classmethod
    def by_class(
        cls,
        legacy: Tuple[str, ...],
        modern: str,
        predicate_needs: Optional[str],
        what_changes: str,
        source: str,
        other_uses: str,
    ) -> "TypeReplacement":
        """A removed class whose replacement is another class, written in its place everywhere:
        annotations, ``isinstance(x, modern)``, class tuples and ``issubclass``."""
        predicate = f"isinstance({{x}}, {{q:{modern}}})"
        return cls(
            legacy, modern, predicate, predicate_needs, what_changes, source, other_uses, modern
        )


_KEY = TypeReplacement(
    # (jax._src.prng.PRNGKeyArray: the class both named up to 0.4.23, blackjax's types.py
    # aliases it; the module is gone from 0.10.2.  jax._src.random's are the public ones as
    # defined there: dynamax 0.1.0's types.py aliases them)
    legacy=(
        "jax.random.KeyArray",
        "jax.random.PRNGKeyArray",
        "jax._src.prng.PRNGKeyArray",
        "jax._src.random.KeyArray",
        "jax._src.random.PRNGKeyArray",
    ),
    annotation="jax.Array",
    predicate=(
        "isinstance({x}, {q:jax.Array}) and "
        "{q:jax.dtypes.issubdtype}({x}.dtype, {q:jax.dtypes.prng_key})"
    ),
    predicate_needs="0.4.14",
    what_changes=(
        "it is also True for traced typed keys inside jit/vmap, "
        "which KeyArray was not before JAX 0.4.16"
    ),
    source="JAX's deprecation message, JAX 0.4.16",
    other_uses="make typed keys with jax.random.key(seed) or jax.random.wrap_key_data(data)",
)
_BATCH_TRACER = TypeReplacement.by_class(
    legacy=("jax.interpreters.batching.BatchTracer",),
    modern="jax.core.Tracer",
    predicate_needs=None,
    what_changes="it matches every tracer (jit, grad, vmap), not only vmap's",
    source="deprecated in JAX 0.7.1",
    other_uses="vmap's tracer class is private now; test for jax.core.Tracer",
)
_SHAPE = TypeReplacement(
    legacy=("jax.core.Shape",),
    annotation="collections.abc.Sequence[int]",
    predicate=None,
    predicate_needs=None,
    what_changes="",
    source='JAX\'s deprecation message, JAX 0.4.19: "Use Shape = Sequence[int | Any]"',
    other_uses="a shape is a tuple of ints",
)
_GDA_SHARD = TypeReplacement.by_class(
    legacy=("jax.experimental.global_device_array.Shard",),
    modern="jax.Shard",
    predicate_needs="0.4.6",
    what_changes="jax.Shard (the shards of a jax.Array's addressable_shards) replaces the "
    "GlobalDeviceArray's Shard; it has the same device, index, replica_id and data",
    source="the GlobalDeviceArray module was removed in JAX 0.4.7",
    other_uses="a jax.Array's shards are jax.Shard objects (x.addressable_shards)",
)
_PLATFORM_DEVICE = TypeReplacement.by_class(
    legacy=tuple(
        f"jax.lib.{module}.{kind}Device"
        for module in ("xla_extension", "xla_client")
        for kind in ("Cpu", "Gpu", "Tpu")
    ),
    modern="jax.Device",
    predicate_needs="0.4.3",
    what_changes="jax.Device matches a device of any platform; test `d.platform` for one",
    source="jax.lib.xla_extension was removed in JAX 0.8.0; jax.Device is their base class",
    other_uses="devices come from jax.devices(); read d.platform for the kind",
)
TABLE: Dict[str, TypeReplacement] = {
    name: row
    for row in (_KEY, _BATCH_TRACER, _SHAPE, _GDA_SHARD, _PLATFORM_DEVICE)
    for name in row.legacy
}
_REFERENCE = re.compile(r"\{q:([\w.]+)\}")


class RemovedTypes(AnswersAtSites, ActsWhereMissing, code="JAX904", safety=Safety.SAFE):
    """jax.random.KeyArray, batching.BatchTracer, core.Shape -> jax.Array, jax.core.Tracer,
    Sequence[int] in types

    **What it does.** Replaces type names JAX removed, where they are used as types (a type
    alias is a module-level `Key = ...` or `Key: TypeAlias = ...`):

    | removed | in annotations, `Union[...]`, type aliases | in `isinstance(x, ...)` (unsafe fix) |
    | --- | --- | --- |
    | `jax.random.KeyArray`, `jax.random.PRNGKeyArray` (also as `jax._src.random` and `jax._src.prng` define them) | `jax.Array` | `isinstance(x, jax.Array) and jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key)` |
    | `jax.interpreters.batching.BatchTracer` | `jax.core.Tracer` | `isinstance(x, jax.core.Tracer)` |
    | `jax.core.Shape` | `collections.abc.Sequence[int]` | reported |
    | `jax.experimental.global_device_array.Shard` | `jax.Shard` | `isinstance(x, jax.Shard)` |
    | `jax.lib.xla_extension.CpuDevice` / `GpuDevice` / `TpuDevice` | `jax.Device` | `isinstance(x, jax.Device)` |

    **Why.** JAX removed them (KeyArray in 0.4.24, Shape in 0.4.29, BatchTracer in 0.9.0;
    the private `jax._src.prng` moved in 0.10.2, so the library that aliases it fails at import);
    their deprecation messages name these replacements: "Use jax.Array for annotations, and
    jax.dtypes.issubdtype(arr.dtype, jax.dtypes.prng_key) for runtime detection of typed prng
    keys"; "Use Shape = Sequence[int | Any]".

    **Safety.** An annotation or type alias does not change what code does, so those fixes are
    safe.  The `isinstance` predicates are unsafe fixes (applied with `--unsafe-fixes`): the
    typed-key test is also true for traced keys inside `jit`, and `jax.core.Tracer` matches
    every tracer, not only `vmap`'s.  The typed-key test needs `jax.dtypes.prng_key` (JAX
    0.4.14): with `--unsafe-fixes` a default target rises to 0.4.14 for it; a target given
    below that gets a finding.  Calls, subclassing and other uses are reported.  Nothing
    changes where the target range still has the name.
    """  # noqa: E501

    whole_module = False  # hooks read their sites and the names those resolve to

    names = frozenset(TABLE)
    gone_modules = ("jax._src.prng",)  # its import goes with its last PRNGKeyArray

    def survey_writes(self, words: AbstractSet[str]) -> FrozenSet[str]:
        """The survey writes a row's annotation whatever release added it (and with
        --unsafe-fixes, its predicate): the words of the rows whose removed name can be in a
        file of ``words`` (all its parts are) or written by another fix (the newest JAX may
        still have it)."""
        found: Set[str] = set(super().survey_writes(words))
        for legacy_parts, written, always in _rows_written():
            if always or legacy_parts <= words:
                found |= written
        return frozenset(found)

    references = (
        refs.release_notes("0.4.16", "jax.random.KeyArray deprecated"),
        refs.release_notes("0.4.24", "jax.random.KeyArray removed"),
        refs.Reference(
            "JEP 9263: typed keys and pluggable RNGs", refs.DOCS + "jep/9263-typed-keys.html"
        ),
        refs.release_notes("0.4.19", "jax.core.Shape deprecated"),
        refs.release_notes("0.7.1", "jax.interpreters.batching.BatchTracer deprecated"),
    )
    examples = (
        Example(
            title="annotations take the replacement type",
            before="""
            import jax
            from jax.interpreters import batching

            def split(key: jax.random.KeyArray, t: batching.BatchTracer):
                return key
            """,
            after="""
            import jax

            def split(key: jax.Array, t: jax.core.Tracer):
                return key
            """,
        ),
        Example(
            title="an isinstance check for typed keys",
            before="""
            import jax

            def is_key(x):
                return isinstance(x, jax.random.KeyArray)
            """,
            after="""
            import jax

            def is_key(x):
                return isinstance(x, jax.Array) and jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key)
            """,  # noqa: E501
            unsafe_fixes=True,
        ),
    )

    def visit_name(self, site: NameSite, ctx: Context) -> None:
        if site.is_import:
            return  # the import goes once nothing uses it
        row = TABLE[site.qualname]
        short = site.qualname.rsplit(".", 1)[1]
        if isinstance_position(site) is not None and row.predicate_class is not None:
            new = ctx.ref(row.predicate_class, site.scope)
            message = f"{short} -> {row.predicate_class} in an isinstance check"
            why = row.what_changes[:1].upper() + row.what_changes[1:] + "."
            ctx.replace(site.node, new, message, safety=Safety.UNSAFE, detail=why)
        elif isinstance_position(site) is not None:
            self._predicate(site, row, short, ctx)
        elif in_type_expression(site, ctx) or self._is_type_alias(site, ctx):
            exists = ctx.survey or ctx.exists_throughout(row.annotation)
            if row is _PLATFORM_DEVICE and not exists:
                ctx.report(site.node, f"{short} was removed: {row.annotation} needs JAX 0.4.3")
                return
            new = self._annotation(row, site, ctx)
            message = f"{ctx.code(site.node)} -> {row.annotation}"
            widens = row is _PLATFORM_DEVICE and not in_type_expression(site, ctx)
            ctx.replace(
                site.node,
                new,
                message,
                safety=Safety.UNSAFE if widens else None,
                detail=f"{row.source}"
                + (f"; an isinstance through it: {row.what_changes}." if widens else "."),
            )
        elif is_class_base(site):
            ctx.report(
                site.node, f"subclassing {short}: JAX removed the class; redesign without it"
            )
        else:
            ctx.report(
                site.node,
                fitting(
                    f"{site.qualname} was removed; {row.other_uses}",
                    f"{short} was removed; {row.other_uses}",
                ),
                f"{site.qualname} was removed ({row.source}): {row.other_uses}.",
            )

    @staticmethod
    def _is_type_alias(site: NameSite, ctx: Context) -> bool:
        """``Key = jax.random.KeyArray`` (or ``Key: TypeAlias = ...``) at module level: a name
        for the type."""
        parent = site.parent
        if site.scope.parent is not None:
            return False
        if isinstance(parent, cst.AnnAssign):  # (qdax 0.1.0's types.py: 46 modules import it)
            return (
                parent.value is site.node
                and isinstance(parent.target, cst.Name)
                and ctx.qualname(parent.annotation.annotation, site.scope) in _TYPE_ALIAS
            )
        return (
            isinstance(parent, cst.Assign)
            and parent.value is site.node
            and all(isinstance(t.target, cst.Name) for t in parent.targets)
        )

    @staticmethod
    def _annotation(row: TypeReplacement, site: NameSite, ctx: Context) -> cst.BaseExpression:
        if row.annotation.endswith("]"):  # ``Sequence[int]``
            generic, argument = row.annotation[:-1].split("[")
            return cst.Subscript(
                value=ctx.ref(generic, site.scope, prefer_from=True),
                slice=[cst.SubscriptElement(slice=cst.Index(value=cst.parse_expression(argument)))],
            )
        return ctx.ref(row.annotation, site.scope)

    def _predicate(self, site: NameSite, row: TypeReplacement, short: str, ctx: Context) -> None:
        call, classes = isinstance_position(site)  # type: ignore[misc]
        if row.predicate is None:
            ctx.report(
                site.node,
                f"isinstance(..., {short}): {short} was a typing alias, not a class; "
                "test the value's shape instead",
            )
            return
        newer = row.predicate_needs is not None and ctx.target < parse_version(row.predicate_needs)
        if newer and ctx.unsafe_fixes and not ctx.survey:  # (the survey's floor rises to it)
            ctx.report(
                site.node,
                fitting(
                    f"{site.qualname} was removed; its replacement test needs "
                    f"JAX {row.predicate_needs}",
                    f"{short} was removed; its replacement test needs JAX {row.predicate_needs}",
                ),
                f"{site.qualname} was removed; its replacement test needs "
                f"JAX {row.predicate_needs}, newer than the target.",
            )
            return
        receiver = call.args[0]
        recipe = _REFERENCE.sub(lambda m: m.group(1), row.predicate.replace("{x}", "x"))
        if (
            not isinstance(call.func, cst.Name)
            or call.func.value != "isinstance"
            or classes is not None
            or receiver.star
            or dotted_parts(receiver.value) is None
        ):
            ctx.report(
                site.node,
                f"{short} was removed; assign the checked value to a name, then fix by hand",
                f"Test a plain name with `{recipe}`.",
            )
            return
        head, sep, _rest = recipe.partition(" and ")
        message = (
            f"isinstance(..., {short}) -> {head} and ..."
            if sep
            else f"isinstance(..., {short}) -> {recipe}"
        )
        detail = f"The check becomes `{recipe}`: {row.what_changes}."
        if newer:  # (held back: with --unsafe-fixes a default target rises to it)
            detail += (
                f" It needs JAX {row.predicate_needs}: with --unsafe-fixes a default target "
                "rises to it."
            )
        x = ctx.code(receiver.value)
        text = _REFERENCE.sub(
            lambda m: expr_code(ctx.ref(m.group(1), site.scope)), row.predicate
        ).replace("{x}", x)
        new = cst.parse_expression(text)
        if call.lpar or not isinstance(
            ctx.parent(call), (cst.If, cst.Return, cst.Assign, cst.Expr, cst.Assert, cst.While)
        ):
            new = new.with_changes(
                lpar=call.lpar or [cst.LeftParen()], rpar=call.rpar or [cst.RightParen()]
            )
        ctx.replace(call, new, message, safety=Safety.UNSAFE, detail=detail)
