"""Whole-module facts the receiver analysis reads: which local functions are jit-, pmap- or
pjit-wrapped, which names are assigned ``jax.jit(f)``, and which multi-process APIs the module
calls.  Collected once per module (memoised on the context) and shared by every receiver
question asked about it.
"""

from __future__ import annotations

import dataclasses
from typing import Dict, Optional, Tuple

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.migrator.context import Context
from jaxmigrate.migrator.scope import Scope, dotted_parts
from jaxmigrate.rules._array_names import (
    FOREIGN_ARRAY_LIBRARIES,
    GDA_MODULES,
    JIT_WRAPPERS,
    PARTIALS,
    PMAP_WRAPPERS,
    is_jax_name,
    under,
)


# -- whole-module facts -------------------------------------------------------------------------
@dataclasses.dataclass
class ModuleFacts:
    imports_jax: bool  # an unguarded import of jax / jax.* / jaxlib
    imports_gda: bool  # an import of the GlobalDeviceArray module or its names
    foreign_libraries: Tuple[str, ...]  # imported array libraries other than JAX and NumPy
    uses_pmap: bool  # refers to jax.pmap anywhere
    multiprocess: bool  # calls jax.distributed.initialize or reads process_index/process_count
    jit_functions: Dict[str, str]  # module-level jitted function name -> its output_of
    user_attributes: frozenset  # names defined as methods / self.<attr> in this module's classes


def module_facts(ctx: Context) -> ModuleFacts:
    """What the receiver rules need to know about the whole module, once per round."""
    return ctx.memo(("receivers", "module facts"), lambda: _collect(ctx))


def _collect(ctx: Context) -> ModuleFacts:
    module_scope = ctx.analysis.scopes[id(ctx.module)]
    imports_jax = imports_gda = False
    foreign = set()
    for binding in ctx.analysis.imports:
        qualname = binding.qualname or ""
        if binding.guarded:
            if under(qualname, GDA_MODULES):
                imports_gda = True
            continue
        if is_jax_name(qualname):
            imports_jax = True
        if under(qualname, GDA_MODULES):
            imports_gda = True
        root = qualname.split(".", 1)[0]
        if root in FOREIGN_ARRAY_LIBRARIES and root != "numpy":
            foreign.add(root)
    # An import removed in an earlier round (its last use was migrated) still counts.
    state = getattr(ctx, "file_state", None)
    if state is not None:
        imports_jax = imports_jax or bool(state.get("receivers.imports_jax"))
        imports_gda = imports_gda or bool(state.get("receivers.imports_gda"))
        state["receivers.imports_jax"] = imports_jax
        state["receivers.imports_gda"] = imports_gda
    collector = _ModuleCollector(ctx, module_scope)
    collector.collect()
    facts = ModuleFacts(
        imports_jax=imports_jax,
        imports_gda=imports_gda,
        foreign_libraries=tuple(sorted(foreign)),
        uses_pmap=collector.uses_pmap,
        multiprocess=collector.multiprocess,
        jit_functions=collector.jit_functions,
        user_attributes=frozenset(collector.user_attributes),
    )
    return facts


MULTIPROCESS = frozenset(
    {
        "jax.distributed.initialize",
        "jax.process_index",
        "jax.process_count",
        "jax.host_id",
        "jax.host_count",
    }
)


_FACT_LAST_PARTS = frozenset(name.rsplit(".", 1)[-1] for name in (*PMAP_WRAPPERS, *MULTIPROCESS))


