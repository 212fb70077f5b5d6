"""JAX905 removed-calls: calls of removed JAX functions, rewritten to what replaced them.

A table of call recipes, one row per removed function: how its arguments map onto the
replacement (``jax.ops.index_update(x, i, y)`` -> ``x.at[i].set(y)``), which calls the recipe
fits (argument counts, keywords, whether the result may be used), how safe it is and where JAX
says so.  A recipe is only written where every JAX name it uses exists on every release of the
target range (from the API history); elsewhere, and for calls the recipe does not fit, the call
is reported with the recipe.
"""

from __future__ import annotations

import dataclasses
from typing import AbstractSet, Callable, Dict, FrozenSet, Optional, Tuple

from jaxmigrate.migrator import lazycst as cst, references as refs
from jaxmigrate.migrator.context import Context, NameSite
from jaxmigrate.migrator.rule import Example, Safety
from jaxmigrate.migrator.scope import dotted_parts
from jaxmigrate.migrator.version import parse_version
from jaxmigrate.rules._api_history import ActsWhereMissing
from jaxmigrate.rules._ast_sites import AnswersAtSites
from jaxmigrate.rules._builtin_calls import consumed_whole, shadowed
from jaxmigrate.rules._call_recipes import (
    CallRecipe,
    is_pure,
    newer_names,
    none_or_left_out,
    recipe_safety,
    render,
    returned_arg,
    statement_assignment,
)
from jaxmigrate.rules._dlpack_calls import DLPACK, round_trip
from jaxmigrate.rules._helper_alias import helper_alias
from jaxmigrate.rules._helpers import MESSAGE_LIMIT, UNSAFE_ROOM, call_messages
from jaxmigrate.rules._host_callback import (
    HCB,
    TAP_RECIPES,
    TAPS,
    host_misfit,
    lambda_body,
    ordered,
    print_template,
    returned_by_lambda,
    several_devices,
    tap_detail,
    tap_template,
    with_device,
)
from jaxmigrate.rules._jax_util import STRICT_SINCE, UTIL_RECIPES, exact_recipe
from jaxmigrate.rules._names_gate import NamesAndModulesGate

