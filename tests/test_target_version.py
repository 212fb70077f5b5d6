"""The target version: detected from the project's requirements (never by running its
setup.py), announced, and taken as a range whose bounds decide the spellings."""

from __future__ import annotations

import json

import pytest

from jaxmigrate.migrator.project_version import detect, lowest_allowed
from jaxmigrate.migrator.version import LATEST_KNOWN_JAX
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
                "pyproject.toml": (
                    '[tool.poetry.dependencies]\njax = {version = "~0.5.1", extras = ["cpu"]}\n'
                )
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
        "target version 0.4.30..0.6.2: 0.4.30 from --target-version, "
        "upper bound from pyproject.toml (jax>=0.4.13,<0.7)" in result.stderr
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
        '[project]\nname="x"\ndependencies = ["jax>=0.4.13,<0.7"]\n'
        '[tool.jaxmigrate]\ntarget-version = "0.4.30"\n'
    )
    configured = invoke("m.py", "--diff", "--no-cache", cwd=tmp_path)
    assert "upper bound from pyproject.toml" in configured.stderr
    assert "+from jax.sharding import GSPMDSharding" in configured.stdout
