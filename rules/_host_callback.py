"""host_callback's id_tap and id_print, as their jax.debug replacements spell them (for JAX905
removed-calls): the tap function, and the keywords id_print printed before the value."""

from __future__ import annotations

from typing import Optional

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.rules._helpers import nodes_under

_PRINT = "{q:jax.debug.print}"


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


def tap_template(tap: cst.BaseExpression, template: str) -> str:
    """``lambda v, transforms: body`` whose body ignores the transforms is passed as
    ``lambda v: body``; any other tap function is called with ``()`` for its transforms."""
    if not isinstance(tap, cst.Lambda):
        return template
    params = tap.params
    if params.star_arg is not cst.MaybeSentinel.DEFAULT and params.star_arg is not None:
        return template
    plain = params.params
    if params.kwonly_params or params.star_kwarg or params.posonly_params or len(plain) != 2:
        return template
    if any(p.default is not None for p in plain):
        return template
    ignored = plain[1].name.value
    if any(name.value == ignored for name in nodes_under(tap.body, cst.Name)):
        return template
    lambda_code = cst.Module(body=[]).code_for_node(
        tap.with_changes(
            params=params.with_changes(
                params=[plain[0].with_changes(comma=cst.MaybeSentinel.DEFAULT)]
            )
        )
    )
    return template.replace(
        "lambda tapped: {0}({q:jax.tree_util.tree_map}({q:numpy.asarray}, tapped), ())",
        lambda_code.replace("{", "{{").replace("}", "}}"),
    )
