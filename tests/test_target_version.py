"""Versions the right way round: the project's requirement (read, never by running its
setup.py) is the JAX the code was written for (the source); the target reaches the newest JAX
from the floor the rewrites need; both are said and reported, and decide what changes."""

from __future__ import annotations

import json
import shutil

import pytest

from jaxmigrate.migrator.project_version import detect, lowest_allowed, source_of
from tests.fixture_support import FIXTURES
from tests.test_cli import invoke

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
                "pyproject.toml": (
                    '[project]\nname="x"\ndependencies = ["numpy", "jax[cpu]>=0.4.13,<0.5"]\n'
                )
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
                "setup.py": (
                    "from setuptools import setup\n"
                    "setup(name='x', install_requires=['jax==0.4.30'])\n"
                )
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
        # JAX as an extra or a development dependency, where the dependencies name none
        # (treex 0.6.10: Poetry's dev-dependencies)
        ({"pyproject.toml": '[tool.poetry.dev-dependencies]\njax = "^0.3.1"\n'}, "0.3.1"),
        (
            {"pyproject.toml": '[tool.poetry.group.test.dependencies]\njax = "~0.4.20"\n'},
            "0.4.20",
        ),
        (
            {
                "pyproject.toml": (
                    '[dependency-groups]\ndev = [{include-group = "x"}, "jax>=0.3.2"]\n'
                )
            },
            "0.3.2",
        ),
        (
            {
                "pyproject.toml": (
                    '[project]\ndependencies = ["numpy"]\n'
                    '[project.optional-dependencies]\ncpu = ["jax[cpu]==0.4.6"]\n'
                )
            },
            "0.4.6",
        ),
        (
            {
                "pyproject.toml": (
                    '[project]\ndependencies = ["jax>=0.4.30"]\n'
                    '[project.optional-dependencies]\nold = ["jax==0.3.4"]\n'
                )
            },
            "0.4.30",
        ),
        ({"setup.cfg": "[options.extras_require]\ncpu =\n    jax[cpu]>=0.3.14\n"}, "0.3.14"),
        (  # a module-level literal, handed to setup() by name (flax 0.6's setup.py)
            {
                "setup.py": (
                    "from setuptools import setup\ninstall_requires = ['numpy', 'jax>=0.3.16']\n"
                    "setup(name='x', install_requires=install_requires)\n"
                )
            },
            "0.3.16",
        ),
        (  # keyword arguments in a dict (Poetry's generated setup.py)
            {
                "setup.py": (
                    "from setuptools import setup\nreqs = ['jax>=0.2.20,<0.4']\n"
                    "kwargs = {'name': 'x', 'install_requires': reqs}\nsetup(**kwargs)\n"
                )
            },
            "0.2.20",
        ),
        ({"requirements/requirements.txt": "jax>=0.1.55\n"}, "0.1.55"),  # chex, distrax, optax
        ({"pyproject.toml": '[project]\nname="x"\n', "requirements.txt": "jax>=0.4.7\n"}, "0.4.7"),
        (  # only a build requirement names jax (jaxns 1.1.0's setup.py)
            {
                "setup.py": (
                    "from setuptools import setup\nMIN = '0.2.9'\n"
                    "setup_requires = ['jax>=' + MIN]\n"
                    "setup(name='x', install_requires=['numpy'], setup_requires=setup_requires)\n"
                )
            },
            "0.2.9",
        ),
        (  # a table of pins the extras are built from by code (transformers 4.25's setup.py)
            {
                "setup.py": (
                    "import re\nfrom setuptools import setup\n"
                    "_deps = ['flax>=0.4.1', 'jax>=0.2.8,!=0.3.2,<=0.3.6', 'numpy>=1.17']\n"
                    "deps = {re.split('[<>=!]', d)[0]: d for d in _deps}\n"
                    "extras = {}\nextras['flax'] = [deps['jax'], deps['flax']]\n"
                    "setup(name='x', install_requires=[deps['numpy']], extras_require=extras)\n"
                )
            },
            "0.2.8",
        ),
        (  # a setup.py that reads a file the sdist lacks: its egg-info holds what it resolved
            {
                "setup.py": (
                    "import setuptools\nreqs = open('requirements.txt').read().splitlines()\n"
                    "setuptools.setup(name='x', install_requires=reqs)\n"
                ),
                "x.egg-info/requires.txt": "numpy>=1.18\n\n[jax]\njax>=0.1.71\n",
            },
            "0.1.71",
        ),
        (  # a requirement the packaging files state comes first
            {
                "setup.py": "from setuptools import setup\nsetup(install_requires=['jax>=0.3.2'])",
                "x.egg-info/requires.txt": "jax>=0.2.0\n",
            },
            "0.3.2",
        ),
        (  # an unpacked wheel: its core metadata (alpa 0.2.3's, the old parenthesised form)
            {
                "x-0.2.3.dist-info/METADATA": (
                    "Metadata-Version: 2.1\nName: x\nRequires-Dist: ray (==2.1.0)\n"
                    "Requires-Dist: jax (==0.3.22)\nRequires-Dist: pylint ; extra == 'dev'\n"
                )
            },
            "0.3.22",
        ),
        (  # an sdist's PKG-INFO; a marker is no part of the version
            {"PKG-INFO": "Name: x\nRequires-Dist: jax<0.4,>=0.3.2; python_version >= '3.8'\n"},
            "0.3.2",
        ),
        ({"PKG-INFO": "Name: x\nRequires: jax>=0.3.2\nDescription: jax>=0.1\n"}, None),
        (  # installed packages (JAX's own sources in site-packages): none is the code's own
            {
                "a-1.0.dist-info/METADATA": "Requires-Dist: jax>=0.4.30\n",
                "b-2.0.dist-info/METADATA": "Requires-Dist: jax>=0.5.0\n",
            },
            None,
        ),
    ],
)
def test_detect_project_version(tmp_path, files, version):
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
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


