"""JAX106 array-field-default: a JAX array as a dataclass field's default ->
``dataclasses.field(default_factory=lambda: ...)``.

Safe where nothing reads the default through the class.  Since Python 3.11, ``dataclasses``
refuses a default whose class has no ``__hash__`` ("mutable default ... is not allowed: use
default_factory"), raised when the class is made, at import.  DeviceArray defined
``__hash__`` (to raise ``TypeError``: "JAX DeviceArray, like numpy.ndarray, is not
hashable."), so the check let it through; ``jax.Array`` sets ``__hash__`` to None (seen on
jax 0.4.13, 0.4.30, 0.6.2 and 0.10.2, with Python 3.11), so a module that made a field's
default with ``jnp.array(...)`` dies at import on today's JAX (gymnax 0.0.5's
``discounting_chain.py``, and with it the whole package).  A factory makes each instance
an array of the same values; arrays are immutable, so no instance can tell.  What differs:
the class itself no longer holds the default (``dataclasses`` drops the class attribute of a
field with a factory), so a read of ``Cls.field`` would fail: the fix is made only where the
module reads no such attribute through the class (another module's reads are out of sight),
the array is still made where it was, once, and kept on the class under another name
(``_<field>_default``), so that every instance gets that same array: instances compare as
they did, since equality of dataclasses finds the field's arrays identical.
"""

from __future__ import annotations

import re
from typing import Dict, FrozenSet, Iterator, List, Optional, Set

from jaxmigrate.migrator import lazycst as cst, references as refs
from jaxmigrate.migrator.astfacts import Facts
from jaxmigrate.migrator.context import Context
from jaxmigrate.migrator.naming import CannotReference
from jaxmigrate.migrator.rule import Example, Lifecycle, Rule, Safety
from jaxmigrate.migrator.scope import Scope, dotted_parts
from jaxmigrate.migrator.version import parse_version
from jaxmigrate.rules._array_field_gate import ArrayFieldDefaultGate
from jaxmigrate.rules._array_fields import (
    DATACLASS_BASES,
    DATACLASS_DECORATORS,
    FIELD_FUNCTIONS,
    MAKER_NAMES,
    ast_array_defaults,
    class_var,
)
from jaxmigrate.rules._helpers import is_store

ARRAY = "0.4.1"  # jax.Array: the default array type, with no __hash__
FACTORY = "dataclasses.field"