_HCB = HCB
_UPDATES = {
    "index_update": "set",
    "index_add": "add",
    "index_mul": "multiply",
    "index_min": "min",
    "index_max": "max",
}
RECIPES: Tuple[CallRecipe, ...] = (
    *(
        CallRecipe(
            legacy=f"jax.ops.{old}",
            template="{0}.at[{1}]." + new + "({2}{, **})",
            shown=f"x.at[idx].{new}(y)",
            positional=(3, 3),
            passed_through=frozenset({"indices_are_sorted", "unique_indices"}),
            why=f"the JAX 0.3.2 changelog names x.at[idx].{new}(y) for it",
        )
        for old, new in _UPDATES.items()
    ),
    CallRecipe(
        legacy="jax.lax.tie_in",
        template="{1}",
        shown="y",
        positional=(2, 2),
        dropped=(0,),
        why='JAX\'s deprecation message: "it has been a no-op since JAX v0.2.0"',
    ),
    CallRecipe(
        legacy=f"{_HCB}.barrier_wait",
        template="{q:jax.effects_barrier}()",
        shown="jax.effects_barrier()",
        positional=(0, 0),
        why=(
            "jax.effects_barrier waits for the callbacks of jax.debug "
            "and jax.experimental.io_callback"
        ),
    ),
    *TAP_RECIPES,  # host_callback's id_print and id_tap
    CallRecipe(
        legacy=f"{_HCB}.call",
        template="{q:jax.pure_callback}({0}, {kw:result_shape}, {1})",
        shown="jax.pure_callback(f, result_shape, x)",
        positional=(2, 2),
        keywords=frozenset({"result_shape"}),
        required=frozenset({"result_shape"}),
        safety=Safety.UNSAFE,
        why="JAX's host_callback deprecation names jax.pure_callback, which the compiler may skip "
        "or repeat; use jax.experimental.io_callback for side effects",
        # host_callback.call had no batching rule; from 0.4.34 pure_callback asks how to batch
        # (unstated: a DeprecationWarning in 0.4.35-0.5, NotImplementedError later).  Under
        # vmap, "sequential" calls the host once per element, what the unbatched call meant.
        stated_from=("0.4.34", 'vmap_method="sequential"'),
    ),
    CallRecipe(
        legacy="jax.experimental.compilation_cache.compilation_cache.initialize_cache",
        template='{q:jax.config}.update("jax_compilation_cache_dir", {0})',
        shown='jax.config.update("jax_compilation_cache_dir", path)',
        positional=(1, 1),
        statement_only=True,
        why="JAX's compilation cache documentation configures the cache with this option",
    ),
    *UTIL_RECIPES,
    # jax.lib.xla_bridge lost these in 0.4.3; up to 0.4.2 jax.<name> was imported from it
    # (jax/api.py in 0.2.10; jax/_src/api.py from jax._src.lib.xla_bridge, which
    # jax/lib/xla_bridge.py re-exports, in 0.3.25 and 0.4.2): the same function.
    *(
        CallRecipe(
            legacy=f"jax.lib.xla_bridge.{name}",
            template=f"{{q:jax.{name}}}({{*}}{{, **}})",
            shown=f"jax.{name}()",
            positional=(0, 1),
            passed_through=frozenset({"backend"}),
            why=f"jax.{name} was this very function until xla_bridge lost it (JAX 0.4.3)",
        )
        for name in ("device_count", "local_device_count", "process_index")
    ),
    # shuffle(key, x, axis) was _shuffle(key, x, axis); so is permutation(..., independent=True)
    # of any array of one dimension or more (jax/_src/random.py in 0.4.13 to 0.4.30: the same
    # draws); of a scalar, shuffle failed where permutation shuffles a range.
    CallRecipe(
        legacy="jax.random.shuffle",
        template="{q:jax.random.permutation}({*}{, **}, independent=True)",
        shown="jax.random.permutation(key, x, axis, independent=True)",
        positional=(0, 3),
        passed_through=frozenset({"key", "x", "axis"}),
        parameters=("key", "x"),
        why='JAX\'s deprecation message: "Use jax.random.permutation with independent=True" '
        "(the same draws)",
    ),
    # to_dlpack(x, stream=s) was x.__dlpack__(stream=s) (jax/_src/array.py in 0.4.13 to 0.4.30:
    # the method called the function); both give the DLPack capsule of x's buffer.
    CallRecipe(
        legacy=DLPACK,
        template="{0}.__dlpack__({, **})",
        shown="x.__dlpack__()",
        positional=(1, 1),
        passed_through=frozenset({"stream"}),
        why="JAX's deprecation message names the DLPack API based on __dlpack__ (the same "
        "capsule); most consumers take the array itself",
    ),
    CallRecipe(
        legacy="jax.experimental.global_device_array.get_shard_indices",
        template="{q:jax.sharding.NamedSharding}({1}, {q:jax.sharding.PartitionSpec}(*{2}))"
        ".devices_indices_map(tuple({0}))",
        shown="jax.sharding.NamedSharding(mesh, PartitionSpec(*spec))"
        ".devices_indices_map(tuple(shape))",
        positional=(3, 3),
        why="the GlobalDeviceArray module is gone from JAX 0.4.7; a sharding's "
        "devices_indices_map gives the same device -> index map",
    ),
)

TABLE: Dict[str, CallRecipe] = {row.legacy: row for row in RECIPES}

