"""The flow layer's answers to "what is this name bound to?" (rules._flow, rules._flow_bindings)
and the engine's public import-guard test rules share, on small modules read the way the engine
reads them."""

from __future__ import annotations

import textwrap
from typing import List, Optional, Tuple

import libcst as cst
import pytest

from jaxmigrate.migrator.analysis import analyze
from jaxmigrate.migrator.context import Context
from jaxmigrate.migrator.rule import all_rules
from jaxmigrate.migrator.scope import Interest, Scope, catches_import_error
from jaxmigrate.migrator.settings import Settings
from jaxmigrate.rules._flow import (
    assignments,
    bound_values,
    call_site_arguments,
    single_assignment,
)


def _context(source: str) -> Context:
    module = cst.parse_module(textwrap.dedent(source))
    settings = Settings()
    ctx = Context(module, analyze(module, Interest()), settings, settings.target, None)
    ctx.begin(all_rules()["JAX101"])
    return ctx


def _scope(ctx: Context, function: Optional[str] = None) -> Scope:
    """The module scope, or the body scope of the ``def`` named ``function``."""
    if function is None:
        return ctx.analysis.scopes[id(ctx.module)]
    node = next(f for f in ctx.all_nodes(cst.FunctionDef) if f.name.value == function)  # type: ignore[attr-defined]
    return ctx.analysis.scopes[id(node)]


def _load(ctx: Context, name: str, index: int = -1) -> cst.Name:
    return [n for n in ctx.nodes(cst.Name) if n.value == name][index]  # type: ignore[attr-defined,return-value]


def _shown(
    ctx: Context, found: Optional[List[Tuple[str, cst.BaseExpression]]]
) -> Optional[List[Tuple[str, str]]]:
    return None if found is None else [(kind, ctx.code(value)) for kind, value in found]


def test_assignments_lists_plain_assignments_of_one_scope_in_order() -> None:
    ctx = _context(
        """
        x = 1
        a, x = 2, 3
        y = x = 4
        x += 5
        x = 6
        def f():
            x = 7
            return x
        """
    )
    assert [ctx.code(a.value) for a in assignments(ctx, "x", _scope(ctx))] == ["1", "6"]
    assert [ctx.code(a.value) for a in assignments(ctx, "x", _scope(ctx, "f"))] == ["7"]
    assert assignments(ctx, "nothing", _scope(ctx)) == []
    # one index per round, kept in ctx.memo (not on the context's attributes)
    assert ("flow", "assignments") in ctx._memo


def test_single_assignment_needs_the_only_binding_to_be_a_plain_assignment() -> None:
    ctx = _context(
        """
        import numpy as np
        devices = make()
        twice = 1
        twice = 2
        chained = other = 3
        def f(param):
            return devices, twice, chained, param, np
        """
    )
    inner = _scope(ctx, "f")
    found = single_assignment(ctx, _load(ctx, "devices"), inner)
    assert found is not None and ctx.code(found.value) == "make()"
    assert ctx.scope_of(found) is _scope(ctx)
    for name in ("twice", "chained", "param", "np"):
        assert single_assignment(ctx, _load(ctx, name), inner) is None, name


def test_call_site_arguments_gives_what_each_call_passes_or_none() -> None:
    ctx = _context(
        """
        import jax
        def count(dev, scale=1):
            return dev
        def escapes(dev):
            return dev
        def starred(*devs):
            return devs
        def g():
            return count(jax.devices()[0]), count(dev=d), escapes(1), starred(2)
        handlers = [escapes]
        """
    )
    found = call_site_arguments(ctx, cst.Name("dev"), _scope(ctx, "count"))
    assert found is not None
    function, arguments = found
    assert function.name.value == "count"
    assert [ctx.code(value) for value, _ in arguments] == ["jax.devices()[0]", "d"]
    assert all(where is _scope(ctx, "g") for _, where in arguments)
    # a default, a function passed around, star parameters: no complete evidence
    for name, function_name in (("scale", "count"), ("dev", "escapes"), ("devs", "starred")):
        assert call_site_arguments(ctx, cst.Name(name), _scope(ctx, function_name)) is None


def test_bound_values_follows_every_binding_kind_it_can_read() -> None:
    ctx = _context(
        """
        import jax
        if flag:
            dev = jax.devices()[0]
        else:
            dev = jax.local_devices()[0]
        for d in jax.devices():
            pass
        spec: int
        pairs = [p for p in jax.devices()]
        def f(typed: jax.Device, untyped, *rest):
            return typed
        """
    )
    module = _scope(ctx)
    assert _shown(ctx, bound_values(ctx, "dev", module)) == [
        ("value", "jax.devices()[0]"),
        ("value", "jax.local_devices()[0]"),
    ]
    assert _shown(ctx, bound_values(ctx, "d", module)) == [("iter", "jax.devices()")]
    assert _shown(ctx, bound_values(ctx, "spec", module)) == [("annotation", "int")]
    assert bound_values(ctx, "unbound", module) == []
    function = _scope(ctx, "f")
    assert _shown(ctx, bound_values(ctx, "typed", function)) == [("annotation", "jax.Device")]
    assert bound_values(ctx, "untyped", function) is None  # an unannotated parameter
    assert bound_values(ctx, "rest", function) is None
    comprehension = next(iter(ctx.all_nodes(cst.ListComp)))
    assert _shown(ctx, bound_values(ctx, "p", ctx.analysis.scopes[id(comprehension)])) == [
        ("iter", "jax.devices()")
    ]


@pytest.mark.parametrize(
    "binding",
    [
        "x += 1",
        "x, y = pair",
        "x = y = 1",
        "with open(p) as x: pass",
        "import x",
        "from m import x",
        "def x(): pass",
        "class x: pass",
        "del x",
        "for x, y in pairs: pass",
        "try: pass\nexcept E as x: pass",
        "(x := 1)",
    ],
)
def test_bound_values_gives_up_on_a_binding_it_cannot_read(binding: str) -> None:
    ctx = _context(f"x = 0\n{binding}\n")
    assert bound_values(ctx, "x", _scope(ctx)) is None
    assert _shown(ctx, bound_values(ctx, "y" if "y" not in binding else "z", _scope(ctx))) == []


def test_bound_values_is_none_for_a_class_body_and_global_names() -> None:
    ctx = _context(
        """
        class C:
            x = 1
        def f():
            global g
            g = 1
        """
    )
    class_scope = ctx.analysis.scopes[id(next(iter(ctx.all_nodes(cst.ClassDef))))]
    assert bound_values(ctx, "x", class_scope) is None
    assert bound_values(ctx, "g", _scope(ctx, "f")) is None


@pytest.mark.parametrize(
    ("handler", "guarded"),
    [
        ("except ImportError:", True),
        ("except (KeyError, ModuleNotFoundError):", True),
        ("except builtins.AttributeError as e:", True),
        ("except ValueError:", False),
        ("except:", False),
    ],
)
def test_catches_import_error(handler: str, guarded: bool) -> None:
    ctx = _context(f"try:\n    import jax\n{handler}\n    pass\n")
    (node,) = ctx.all_nodes(cst.ExceptHandler)
    assert catches_import_error(node) is guarded
