"""Notebooks: migrated cell by cell, IPython magics kept, findings named by cell, and the
migrated tutorial notebook run on the installed JAX."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from jaxmigrate.migrator.notebook import mask, unmask
from tests.test_cli import invoke

DATA = Path(__file__).parent / "data"
TARGET = ("--target-version", "0.4.30")

nbformat = pytest.importorskip("nbformat")


# ---------------------------------------------------------------- notebooks


def _migrated_cells(path: Path, *cells: str) -> list:
    """Write a notebook of these code cells at ``path``, migrate it, give the cells' sources."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(cell) for cell in cells]
    path.write_text(nbformat.writes(nb), encoding="utf-8")
    invoke(path, "--no-cache", "--target-version", "0.4.30")
    return [cell.source for cell in nbformat.read(str(path), as_version=4).cells]


@pytest.fixture
def notebook(tmp_path):
    path = tmp_path / "tutorial.ipynb"
    shutil.copy(DATA / "notebooks" / "seed_tutorial.ipynb", path)
    return path


def test_notebook_is_migrated_cell_by_cell(notebook):
    before = notebook.read_text(encoding="utf-8")
    result = invoke(notebook, *TARGET, "--no-cache")
    assert result.exit_code == 1, result.stderr
    after = notebook.read_text(encoding="utf-8")
    assert after == (DATA / "notebooks" / "seed_tutorial.expected.ipynb").read_text(
        encoding="utf-8"
    )
    old, new = nbformat.reads(before, as_version=4), nbformat.reads(after, as_version=4)
    nbformat.validate(new)
    # The layout is the one nbformat writes (indent 1, sorted keys, final newline).
    assert nbformat.writes(new) == after
    assert len(old.cells) == len(new.cells)
    for a, b in zip(old.cells, new.cells):
        assert (a.get("id"), a.cell_type, a.metadata) == (b.get("id"), b.cell_type, b.metadata)
        if a.cell_type == "code":
            assert a.outputs == b.outputs and a.execution_count == b.execution_count
        if a.cell_type != "code" or a.source.startswith("%%bash"):
            assert a.source == b.source
    sources = [c.source for c in new.cells]
    # magics survive untouched
    assert sources[1].startswith("!pip install -q jax\n")
    assert (
        sources[5] == "%timeit jnp.dot(A, B).block_until_ready()\n%timeit (A@B).block_until_ready()"
    )
    assert sources[6].startswith("%%time\nleaves = jax.tree.leaves(")
    assert sources[10].endswith("x.block_until_ready()?")
    # the %%bash cell is not Python: left alone
    assert "jax.tree_map" in sources[9]
    # a second run changes nothing
    again = invoke(notebook, *TARGET, "--no-cache")
    assert notebook.read_text(encoding="utf-8") == after
    assert "changed" in again.stderr and "rewrote" not in again.stderr


def test_notebook_findings_name_the_cell(notebook):
    result = invoke(notebook, *TARGET, "--check", "--show-fixes", "--no-cache")
    lines = result.stdout.splitlines()
    assert f"{notebook}:cell 9:line 2:col 23: JAX101 type(x) is DeviceArray" in "\n".join(lines)
    assert any(x.startswith(f"{notebook}:cell 8:line 3:col 26: JAX101 [fixable]") for x in lines)
    data = json.loads(invoke(notebook, *TARGET, "--check", "--format", "json", "--no-cache").stdout)
    finding = data["files"][0]["findings"][0]
    assert (finding["where"], finding["line"]) == ("cell 9", 2)


def test_notebook_diff_is_a_patch_of_the_file(notebook):
    """--diff shows the .ipynb file as it will be written (git apply takes it: see
    test_streams.py); --diff-cells shows each changed cell's source instead, for reading."""
    before = notebook.read_bytes()
    result = invoke(notebook, *TARGET, "--diff", "--no-cache", cwd=notebook.parent)
    assert notebook.read_bytes() == before
    assert result.stdout.startswith("--- a/tutorial.ipynb\n+++ b/tutorial.ipynb\n@@ ")
    assert (
        '-    "    return isinstance(x, jnp.DeviceArray)\\n",\n'
        '+    "    return isinstance(x, jax.Array)\\n",\n'
    ) in result.stdout
    cells = invoke(notebook, *TARGET, "--diff", "--diff-cells", "--no-cache", cwd=notebook.parent)
    assert notebook.read_bytes() == before
    assert "--- a/tutorial.ipynb:cell 3\n+++ b/tutorial.ipynb:cell 3\n" in cells.stdout
    assert (
        "-    return isinstance(x, jnp.DeviceArray)\n+    return isinstance(x, jax.Array)\n"
        in cells.stdout
    )
    assert '"source"' not in cells.stdout  # the diff is of cell sources, not of JSON
    alone = invoke(notebook, *TARGET, "--diff-cells", "--no-cache")
    assert alone.exit_code == 2 and "give --diff too" in alone.stderr
    assert notebook.read_bytes() == before


def test_notebook_import_goes_to_the_importing_cell(tmp_path):
    sources = _migrated_cells(
        tmp_path / "n.ipynb",
        "import jax.numpy as jnp\nimport numpy as np",
        "def f(x):\n    return isinstance(x, jnp.DeviceArray)",
    )
    assert sources == [
        "import jax\nimport numpy as np",  # in the cell's group, at its sorted place
        "def f(x):\n    return isinstance(x, jax.Array)",
    ]


def test_notebook_later_cell_import_is_not_used_early(tmp_path):
    sources = _migrated_cells(
        tmp_path / "n.ipynb",
        "import jax.numpy as jnp\nok = isinstance(1, jnp.DeviceArray)",
        "import jax\njax.devices()",
    )
    # cell 1 runs first: it must import jax itself
    assert sources[0] == "import jax\nok = isinstance(1, jax.Array)"