@pytest.mark.parametrize(
    "setup, version",
    [
        ('JAX = "0.3.25"\nsetup(install_requires=[f"jax=={JAX}", "numpy"])\n', "0.3.25"),
        ('V = "0.3.4"\nsetup(install_requires=["numpy", "jax>=" + V])\n', "0.3.4"),
        ('V = "0.2.12"\nsetup(install_requires=["jax~={}".format(V)])\n', "0.2.12"),
        ('V = "0.3.1"\nREQS = ["jax==%s" % V]\nsetup(install_requires=REQS + ["np"])\n', "0.3.1"),
        # JAX as an extra (dm-pix 0.3.2): a dict literal, or a name bound to one
        (
            'X = {"jax": ["jax>=0.2.17"]}\nsetup(install_requires=["np"], extras_require=X)\n',
            "0.2.17",
        ),
        ('setup(extras_require={"cpu": ["jaxlib"], "jax": ["numpy", "jax==0.3.4"]})\n', "0.3.4"),
        ('setup(install_requires=["jax>=0.4.1"], extras_require={"x": ["jax==0.3.4"]})\n', "0.4.1"),
        # a built string it cannot know (a call, a format spec) is no requirement
        ('setup(install_requires=[f"jax=={version()}"])\n', None),
        ('V = 3\nsetup(install_requires=[f"jax==0.{V:d}.1"])\n', None),
    ],
)
def test_setup_py_requirements_built_from_constants(tmp_path, setup, version):
    (tmp_path / ".git").mkdir()
    (tmp_path / "setup.py").write_text("from setuptools import setup\n" + setup)
    found = detect([tmp_path])
    assert (found.version if found else None) == version


def test_a_requirement_built_in_code_gets_a_note_not_an_edit(tmp_path):
    (tmp_path / ".git").mkdir()
    setup = (
        'from setuptools import setup\nJAX = "0.3.25"\nsetup(install_requires=[f"jax=={JAX}"])\n'
    )
    (tmp_path / "setup.py").write_text(setup)
    (tmp_path / "m.py").write_text("import jax.numpy as jnp\n\ndef f(x: jnp.DeviceArray): ...\n")
    run = invoke(".", "--diff", "--no-cache", "--update-requirements", cwd=tmp_path)
    assert (
        "setup.py builds its requirement jax==0.3.25 in code; the migrated code needs "
        "jax>=0.4.1: raise it by hand" in run.stderr
    )
    assert "--- a/setup.py" not in run.stdout and "+def f(x: jax.Array)" in run.stdout


# ---------------------------------------------------------------- the requirement is the source


