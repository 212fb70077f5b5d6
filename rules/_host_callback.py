"""host_callback's id_tap and id_print, as their jax.debug replacements spell them (for JAX905
removed-calls): the tap function (and the device ``tap_with_device=True`` gave it), the
keywords id_print printed before the value, a call that was a lambda's whole body, and the
program order the taps kept (``ordered=True``, where the module shows no code running on
several devices)."""

from __future__ import annotations

import re
from typing import Optional, Sequence, Tuple, Union

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.migrator.context import Context
from jaxmigrate.migrator.rule import Safety
from jaxmigrate.migrator.scope import Scope
from jaxmigrate.rules._call_recipes import CallRecipe, is_pure
from jaxmigrate.rules._flow import local_function
from jaxmigrate.rules._helpers import nodes_under

HCB = "jax.experimental.host_callback"
_PRINT = "{q:jax.debug.print}"
_TAPPED = "lambda tapped: {0}({q:jax.tree_util.tree_map}({q:numpy.asarray}, tapped), ())"
DEVICE = "tap_with_device"  # id_tap's keyword: the tap function was called with device=<Device>


# host_callback's id_print(x) and id_tap(f, x) returned x, their last argument: the
# jax.debug replacements return nothing, so ``y = id_tap(f, x)`` becomes a statement and
# y = x (``return id_tap(f, x)``: the statement, then ``return x``).  id_tap(f, x,
# result=r) returned r: the statement, then ``return r`` (GPJax 0.5.0's progress bar).
TAP_RECIPES: Tuple[CallRecipe, ...] = tuple(
    CallRecipe(
        legacy=f"{HCB}.{legacy}",
        template=template,
        shown=shown,
        positional=(count, count),
        statement_only=True,
        returns=count - 1,
        safety=Safety.UNSAFE,
        why=why,
        keywords=frozenset({"what"} if legacy == "id_print" else {"result", DEVICE}),
        result_keyword=None if legacy == "id_print" else "result",
    )
    for legacy, count, template, shown, why in (
        (
            "id_print",
            1,
            '{q:jax.debug.print}("{{}}", {0})',
            'jax.debug.print("{}", x, ordered=True)',
            "JAX's host_callback deprecation names jax.debug.print; the printed format "
            "differs; ordered=True keeps program order, as id_print did, and JAX refuses it "
            "where the computation spans several devices",
        ),
        (
            "id_tap",
            2,
            "{q:jax.debug.callback}(" + _TAPPED + ", {1})",
            "jax.debug.callback(lambda tapped: tap_func(tree_map(np.asarray, tapped), ()), x, "
            "ordered=True)",
            "JAX's host_callback deprecation names jax.debug.callback; the tap function gets "
            "() for its transforms, as outside any transformation, and NumPy arrays as "
            "id_tap gave it (jax.debug.callback passes jax.Arrays); ordered=True keeps program "
            "order, as id_tap did (a progress bar needs it), and JAX refuses it where the "
            "computation spans several devices",
        ),
    )
)


# Names that put a computation on several devices, where JAX refuses ordered callbacks
# ("ordered effects are not supported for more than 1 device": jax.pmap, and jax.jit of
# sharded arrays, measured on jax 0.10.2).  Read in the file's text, comments and strings too.
_SEVERAL = re.compile(
    r"\b(pmap|xmap|pjit|shard_map|make_mesh|Mesh|PartitionSpec|\w*Sharding|"
    r"device_put_sharded|device_put_replicated|with_sharding_constraint)\b"
)


def several_devices(ctx: Context) -> Optional[str]:
    """Where the module shows code that runs on several devices (``"pmap, line 12"``), or None.
    There the taps are left unordered: ``ordered=True`` would fail to compile."""
    return ctx.memo("several-devices", lambda: _several_devices(ctx))


def _several_devices(ctx: Context) -> Optional[str]:
    text = ctx.file_state.get("text")  # (the whole file's, on the piecewise path too)
    if not isinstance(text, str):
        ctx.needs_whole_module()
        text = ctx.module.code
    matches = list(_SEVERAL.finditer(text))
    if not matches:
        return None
    # (shown: the first outside a comment, where there is one)
    found = next((m for m in matches if "#" not in _line_before(text, m.start())), matches[0])
    return f"{found.group(1)}, line {text.count(chr(10), 0, found.start()) + 1}"


def _line_before(text: str, offset: int) -> str:
    return text[text.rfind("\n", 0, offset) + 1 : offset]


def ordered(template: str, several: Optional[str]) -> str:
    """``template`` (a jax.debug call) with ``ordered=True``, unless ``several`` says the module
    runs code on several devices."""
    return template if several is not None else f"{template[:-1]}, ordered=True)"


def tap_detail(detail: str, several: Optional[str]) -> str:
    """A tap's ``detail``, for one left unordered (:func:`several_devices`): the recipe it
    shows loses ``ordered=True``, and the detail says why."""
    if several is None:
        return detail
    return (
        f"{detail.replace(', ordered=True)', ')', 1)} Not ordered=True: this module runs code "
        f"on several devices ({several}), where JAX refuses ordered callbacks, so taps may "
        "arrive out of program order."
    )


TAPS = frozenset(recipe.legacy for recipe in TAP_RECIPES)