class ArrayFieldDefault(ArrayFieldDefaultGate, Rule, code="JAX106", safety=Safety.SAFE):
    """a JAX array as a dataclass field's default -> field(default_factory=lambda: ...)

    **What it does.** In a dataclass (`@dataclasses.dataclass`, `@flax.struct.dataclass`,
    `@chex.dataclass`, or a subclass of `flax.struct.PyTreeNode`, `flax.linen.Module` or
    `equinox.Module`), a field whose default is a call of a `jax.numpy` array maker
    (`jnp.array([1, 3])`, `jnp.zeros(3)`, `jnp.float32(0.5)`, ...) or of a `jax.random` key
    maker (`jax.random.PRNGKey(0)`, `key`, `split`, `fold_in`) gets it from a factory.
    The array is still made where it was, once, and kept on the class as `_<field>_default`;
    the factory gives every instance that array: `w: jax.Array = jnp.zeros(3)` becomes
    `_w_default = jnp.zeros(3)` and
    `w: jax.Array = dataclasses.field(default_factory=lambda: Params._w_default)`.  A
    `field(..., default=jnp.zeros(3))` gets `default_factory=` the same way.

    **Why.** Since Python 3.11, `dataclasses` refuses a default whose class has no
    `__hash__`: "ValueError: mutable default <class 'jaxlib...ArrayImpl'> for field w is not
    allowed: use default_factory", raised when the class is made, so the module dies at
    import.  DeviceArray defined `__hash__` (to raise), which the check let through;
    `jax.Array` does not, on every JAX that installs on Python 3.11.

    **Safety.** Every instance holds the very array the shared default was, so instances
    compare as they did (dataclass equality finds the fields identical before it compares
    arrays).  The class no longer holds the default under the field's name (`dataclasses`
    keeps no class attribute for a field with a factory): the module's reads through the
    class (`Params.w`) become `Params._w_default`; where one cannot be followed (a store, a
    name the class shares with another binding), or the field shares its line with another
    statement, the field is reported.  Reads through the class from other modules are out of
    sight.  In a class nested in a class, the factory names it through the outer class.

    **Use instead.** A factory, as above, or a default that is not an array (a tuple)
    turned into one where it is used.
    """

    lifecycle = Lifecycle(
        removed=(ARRAY, "jax.Array has no __hash__: dataclasses refuse it as a default")
    )
    references = (
        refs.release_notes("0.4.1", "jax.Array, which has no __hash__, became the default"),
        refs.source_at("0.3.25", "jax/_src/device_array.py", "DeviceArray.__hash__ raises"),
        refs.api("jax.Array"),
    )
    examples = (
        Example(
            title="environment parameters (gymnax 0.0.5's discounting chain)",
            before="""
            import chex
            import jax.numpy as jnp
            from flax import struct


            @struct.dataclass
            class Env:
                steps: chex.Array = jnp.array([1, 3, 10, 30, 100])
            """,
            after="""
            import dataclasses

            import chex
            import jax.numpy as jnp
            from flax import struct


            @struct.dataclass
            class Env:
                _steps_default = jnp.array([1, 3, 10, 30, 100])
                steps: chex.Array = dataclasses.field(default_factory=lambda: Env._steps_default)
            """,
        ),
        Example(
            title="a default read through the class follows the array",
            before="""
            import dataclasses

            import jax.numpy as jnp


            @dataclasses.dataclass
            class Cfg:
                scale: jnp.ndarray = jnp.ones(3)


            DEFAULT_SCALE = Cfg.scale
            """,
            after="""
            import dataclasses

            import jax.numpy as jnp


            @dataclasses.dataclass
            class Cfg:
                _scale_default = jnp.ones(3)
                scale: jnp.ndarray = dataclasses.field(default_factory=lambda: Cfg._scale_default)


            DEFAULT_SCALE = Cfg._scale_default
            """,
        ),
    )

    def ast_gate(self, facts: Facts) -> bool:
        """A field of a dataclass of the module whose default (or ``default=``) calls a maker."""
        return ast_array_defaults(facts)

    def visit_module(self, ctx: Context) -> None:
        if not ctx.reaches(parse_version(ARRAY)):
            return
        for classdef in ctx.all_nodes(cst.ClassDef):
            if not _is_dataclass(classdef, ctx, set()):
                continue
            for found in _array_fields(classdef, ctx):
                self._move(ctx, *found)

    def _move(
        self,
        ctx: Context,
        call: "cst.Call",
        statement: "cst.AnnAssign",
        line: "cst.CSTNode",
        classdef: "cst.ClassDef",
        keyword: Optional["cst.Arg"],
    ) -> None:
        name = statement.target.value  # type: ignore[attr-defined]
        kept = f"_{name}_default"
        reads = _reads_through(ctx, classdef, name)
        problem = _why_not(ctx, line, classdef, kept)
        if problem is None and reads is None:
            problem = f"the module reads or writes {name} through the class where it cannot follow"
        if problem is not None:
            ctx.report(
                call,
                f"{name}: dataclasses refuse a jax.Array default on Python 3.11+; "
                "use field(default_factory=...)",
                detail=problem,
            )
            return
        assert reads is not None  # (no reason to report: every read can be followed)
        # The array is made where it was, once, and kept on the class under another name; the
        # factory gives every instance that same array (as the shared default did: equality
        # of instances still finds the field's arrays identical).
        owner = cst.Attribute(value=_class_path(ctx, classdef), attr=cst.Name(kept))
        factory = cst.Lambda(params=cst.Parameters(), body=owner)
        if keyword is not None:
            new_arg = keyword.with_changes(keyword=cst.Name("default_factory"), value=factory)
            field_call = statement.value
            assert isinstance(field_call, cst.Call)
            args = [new_arg if arg is keyword else arg for arg in field_call.args]
            value: cst.BaseExpression = field_call.with_changes(args=args)
        else:
            try:
                field = ctx.ref(FACTORY, ctx.scope_of(statement))
            except CannotReference:
                ctx.report(call, f"{name}: a jax.Array default; the name dataclasses is taken")
                return
            tight = cst.AssignEqual(
                whitespace_before=cst.SimpleWhitespace(""),
                whitespace_after=cst.SimpleWhitespace(""),
            )
            keyword_arg = cst.Arg(factory, keyword=cst.Name("default_factory"), equal=tight)
            value = cst.Call(func=field, args=[keyword_arg])
        assert isinstance(line, cst.SimpleStatementLine)  # (_why_not says so)
        made = cst.SimpleStatementLine(
            body=[cst.Assign(targets=[cst.AssignTarget(cst.Name(kept))], value=call)],
            leading_lines=line.leading_lines,
        )
        field_line = line.with_changes(body=[statement.with_changes(value=value)], leading_lines=())
        message = f"{name}: jax.Array default -> default_factory of {kept}"
        ctx.replace(line, cst.FlattenSentinel([made, field_line]), message)
        for read in reads:  # ``C.name`` read through the class: the array is ``C._name_default``
            ctx.replace(read, read.with_changes(attr=cst.Name(kept)), f"{_read_of(read)} -> {kept}")