@pytest.mark.parametrize(
    "files, source",
    [
        (
            {"pyproject.toml": '[project]\nname="x"\ndependencies = ["jax[cpu]>=0.4.6,<0.5"]\n'},
            "0.4.6..0.4.38",
        ),
        (
            {"pyproject.toml": '[tool.poetry.dependencies]\npython = "^3.9"\njax = "^0.4.20"\n'},
            "0.4.20..0.4.38",
        ),
        (
            {
                "pyproject.toml": (
                    '[tool.poetry.dependencies]\njax = {version = "~0.5.1", extras = ["cpu"]}\n'
                )
            },
            "0.5.1..0.5.3",
        ),
        ({"requirements-dev.txt": "pytest\n", "requirements.txt": "jax==0.3.16\n"}, "0.3.16"),
        ({"requirements.txt": "jax~=0.2.12\n"}, "0.2.12..0.2.28"),
        ({"setup.cfg": "[options]\ninstall_requires =\n    jax~=0.6.0\n"}, "0.6.0..0.6.2"),
        ({"requirements.txt": "jaxlib>=0.4.13,<0.4.31\njax\n"}, "0.4.13..0.4.30"),
        ({"requirements.txt": "jax[cuda12]<=0.4.30\n"}, "..0.4.30"),  # no lower bound
        ({"requirements.txt": "jax>=0.3.4\n"}, "0.3.4"),  # open above: written for 0.3.4
        ({"requirements.txt": "jax @ git+https://github.com/jax-ml/jax\n"}, "unknown"),
    ],
)
def test_the_requirement_is_the_source(tmp_path, files, source):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    (tmp_path / ".git").mkdir()
    assert source_of(detect([tmp_path])).describe() == source


@pytest.mark.parametrize(
    "requirement, extra, reported",
    [
        ("jax==0.3.16\n", [], True),  # a pin: the code never ran on 0.5.0
        ("jax>=0.4.13,<0.5\n", [], True),
        ("jax[cuda12]<=0.4.30\n", [], True),
        ("jax>=0.4.13\n", [], False),  # open above: it may have run on 0.5.0 already
        ("jax>=0.4.13\n", ["--source-version", "0.4.13"], True),  # the user says so
        ("jax>=0.3.0\n", [], True),  # still admits a JAX from before jax.Array: written for it
        ("jax==0.5.0\n", [], False),
        ("jax==0.3.16\n", ["--target-version", "0.4.13..0.4.38"], False),  # never reaches 0.5.0
    ],
)
def test_a_change_of_values_asks_whether_the_code_never_ran_after_it(
    tmp_path, requirement, extra, reported
):
    """JAX503 (jax.random's draws, changed in 0.5.0) runs only where the source says the code
    was written before the change: a requirement closed below 0.5.0, one open above whose
    lower bound predates jax.Array, or ``--source-version``; a newer lower bound does not say
    so, though other rules read it as the source."""
    (tmp_path / "requirements.txt").write_text(requirement)
    (tmp_path / ".git").mkdir()
    (tmp_path / "sample.py").write_text(
        "import jax\n\nkey = jax.random.PRNGKey(0)\nx = jax.random.uniform(key, (3,))\n"
    )
    result = invoke(".", "--check", "--no-cache", "--format", "json", *extra, cwd=tmp_path)
    codes = [f["code"] for f in json.loads(result.stdout)["files"][0]["findings"]]
    assert codes == (["JAX503"] if reported else []), result.stderr


def test_a_fix_that_needs_a_newer_jax_than_its_rule_raises_the_default_target(tmp_path):
    """A partial's clip(a_min=...) becomes min=, which jax 0.4.27 added: the fix says so
    itself (its rule's other fixes need no such JAX), the survey reads it, and the default
    target starts there, so the rename is made instead of reported.  The survey's bound of
    the file's floor counts it too (a file passed over would leave it reported)."""
    from jaxmigrate.migrator.rule import all_rules
    from jaxmigrate.migrator.target import survey_reach
    from jaxmigrate.migrator.version import parse_version
    from jaxmigrate.rules.removed_keywords import RENAMED

    text = (
        "import functools\n"
        "import jax.numpy as jnp\n\n"
        "clip = functools.partial(jnp.clip, a_min=0.0, a_max=1.0)\n"
    )
    (tmp_path / ".git").mkdir()
    (tmp_path / "probs.py").write_text(text)
    result = invoke(".", "--no-cache", cwd=tmp_path)
    assert "migrating to 0.4.27.." in result.stderr, result.stderr
    assert "JAX906 removed-keywords's fix in" in result.stderr
    assert "partial(jnp.clip, min=0.0, max=1.0)" in (tmp_path / "probs.py").read_text()
    rules = list(all_rules().values())
    assert survey_reach(text, None, rules, parse_version("0.4.1")) >= parse_version("0.4.27")
    newest = max((since for _new, since in RENAMED.values()), key=parse_version)
    assert all_rules()["JAX906"].fix_needs == newest  # (Context.replace holds fixes to it)
    (tmp_path / "probs.py").write_text(text)  # a target given below 0.4.27: reported
    result = invoke(".", "--no-cache", "--check", "--target-version", "0.4.13", cwd=tmp_path)
    assert "min= needs 0.4.27" in result.stdout