class _ModuleCollector:
    def __init__(self, ctx: Context, module_scope: Scope) -> None:
        self.ctx = ctx
        self.module_scope = module_scope
        self.uses_pmap = False
        self.multiprocess = False
        self.jit_functions: Dict[str, str] = {}
        self.user_attributes: set = set()

    def _qual(self, node: cst.CSTNode) -> Optional[str]:
        parts = dotted_parts(node)
        if not parts:
            return None
        # Names resolve at module level; good enough for facts about the whole file.
        head = self.module_scope.resolve_name(parts[0])
        return ".".join([head, *parts[1:]]) if head else None

    def collect(self) -> None:
        """What a full visit would gather, from the round's node lists (module-level defs and
        assignments in source order, so a later binding of a name wins as it would)."""
        ctx = self.ctx
        for attribute in ctx.all_nodes(cst.Attribute):
            self.visit_Attribute(attribute)
        for name in ctx.all_nodes(cst.Name):
            self._name_fact(name)
        for class_def in ctx.all_nodes(cst.ClassDef):
            self.visit_ClassDef(class_def)
        for statement in ctx.module.body:
            if isinstance(statement, cst.FunctionDef):
                self.visit_FunctionDef(statement)
            elif isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    if isinstance(small, cst.Assign):
                        self.visit_Assign(small)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value in _FACT_LAST_PARTS:  # a dotted name ends with its attribute
            self._name_fact(node)
        if isinstance(node.value, cst.Name) and node.value.value in ("self", "cls"):
            parent = self.ctx.parent(node)
            if isinstance(parent, cst.AssignTarget) or (
                isinstance(parent, cst.AnnAssign) and parent.target is node
            ):
                self.user_attributes.add(node.attr.value)

    def visit_Name(self, node: cst.Name) -> None:
        self._name_fact(node)

    def _name_fact(self, node: cst.CSTNode) -> None:
        qualname = self._qual(node)
        if not qualname:
            return
        if qualname in PMAP_WRAPPERS:
            self.uses_pmap = True
        if qualname in MULTIPROCESS:
            self.multiprocess = True

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        for statement in node.body.body:
            if isinstance(statement, cst.FunctionDef):
                self.user_attributes.add(statement.name.value)
            elif isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    if isinstance(small, cst.Assign):
                        for target in small.targets:
                            if isinstance(target.target, cst.Name):
                                self.user_attributes.add(target.target.value)
                    elif isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
                        self.user_attributes.add(small.target.value)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        parent = self.ctx.parent(node)
        if isinstance(parent, cst.Module):
            for decorator in node.decorators:
                output = output_of(decorator.decorator, self._qual)
                if output is not None:
                    self.jit_functions[node.name.value] = output

    def visit_Assign(self, node: cst.Assign) -> None:
        if isinstance(self.ctx.parent(self.ctx.parent(node)), cst.Module):
            if (
                len(node.targets) == 1
                and isinstance(node.targets[0].target, cst.Name)
                and isinstance(node.value, cst.Call)
            ):
                output = output_of(node.value, self._qual)
                if output is not None:
                    self.jit_functions[node.targets[0].target.value] = output


def output_of(expr: cst.BaseExpression, qual) -> Optional[str]:  # noqa: ANN001
    """What a function wrapped by ``expr`` returns: ``"array"`` (jit, or a pmap with
    ``out_axes=None``, whose shards are whole copies of the output on every JAX), ``"pmap"``
    (stacked along axis 0, pmap's default: each shard's shape changed in 0.4.34), ``"pmap-axes"``
    (a pmap with any other ``out_axes``: its shards' layout is not known here), or None when
    ``expr`` is not a jit or pmap wrapper."""
    wrapper = wrapper_of(expr, qual)
    if wrapper is None:
        return None
    if wrapper not in PMAP_WRAPPERS:
        return "array"
    arguments = expr.args if isinstance(expr, cst.Call) else ()
    out_axes = next(
        (a.value for a in arguments if a.keyword and a.keyword.value == "out_axes"), None
    )
    if out_axes is None or (isinstance(out_axes, cst.Integer) and out_axes.evaluated_value == 0):
        return "pmap"
    if isinstance(out_axes, cst.Name) and out_axes.value == "None":
        return "array"
    return "pmap-axes"


def wrapper_of(expr: cst.BaseExpression, qual) -> Optional[str]:  # noqa: ANN001
    """``jax.jit``, ``jax.jit(...)``, ``partial(jax.jit, ...)`` -> the wrapper's qualified name."""
    qualname = qual(expr)
    if qualname in JIT_WRAPPERS:
        return qualname
    if isinstance(expr, cst.Call):
        qualname = qual(expr.func)
        if qualname in JIT_WRAPPERS:
            return qualname
        if qualname in PARTIALS and expr.args:
            inner = qual(expr.args[0].value)
            if inner in JIT_WRAPPERS:
                return inner
    return None
