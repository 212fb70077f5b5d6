"""A migrated module that still stops at import says so: the lines with a finding the module
runs while it is imported, where the JAX name they read is missing from a release of the
target range (ott-jax 0.3.1's ``decomposition.py``, whose ``host_callback`` import the safe
fixes leave: the run's summary did not say the package still fails to import)."""

from __future__ import annotations

import json
import textwrap

import pytest

from jaxmigrate.migrator.diagnostics import Diagnostic
from jaxmigrate.migrator.importtime import blockers
from tests.test_cli import invoke

EVERY_LINE = [Diagnostic("JAX901", "m", line, 1, "manual") for line in range(1, 40)]


def _lines(text: str, target=(0, 4, 30), upper=None, findings=EVERY_LINE):
    return {
        line: (name, releases)
        for line, name, releases in blockers(textwrap.dedent(text), findings, target, upper)
    }


def test_what_runs_at_import_is_read_and_what_does_not_is_left():
    found = _lines(
        """
        import jax
        from jax.experimental import host_callback as hcb
        import jax.numpy as jnp

        x = jax.tree_map(abs, [1])

        def f(a: jax.random.KeyArray = jnp.zeros(1), b=jax.experimental.maps.xmap):
            return hcb.call(jax.tree_flatten(a))

        class C:
            y = jax.experimental.pjit.with_sharding_constraint
            g = lambda self: jax.tree_leaves(self)

        if __name__ == "__main__":
            jax.tree_multimap(abs, [1])
        try:
            from jax.experimental import maps
        except ImportError:
            maps = None
        if hasattr(jax, "tree_map"):
            z = jax.tree_map
        """
    )
    assert found == {
        3: ("jax.experimental.host_callback", "0.8.0+"),
        6: ("jax.tree_map", "0.6.0+"),
        8: ("jax.random.KeyArray", ""),  # (gone before the target: on no release of it)
        12: ("jax.experimental.pjit.with_sharding_constraint", ""),
    }


@pytest.mark.parametrize(
    "text",
    [
        "from __future__ import annotations\nimport jax\ndef f(a: jax.random.KeyArray): ...\n",
        "import typing\nimport jax\nif typing.TYPE_CHECKING:\n    K = jax.random.KeyArray\n",
        "import jax\nx = jax.tree_util.tree_map(abs, [1])\n",  # (there throughout)
    ],
)
def test_nothing_stops_where_nothing_missing_runs(text):
    assert _lines(text) == {}


def test_only_lines_with_a_finding_count_and_a_name_added_later_says_before():
    text = "import jax\nx = jax.tree.map(abs, [1])\ny = jax.tree_map(abs, [1])\n"
    on_line_2 = [Diagnostic("JAX901", "m", 2, 1, "manual")]
    assert _lines(text, (0, 4, 1), None, on_line_2) == {2: ("jax.tree", "before 0.4.25")}


def test_the_run_says_which_modules_still_stop_at_import(tmp_path):
    (tmp_path / "decomposition.py").write_text(
        "import jax\nfrom jax.experimental import host_callback as hcb\n\n\n"
        "def solve(f, x):\n    return hcb.call(f, x, result_shape=x)\n"
    )
    (tmp_path / "fine.py").write_text(
        "import jax\n\n\ndef f(x):\n    return jax.tree_map(abs, x)\n"
    )
    result = invoke(".", "--check", "--no-cache", cwd=tmp_path)
    said = (
        "jaxmigrate: 1 module still stops at import: decomposition.py:2 "
        "(jax.experimental.host_callback: not in JAX 0.8.0+)"
    )
    assert said in result.stderr, result.stderr
    data = json.loads(invoke(".", "--format", "json", "--no-cache", cwd=tmp_path).stdout)
    assert data["summary"]["stop_at_import"] == 1
    stops = {f["path"]: f["stops_at_import"] for f in data["files"]}
    assert stops["fine.py"] == []
    assert stops["decomposition.py"] == [
        {"line": 2, "name": "jax.experimental.host_callback", "releases": "0.8.0+"}
    ]
    fixed = invoke(".", "--check", "--no-cache", "--unsafe-fixes", cwd=tmp_path)
    assert "stops at import" not in fixed.stderr  # (the unsafe fix takes the import away)


def test_an_import_over_several_lines_is_read_at_each_name():
    text = "import jax\nfrom jax.experimental import (\n    host_callback,\n    io_callback,\n)\n"
    on_line_3 = [Diagnostic("JAX901", "m", 3, 5, "manual")]
    found = _lines(text, (0, 4, 30), None, on_line_3)
    assert found == {3: ("jax.experimental.host_callback", "0.8.0+")}


def test_a_name_on_no_release_is_said_before_a_prefix_missing_from_some():
    """``jax.core.ConcreteArray`` is on 0.4.30..0.4.35 only; its ``broadcast_in_dim`` on no
    release of the range: the member says more than its class."""
    text = "import jax\nB = jax.core.ConcreteArray.broadcast_in_dim\n"
    found = _lines(text, (0, 4, 30))
    assert found == {2: ("jax.core.ConcreteArray.broadcast_in_dim", "")}