# ---------------------------------------------------------------- whole projects, no flags

PROJECTS = sorted(p.name for p in (FIXTURES / "projects").iterdir() if p.is_dir())


@pytest.mark.parametrize("case", PROJECTS)
def test_a_project_migrates_from_its_requirement_to_the_newest_jax(tmp_path, case):
    """``jaxmigrate .`` with no flags in a legacy project: the requirement is the source, the
    target reaches the newest JAX from the floor the rewrites need (or the requirement's lower
    bound where it is higher), said once on stderr; the files come out as ``after/``."""
    folder = FIXTURES / "projects" / case
    project = tmp_path / case
    shutil.copytree(folder / "before", project)
    (project / ".git").mkdir()
    result = invoke(".", "--no-cache", cwd=project)
    assert result.exit_code in (0, 1), result.stderr
    note = (folder / "note.txt").read_text().strip()
    assert result.stderr.splitlines()[0] == note
    for expected in sorted((folder / "after").iterdir()):
        assert (project / expected.name).read_text() == expected.read_text(), expected.name
    for kept in (folder / "before").iterdir():  # what after/ does not list is left as it was
        if not (folder / "after" / kept.name).exists():
            assert (project / kept.name).read_text() == kept.read_text(), kept.name
    again = invoke(".", "--no-cache", "--check", "-q", cwd=project)
    assert "would rewrite" not in again.stderr, again.stderr  # idempotent


@pytest.mark.parametrize("case", ["pin_0_3_16", "library_0_4_30"])
def test_the_readme_shows_what_its_two_examples_print(case):
    """The README's examples of the two ranges (an application moving to the newest JAX, a
    library keeping 0.4.30) quote the note the projects' test above checks, word for word."""
    readme = (FIXTURES.parent / "README.md").read_text(encoding="utf-8")
    note = (FIXTURES / "projects" / case / "note.txt").read_text().strip()
    assert f"$ jaxmigrate fixtures/projects/{case}/before --diff" in readme
    assert note in readme


@pytest.mark.parametrize(
    "case, source, target",
    [
        ("pin_0_3_16", {"lower": "0.3.16", "upper": "0.3.16"}, "0.4.4"),
        ("compatible_0_2_12", {"lower": "0.2.12", "upper": "0.2.28"}, "0.4.4"),
        ("floor_0_3_4", {"lower": "0.3.4", "upper": "0.3.4"}, "0.4.4"),
        ("library_0_4_30", {"lower": "0.4.30", "upper": "0.4.30"}, "0.4.30"),
        ("poetry_0_4_13", {"lower": "0.4.13", "upper": "0.4.38"}, "0.4.13"),
        ("no_requirement", {"lower": None, "upper": None}, "0.4.4"),
    ],
)
def test_both_ranges_and_their_evidence_are_in_the_json(tmp_path, case, source, target):
    project = tmp_path / case
    shutil.copytree(FIXTURES / "projects" / case / "before", project)
    (project / ".git").mkdir()
    result = invoke(".", "--check", "--format", "json", "--no-cache", "-q", cwd=project)
    data = json.loads(result.stdout)
    got = data["source_range"]
    assert {"lower": got["lower"], "upper": got["upper"]} == source
    assert (got["origin"] == "unknown") == (source["lower"] is None)
    assert data["target_range"] == {"lower": target, "upper": None}
    assert data["floor"] and data["note"].startswith(("requirements", "setup", "pyproject", "no"))
    sarif = json.loads(
        invoke(".", "--check", "--format", "sarif", "--no-cache", "-q", cwd=project).stdout
    )
    assert sarif["runs"][0]["properties"]["source_range"] == got


def test_a_target_given_is_taken_and_both_ranges_are_said(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "requirements.txt").write_text("jax>=0.4.13\n")
    (tmp_path / "m.py").write_text("import jax\ny = jax.tree_map(abs, [1])\n")
    result = invoke("m.py", "--diff", "--no-cache", cwd=tmp_path)
    assert "requirements.txt has jax>=0.4.13: migrating to 0.4.13.." in result.stderr
    assert "jax.tree_util.tree_map" in result.stdout  # jax.tree.map needs 0.4.25
    explicit = invoke("m.py", "--diff", "--target-version", "0.4.30", "--no-cache", cwd=tmp_path)
    assert (
        "source 0.4.13 (requirements.txt: jax>=0.4.13); target 0.4.30.." in explicit.stderr
        and "(--target-version)" in explicit.stderr
    )
    assert "jax.tree.map" in explicit.stdout
    quiet = invoke("m.py", "--check", "-q", "--no-cache", cwd=tmp_path)
    assert "jaxmigrate:" not in quiet.stderr


