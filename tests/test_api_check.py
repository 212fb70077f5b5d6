"""The test-only checker ``tests/api_check.py`` on tiny synthetic sources (no corpus needed)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("jax")

from tests import api_check, api_references

SOURCE = textwrap.dedent(
    """\
    import jax
    import jax.numpy as jnp
    from jax.experimental.maps import xmap
    from jax import tree_util as tu
    try:
        from jax.experimental.gda_serialization import serialization
    except ImportError:
        serialization = None
    if hasattr(jax, "tree_map"):
        leaves = jax.tree_map
    x = jnp.DeviceArray
    y = jnp.DeviceArray  # the tool flagged this one
    z = jax.lib.xla_extension.Device
    w = tu.tree_leaves([1])
    v = jax.devices()[0].platform
    p = jax._src.api
    def f(jnp):
        return jnp.DeviceArray
    from jax.experimental import maps as mp
    m = mp.Mesh
    """
)


@pytest.fixture(scope="module")
def api():
    return api_check.InstalledApi()


def _write(tmp_path: Path) -> Path:
    package = tmp_path / "corpus" / "pkg-1.0"
    package.mkdir(parents=True)
    path = package / "mod.py"
    path.write_text(SOURCE)
    return path


def test_references_resolve_through_aliases_and_skip_shims():
    found = [(r.line, r.qualname, r.kind) for r in api_references.find_references(SOURCE)]
    assert found == [
        (1, "jax", "import"),
        (2, "jax.numpy", "import"),
        (3, "jax.experimental.maps.xmap", "import"),
        (4, "jax.tree_util", "import"),
        (11, "jax.numpy.DeviceArray", "chain"),
        (12, "jax.numpy.DeviceArray", "chain"),
        (13, "jax.lib.xla_extension.Device", "chain"),
        (14, "jax.tree_util.tree_leaves", "chain"),  # from-import alias
        (15, "jax.devices", "chain"),  # the chain stops at the call
        (16, "jax._src.api", "chain"),
        (19, "jax.experimental.maps", "import"),
        (20, "jax.experimental.maps.Mesh", "chain"),
        # the try/except ImportError import (6), the hasattr branch (10) and the parameter
        # that shadows jnp (18) are not references
    ]


def test_installed_api(api):
    assert api.check("jax.numpy") == (api_check.OK, "jax.numpy")
    assert api.check("jax.numpy.DeviceArray") == (api_check.MISSING, "jax.numpy.DeviceArray")
    # only the first missing prefix of a chain is reported
    assert api.check("jax.lib.xla_extension.Device") == (api_check.MISSING, "jax.lib.xla_extension")
    assert api.check("jax.experimental.maps.xmap") == (api_check.MISSING, "jax.experimental.maps")


def test_silent_counts_against_a_findings_report(tmp_path, api):
    path = _write(tmp_path)
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"files": [{
        "path": str(path), "changed": False, "written": False, "error": None, "fixes": [],
        "findings": [{"code": "JAX101", "message": "m", "line": 12, "column": 5,
                      "safety": "manual", "end_line": 12},
                     {"code": "JAX806", "message": "m", "line": 19, "column": 1,
                      "safety": "manual", "end_line": 19}],
    }]}))  # fmt: skip
    tallies, references = api_check.scan(
        [tmp_path / "corpus"], api_check.load_findings(report), api
    )
    tally = tallies["pkg-1.0"]
    assert (tally.files, tally.refs, tally.private) == (1, 12, 1)
    # maps.xmap, DeviceArray twice, lib.xla_extension, maps as mp and mp.Mesh
    assert tally.missing == 6
    # line 12 carries a finding; so does line 19, the import that breaks mp.Mesh on line 20
    assert tally.silent == 3
    assert (tally.private_flagged, tally.private_unflagged) == (0, 1)
    silent = [(r.line, r.where) for r in api_check.silent_references(references)]
    assert silent == [
        (3, "jax.experimental.maps"),
        (11, "jax.numpy.DeviceArray"),
        (13, "jax.lib.xla_extension"),
    ]


def test_command_line_lists_silent_references(tmp_path, capsys):
    path = _write(tmp_path)
    assert api_check.main([str(tmp_path / "corpus"), "--list", "--top", "2"]) == 0
    out = capsys.readouterr().out
    assert f"{path}:11: jax.numpy.DeviceArray" in out
    assert f"{path}:12: jax.numpy.DeviceArray" in out  # no report: every missing one is silent
    assert "top 2 silent names (of 3):" in out
    assert "     3  jax.experimental.maps" in out
    assert "     2  jax.numpy.DeviceArray" in out
    total = next(line for line in out.splitlines() if line.startswith("total"))
    assert total.split()[1:4] == ["1", "20", "12"]  # files, lines, references


def test_deprecated(monkeypatch, api):
    import sys
    import types
    import warnings

    module = types.ModuleType("api_check_fake")

    def __getattr__(name):
        if name == "old":
            warnings.warn("api_check_fake.old is deprecated", DeprecationWarning, stacklevel=2)
            return 1
        raise AttributeError(name)

    module.__getattr__ = __getattr__  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "api_check_fake", module)
    assert api.check("api_check_fake.old") == (api_check.DEPRECATED, "api_check_fake.old")
    assert api.check("api_check_fake.gone") == (api_check.MISSING, "api_check_fake.gone")


def test_a_module_needing_a_missing_package_is_unavailable(tmp_path, monkeypatch, api):
    package = tmp_path / "api_check_fake_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "needs.py").write_text("import api_check_not_installed_xyz\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert api.check("api_check_fake_pkg.needs.f") == (
        api_check.UNAVAILABLE,
        "api_check_not_installed_xyz",
    )
    assert api.check("api_check_fake_pkg.gone") == (api_check.MISSING, "api_check_fake_pkg.gone")