def _array_fields(classdef: "cst.ClassDef", ctx: Context) -> Iterator[tuple]:
    """(the maker's call, the ``name: T = ...`` statement, its line, the class, the
    ``default=`` argument or None) for each field of ``classdef`` (not a ClassVar or InitVar)
    whose default, or its field function's ``default=``, calls a ``jax.numpy`` array maker."""
    scope = ctx.scope_of(classdef)
    block = classdef.body
    lines = block.body if isinstance(block, cst.IndentedBlock) else [block]
    for line in lines:
        if not isinstance(line, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            continue
        for statement in line.body:
            if not isinstance(statement, cst.AnnAssign) or statement.value is None:
                continue
            if not isinstance(statement.target, cst.Name):
                continue
            if class_var(re.sub(r"\s+", "", ctx.code(statement.annotation.annotation))):
                continue  # (a ClassVar or InitVar is no field: no check, and no factory)
            value = statement.value
            if not isinstance(value, cst.Call):
                continue
            if ctx.qualname(value.func, scope) in MAKER_NAMES:
                yield value, statement, line, classdef, None
            elif ctx.qualname(value.func, scope) in FIELD_FUNCTIONS:
                for arg in value.args:
                    made = arg.value
                    if (
                        arg.keyword is not None
                        and arg.keyword.value == "default"
                        and isinstance(made, cst.Call)
                        and ctx.qualname(made.func, scope) in MAKER_NAMES
                    ):
                        yield made, statement, line, classdef, arg


def _is_dataclass(classdef: "cst.ClassDef", ctx: Context, seen: Set[str]) -> bool:
    """Is the class made a dataclass: by a decorator, a base that makes its subclasses
    dataclasses, or a class of this module with such a base?"""
    scope = ctx.scope_of(classdef)
    for decorator in classdef.decorators:
        expr = decorator.decorator
        if isinstance(expr, cst.Call):
            expr = expr.func
        if _every_import_in(expr, scope, DATACLASS_DECORATORS):
            return True
    return _has_dataclass_base(classdef, ctx, seen)


def _every_import_in(expr: "cst.BaseExpression", scope: "Scope", names: FrozenSet[str]) -> bool:
    """Is ``expr`` a dotted name whose head every binding imports, each making it one of
    ``names``?  (``if TYPE_CHECKING: from dataclasses import dataclass`` with ``else: from
    chex import dataclass`` binds ``dataclass`` twice, both dataclass makers.)"""
    parts = dotted_parts(expr)
    bindings = scope.lookup(parts[0]) if parts else None
    if not parts or not bindings:
        return False
    tail = parts[1:]
    return all(b.qualname is not None and ".".join([b.qualname, *tail]) in names for b in bindings)


def _has_dataclass_base(classdef: "cst.ClassDef", ctx: Context, seen: Set[str]) -> bool:
    scope = ctx.scope_of(classdef)
    local = _classes(ctx)
    for base in classdef.bases:
        if base.keyword is not None:
            continue
        if ctx.qualname(base.value, scope) in DATACLASS_BASES:
            return True
        if isinstance(base.value, cst.Name) and base.value.value not in seen:
            parent = local.get(base.value.value)
            if parent is not None:
                seen.add(base.value.value)
                if _has_dataclass_base(parent, ctx, seen):
                    return True
    return False


def _classes(ctx: Context) -> Dict[str, "cst.ClassDef"]:
    """The module's classes by name (a name defined twice: neither)."""

    def build() -> Dict[str, "cst.ClassDef"]:
        found: Dict[str, cst.ClassDef] = {}
        twice: Set[str] = set()
        for node in ctx.all_nodes(cst.ClassDef):
            name = node.name.value
            if name in found:
                twice.add(name)
            found[name] = node
        return {name: node for name, node in found.items() if name not in twice}

    return ctx.memo(("JAX106", "classes"), build)


def _why_not(
    ctx: Context, line: "cst.CSTNode", classdef: "cst.ClassDef", kept: str
) -> Optional[str]:
    """Why the default cannot move to a factory (None: it can)."""
    if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
        return "the field shares its line with another statement"
    if kept in _bound_in_body(classdef):
        return f"the class already binds {kept}, the name that would keep the array"
    return None


def _class_path(ctx: Context, classdef: "cst.ClassDef") -> "cst.BaseExpression":
    """``C``, or ``Outer.C`` for a class in a class body (whose names a ``lambda`` in ``C``
    cannot see; the outermost class is a name of the function or module around it)."""
    names = [classdef.name.value]
    for node in ctx.ancestors(classdef):
        if isinstance(node, (cst.FunctionDef, cst.Lambda)):
            break
        if isinstance(node, cst.ClassDef):
            names.insert(0, node.name.value)
    expr: cst.BaseExpression = cst.Name(names[0])
    for part in names[1:]:
        expr = cst.Attribute(value=expr, attr=cst.Name(part))
    return expr


def _read_of(read: "cst.Attribute") -> str:
    return f"{read.value.value}.{read.attr.value}"  # type: ignore[attr-defined]


def _reads_through(
    ctx: Context, classdef: "cst.ClassDef", name: str
) -> Optional[List["cst.Attribute"]]:
    """The module's reads ``C.name`` of the field through its class ``C`` (a name that means
    the class wherever it is read); None where one cannot be followed: a store or ``del``, a
    ``C`` that may be another object there, or a read inside a field's default (which a fix
    moves)."""
    reads: List[cst.Attribute] = []
    home = ctx.scope_of(classdef)
    for attribute in ctx.all_nodes(cst.Attribute):
        value = attribute.value
        if attribute.attr.value != name or not isinstance(value, cst.Name):
            continue
        if value.value != classdef.name.value:
            continue
        bindings = ctx.scope_of(attribute).lookup(value.value)
        if bindings is None or len(bindings) != 1 or bindings[0].scope is not home:
            if bindings is not None and any(b.scope is home for b in bindings):
                return None  # (the class's name, bound again: cannot tell which one)
            continue  # another object of the same name
        if is_store(ctx, attribute) or any(
            isinstance(up, cst.AnnAssign) for up in ctx.ancestors(attribute)
        ):
            return None
        reads.append(attribute)
    return reads


def _bound_in_body(classdef: "cst.ClassDef") -> FrozenSet[str]:
    """Every name a statement of the class body binds (not inside its functions or classes,
    whose own names count)."""
    names: Set[str] = set()

    class Bound(cst.CSTVisitor):
        def visit_FunctionDef(self, node: "cst.FunctionDef") -> bool:
            names.add(node.name.value)
            return False

        def visit_ClassDef(self, node: "cst.ClassDef") -> bool:
            names.add(node.name.value)
            return False

        def visit_Lambda(self, node: "cst.Lambda") -> bool:
            return False

        def visit_AssignTarget(self, node: "cst.AssignTarget") -> None:
            names.update(_names_in(node.target))

        def visit_AnnAssign(self, node: "cst.AnnAssign") -> None:
            names.update(_names_in(node.target))

        def visit_AugAssign(self, node: "cst.AugAssign") -> None:
            names.update(_names_in(node.target))

        def visit_For(self, node: "cst.For") -> None:
            names.update(_names_in(node.target))

        def visit_AsName(self, node: "cst.AsName") -> None:
            names.update(_names_in(node.name))

        def visit_NamedExpr(self, node: "cst.NamedExpr") -> None:
            names.update(_names_in(node.target))

        def visit_ImportAlias(self, node: "cst.ImportAlias") -> None:
            if node.asname is None:
                names.update(_names_in(node.name))

    for statement in classdef.body.body:
        statement.visit(Bound())
    return frozenset(names)


def _names_in(node: "cst.CSTNode") -> Set[str]:
    """The identifiers of ``node`` read as names (not attribute parts nor keyword names)."""
    found: Set[str] = set()

    class Collect(cst.CSTVisitor):
        def visit_Name(self, name: "cst.Name") -> None:
            found.add(name.value)

        def visit_Attribute(self, attribute: "cst.Attribute") -> bool:
            attribute.value.visit(self)
            return False

        def visit_Arg(self, arg: "cst.Arg") -> bool:
            arg.value.visit(self)
            return False

    node.visit(Collect())
    return found