def test_a_range_on_the_command_line_and_in_the_configuration(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "m.py").write_text("import jax\n")
    result = invoke(
        "m.py", "--check", "--format", "json", "--target-version", "0.4.13..0.4.30",
        "--no-cache", cwd=tmp_path,
    )  # fmt: skip
    assert json.loads(result.stdout)["target_range"] == {"lower": "0.4.13", "upper": "0.4.30"}
    (tmp_path / "pyproject.toml").write_text(
        '[tool.jaxmigrate]\ntarget-version = "0.5.0..0.6.2"\nsource-version = "0.4.6"\n'
    )
    result = invoke("m.py", "--check", "--format", "json", "--no-cache", cwd=tmp_path)
    data = json.loads(result.stdout)
    assert data["target_range"] == {"lower": "0.5.0", "upper": "0.6.2"}
    assert data["source_range"]["lower"] == "0.4.6"
    assert "target-version in" in data["target_version_source"]
    empty = invoke(
        "m.py", "--check", "--target-version", "0.5.0..0.4.30", "--no-cache", cwd=tmp_path
    )
    assert empty.exit_code == 2 and "is empty" in empty.stderr
    bad = invoke("m.py", "--check", "--source-version", "zero", "--no-cache", cwd=tmp_path)
    assert bad.exit_code == 2 and "source-version" in bad.stderr


def test_a_target_given_alone_reaches_the_newest_jax(tmp_path):
    """--target-version X is X..newest: the project's upper bound is what the code was written
    for, not where it goes (GSPMDSharding, which replaced OpShardingSharding, is gone from
    0.7.0, so within 0.4.30..newest the name is reported, not renamed)."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname="x"\ndependencies = ["jax>=0.4.13,<0.7"]\n'
    )
    (tmp_path / "m.py").write_text(
        "from jax.sharding import OpShardingSharding\nprint(OpShardingSharding)\n"
    )
    result = invoke(
        "m.py", "--check", "--format", "json", "--no-cache", "--target-version", "0.4.30",
        cwd=tmp_path,
    )  # fmt: skip
    data = json.loads(result.stdout)
    assert data["target_range"] == {"lower": "0.4.30", "upper": None}
    assert data["source_range"]["lower"] == "0.4.13" and data["source_range"]["upper"] == "0.6.2"
    capped = invoke(
        "m.py", "--diff", "--no-cache", "--target-version", "0.4.30..0.6.2", cwd=tmp_path
    )
    assert "+from jax.sharding import GSPMDSharding" in capped.stdout


def test_the_stated_source_decides_a_behaviour_change(tmp_path):
    """process_allgather(x) stacks a leading axis from 0.5.0: code written before it gets
    tiled=True, code written after it stays, and code nothing dates is reported with both
    readings."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "m.py").write_text(
        "import jax.numpy as jnp\nfrom jax.experimental import multihost_utils\n\n"
        "full = multihost_utils.process_allgather(jnp.arange(8))\n"
    )
    old = invoke("m.py", "--diff", "--no-cache", "--source-version", "0.4.30", cwd=tmp_path)
    assert "tiled=True" in old.stdout
    new = invoke("m.py", "--diff", "--no-cache", "--source-version", "0.6.0", cwd=tmp_path)
    assert new.stdout == "" and "JAX306" not in new.stdout + new.stderr
    unknown = invoke("m.py", "--diff", "--no-cache", cwd=tmp_path)
    assert "JAX306" in unknown.stdout and "JAX306" not in unknown.stderr  # a finding, no diff
    assert "--- a/" not in unknown.stdout
    assert "--source-version says which" in unknown.stdout


# ---------------------------------------------------------------- the requirement, raised