def print_template(call: cst.Call) -> Optional[str]:
    """``id_print(x, what="loss")`` printed ``what: loss`` on a line, then ``x``: the same as a
    ``jax.debug.print`` template, quoted as the call's own strings are; None when a keyword is
    not a plain string literal (or holds a brace, which the format would read)."""
    header = []
    quote = '"'
    for arg in call.args:
        if arg.keyword is None:
            continue
        value = arg.value
        if not isinstance(value, cst.SimpleString):
            return None
        text = value.evaluated_value
        if not isinstance(text, str) or "{" in text or "}" in text:
            return None
        quote = "'" if value.quote == "'" else quote
        header.append(f"{arg.keyword.value}: {text}")
    if not header:
        return None
    line = " ".join(sorted(header)).replace("\\", "\\\\").replace(quote, "\\" + quote)
    return f"{_PRINT}({quote}{line}\\n{{{{}}}}{quote}, {{0}})"  # id_print sorted the keywords


def with_device(call: cst.Call) -> bool:
    """Does ``call`` pass ``tap_with_device=True`` (id_tap then called ``f(x, transforms,
    device=<Device>)``)?"""
    return any(
        arg.keyword is not None
        and arg.keyword.value == DEVICE
        and isinstance(arg.value, cst.Name)
        and arg.value.value == "True"
        for arg in call.args
    )


def device_misfit(call: cst.Call, scope: Scope, ctx: Context) -> Optional[str]:
    """Why ``call``'s ``tap_with_device=`` keeps it from the rewrite, or None.  jax.debug.callback
    names no device: with ``True``, the tap function is called with ``device=None``, so it must
    be a lambda or a ``def`` of this module taking ``device`` and never reading it."""
    value = next((a.value for a in call.args if a.keyword and a.keyword.value == DEVICE), None)
    if value is None or isinstance(value, cst.Name) and value.value == "False":
        return None
    if not with_device(call):
        return f"{DEVICE}= is not True or False"
    tap = [a.value for a in call.args if a.keyword is None][0]
    function: Union[cst.Lambda, cst.FunctionDef, None] = None
    if isinstance(tap, cst.Lambda):
        function = tap
    elif isinstance(tap, cst.Name):
        function = local_function(ctx, tap, scope)
        if function is not None and function.decorators:
            function = None
    if function is None or not _ignores_device(function):
        return f"{DEVICE}=True, and the tap function may read the device (it would get None)"
    return None


def _ignores_device(function: Union[cst.Lambda, cst.FunctionDef]) -> bool:
    params = function.params
    named = [*params.params, *params.kwonly_params]
    if not any(p.name.value == "device" for p in named):
        return False
    return not any(name.value == "device" for name in nodes_under(function.body, cst.Name))


def tap_template(tap: cst.BaseExpression, template: str, device: bool = False) -> str:
    """``lambda v, transforms: body`` whose body ignores the transforms is passed as
    ``lambda v: body``; any other tap function is called with ``()`` for its transforms.
    ``device``: the call passed ``tap_with_device=True`` (the function also takes a
    ``device`` it never reads, :func:`device_misfit`): ``lambda v, transforms, device:``
    loses both, any other function gets ``device=None``."""
    plain = _ignored_after_first(tap, 3 if device else 2)
    if plain is None:
        return template.replace("()), ", "(), device=None), ") if device else template
    params = tap.params  # type: ignore[attr-defined]
    lambda_code = cst.Module(body=[]).code_for_node(
        tap.with_changes(
            params=params.with_changes(
                params=[plain[0].with_changes(comma=cst.MaybeSentinel.DEFAULT)]
            )
        )
    )
    return template.replace(_TAPPED, lambda_code.replace("{", "{{").replace("}", "}}"))


def _ignored_after_first(tap: cst.BaseExpression, count: int) -> Optional[Sequence[cst.Param]]:
    """The parameters of ``tap``, a lambda of ``count`` plain ones whose body reads only the
    first; else None."""
    if not isinstance(tap, cst.Lambda):
        return None
    params = tap.params
    if params.star_arg is not cst.MaybeSentinel.DEFAULT and params.star_arg is not None:
        return None
    plain = params.params
    if params.kwonly_params or params.star_kwarg or params.posonly_params or len(plain) != count:
        return None
    if any(p.default is not None for p in plain):
        return None
    ignored = {p.name.value for p in plain[1:]}
    if any(name.value in ignored for name in nodes_under(tap.body, cst.Name)):
        return None
    return plain


def lambda_body(call: cst.Call, ctx: Context) -> bool:
    """Is ``call`` the whole body of a lambda (``lambda _: id_tap(f, x, result=r)``, a branch
    of ``lax.cond`` in the progress bars of 2021-2022)?  Its value is then what the lambda
    returns: the rewrite keeps it as ``(jax.debug.callback(...), r)[1]``."""
    parent = ctx.parent(call)
    return isinstance(parent, cst.Lambda) and parent.body is call


def host_misfit(call: cst.Call, returned: cst.BaseExpression, ctx: Context) -> Optional[str]:
    """Why id_tap's or id_print's ``call``, which returned ``returned``, is not rewritten for
    what only these two have (a device, a lambda's body), or None."""
    problem = device_misfit(call, ctx.scope_of(call), ctx)
    if problem is None and lambda_body(call, ctx) and not is_pure(returned):
        problem = "a lambda returns its result, which is not a name or a literal"
    return problem


def returned_by_lambda(
    call: cst.Call, done: cst.BaseExpression, returned: cst.BaseExpression, ctx: Context
) -> cst.BaseExpression:
    """``(done, returned)[1]``: the replacement ``done`` of ``call``, a lambda's body, then the
    value the call returned (a name or a literal: :func:`host_misfit`).  The call's own
    parentheses go, unless a comment sits in them."""
    new = cst.parse_expression(f"({ctx.code(done)}, {ctx.code(returned)})[1]")
    parens = [*call.lpar, *call.rpar]
    if any("#" in cst.Module(body=[]).code_for_node(paren) for paren in parens):
        new = new.with_changes(lpar=call.lpar, rpar=call.rpar)
    return new