@pytest.mark.parametrize("check", [False, True], ids=["write", "check"])
def test_notebook_findings_point_at_the_lines_of_the_cell_the_user_sees(tmp_path, check):
    """A fix in the cell splits the import line above the finding: --check reports the
    finding on the cell's line as it is, a rewrite on the line of the rewritten cell."""
    nb = nbformat.v4.new_notebook()
    cell = (
        "from jax.experimental.pjit import pjit, PartitionSpec\n"
        "def spec():\n"
        "    return PartitionSpec('data'), pjit"
    )
    nb.cells = [nbformat.v4.new_code_cell("import jax"), nbformat.v4.new_code_cell(cell)]
    path = tmp_path / "n.ipynb"
    path.write_text(nbformat.writes(nb), encoding="utf-8")
    result = invoke(
        path, "--no-cache", "--format", "json", "--target-version", "0.4.30",
        *(["--check"] if check else []),
    )  # fmt: skip
    findings = json.loads(result.stdout)["files"][0]["findings"]
    source = nbformat.read(str(path), as_version=4).cells[1].source.splitlines()
    assert (source == cell.splitlines()) == check
    [finding] = findings
    assert finding["code"] == "JAX202" and finding["where"] == "cell 2"
    assert finding["line"] == (3 if check else 4)
    assert source[finding["line"] - 1] == "    return PartitionSpec('data'), pjit"


def test_notebook_of_another_language_is_left_alone(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "ir", "language": "R", "display_name": "R"}
    nb.cells = [nbformat.v4.new_code_cell("import jax.numpy as jnp\njnp.DeviceArray")]
    path = tmp_path / "r.ipynb"
    text = nbformat.writes(nb)
    path.write_text(text, encoding="utf-8")
    assert invoke(path, "--no-cache").exit_code == 0
    assert path.read_text(encoding="utf-8") == text


def test_broken_notebook_is_an_error(tmp_path):
    path = tmp_path / "bad.ipynb"
    path.write_text("{not json", encoding="utf-8")
    result = invoke(path, "--no-cache")
    assert result.exit_code == 2 and "not a JSON notebook" in result.stderr


@pytest.mark.parametrize(
    "source",
    [
        "%timeit f(x)\ny = 1",
        "!pip install jax\nimport jax",
        "files = !ls\nx = %time f(1)",
        "for i in range(2):\n    %time f(i)\n",
        "jax.numpy.dot?\n",
        "%%time\nx = 1\n",
        "%alias a \\\n  b\nz = 2",
    ],
)
def test_magics_round_trip(source):
    masked, originals = mask(source)
    compile(masked, "<cell>", "exec")  # the masked cell is plain Python
    assert unmask(masked, originals) == source


def test_non_python_cell_magic_is_skipped():
    assert mask("%%bash\necho hi\n") is None
    assert mask("%%writefile x.py\nimport jax\n") is None


def test_migrated_notebook_runs_on_installed_jax(tmp_path):
    """Execute the migrated notebook's code cells (magics dropped) on 8 CPU devices."""
    pytest.importorskip("jax")
    new = nbformat.read(str(DATA / "notebooks" / "seed_tutorial.expected.ipynb"), as_version=4)
    code = []
    for cell in new.cells:
        if cell.cell_type != "code" or cell.source.startswith("%%bash"):
            continue
        masked, _ = mask(cell.source)
        code.append(masked.replace("__jaxmigrate_magic__", "(lambda n: None)"))
    script = tmp_path / "run_notebook.py"
    try:
        import rich  # noqa: F401  (jax.debug.visualize_array_sharding draws with rich)

        prelude = ""
    except ImportError:
        prelude = "import jax\njax.debug.visualize_array_sharding = lambda a: print(a.sharding)\n"
    script.write_text(
        prelude
        + "\n".join(code)
        + "\nassert is_array(Cd)  # same_type keeps its reported legacy comparison: not called\n"
        "print('ok', x.sharding.mesh.shape)\n",
        encoding="utf-8",
    )
    env = dict(
        os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8", JAX_PLATFORMS="cpu"
    )
    run = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert "ok OrderedDict([('x', 2), ('y', 4)])" in run.stdout


def test_notebook_with_a_broken_cell_migrates_the_others(tmp_path):
    sources = _migrated_cells(
        tmp_path / "n.ipynb",
        "import jax\nx = (1\n     % 2)\ny = jax.tree_map(f, t)",
        "def broken(:\n    jax.tree_map(f, t)",
        "z = jax.tree_leaves(t)\ns = '''\n%not a magic\n'''",
    )
    assert sources == [
        "import jax\nx = (1\n     % 2)\ny = jax.tree.map(f, t)",
        "def broken(:\n    jax.tree_map(f, t)",  # not Python: left alone
        "z = jax.tree.leaves(t)\ns = '''\n%not a magic\n'''",
    ]


def test_add_todos_in_notebook_cells(notebook):
    invoke(notebook, *TARGET, "--add-todos", "--no-cache")
    text = notebook.read_text(encoding="utf-8")
    cells = nbformat.reads(text, as_version=4).cells
    assert cells[8].source.startswith(
        "def same_type(x):\n    # TODO(jaxmigrate): JAX101 type(x) is DeviceArray"
    )
    assert cells[5].source.startswith("%timeit jnp.dot")  # magics untouched
    result = invoke(notebook, *TARGET, "--add-todos", "--no-cache")
    assert notebook.read_text(encoding="utf-8") == text  # no duplicates
    assert "cell 9:line 3:col 23: JAX101" in result.stdout
    plain = invoke(notebook, *TARGET, "--no-cache")
    assert notebook.read_text(encoding="utf-8") == text and plain.exit_code == 1