def test_the_requirement_is_raised_to_admit_the_target_when_asked(tmp_path):
    """--update-requirements (or --unsafe-fixes) raises the pin to the target's floor in the
    diff like any fix, writes it in place keeping the comment, and a second run changes
    nothing; without the flag a note says what excludes the target."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "requirements.txt").write_text("numpy\njax==0.3.16  # pinned\njaxlib==0.3.15\n")
    (tmp_path / "m.py").write_text("import jax.numpy as jnp\n\ndef f(x: jnp.DeviceArray): ...\n")
    hint = invoke(".", "--check", "--no-cache", cwd=tmp_path)
    assert (
        "requirements.txt has jax==0.3.16; the migrated code needs jax>=0.4.1 "
        "(--update-requirements writes it)" in hint.stderr
    )
    assert "would rewrite requirements.txt" not in hint.stderr
    diff = invoke(".", "--diff", "--no-cache", "--update-requirements", cwd=tmp_path)
    assert "-jax==0.3.16  # pinned\n-jaxlib==0.3.15\n" in diff.stdout
    assert "+jax>=0.4.1  # pinned\n+jaxlib>=0.4.1\n" in diff.stdout
    assert "--- a/requirements.txt" in diff.stdout
    written = invoke(".", "--no-cache", "--unsafe-fixes", cwd=tmp_path)
    assert "rewrote requirements.txt" in written.stderr
    assert (tmp_path / "requirements.txt").read_text() == (
        "numpy\njax>=0.4.1  # pinned\njaxlib>=0.4.1\n"
    )
    again = invoke(".", "--check", "--no-cache", "--update-requirements", cwd=tmp_path)
    assert "would rewrite" not in again.stderr and again.exit_code == 0


def test_a_lower_bound_below_the_array_releases_is_raised_as_a_target_not_a_need(tmp_path):
    """evosax 0.1.0 (``jax>=0.3.0``): its fixes (``jax.tree_map`` -> ``jax.tree_util.tree_map``)
    run on 0.3.0, and the survey finds no floor past the first jax.Array release, so the note
    says the migration targets 0.4.1, not that the migrated code needs it; where a fix does
    need it (``jax.Array``), the note says so.  The raise itself is the same."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "requirements.txt").write_text("jax>=0.3.0\n")
    (tmp_path / "m.py").write_text("import jax\n\ny = jax.tree_map(abs, [1])\n")
    run = invoke(".", "--check", "--no-cache", cwd=tmp_path)
    assert (
        "requirements.txt has jax>=0.3.0; the migration targets jax>=0.4.1 "
        "(--update-requirements writes it)" in run.stderr
    )
    assert "needs jax>=" not in run.stderr
    diff = invoke(".", "--diff", "--no-cache", "--update-requirements", cwd=tmp_path)
    assert "-jax>=0.3.0\n+jax>=0.4.1\n" in diff.stdout
    (tmp_path / "m.py").write_text("import jax.numpy as jnp\n\ndef f(x: jnp.DeviceArray): ...\n")
    needed = invoke(".", "--check", "--no-cache", cwd=tmp_path)
    assert "requirements.txt has jax>=0.3.0; the migrated code needs jax>=0.4.1" in needed.stderr
    (tmp_path / "n.py").write_text("import jax\n\ny = jax.tree_map(abs, [1])\n")
    several = invoke(".", "--check", "--no-cache", "-j", "2", cwd=tmp_path)  # (in workers)
    assert "the migrated code needs jax>=0.4.1" in several.stderr


def test_a_run_that_migrates_nothing_asks_nothing_of_the_requirement(tmp_path):
    """jaxlie 1.3.3 (``jax>=0.2.14``) needs no rewrite: the run said its "migrated code needs
    jax>=0.4.1" all the same, and --update-requirements would have raised the pin for code it
    left as it was."""
    (tmp_path / ".git").mkdir()
    text = "jax>=0.2.14\nnumpy\n"
    (tmp_path / "requirements.txt").write_text(text)
    (tmp_path / "m.py").write_text("import jax.numpy as jnp\n\ndef f(x):\n    return jnp.sin(x)\n")
    hint = invoke(".", "--check", "--no-cache", cwd=tmp_path)
    assert "--update-requirements writes it" not in hint.stderr and hint.exit_code == 0
    raised = invoke(".", "--no-cache", "--update-requirements", cwd=tmp_path)
    assert "requirements.txt" not in raised.stderr.split("\n", 1)[1]
    assert (tmp_path / "requirements.txt").read_text() == text


@pytest.mark.parametrize("guard", ["typing.TYPE_CHECKING", "TYPE_CHECKING", "DEBUG"])
def test_a_name_only_a_type_checker_reads_needs_no_jax(tmp_path, guard):
    """flax 0.12.12 (``jax>=0.11.1``) names ``hjx.HiPrim`` (0.11.2) under ``if TYPE_CHECKING:``
    and a shim where the code runs: "the migrated code needs jax>=0.11.2" was said, with
    "--update-requirements writes it".  An ordinary
    ``if`` still counts (``jax.shard_map`` came in 0.6.1)."""
    (tmp_path / ".git").mkdir()
    text = "jax>=0.4.30\n"
    (tmp_path / "requirements.txt").write_text(text)
    (tmp_path / "m.py").write_text(
        "import typing\nfrom typing import TYPE_CHECKING\n\nimport jax\n\nDEBUG = False\n"
        f"if {guard}:\n    smap = jax.shard_map\nelse:\n    smap = jax.jit\n"
        "y = jax.tree_map(abs, [1])\n"  # (a fix: the requirement is asked about)
    )
    result = invoke(".", "--no-cache", "--check", cwd=tmp_path)
    raised = guard == "DEBUG"
    assert ("the migrated code needs 0.6.1: jax.shard_map" in result.stderr) is raised
    assert ("migrating to 0.4.30.." in result.stderr) is not raised, result.stderr
    assert ("--update-requirements writes it" in result.stderr) is raised


