"""Matchers and builders the GlobalDeviceArray rules (JAX301-JAX304) share.

GDA signatures (``jax/experimental/global_device_array.py`` in jax 0.3.25):
``GlobalDeviceArray(global_shape, global_mesh, mesh_axes, device_buffers, ...)`` and the class
methods ``from_callback`` / ``from_batched_callback`` /
``from_batched_callback_with_devices(global_shape, global_mesh, mesh_axes, data_callback)``.
"""

from __future__ import annotations

import functools
from typing import Dict, List, Optional, Sequence, Set, Tuple, Union

from jaxmigrate.migrator import lazycst as cst, references as refs
from jaxmigrate.migrator.context import Context
from jaxmigrate.migrator.scope import Scope
from jaxmigrate.rules._flow import assignments
from jaxmigrate.rules._helpers import parse_statement_in

# GlobalDeviceArray warns from jax 0.4.6 and its module is gone in 0.4.7; no changelog entry
# records either, so the sources are the module itself and the commit that deleted it.
GDA_HISTORY = (
    refs.source_at("0.4.6", "jax/experimental/global_device_array.py", "GlobalDeviceArray warns"),
    refs.commit("634035a", "GlobalDeviceArray removed (jax 0.4.7)"),
)
GDA_MODULES = frozenset({"jax.experimental.global_device_array", "jax._src.global_device_array"})
CLASS = "GlobalDeviceArray"
METHOD_PARAMS = ("global_shape", "global_mesh", "mesh_axes", "data_callback")
INIT_PARAMS = ("global_shape", "global_mesh", "mesh_axes", "device_buffers")

# Spellings of PartitionSpec a ``mesh_axes`` argument may already be built with.
PARTITION_SPECS = frozenset(
    {
        "jax.sharding.PartitionSpec",
        "jax.P",
        "jax._src.partition_spec.PartitionSpec",
        "jax.experimental.PartitionSpec",
        "jax.experimental.pjit.PartitionSpec",
        "jax.experimental.maps.PartitionSpec",
        "jax.interpreters.pxla.PartitionSpec",
        "jax._src.sharding_impls.PartitionSpec",
    }
)

NAMED_SHARDING = "jax.sharding.NamedSharding"
PARTITION_SPEC = "jax.sharding.PartitionSpec"


def gda_names(suffix: str = "") -> frozenset:
    """Every qualified spelling of ``GlobalDeviceArray<suffix>``."""
    return frozenset(f"{module}.{CLASS}{suffix}" for module in GDA_MODULES)


def bind_arguments(
    call: cst.Call, params: Sequence[str]
) -> Tuple[Optional[Dict[str, cst.BaseExpression]], str]:
    """Map a call's arguments onto ``params``; (None, reason) when that is not possible."""
    bound: Dict[str, cst.BaseExpression] = {}
    position = 0
    for arg in call.args:
        if arg.star:
            return None, "the arguments are passed with * or **"
        if arg.keyword is None:
            if position >= len(params):
                return None, "it has more positional arguments than the GDA signature"
            bound[params[position]] = arg.value
            position += 1
        else:
            name = arg.keyword.value
            if name not in params:
                return None, f"it passes {name}=, which the replacement has no counterpart for"
            if name in bound:
                return None, f"{name} is given twice"
            bound[name] = arg.value
    missing = [p for p in params if p not in bound]
    if missing:
        return None, f"{missing[0]} is missing"
    return bound, ""


