"""JAX701's fixes at imports: where the API history decides them, and what it falls back to."""

from __future__ import annotations

import textwrap

import pytest

from jaxmigrate.migrator import Settings, migrate_source
from jaxmigrate.migrator.version import parse_version
from jaxmigrate.rules import tree_functions
from jaxmigrate.rules._tree import holds_throughout

SOURCE = textwrap.dedent(
    """
    import jax.tree_util as tu
    from jax import tree_map, tree_multimap


    def f(a, b):
        return tree_map(abs, a), tree_multimap(max, a, b), tu.tree_multimap(min, a, b)
    """
)


def _migrate(source: str) -> str:
    return migrate_source(source, Settings(select=("JAX701",), target_version="0.4.25")).output


def test_imports_are_fixed_in_place() -> None:
    assert _migrate(SOURCE) == textwrap.dedent(
        """
        import jax.tree_util as tu
        from jax.tree_util import tree_map


        def f(a, b):
            return tree_map(abs, a), tree_map(max, a, b), tu.tree_map(min, a, b)
        """
    )


def test_calls_are_rewritten_where_jax_tree_util_lacks_the_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Where the history does not show the ``jax.tree_util`` name throughout the range, every
    use is rewritten at the call, as for ``jax.tree_map``, and the import goes."""
    monkeypatch.setattr(tree_functions, "holds_throughout", lambda *args: False)
    assert _migrate(SOURCE) == textwrap.dedent(
        """
        import jax


        def f(a, b):
            return jax.tree.map(abs, a), jax.tree.map(max, a, b), jax.tree.map(min, a, b)
        """
    )


@pytest.mark.parametrize(
    ("qualname", "low", "high", "holds"),
    [
        ("jax.tree_util.tree_map", "0.4.1", None, True),
        ("jax.tree_util.treedef_is_leaf", "0.2.0", None, True),
        ("jax.tree_map", "0.4.13", "0.4.25", True),
        ("jax.tree_map", "0.4.13", "0.5.3", False),  # deprecated from 0.4.26
        ("jax.tree_map", "0.4.13", None, False),  # gone from 0.6.0
        ("jax.tree.map", "0.4.13", None, False),  # added in 0.4.25
        ("jax.tree_util.no_such_function", "0.4.1", None, False),
    ],
)
def test_holds_throughout(qualname: str, low: str, high: str, holds: bool) -> None:
    upper = parse_version(high) if high else None
    assert holds_throughout(qualname, parse_version(low), upper) is holds