def test_a_name_jax_brought_back_raises_no_target_of_code_written_before(tmp_path):
    """oryx 0.2.2 (``jax==0.2.26``) calls ``batching.batch_subtrace``, removed in 0.9.0 and
    exported again from 0.11.1: the target stayed at 0.11.1.., which said nothing of it.
    Read as the old name, it raises nothing, and is reported with both releases."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "requirements.txt").write_text("jax==0.2.26\n")
    (tmp_path / "m.py").write_text(
        "from jax.interpreters import batching\n\n\ndef f(g):\n"
        "    return batching.batch_subtrace(g)\n"
    )
    result = invoke(".", "--no-cache", "--check", cwd=tmp_path)
    assert "migrating to 0.4.1.." in result.stderr, result.stderr
    assert (
        "m.py:5:12: JAX901 jax.interpreters.batching.batch_subtrace was removed in JAX 0.9.0 "
        "and is back only from 0.11.1" in result.stdout
    ), result.stdout


def test_a_second_run_reads_the_renames_of_the_first_as_no_proof_of_age(tmp_path):
    """equinox 0.9.2 (``jax>=0.3.4``): JAX903 renamed ``core.primal_dtype_to_tangent_dtype`` to
    ``jax.extend.core``'s (0.10.0), and on the migrated tree that name dated the file at 0.10,
    so JAX913's finding, for code written before 0.7, went quiet: a CI ``--check`` after the
    migration said nothing of a bind that fails."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "requirements.txt").write_text("jax>=0.3.4\n")
    (tmp_path / "m.py").write_text(
        "from jax import core\n\ntag_p = core.Primitive('loss_tag')\n"
        "to_tangent = core.primal_dtype_to_tangent_dtype\n\n\ndef loss_tag(x):\n"
        "    names = ['logits']\n    names = names + ['x']\n"
        "    return tag_p.bind(x, args_names=names)\n"
    )
    first = invoke(".", "--no-cache", cwd=tmp_path)
    assert "jax.extend.core" in (tmp_path / "m.py").read_text()
    second = invoke(".", "--no-cache", "--check", cwd=tmp_path)
    finding = "m.py:10:37: JAX913 args_names=names -> args_names=tuple(names)"
    assert finding in first.stdout and finding in second.stdout, (first.stdout, second.stdout)


def test_a_requirement_that_admits_the_target_is_never_touched(tmp_path):
    (tmp_path / ".git").mkdir()
    text = '[project]\nname = "x"\ndependencies = ["jax>=0.4.30"]  # keep\n'
    (tmp_path / "pyproject.toml").write_text(text)
    (tmp_path / "m.py").write_text("import jax\ny = jax.tree_map(abs, [1])\n")
    result = invoke(".", "--no-cache", "--update-requirements", cwd=tmp_path)
    assert (
        "rewrote m.py" in result.stderr and "pyproject.toml" not in result.stderr.split("\n", 1)[1]
    )
    assert (tmp_path / "pyproject.toml").read_text() == text
    assert "jax.tree.map" in (tmp_path / "m.py").read_text()  # the target kept 0.4.30


@pytest.mark.parametrize("length", [40, 75, 85, 95])
def test_the_newer_than_target_note_keeps_the_message_one_short_line(length):
    """The note shortens (name and release, the release, "newer than the target") rather than
    push a message past its limit; the detail always carries it whole."""
    from jaxmigrate.migrator.diagnostics import MESSAGE_LIMIT
    from jaxmigrate.migrator.messages import beyond_target
    from jaxmigrate.migrator.version import parse_version

    message = "use jax.set_mesh; " + "x" * (length - len("use jax.set_mesh; "))
    said, detail = beyond_target(message, "", parse_version("0.4.30"), parse_version("0.4.38"))
    assert said.startswith(message) and len(said) <= max(MESSAGE_LIMIT, length)
    assert said != message or length + len(" (newer than the target)") > MESSAGE_LIMIT
    assert "jax.set_mesh needs JAX 0.7.1, newer than the target" in detail
    if length == 40:
        assert said.endswith("(jax.set_mesh needs JAX 0.7.1)")