# host_callback.call(f, x, result_shape=None) (its default) called f for its effect: a
# pure_callback with no results is never called (JAX drops it, in jit or not), an io_callback
# is (checked on jax 0.4.13 and 0.10.2; ott-jax 0.3.1's sparse Cholesky factorises that way).
HOST_EFFECT = dataclasses.replace(
    TABLE[f"{_HCB}.call"],
    template="{q:jax.experimental.io_callback}({0}, None, {1})",
    shown="jax.experimental.io_callback(f, None, x)",
    why="with result_shape=None the callback runs for its effect: JAX's host_callback "
    "deprecation names io_callback for side effects (a pure_callback with no results is "
    "dropped)",
    stated_from=None,
    required=frozenset(),  # (left out, it is None)
)


class RemovedCalls(
    NamesAndModulesGate, AnswersAtSites, ActsWhereMissing, code="JAX905", safety=Safety.SAFE
):
    """calls of removed functions (jax.ops.index_update, lax.tie_in, host_callback,
    jax.util.safe_map, ...) rewritten

    **What it does.** Rewrites calls of removed JAX functions into the code that replaced them:

    | removed | becomes | safety |
    | --- | --- | --- |
    | `jax.ops.index_update(x, idx, y)` (`_add`, `_mul`, `_min`, `_max`) | `x.at[idx].set(y)` (`.add`, `.multiply`, `.min`, `.max`) | safe |
    | `jax.ops.index[i, j]` | `i, j` inside `.at[...]`, else `jnp.s_[i, j]` | safe |
    | `jax.lax.tie_in(x, y)` | `y` | safe (unsafe if `x` has side effects) |
    | `host_callback.barrier_wait()` | `jax.effects_barrier()` | safe |
    | `host_callback.id_print(x)`, `id_print(x, what="y")` | `jax.debug.print("{}", x, ordered=True)`, `jax.debug.print("what: y\\n{}", x, ordered=True)` | unsafe: another format; see "Order" |
    | `host_callback.id_tap(f, x)` | `jax.debug.callback(lambda tapped: f(jax.tree_util.tree_map(np.asarray, tapped), ()), x, ordered=True)` (NumPy arrays, as `id_tap` gave; a `lambda v, t:` ignoring `t` becomes `lambda v:`) | unsafe: `f` gets no transforms; see "Order" |
    | `host_callback.call(f, x, result_shape=s)` | `jax.pure_callback(f, s, x)` (with `vmap_method="sequential"` for a target from 0.4.34) | unsafe: may be skipped or repeated |
    | `host_callback.call(f, x, result_shape=None)`, `host_callback.call(f, x)` | `jax.experimental.io_callback(f, None, x)` (from 0.4.2: a `pure_callback` with no results is never called) | unsafe |
    | `compilation_cache.initialize_cache(path)` | `jax.config.update("jax_compilation_cache_dir", path)` | safe |
    | `jax.util.safe_map(f, xs)` / `safe_zip(xs)` | `list(map(f, xs))` / `list(zip(xs))` | safe |
    | `jax.util.safe_zip(xs, ys)` | `list(zip(xs, ys, strict=True))` for a target from 0.4.31, else `list(zip(xs, ys))` | safe: the same length check (below 0.4.31: unsafe, none) |
    | `jax.util.safe_map(f, xs, ys)` | `list(itertools.starmap(f, zip(xs, ys, strict=True)))` for a target from 0.4.31, else `list(map(f, xs, ys))` | safe: the same calls, the same check (below 0.4.31: unsafe, none) |
    | `jax.util.unzip2(pairs)` | `tuple(map(tuple, zip(*[(x, y) for x, y in pairs]))) or ((), ())` | safe: the same tuples, the same errors |
    | `global_device_array.get_shard_indices(shape, mesh, spec)` | `NamedSharding(mesh, PartitionSpec(*spec)).devices_indices_map(tuple(shape))` | safe |
    | `jax.lib.xla_bridge.device_count()` (`local_device_count`, `process_index`) | `jax.device_count()` (...) | safe: the same function up to 0.4.2 |
    | `jax.random.shuffle(key, x, axis)` | `jax.random.permutation(key, x, axis, independent=True)` | safe: the same draws |
    | `jax.dlpack.to_dlpack(x)`, `to_dlpack(x, stream=s)` | `x.__dlpack__()`, `x.__dlpack__(stream=s)` | safe: the same capsule |
    | `jax.dlpack.from_dlpack(jax.dlpack.to_dlpack(x))` | `jax.numpy.from_dlpack(x)` | safe |

    **Why.** These functions are gone from current JAX (the table's sources: JAX's deprecation
    messages and changelog).  A recipe is written only where each JAX name it uses exists on
    every release of the target range; calls it does not fit (other keywords, a used result
    of `id_print`) are reported with the recipe.  `id_print` and `id_tap` returned their
    argument: as a statement, or as the value of `y = ...` or `return ...` when that argument
    is a plain name, the call becomes the `jax.debug` statement, then `y = x` or `return x`;
    `y = id_print(<expression>)` becomes `y = <expression>`, then the statement on `y`.
    `id_tap(f, x, result=r)` returned `r`: the statement, then `y = r` or `return r`, where
    `r` is a name or a literal.  As the whole body of a lambda (a `lax.cond` branch of the
    2021 progress bars) the call becomes `(jax.debug.callback(...), r)[1]`, the same value.
    `tap_with_device=True` called the tap function with `device=` too; jax.debug.callback
    has no device to give, so the rewrite passes `device=None`, only where the function (a
    lambda, or a `def` of the module) takes `device` and never reads it.

    **Order.** id_tap and id_print ran in program order; jax.debug callbacks keep it only
    with `ordered=True` (without it a 2021 progress bar updates its bar before defining it:
    blackjax 0.9.6's tests on jax 0.10.2), which JAX refuses where a computation spans
    several devices.  So the rewrite writes `ordered=True` unless the module's text names
    what runs code on several devices (`pmap`, `pjit`, `shard_map`, `Mesh`, `PartitionSpec`,
    a `...Sharding`), and there says the callback is unordered.  A function of this module
    pmapped elsewhere then fails to compile with JAX's message, rather than tap out of order.

    **safe_zip and safe_map** checked that their iterables have one length; `zip(...,
    strict=True)` does too, from Python 3.10, which jax requires from 0.4.31 (PyPI's
    `requires_python`: `>=3.9` for 0.4.30, `>=3.10` for 0.4.31).  So a target from 0.4.31 gets
    the exact forms (a default target rises to 0.4.31 for them); below it the rewrites lose the
    check, and are unsafe.  JAX's own `safe_zip` is `list(zip(*args, strict=True))`
    (jax/_src/util.py in 0.10.2).  `map` takes `strict=` only from Python 3.14, so `safe_map`
    becomes `itertools.starmap` over the strict `zip`: like jax.util's `safe_map` (jaxlib's),
    it evaluates `f` once, calls it on each item as it is read, and on a length mismatch
    raises ValueError at the same item (measured on jax 0.4.13, 0.4.30, 0.6.2 and 0.10.2).

    **Builtins.** Inside `list`, `tuple`, `set`, `sorted`, `dict`, `sum`, `min` or `max` the
    recipe's `list(...)` is left out (`tuple(safe_map(f, xs))` -> `tuple(map(f, xs))`,
    `dict(safe_zip(ks, vs))` -> `dict(zip(ks, vs, strict=True))`), and so it is as the iterable
    of a comprehension with one `for`, no `if`, and items made of its own names and constants
    (`{k: v for k, v in zip(ks, vs, strict=True)}`): nothing runs between two reads.  Where
    the module imports the helpers under the builtins' names (`from jax.util import safe_map
    as map, safe_zip as zip`), a call whose rewrite writes such a name is rewritten only when
    every use of the name is a call rewritten safely (none inside another), and the import
    then goes; otherwise it is reported, and so is the import.  An assignment naming a helper
    (`map = safe_map`, the name's one binding, each use a call) is read the same way: each
    call is rewritten, and the assignment goes.
    """  # noqa: E501

    names = frozenset(TABLE) | {"jax.ops.index"}
    whole_module = False  # hooks read their sites, what they resolve, builtins' bindings
    gone_modules = ("jax.util", _HCB)  # their imports go once the rewrites leave them unused
    fix_needs = STRICT_SINCE  # safe_zip's and safe_map's exact forms (zip's strict=True)
    references = (
        refs.release_notes("0.3.2", "jax.ops.index_update and its siblings removed"),
        refs.release_notes("0.4.29", "jax.lax.tie_in removed"),
        refs.Reference("JAX guide: external callbacks", refs.DOCS + "external-callbacks.html"),
        refs.Reference(
            "JAX guide: persistent compilation cache",
            refs.DOCS + "persistent_compilation_cache.html",
        ),
        refs.release_notes(
            "0.8.0", "jax.util, host_callback and compilation_cache.initialize_cache removed"
        ),
        refs.release_notes("0.4.31", "jax.random.shuffle removed"),
        refs.release_notes("0.7.0", "jax.dlpack.to_dlpack removed"),
        refs.source_at("0.10.2", "jax/_src/util.py", "safe_zip is list(zip(*args, strict=True))"),
    )
    examples = (
        Example(
            title="indexed updates",
            before="""
            import jax
            import jax.numpy as jnp

            def bump(x, i):
                return jax.ops.index_add(x, jax.ops.index[i, 0], jnp.ones(()))
            """,
            after="""
            import jax.numpy as jnp

            def bump(x, i):
                return x.at[i, 0].add(jnp.ones(()))
            """,
        ),
    )

    def visit_name(self, site: NameSite, ctx: Context) -> None:
        if site.is_import:
            return
        if site.qualname == "jax.ops.index":
            self._index(site, ctx)
            return
        call = site.parent
        if not isinstance(call, cst.Call) or call.func is not site.node:
            self._alias(site, ctx)  # (not called otherwise: the missing-api backstop reports it)
            return
        self._call(site, call, ctx)

    def _alias(self, site: NameSite, ctx: Context) -> None:
        """``map = safe_map``: each call of ``map`` rewritten, and the assignment deleted."""
        found = helper_alias(site, ctx, self._fixed_safely(ctx), self._writes(ctx))
        if found is None:
            return
        line, name, uses = found
        for use, call in uses:
            self._call(use, call, ctx, going=name)
        message = f"{name} = {site.qualname}: its calls are rewritten, the name goes"
        ctx.replace(line, cst.RemovalSentinel.REMOVE, message, Safety.SAFE)

    def _call(self, site: NameSite, call: cst.Call, ctx: Context, going: str = "") -> None:
        """The rewrite of ``call``, of ``site`` (``going``: a name the round deletes, which the
        builtin of that name may replace)."""
        recipe = TABLE[site.qualname]
        if recipe.legacy == HOST_EFFECT.legacy and none_or_left_out(call, "result_shape"):
            recipe = HOST_EFFECT
        recipe, needs = exact_recipe(recipe, call, site.scope, ctx)
        problem = self._misfit(recipe, call, ctx)
        held_back = recipe_safety(recipe, call) is Safety.UNSAFE and not ctx.unsafe_fixes
        newer = newer_names(recipe, ctx)
        if problem is None and newer and not held_back:
            problem = f"{newer} newer than the target"
        if problem is None:
            problem = shadowed(recipe.builtins - {going}, site, ctx, self._rewritten_safely(ctx))
        if problem is not None:
            ctx.report(
                call,
                call_messages(site.qualname, recipe.shown)[0],
                f"{site.qualname} is gone; use {recipe.shown} ({recipe.why}); "
                f"not rewritten: {problem}.",
            )
            return
        if recipe.legacy == DLPACK and round_trip(call, site, ctx):
            return
        safety = recipe_safety(recipe, call)
        room = UNSAFE_ROOM if safety is Safety.UNSAFE else MESSAGE_LIMIT
        message = call_messages(site.qualname, recipe.shown, room)[1]
        detail = f"{site.qualname}(...) -> {recipe.shown}: {recipe.why}."
        if newer:  # (held back: its names decide the target of a run that applies it)
            detail += f" {newer[:-1]}: with --unsafe-fixes a default target rises to it."
        if recipe.legacy in TAPS:
            detail = tap_detail(detail, several_devices(ctx))
        if recipe.stated_from and ctx.target >= parse_version(recipe.stated_from[0]):
            template = f"{recipe.template[:-1]}, {recipe.stated_from[1]})"
            recipe = dataclasses.replace(recipe, template=template)
        if recipe.template.startswith("list(") and consumed_whole(call, site.scope, ctx):
            recipe = dataclasses.replace(recipe, template=recipe.template[len("list(") : -1])
        returned = returned_arg(recipe, call)[0] if recipe.returns is not None else None
        if returned is not None and lambda_body(call, ctx):  # lambda _: id_tap(f, x, result=r)
            done = _render(recipe, call.with_changes(lpar=[], rpar=[]), site, ctx)
            new = returned_by_lambda(call, done, returned, ctx)
            ctx.replace(call, new, message, safety, detail=detail)
            return
        assignment = statement_assignment(recipe, call, ctx) if recipe.statement_only else None
        if assignment is None:
            new = _render(recipe, call, site, ctx)
            if not (going and ctx.code(new) == ctx.code(call)):  # (``tuple(map(f, xs))``)
                ctx.replace(call, new, message, safety, recipe.builtins, detail, needs)
            return
        line, assign = assignment
        returned, by_keyword = returned_arg(recipe, call)
        # y = id_print(f(x)): y = f(x), then print y
        if not by_keyword and dotted_parts(returned) is None:
            assert isinstance(assign, cst.Assign)
            held = assign.targets[0].target
            args = list(call.args)
            args[recipe.returns] = args[recipe.returns].with_changes(value=held)  # type: ignore[index]
            printed = _render(recipe, call.with_changes(args=args), site, ctx)
            first = line.with_changes(body=[assign.with_changes(value=returned)])
            then = cst.SimpleStatementLine(body=[cst.Expr(printed)])
            ctx.replace(line, cst.FlattenSentinel([first, then]), message, safety, detail=detail)
            return
        lines = [line.with_changes(body=[cst.Expr(_render(recipe, call, site, ctx))])]
        if isinstance(assign, cst.Return) or not (
            len(assign.targets) == 1 and ctx.code(assign.targets[0].target) == ctx.code(returned)
        ):
            lines.append(cst.SimpleStatementLine(body=[assign.with_changes(value=returned)]))
        ctx.replace(line, cst.FlattenSentinel(lines), message, safety=safety, detail=detail)

    def _fixed_safely(self, ctx: Context) -> Callable[[str, cst.Call], bool]:
        """:meth:`_rewritten_safely`, with names the target has throughout."""
        safely = self._rewritten_safely(ctx)

        def check(qualname: str, call: cst.Call) -> bool:
            recipe = exact_recipe(TABLE[qualname], call, ctx.scope_of(call), ctx)[0]
            return safely(qualname, call) and not newer_names(recipe, ctx)

        return check

    @staticmethod
    def _writes(ctx: Context) -> Callable[[str, cst.Call], FrozenSet[str]]:
        return lambda q, call: exact_recipe(TABLE[q], call, ctx.scope_of(call), ctx)[0].builtins

    def _rewritten_safely(self, ctx: Context) -> Callable[[str, cst.Call], bool]:
        def check(qualname: str, call: cst.Call) -> bool:
            recipe = TABLE.get(qualname)
            if recipe is None:
                return False
            recipe = exact_recipe(recipe, call, ctx.scope_of(call), ctx)[0]
            return (
                self._misfit(recipe, call, ctx) is None
                and recipe_safety(recipe, call) is Safety.SAFE
            )

        return check

    # -- fitting ---------------------------------------------------------------------------
    def _misfit(self, recipe: CallRecipe, call: cst.Call, ctx: Context) -> Optional[str]:
        positional = [a for a in call.args if a.keyword is None]
        if any(a.star for a in call.args):
            return "arguments passed with * or **"
        if not recipe.positional[0] <= len(positional) <= recipe.positional[1]:
            return f"called with {len(positional)} positional arguments"
        names = {a.keyword.value for a in call.args if a.keyword is not None}
        unknown = names - recipe.keywords - recipe.passed_through
        if unknown:
            return f"keyword {sorted(unknown)[0]}= has no counterpart"
        if recipe.required - names:
            return f"no {sorted(recipe.required - names)[0]}= argument"
        for parameter in recipe.parameters[len(positional) :]:
            if parameter not in names:
                return f"no {parameter} argument"
        if recipe.legacy == f"{_HCB}.id_print" and names and print_template(call) is None:
            return "keyword what= is not a string literal"
        if recipe.result_keyword is not None:
            returned, by_keyword = returned_arg(recipe, call)
            if by_keyword and not is_pure(returned):
                return f"{recipe.result_keyword}= is not a name or a literal"
        if recipe.legacy.startswith(_HCB) and recipe.returns is not None:
            problem = host_misfit(call, returned_arg(recipe, call)[0], ctx)
            if problem is not None or lambda_body(call, ctx):
                return problem
        if (
            recipe.statement_only
            and not isinstance(ctx.parent(call), cst.Expr)
            and statement_assignment(recipe, call, ctx) is None
        ):
            return "its result is used, and the replacement returns nothing"
        return None

    def fix_needs_in(self, words: AbstractSet[str]) -> Optional[str]:
        """safe_zip and safe_map of several iterables: their exact forms need Python 3.10."""
        return STRICT_SINCE if {"safe_zip", "safe_map"} & words else None

    def survey_writes(self, words: AbstractSet[str]) -> FrozenSet[str]:
        """``host_callback.call`` may become ``jax.experimental.io_callback``, newer than the
        survey's lower bound (:data:`HOST_EFFECT`)."""
        found = super().survey_writes(words)
        if "host_callback" in words and "call" in words:
            found |= frozenset(word for name in HOST_EFFECT.uses() for word in name.split("."))
        return found

    def _index(self, site: NameSite, ctx: Context) -> None:
        """``jax.ops.index[...]`` outside an indexed update -> ``jnp.s_[...]`` (both return
        the index unchanged); inside one, the update's rewrite inlines it."""
        parent = site.parent
        if not isinstance(parent, cst.Subscript) or parent.value is not site.node:
            return
        for ancestor in site.ancestors:
            if isinstance(ancestor, cst.Call) and ctx.qualname(ancestor.func, site.scope) in TABLE:
                return
        if _missing_in_range("jax.numpy.s_", ctx):
            return
        ctx.replace(
            site.node,
            ctx.ref("jax.numpy.s_", site.scope),
            "jax.ops.index -> jax.numpy.s_ (both return the index as written)",
        )


def _missing_in_range(qualname: str, ctx: Context) -> bool:
    return not ctx.exists_throughout(qualname)


def _render(recipe: CallRecipe, call: cst.Call, site: NameSite, ctx: Context) -> cst.BaseExpression:
    """The recipe's code for ``call``: host_callback's tap and print adjust the template."""
    template = recipe.template
    if recipe.legacy == f"{_HCB}.id_tap":
        tap = [a.value for a in call.args if a.keyword is None][0]
        template = tap_template(tap, template, with_device(call))
    elif recipe.legacy == f"{_HCB}.id_print" and any(a.keyword is not None for a in call.args):
        template = print_template(call) or template
    if recipe.legacy in TAPS:
        template = ordered(template, several_devices(ctx))
    return render(recipe, template, call, site, ctx)
