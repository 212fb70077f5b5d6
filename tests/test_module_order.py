"""Name resolution that follows a module's top-level statements in order, and ``del``: what
LibCST's analysis resolves a read to (``Context.qualname``), which imports it counts as used,
and what the ``ast`` view answers for the same names (sure, or not sure: LibCST decides)."""

from __future__ import annotations

import textwrap
from typing import List, Optional

import libcst as cst

from jaxmigrate.migrator import Settings
from jaxmigrate.migrator.analysis import analyze
from jaxmigrate.migrator.astfacts import ast_facts
from jaxmigrate.migrator.astview import AstView
from jaxmigrate.migrator.context import Context
from jaxmigrate.migrator.scope import Interest

NETKET = """
import types
from jax.config import config

config.update("jax_enable_x64", True)
del config

config = types.SimpleNamespace(x=1)
late = config.x

def f():
    return config.x
"""


def _context(source: str) -> Context:
    module = cst.parse_module(textwrap.dedent(source))
    settings = Settings()
    return Context(module, analyze(module, Interest()), settings, settings.target, None)


def _reads(ctx: Context, name: str) -> List[Optional[str]]:
    """What each read of ``name`` (the head of ``name.attr``) resolves to, in order."""
    found = []
    for node in ctx.all_nodes(cst.Attribute):
        if isinstance(node.value, cst.Name) and node.value.value == name:  # type: ignore[attr-defined]
            found.append(ctx.qualname(node, ctx.scope_of(node)))
    return found


def _view(text: str) -> AstView:
    text = textwrap.dedent(text)
    facts = ast_facts(text)
    assert facts is not None
    return AstView(text, facts, Settings(), ("JAX502",))


def test_a_top_level_read_sees_the_binding_made_last_before_it() -> None:
    ctx = _context(NETKET)
    # the flag's read is JAX's; the later top-level read and the function's are not
    assert _reads(ctx, "config") == ["jax.config.config.update", None, None]
    imported = next(b for b in ctx.analysis.imports if b.name == "config")
    assert ctx.analysis.is_used(imported)  # (the function's read may see it)


def test_a_del_gives_a_name_no_other_value() -> None:
    ctx = _context(
        """
        from jax.config import config
        config.update("jax_enable_x64", True)
        def f():
            return config.read("x")
        del config
        """
    )
    assert _reads(ctx, "config") == ["jax.config.config.update", "jax.config.config.read"]
    imported = next(b for b in ctx.analysis.imports if b.name == "config")
    [(others, _node, _name)] = ctx.analysis.deleted_by(imported)
    assert others == []


def test_an_import_only_a_del_reads_is_unused() -> None:
    ctx = _context("from jax.lib import xla_bridge\ndel xla_bridge\n")
    [imported] = ctx.analysis.imports
    assert not ctx.analysis.is_used(imported)


def test_a_binding_inside_a_block_stops_the_order() -> None:
    ctx = _context(
        """
        import os
        from jax.config import config
        config.update("jax_enable_x64", True)
        if os.environ.get("X"):
            config = None
        """
    )
    assert _reads(ctx, "config") == [None]
    # ... and a del that may delete another binding is left to decide which
    ctx = _context("from jax.lib import xla_bridge as b\nif x:\n    b = None\ndel b\n")
    imported = next(b for b in ctx.analysis.imports if b.name == "b")
    [(others, _node, _name)] = ctx.analysis.deleted_by(imported)
    assert len(others) == 1


def test_the_ast_view_is_not_sure_where_lib_cst_follows_the_order() -> None:
    assert _view(NETKET).resolve("config") == (False, None)
    in_block = _view("from jax.config import config\nif x:\n    config = None\n")
    assert in_block.resolve("config") == (True, None)
    deleted = _view("from jax.config import config\nconfig.update('a', 1)\ndel config\n")
    assert deleted.resolve("config") == (True, "jax.config.config")
