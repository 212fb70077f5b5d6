"""The shared behaviour of the rules whose legacy names are array classes that became ``jax.Array``.

JAX101 (``DeviceArray`` and its aliases) and JAX105 (``ArrayImpl`` through jax.lib/jaxlib) make
the same edits: the name becomes ``jax.Array`` in ``isinstance`` checks (tuples de-duplicated),
annotations and aliases, while identity checks, calls and subclassing are reported.  Each rule
subclasses :class:`ArrayTypeRule` and declares its own names, versions and references, so
neither depends on the other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, List, Optional

from jaxmigrate.migrator import lazycst as cst
from jaxmigrate.migrator.context import Context, NameSite
from jaxmigrate.migrator.rule import Rule, Safety
from jaxmigrate.rules._arrays import predicate_fix, report_string_annotations, type_reference
from jaxmigrate.rules._ast_sites import nothing_at_sites
from jaxmigrate.rules._helpers import (
    class_tuple,
    dedupe_elements,
    is_called,
    is_class_base,
    is_dispatch_key,
    is_type_identity_check,
    isinstance_position,
)

if TYPE_CHECKING:  # pragma: no cover
    from jaxmigrate.migrator.astview import AstView
    from jaxmigrate.migrator.diagnostics import Diagnostic

MODERN = "jax.Array"
# Every spelling of the pre-jax.Array ``DeviceArray`` (JAX101's names): other array-type rules
# treat these as already meaning ``jax.Array`` inside an isinstance tuple.
DEVICE_ARRAY_NAMES = frozenset(
    {
        "jax.numpy.DeviceArray",
        "jax.interpreters.xla.DeviceArray",
        "jax.interpreters.xla._DeviceArray",
        "jax.interpreters.xla.Buffer",
        "jax.xla.DeviceArray",
        "jax.xla._DeviceArray",
        "jax._src.device_array.DeviceArray",
        "jax._src.device_array._DeviceArray",
        "jaxlib.xla_extension.DeviceArray",
        "jaxlib.xla_extension.Buffer",
        "jaxlib.xla_client.Buffer",
        "jax.lib.xla_extension.DeviceArray",
        "jax.lib.xla_extension.Buffer",
        "jax.lib.xla_client.Buffer",
        "jax.xla.Buffer",
    }
)


class ArrayTypeRule(Rule):
    """The base of the rules for a removed array class that ``jax.Array`` replaces whole
    (JAX101 ``DeviceArray``, JAX105 ``ArrayImpl``): each declares its class name as ``label``,
    which messages use and string annotations are searched for."""

    safety = Safety.SAFE
    # Its hooks read their sites, the imports, the string annotations (the piecewise path keeps
    # every statement with one) and the module's own binding of the class's name
    # (report_string_annotations asks for it: Context.needs_name).
    whole_module = False
    # jnp.ndarray is jax.Array since 0.3.18: Union[jnp.ndarray, jnp.DeviceArray] names one type
    same_types = {"jax.numpy.ndarray": MODERN}
    label: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        if "label" in cls.__dict__:
            cls.annotation_words = frozenset({cls.label})  # visit_module reports them
        super().__init_subclass__(**kwargs)

    def visit_module(self, ctx: Context) -> None:
        report_string_annotations(ctx, self.label, "jax.Array", self.names)

    def visit_name(self, site: NameSite, ctx: Context) -> None:
        if site.is_import:
            return  # the import goes once nothing uses it
        if is_type_identity_check(site):
            ctx.report(
                site.node,
                f"type(x) is {self.label}: the class no longer exists; "
                "use isinstance(x, jax.Array)",
                f"type(x) is {self.label} compares with an implementation class that no longer "
                "exists; isinstance(x, jax.Array) accepts every array.",
            )
            return
        if is_called(site):
            ctx.report(
                site.node,
                f"{self.label}(...) builds an array through an internal class; use jax.device_put "
                "or jnp.asarray",
            )
            return
        if is_class_base(site):
            ctx.report(
                site.node,
                f"subclassing {self.label}: jax.Array cannot be subclassed; wrap the array instead",
            )
            return
        if is_dispatch_key(site, ctx):
            ctx.report(
                site.node,
                f"{self.label} as a dispatch key never matches a jax.Array; key it by hand",
                "A table looked up by type(x) never sees jax.Array: the concrete class is "
                "internal.  Dispatch on isinstance(x, jax.Array) instead.",
            )
            return
        position = isinstance_position(site)
        if position is not None and position[1] is not None:
            self._collapse_tuple(position[1], site, ctx)
            return
        ctx.replace(site.node, ctx.ref(MODERN, site.scope), f"{ctx.code(site.node)} -> {MODERN}")

    def _collapse_tuple(self, tuple_node: cst.Tuple, site: NameSite, ctx: Context) -> None:
        modern = ctx.ref(MODERN, site.scope)
        elements = []
        for element in tuple_node.elements:
            value = element.value
            if ctx.qualname(value, site.scope) in self.names:
                value = modern
            elements.append(value)
        elements = dedupe_elements(ctx, elements)
        if len(elements) == 1 and len(tuple_node.elements) > 1:
            new: cst.BaseExpression = elements[0]
        else:
            new = class_tuple(elements, tuple_node)
        ctx.replace(tuple_node, new, f"{ctx.code(site.node)} -> {MODERN}")


# What an isinstance tuple already holding one of these asks of a legacy array class: nothing
# more (the DeviceArray spellings become jax.Array themselves).
SUBSUMED = DEVICE_ARRAY_NAMES | {MODERN, "jax.numpy.ndarray"}


class PredicateTypeRule(Rule):
    """An abstract rule for a removed array class that jax.Array replaced only in part:
    annotations become ``jax.Array`` (safe), ``isinstance(x, LEGACY)`` becomes the jax.Array
    migration guide's predicate (unsafe), any other use is reported.  JAX102
    (``ShardedDeviceArray``) and JAX103 (``GlobalDeviceArray``) each declare their class
    name, predicate and sources."""

    safety = Safety.UNSAFE
    whole_module = False  # (as ArrayTypeRule's)
    label: ClassVar[str] = ""  # the class name in messages and string annotations
    predicate: ClassVar[str] = ""  # what ``isinstance(x, LEGACY)`` becomes ({x}, {array})
    recipe: ClassVar[str] = ""  # the predicate as messages show it

    def __init_subclass__(cls, **kwargs: Any) -> None:
        if "label" in cls.__dict__:
            cls.annotation_words = frozenset({cls.label})  # visit_module reports them
            # a string annotation is reported by its name, import or not
            cls.needs_jax_import = False
        super().__init_subclass__(**kwargs)

    def leaves_alone(self, site: NameSite) -> bool:
        """True for the uses another rule handles."""
        return False

    def ast_findings(self, view: AstView) -> Optional[List[Diagnostic]]:
        """Nothing, read on ``ast``, where no string annotation spells the class (what
        :meth:`visit_module` reports; its aliases need an import, a site) and the file has no
        site of :attr:`names`; None otherwise."""
        if self.label in view.facts.annotation_words:
            return None
        return nothing_at_sites(view, self.names, self.legacy_modules)

    def visit_module(self, ctx: Context) -> None:
        report_string_annotations(ctx, self.label, MODERN, self.names)

    def visit_name(self, site: NameSite, ctx: Context) -> None:
        if site.is_import or self.leaves_alone(site):
            return
        if not predicate_fix(ctx, site, self.names, self.predicate, self.label, SUBSUMED):
            type_reference(ctx, site, self.label, self.recipe, annotations_only=True)