def positional_args(
    original: Sequence[cst.Arg], values: Sequence[cst.BaseExpression]
) -> List[cst.Arg]:
    """New positional arguments, reusing the original commas (so line breaks survive); the
    last one keeps the original last argument's trailing comma and whitespace."""
    result = []
    count = len(values)
    for index, value in enumerate(values):
        if index < count - 1:
            source = original[index] if index < len(original) - 1 else None
            comma: Union[cst.Comma, cst.MaybeSentinel] = (
                source.comma
                if source is not None and source.comma is not cst.MaybeSentinel.DEFAULT
                else cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
            )
            whitespace = (
                source.whitespace_after_arg if source is not None else cst.SimpleWhitespace("")
            )
        else:
            comma = original[-1].comma if original else cst.MaybeSentinel.DEFAULT
            whitespace = original[-1].whitespace_after_arg if original else cst.SimpleWhitespace("")
        result.append(cst.Arg(value=value, comma=comma, whitespace_after_arg=whitespace))
    return result


def fix_dotted_imports(ctx: Context) -> None:
    """``import jax.experimental.global_device_array`` binds ``jax``, which the rewrites then
    use (``jax.make_array_from_callback``), but importing the module fails on every JAX
    without GDA.  Once nothing refers to the module any more, it becomes ``import jax`` (or
    goes, when ``jax`` is imported anyway)."""
    dotted: List[Tuple[cst.Import, cst.ImportAlias]] = []
    plain_jax = False
    for binding in ctx.analysis.imports:
        statement = binding.statement
        if (
            binding.guarded
            or not isinstance(statement, cst.Import)
            or not isinstance(binding.node, cst.ImportAlias)
        ):
            continue
        name = _dotted(binding.node.name)
        if binding.node.asname is None and any(
            name == m or name.startswith(m + ".") for m in GDA_MODULES
        ):
            dotted.append((statement, binding.node))
        elif (
            name == "jax"
            and binding.node.asname is None
            and ctx.scope_of(statement) is ctx.analysis.scopes[id(ctx.module)]
        ):
            plain_jax = True
    if not dotted or _refers_to_gda_modules(ctx):
        return
    for statement, alias in dotted:
        if plain_jax:
            kept = [a for a in statement.names if a is not alias]
            if not kept:
                ctx.replace(
                    statement,
                    cst.RemovalSentinel.REMOVE,
                    "removed the import of a module gone from JAX",
                )
                continue
            kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            ctx.replace(
                statement,
                statement.with_changes(names=kept),
                "removed the import of a module gone from JAX",
            )
        else:
            names = [
                a.with_changes(name=cst.Name("jax")) if a is alias else a for a in statement.names
            ]
            ctx.replace(
                statement,
                statement.with_changes(names=names),
                "import of a module gone from JAX -> import jax",
            )
        plain_jax = True