@pytest.mark.parametrize(
    "target, said",
    [
        ("0.4.30", "no longer exists"),  # (gone from 0.11.0, in the range)
        ("0.4.30..0.10.2", "is deprecated"),  # (there throughout, deprecated from 0.10.0)
        ("0.4.30..0.9.0", None),  # (there throughout, never deprecated: nothing to say)
    ],
)
def test_a_rename_the_range_cannot_take_says_what_its_name_is_there(tmp_path, target, said):
    """JAX903 said "no longer exists" of a name every release of a capped range still had."""
    (tmp_path / "m.py").write_text("import jax\nf = jax.core.primal_dtype_to_tangent_dtype\n")
    result = invoke("m.py", "--check", "--no-cache", "--target-version", target, cwd=tmp_path)
    found = [line for line in result.stdout.splitlines() if " JAX903 " in line]
    if said is None:
        assert not found, found
    else:
        assert len(found) == 1 and f"dtype {said}; its rename needs JAX 0.10.0" in found[0]


def test_a_finding_says_when_a_name_it_recommends_is_newer_than_the_target(tmp_path):
    """No message recommends a name newer than the target's upper bound without saying so."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "m.py").write_text(
        "from jax.experimental.maps import thread_resources\n"
        "mesh = thread_resources.env.physical_mesh\n"
    )
    # JAX806's message for thread_resources, which JAX903 would otherwise rename
    ignore = ("--ignore", "JAX903")
    capped = invoke(
        "m.py", "--check", "--no-cache", "--target-version", "0.4.30..0.4.38", *ignore, cwd=tmp_path
    )
    shown = [line for line in capped.stdout.splitlines() if "JAX806" in line]
    assert shown and all(len(line.split(" JAX806 ", 1)[1]) <= 100 for line in shown)
    as_json = invoke(
        "m.py",
        "--format",
        "json",
        "--no-cache",
        "--target-version",
        "0.4.30..0.4.38",
        *ignore,
        cwd=tmp_path,
    )
    details = [f["detail"] for f in json.loads(as_json.stdout)["files"][0]["findings"]]
    assert any("jax.set_mesh needs JAX 0.7.1, newer than the target" in d for d in details)
    open_range = invoke(
        "m.py", "--check", "--no-cache", "--target-version", "0.4.30", *ignore, cwd=tmp_path
    )
    assert "jax.set_mesh" in open_range.stdout and "needs JAX" not in open_range.stdout


@pytest.mark.parametrize(
    "args, said",
    [
        (["--target-version", "9.9"], "target version 9.9 is newer than any JAX release"),
        (["--target-version", "0.1.0"], "target version 0.1.0 is older than the oldest release"),
        (["--target-version", "0.4.30..9.9"], "target version 9.9 is newer than any"),
        (["--source-version", "10.0"], "source version 10.0 is newer than any JAX release"),
    ],
)
def test_a_version_no_jax_release_has_is_a_usage_error(tmp_path, args, said):
    (tmp_path / ".git").mkdir()
    (tmp_path / "m.py").write_text("import jax\n")
    result = invoke("m.py", "--check", "--no-cache", *args, cwd=tmp_path)
    assert result.exit_code == 2 and said in result.stderr and "API history knows" in result.stderr


def test_an_unsafe_fix_into_a_private_name_raises_the_floor_it_needs(tmp_path):
    """flax 0.6.4 defined its options with jax.config.define_bool_state (gone in 0.4.25); the
    --unsafe-fixes rewrite to jax._src.config.bool_state needs 0.4.31, a name outside the
    public API history: the survey writes it, and the default target starts there."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "requirements.txt").write_text("jax>=0.3.16\n")
    source = "import jax\n\nflag = jax.config.define_bool_state('f', True, 'Help.')\n"
    (tmp_path / "m.py").write_text(source)
    safe = invoke(".", "--check", "--no-cache", cwd=tmp_path)
    assert "migrating to 0.4.1.." in safe.stderr.splitlines()[0], safe.stderr
    written = invoke(".", "--no-cache", "--unsafe-fixes", cwd=tmp_path)
    note = written.stderr.splitlines()[0]
    assert "migrating to 0.4.31.." in note and "jax._src.config.bool_state" in note, note
    assert "jax._src.config.bool_state('f', True, 'Help.')" in (tmp_path / "m.py").read_text()
    assert (tmp_path / "requirements.txt").read_text() == "jax>=0.4.31\n"
    again = invoke(".", "--check", "--no-cache", "--unsafe-fixes", cwd=tmp_path)
    assert "would rewrite" not in again.stderr, again.stderr
