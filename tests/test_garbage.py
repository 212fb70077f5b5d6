"""A migrated file's trees go with the last reference to them.

The scopes the engine builds (LibCST's and CPython's) hold their bindings, and each binding
its scope; a round's context holds its position pass, which holds one of its methods; a rule's
local class captures the context.  Left as cycles, they kept every tree they reach until the
cyclic garbage collector ran, and with the command's thresholds
(``migrator.cli.GC_THRESHOLDS``) the trees of many files were alive at once.  The engine
breaks them, and empties each round's context, when it is done with a file; here, with the
collector off, migrating files of every path must leave no tree, scope or binding for it to
find."""

from __future__ import annotations

import gc
from typing import Iterator

import libcst

from jaxmigrate.migrator import migrate_source
from jaxmigrate.migrator.binding import Binding
from jaxmigrate.migrator.runner import CHECK, Options, process_file
from tests.fixture_support import fixture_cases, fixture_settings

MODERN = """\
import jax
from jax._src import core  # a finding CPython's tree answers


def is_tracer(x):
    '''>>> import jax
    >>> jax.tree_util.tree_map(f, x)
    '''
    return isinstance(x, core.Tracer)
"""


_ENGINE_TYPES = ("Scope", "AstScope", "Site")


def _kept(found: list) -> Iterator[str]:
    """What of the files' trees and scopes ``found`` (the collector's garbage) holds."""
    for thing in found:
        kind = type(thing)
        if isinstance(thing, (libcst.CSTNode, Binding)) or kind.__module__ == "ast":
            yield kind.__name__
        elif kind.__module__.startswith("jaxmigrate.migrator.") and kind.__name__ in _ENGINE_TYPES:
            yield kind.__name__


def test_migrating_files_leaves_no_tree_to_the_cyclic_collector(tmp_path):
    cases = [case for case in fixture_cases() if "noop" not in case[0]][::9]
    assert len(cases) > 20
    module = tmp_path / "modern.py"
    module.write_text(MODERN, encoding="utf-8")
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        fixed = 0
        for _name, before, _after in cases:
            text = before.read_text(encoding="utf-8")
            fixed += bool(migrate_source(text, fixture_settings(text)).fixes)
        result = process_file(module, fixture_settings(MODERN), CHECK, options=Options())
        assert fixed > 10 and result.findings  # the LibCST path, the ast path, docstrings
        gc.collect()
        kept = sorted(set(_kept(gc.garbage)))
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert not kept, f"cycles kept {kept} for the collector"