def _dotted(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{_dotted(node.value)}.{node.attr.value}"
    return ""


def _refers_to_gda_modules(ctx: Context) -> bool:
    # The analysis index holds every attribute outside import statements.
    for node in ctx.nodes(cst.Attribute):
        name = _dotted(node)
        if any(name == m or name.startswith(m + ".") for m in GDA_MODULES):
            return True
    return False


def _is_partition_spec_call(node: cst.BaseExpression, ctx: Context, scope: Scope) -> bool:
    return isinstance(node, cst.Call) and ctx.qualname(node.func, scope) in PARTITION_SPECS


def _assigned_values(ctx: Context, scope: Scope, name: str) -> Optional[List[cst.BaseExpression]]:
    """The values of every ``name = value`` binding visible here, or None if some binding
    is not such a plain assignment (a parameter, a loop variable, an import, ...)."""
    bindings = scope.lookup(name)
    if not bindings or any(b.is_import for b in bindings):
        return None
    values = [node.value for node in assignments(ctx, name, bindings[0].scope)]
    return values if len(values) == len(bindings) else None


def partition_spec(
    expr: cst.BaseExpression, ctx: Context, scope: Scope
) -> Optional[cst.BaseExpression]:
    """``mesh_axes`` as a PartitionSpec expression.

    A PartitionSpec call stays; a literal tuple/list becomes ``P(<its elements>)``; a name
    bound only to PartitionSpec calls stays; anything else becomes ``P(*expr)``, which is
    right whether ``expr`` holds a tuple, a list or a PartitionSpec.  None for a literal
    ``None`` (GDA never documented it; a person has to pick the spec).
    """
    if isinstance(expr, cst.Name) and expr.value == "None":
        return None
    if _is_partition_spec_call(expr, ctx, scope):
        return expr
    spec = ctx.ref(PARTITION_SPEC, scope, prefer_from=True)
    if isinstance(expr, (cst.Tuple, cst.List)):
        if any(isinstance(e, cst.StarredElement) for e in expr.elements):
            args = [
                cst.Arg(value=e.value, star="*")
                if isinstance(e, cst.StarredElement)
                else cst.Arg(value=e.value)
                for e in expr.elements
            ]
        else:
            args = [cst.Arg(value=e.value) for e in expr.elements]
        args = [
            a.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
            for a in args[:-1]
        ] + args[-1:]
        return cst.Call(func=spec, args=args)
    if isinstance(expr, cst.Name):
        values = _assigned_values(ctx, scope, expr.value)
        if values and all(_is_partition_spec_call(v, ctx, scope) for v in values):
            return expr
    return cst.Call(func=spec, args=[cst.Arg(value=expr, star="*")])


def named_sharding(
    mesh: cst.BaseExpression, mesh_axes: cst.BaseExpression, ctx: Context, scope: Scope
) -> Optional[cst.Call]:
    if isinstance(mesh_axes, cst.Name) and mesh_axes.value == "None":
        return None
    func = ctx.ref(NAMED_SHARDING, scope, prefer_from=True)
    spec = partition_spec(mesh_axes, ctx, scope)
    if spec is None:
        return None
    return cst.Call(
        func=func,
        args=[
            cst.Arg(value=mesh, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
            cst.Arg(value=spec),
        ],
    )


def is_simple(node: cst.BaseExpression) -> bool:
    """No calls or other effects: evaluating it earlier or later changes nothing."""
    if isinstance(node, (cst.Name, cst.Integer, cst.Float, cst.SimpleString, cst.Lambda)):
        return True
    if isinstance(node, cst.Attribute):
        return is_simple(node.value)
    if isinstance(node, (cst.Tuple, cst.List)):
        return all(
            not isinstance(e, cst.StarredElement) and is_simple(e.value) for e in node.elements
        )
    if isinstance(node, cst.UnaryOperation):
        return is_simple(node.expression)
    return False


def is_pure_index_lambda(node: cst.BaseExpression) -> bool:
    """``lambda idx: data[idx]``: a callback with no effects, so calling it once or once per
    device gives the same arrays."""
    if not isinstance(node, cst.Lambda):
        return False
    params = node.params
    if len(params.params) != 1 or params.posonly_params or params.kwonly_params:
        return False
    if params.star_arg is not cst.MaybeSentinel.DEFAULT or params.star_kwarg is not None:
        return False
    name = params.params[0].name.value
    body = node.body
    if not isinstance(body, cst.Subscript) or len(body.slice) != 1:
        return False
    index = body.slice[0].slice
    if not (
        isinstance(index, cst.Index)
        and isinstance(index.value, cst.Name)
        and index.value.value == name
    ):
        return False
    value = body.value
    while isinstance(value, cst.Attribute):
        value = value.value
    return isinstance(value, cst.Name) and value.value != name


def all_names(ctx: Context) -> Set[str]:
    """Every identifier (``Name`` node) anywhere in the module, from the per-round walk."""
    return {node.value for node in ctx.all_nodes(cst.Name)}


def fresh_name(base: str, taken: Set[str]) -> str:
    """``base``, or ``base_2``, ``base_3``... whichever is not used anywhere in the module."""
    candidate = base
    counter = 2
    while candidate in taken:
        candidate = f"{base}_{counter}"
        counter += 1
    taken.add(candidate)
    return candidate


# -- multi-statement rewrites (JAX303/JAX304) ------------------------------------------------
@functools.cache
def _render_module() -> "cst.Module":
    return cst.Module(body=[])


def render(node: cst.CSTNode) -> str:
    return _render_module().code_for_node(node)


def assignment_statement(
    call: cst.Call, ctx: Context
) -> Optional[Tuple[cst.SimpleStatementLine, str]]:
    """(the statement line, the target name) when ``call`` is the whole value of
    ``name = call`` standing alone on a line of a block; else None."""
    assign = ctx.parent(call)
    if not isinstance(assign, cst.Assign) or assign.value is not call or len(assign.targets) != 1:
        return None
    target = assign.targets[0].target
    if not isinstance(target, cst.Name):
        return None
    line = ctx.parent(assign)
    if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
        return None
    if not isinstance(ctx.parent(line), (cst.IndentedBlock, cst.Module)):
        return None
    return line, target.value


def returned_alone(call: cst.Call, ctx: Context) -> bool:
    """``return call`` standing alone on a line of a block."""
    ret = ctx.parent(call)
    line = ctx.parent(ret) if isinstance(ret, cst.Return) else None
    return (
        isinstance(line, cst.SimpleStatementLine)
        and len(line.body) == 1
        and isinstance(ctx.parent(line), cst.IndentedBlock)
    )


def taken_names(ctx: Context) -> Set[str]:
    """Every name in the module plus the temporaries already chosen this round."""
    return ctx.memo(("gda", "taken names"), lambda: all_names(ctx))


def statements(
    line: cst.SimpleStatementLine, texts: Sequence[str], module: cst.Module
) -> cst.FlattenSentinel:
    """Parse ``texts`` into statements replacing ``line`` in ``module``
    (:func:`parse_statement_in`): its leading comments go to the first, its trailing comment
    to the last."""
    parsed = [parse_statement_in(text, module) for text in texts]
    parsed[0] = parsed[0].with_changes(leading_lines=line.leading_lines)
    last = parsed[-1]
    if isinstance(last, cst.SimpleStatementLine):
        parsed[-1] = last.with_changes(trailing_whitespace=line.trailing_whitespace)
    return cst.FlattenSentinel(parsed)


def hoisted_arguments(
    call: cst.Call,
    bound: Dict[str, cst.BaseExpression],
    target: str,
    taken: Set[str],
    ctx: Context,
    scope: Scope,
) -> Tuple[List[str], Dict[str, cst.BaseExpression]]:
    """Statements binding every argument with effects to a temporary, in source order (the
    rewrite evaluates its arguments in a different order than the call did), and the
    expression to use for each parameter."""

    def simple(value: cst.BaseExpression) -> bool:
        if _is_partition_spec_call(value, ctx, scope):
            return all(is_simple(a.value) for a in value.args)  # type: ignore[attr-defined]
        return is_simple(value)

    values: Dict[str, cst.BaseExpression] = {}
    hoist: List[str] = []
    any_effects = any(not simple(value) for value in bound.values())
    order = []
    for arg in call.args:
        for param, value in bound.items():
            if value is arg.value:
                order.append(param)
    for param in order:
        value = bound[param]
        if any_effects and not simple(value):
            name = fresh_name(f"{target}_{param}", taken)
            hoist.append(f"{name} = {ctx.code(value)}\n")
            values[param] = cst.Name(name)
        else:
            values[param] = value
    return hoist, values


def expression_text(node: cst.BaseExpression, ctx: Context) -> str:
    """Source of an original expression, parenthesised if it spans lines."""
    code = ctx.code(node)
    if "\n" in code and not (code.startswith("(") and code.endswith(")")):
        code = f"({code})"
    return code


def callable_text(code: str, node: cst.BaseExpression) -> str:
    """Source to call ``node``: names and attributes as they are, anything else in parens."""
    if isinstance(node, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) or code.startswith("("):
        return code
    return f"({code})"
