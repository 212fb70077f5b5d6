"""Raising a project's jax / jaxlib requirement to a target range (migrator/requirement_edit.py).

Every edit is checked to be idempotent (a second call returns None); the tables run each
specifier through every kind of packaging file.
"""

from __future__ import annotations

import ast
import sys
from typing import List, Optional, Tuple

import pytest

from jaxmigrate.migrator.requirement_edit import raise_requirement

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

FLOOR = "0.4.1"
NEWEST = "0.12.0"


def _raise(path: str, text: str, floor: str = FLOOR, newest: str = NEWEST):
    """The result of one call, after checking that a second call changes nothing."""
    result = raise_requirement(path, text, floor, newest)
    if result is not None:
        new_text, messages = result
        assert new_text != text
        assert messages
        assert raise_requirement(path, new_text, floor, newest) is None, new_text
    return result


def _new_text(path: str, text: str, floor: str = FLOOR, newest: str = NEWEST) -> str:
    result = _raise(path, text, floor, newest)
    return text if result is None else result[0]


# --- one specifier, every operator --------------------------------------------------------------

# (specifier as written, the new one or None when the requirement is left as it is)
SPECIFIERS: List[Tuple[str, Optional[str]]] = [
    # lower bounds below the floor are raised; at or above it they stay
    (">=0.3.4", ">=0.4.1"),
    (">=0.3", ">=0.4.1"),
    (">=0", ">=0.4.1"),
    (">0.3", ">=0.4.1"),
    (">0.4", ">=0.4.1"),
    (">=0.4.1rc1", ">=0.4.1"),
    (">=0.4.1", None),
    (">=0.4.1.0", None),
    (">0.4.1", None),
    (">=0.5.0", None),
    (">=0.5", None),
    (">=0.13", None),  # above newest: still never lowered
    # pins and compatible releases: the implicit upper bound goes
    ("==0.3.16", ">=0.4.1"),
    ("==0.3.*", ">=0.4.1"),
    ("==0.4.*", ">=0.4.1"),
    ("==0.4.5", ">=0.4.5"),
    ("==0.5.*", ">=0.5"),
    ("==0.12.0", None),
    ("==0.12", None),
    ("==0.3.15+cuda11.cudnn82", ">=0.4.1"),
    ("==0.4.7+cuda11.cudnn86", ">=0.4.7"),
    ("~=0.2.12", ">=0.4.1"),
    ("~=0.3", ">=0.4.1,<1"),  # >=0.3,<1.0: its upper bound admits newest
    ("~=0.4.0", ">=0.4.1"),
    ("~=0.4.5", ">=0.4.5"),
    ("~=0.5", None),  # >=0.5,<1.0
    # upper bounds that exclude newest are lifted; others stay
    ("<0.4", ">=0.4.1"),
    ("<0.12", ">=0.4.1"),
    ("<0.12.0", ">=0.4.1"),
    ("<=0.11.9", ">=0.4.1"),
    ("<=0.12", None),
    ("<0.13", None),
    ("<1", None),
    (">=0.4.1,<0.5", ">=0.4.1"),
    (">=0.4.1,<0.12", ">=0.4.1"),
    (">=0.4.1,<=0.12.0", None),
    (">=0.4.1,<0.13", None),
    (">=0.3.4,<0.4", ">=0.4.1"),
    (">=0.3.4,<0.13", ">=0.4.1,<0.13"),
    (">=0.5,<0.6", ">=0.5"),
    ("<0.5,>=0.4.3", ">=0.4.3"),
    ("<0.13,>=0.3", ">=0.4.1,<0.13"),
    ("~=0.3.0,<0.3.5", ">=0.4.1"),
    # the separator style is kept
    (">=0.3.4, <0.13", ">=0.4.1, <0.13"),
    (">=0.3.4 , <0.13", ">=0.4.1 , <0.13"),
    (">= 0.3.4, < 0.13", ">=0.4.1, < 0.13"),
    # != clauses that do not matter stay; those excluding part of the range go, and so do
    # those below a lower bound raised here (transformers 4.25: jax>=0.2.8,!=0.3.2,<=0.3.6)
    ("!=0.3.0", None),
    ("!=0.13.0", None),
    (">=0.3,!=0.3.5,<0.4", ">=0.4.1"),
    ("!=0.3.5,>=0.3", ">=0.4.1"),
    (">=0.2.8,!=0.3.2,<=0.3.6", ">=0.4.1"),
    (">=0.3,!=0.3.*,<0.4", ">=0.4.1"),
    (">=0.3,!=0.4.*,<0.4", ">=0.4.1"),
    ("<0.4,!=0.3.5", ">=0.4.1"),
    (">=0.5,!=0.4.5,<0.6", ">=0.5,!=0.4.5"),  # (its own lower bound: left as written)
    (">=0.4.1,!=0.4.5", ">=0.4.1"),
    (">=0.5,!=0.4.5", None),
    (">0.4.5,!=0.4.5", None),
    (">=0.4.1,!=0.4.*", ">=0.4.1"),
    (">=0.4.1,!=0.3.*", None),
    ("!=0.12.0", ">=0.4.1"),
]


@pytest.mark.parametrize("spec, expected", SPECIFIERS)
def test_specifier(spec, expected):
    text = f"jax{spec}\n"
    result = _raise("requirements.txt", text)
    if expected is None:
        assert result is None
    else:
        assert result == (f"jax{expected}\n", [f"requirements.txt: jax{spec} -> jax{expected}"])


@pytest.mark.parametrize("spec, expected", SPECIFIERS)
def test_specifier_in_every_file_kind(spec, expected):
    new = spec if expected is None else expected
    files = [
        ("requirements.txt", "numpy\njaxlib{}  # pinned\n"),
        ("setup.py", "from setuptools import setup\nsetup(install_requires=['jaxlib{}'])\n"),
        ("setup.cfg", "[options]\ninstall_requires =\n    jaxlib{}\n"),
        ("pyproject.toml", '[project]\nname = "x"\ndependencies = ["jaxlib{}"]\n'),
    ]
    for path, template in files:
        assert _new_text(path, template.format(spec)) == template.format(new), path


@pytest.mark.parametrize("spec", [spec for spec, expected in SPECIFIERS if expected])
def test_new_specifier_admits_newest_and_never_lowers(spec):
    specifiers = pytest.importorskip("packaging.specifiers")
    result = _raise("requirements.txt", f"jax{spec}\n")
    assert result is not None
    new = specifiers.SpecifierSet(result[0][len("jax") :].strip())
    old = specifiers.SpecifierSet(spec)
    assert NEWEST in new
    assert "0.4.0" not in new and "0.3.16" not in new
    # never lowered: whatever the old one excluded below the floor stays excluded
    for version in ("0.4.1", "0.4.5", "0.5.0"):
        if version not in old and any(
            clause.operator in (">=", ">", "==", "~=") and clause.version > version
            for clause in old
        ):
            assert version not in new


def test_floor_written_as_given():
    assert _new_text("requirements.txt", "jax==0.3.16\n", floor="0.4") == "jax>=0.4\n"
    assert _new_text("requirements.txt", "jax==0.3.16\n", floor="0.4.13") == "jax>=0.4.13\n"


def test_floor_equal_to_newest():
    assert _new_text("requirements.txt", "jax==0.4.1\n", "0.4.1", "0.4.1") == "jax==0.4.1\n"
    assert _new_text("requirements.txt", "jax~=0.4.0\n", "0.4.1", "0.4.1") == "jax>=0.4.1,<0.5\n"


@pytest.mark.parametrize(
    "spec, expected",
    [
        ("~=0.4.0", ">=0.4.1,<0.5"),  # its upper bound admits 0.4.9: kept as <0.5
        ("==0.4.*", ">=0.4.1,<0.5"),
        ("~=0.4.1", None),
        (">=0.4,<0.5", ">=0.4.1,<0.5"),
        ("<0.4.9", ">=0.4.1"),
        ("<=0.4.9", None),
    ],
)
def test_kept_upper_bound_when_newest_is_close(spec, expected):
    text = f"jax{spec}\n"
    new = expected if expected is not None else spec
    assert _new_text("requirements.txt", text, "0.4.1", "0.4.9") == f"jax{new}\n"


@pytest.mark.parametrize(
    "floor, newest", [("0.5", "0.4.1"), ("x", "0.4.1"), ("0.4.1", ""), ("0.4.*", "0.5")]
)
def test_bad_target_raises(floor, newest):
    with pytest.raises(ValueError):
        raise_requirement("requirements.txt", "jax==0.3.16\n", floor, newest)


# --- names ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "line, expected",
    [
        ("jax==0.3.16", "jax>=0.4.1"),
        ("JAX==0.3.16", "JAX>=0.4.1"),
        ("Jax==0.3.16", "Jax>=0.4.1"),
        ("jaxlib==0.3.15", "jaxlib>=0.4.1"),
        ("JaxLib==0.3.15", "JaxLib>=0.4.1"),
        ("jax[cpu]==0.3.16", "jax[cpu]>=0.4.1"),
        ("jax [cuda11_pip] == 0.3.16", "jax [cuda11_pip] >=0.4.1"),
        ("jax (>=0.3.4)", "jax (>=0.4.1)"),
        ("jax(>=0.3.4, <0.4) ; python_version<'3.12'", "jax(>=0.4.1) ; python_version<'3.12'"),
        # not jax or jaxlib
        ("jaxopt==0.5", None),
        ("jax-lib==0.3.15", None),
        ("jax_md==0.1.0", None),
        ("jax-dataclasses==1.0", None),
        ("flax==0.5.0", None),
        ("chex==0.1.5", None),
        ("numpy<1.20", None),
        ("ajax==0.3", None),
        # no version: admits everything
        ("jax", None),
        ("jax[cpu]", None),
        ("jaxlib ; sys_platform == 'linux'", None),
        # direct references and unsupported specifiers
        ("jax @ git+https://github.com/google/jax@v0.3.16", None),
        ("jax@https://example.com/jax-0.3.16.tar.gz", None),
        ("jax===0.3.16", None),
        ("jax==1!0.3.16", None),
        ("jax>=0.3,", None),
        ("jax>=banana", None),
    ],
)
def test_names(line, expected):
    text = f"{line}\n"
    assert _new_text("requirements.txt", text) == (f"{expected}\n" if expected else text)


# --- requirements files -------------------------------------------------------------------

REQUIREMENTS = """\
# Pinned for the 2022 paper.
-r base.txt
-c constraints.txt
--extra-index-url https://example.com/simple
-e git+https://github.com/google/flax#egg=flax
-f https://storage.googleapis.com/jax-releases/jax_releases.html
jaxopt==0.5
flax==0.5.0
jax[cuda]==0.3.16 ; python_version >= "3.8"  # CUDA 11
   jaxlib==0.3.15+cuda11.cudnn82    # indented, with a comment
jax>=0.4.1  # already fine
https://example.com/jax-0.3.16.tar.gz
./vendored/jax
jax==0.3.16 \\
    --hash=sha256:0123456789abcdef
jaxlib==0.3.15 --hash=sha256:0123456789abcdef
numpy>=1.20
"""

REQUIREMENTS_AFTER = """\
# Pinned for the 2022 paper.
-r base.txt
-c constraints.txt
--extra-index-url https://example.com/simple
-e git+https://github.com/google/flax#egg=flax
-f https://storage.googleapis.com/jax-releases/jax_releases.html
jaxopt==0.5
flax==0.5.0
jax[cuda]>=0.4.1 ; python_version >= "3.8"  # CUDA 11
   jaxlib>=0.4.1    # indented, with a comment
jax>=0.4.1  # already fine
https://example.com/jax-0.3.16.tar.gz
./vendored/jax
jax==0.3.16 \\
    --hash=sha256:0123456789abcdef
jaxlib==0.3.15 --hash=sha256:0123456789abcdef
numpy>=1.20
"""


def test_requirements_file():
    assert _raise("requirements.txt", REQUIREMENTS) == (
        REQUIREMENTS_AFTER,
        [
            "requirements.txt: jax[cuda]==0.3.16 -> jax[cuda]>=0.4.1",
            "requirements.txt: jaxlib==0.3.15+cuda11.cudnn82 -> jaxlib>=0.4.1",
        ],
    )


@pytest.mark.parametrize(
    "path",
    [
        "requirements.txt",
        "requirements-dev.txt",
        "requirements/base.txt",
        "ci/constraints.txt",
        "C:\\project\\requirements_gpu.txt",
    ],
)
def test_any_txt_is_a_requirements_file(path):
    assert _raise(path, "jax==0.3.16\n") == ("jax>=0.4.1\n", [f"{path}: jax==0.3.16 -> jax>=0.4.1"])


@pytest.mark.parametrize(
    "path", ["requirements.in", "Pipfile", "environment.yml", "setup.py.bak", "tox.ini", "x.py"]
)
def test_other_files_are_left_alone(path):
    assert raise_requirement(path, "jax==0.3.16\n", FLOOR, NEWEST) is None


@pytest.mark.parametrize(
    "text, expected",
    [
        ("jax==0.3.16\r\nflax\r\n", "jax>=0.4.1\r\nflax\r\n"),
        ("flax\r\njax==0.3.16", "flax\r\njax>=0.4.1"),  # no trailing newline
        ("jax==0.3.16", "jax>=0.4.1"),
        ("\n\njax==0.3.16\n\n", "\n\njax>=0.4.1\n\n"),
        ("jax==0.3.16\t# tab comment\n", "jax>=0.4.1\t# tab comment\n"),
        ("\tjax == 0.3.16\n", "\tjax >=0.4.1\n"),
        ("jax==0.3.16\rjaxlib==0.3.15\r", "jax>=0.4.1\rjaxlib>=0.4.1\r"),
    ],
)
def test_requirements_layout_kept(text, expected):
    assert _new_text("requirements.txt", text) == expected


def test_nothing_to_change_returns_none():
    text = "jax>=0.4.1\njaxlib>=0.5.0  # newer\nflax==0.5\njax[cpu]\n"
    assert raise_requirement("requirements.txt", text, FLOOR, NEWEST) is None
    assert raise_requirement("requirements.txt", "", FLOOR, NEWEST) is None


# --- setup.py -------------------------------------------------------------------------------

SETUP_PY = """\
# -*- coding: utf-8 -*-
\"\"\"Setup for démo: jax==0.3.16 in a docstring stays.\"\"\"
from setuptools import setup

JAX_VERSION = "0.3.16"
BASE = ('jax>=0.3.4', "numpy")
CUDA = [
    "jax[cuda]==0.3.16",  # the CUDA wheels
]

setup(
    name="démo",
    description="needs jax==0.3.16",
    install_requires=[
        "jax[cpu]==0.3.16; python_version>='3.8'",
        'jaxlib>=0.3.4,<0.4',
        "jaxopt==0.5",
        "flax==0.5.0",
        f"jax=={JAX_VERSION}",
        "jax" ">=0.3",
        "jax\\u003e=0.3",
        r"jax>=0.5",
    ],
    extras_require={"cuda": CUDA, "tpu": ["jax[tpu]~=0.3.0"], "one": "jaxlib==0.3.1"},
    setup_requires="jax>=0.3",
    python_requires=">=3.8",
)
"""

SETUP_PY_AFTER = """\
# -*- coding: utf-8 -*-
\"\"\"Setup for démo: jax==0.3.16 in a docstring stays.\"\"\"
from setuptools import setup

JAX_VERSION = "0.3.16"
BASE = ('jax>=0.4.1', "numpy")
CUDA = [
    "jax[cuda]>=0.4.1",  # the CUDA wheels
]

setup(
    name="démo",
    description="needs jax==0.3.16",
    install_requires=[
        "jax[cpu]>=0.4.1; python_version>='3.8'",
        'jaxlib>=0.4.1',
        "jaxopt==0.5",
        "flax==0.5.0",
        f"jax=={JAX_VERSION}",
        "jax" ">=0.3",
        "jax\\u003e=0.3",
        r"jax>=0.5",
    ],
    extras_require={"cuda": CUDA, "tpu": ["jax[tpu]>=0.4.1"], "one": "jaxlib>=0.4.1"},
    setup_requires="jax>=0.4.1",
    python_requires=">=3.8",
)
"""


def test_setup_py():
    result = _raise("setup.py", SETUP_PY)
    assert result is not None
    new_text, messages = result
    assert new_text == SETUP_PY_AFTER
    ast.parse(new_text)
    assert messages == [
        "setup.py: jax>=0.3.4 -> jax>=0.4.1",
        "setup.py: jax[cuda]==0.3.16 -> jax[cuda]>=0.4.1",
        "setup.py: jax[cpu]==0.3.16 -> jax[cpu]>=0.4.1",
        "setup.py: jaxlib>=0.3.4,<0.4 -> jaxlib>=0.4.1",
        "setup.py: jax[tpu]~=0.3.0 -> jax[tpu]>=0.4.1",
        "setup.py: jaxlib==0.3.1 -> jaxlib>=0.4.1",
        "setup.py: jax>=0.3 -> jax>=0.4.1",
    ]


def test_setup_py_crlf_and_unicode_columns():
    text = 'NAME = "ünïcødé"; REQS = ["ünï", "jax==0.3.16"]\r\nsetup(install_requires=REQS)'
    expected = 'NAME = "ünïcødé"; REQS = ["ünï", "jax>=0.4.1"]\r\nsetup(install_requires=REQS)'
    assert _new_text("setup.py", text) == expected
    ast.parse(expected)


@pytest.mark.parametrize(
    "text",
    [
        "setup(install_requires=['jax>=0.4.1'])\n",
        "setup(install_requires=[f'jax=={V}'])\n",
        "setup(install_requires=open('requirements.txt').read().splitlines())\n",
        "setup(install_requires=['''jax==0.3.16'''])\n",
        "print('jax==0.3.16')\n",  # not a list of requirements
        "setup(install_requires=[\n",  # does not parse: left alone
    ],
)
def test_setup_py_left_alone(text):
    assert raise_requirement("setup.py", text, FLOOR, NEWEST) is None


def test_setup_py_is_never_executed(tmp_path):
    marker = tmp_path / "ran"
    text = f"open({str(marker)!r}, 'w').close()\nsetup(install_requires=['jax==0.3.16'])\n"
    assert _new_text("setup.py", text) == text.replace("jax==0.3.16", "jax>=0.4.1")
    assert not marker.exists()


# --- setup.cfg ------------------------------------------------------------------------------

SETUP_CFG = """\
[metadata]
name = demo
description = jax==0.3.16 is not a requirement here

[options]
packages = find:
install_requires =
    numpy
    # jax==0.3.16 in a comment stays
    jax[cpu]>=0.3.4,<0.4 ; python_version >= "3.8"  # why

    jaxlib==0.3.16
    jaxopt==0.5
python_requires = >=3.8
setup_requires = jax>=0.3
tests_require:
\tjax~=0.3.0

[options.extras_require]
cuda =
  jax[cuda]==0.3.16
tpu = jax[tpu]~=0.3.0
new = jax>=0.5

[tool:pytest]
addopts = jax==0.3.16
"""

SETUP_CFG_AFTER = """\
[metadata]
name = demo
description = jax==0.3.16 is not a requirement here

[options]
packages = find:
install_requires =
    numpy
    # jax==0.3.16 in a comment stays
    jax[cpu]>=0.4.1 ; python_version >= "3.8"  # why

    jaxlib>=0.4.1
    jaxopt==0.5
python_requires = >=3.8
setup_requires = jax>=0.4.1
tests_require:
\tjax>=0.4.1

[options.extras_require]
cuda =
  jax[cuda]>=0.4.1
tpu = jax[tpu]>=0.4.1
new = jax>=0.5

[tool:pytest]
addopts = jax==0.3.16
"""


def test_setup_cfg():
    assert _raise("setup.cfg", SETUP_CFG) == (
        SETUP_CFG_AFTER,
        [
            "setup.cfg: jax[cpu]>=0.3.4,<0.4 -> jax[cpu]>=0.4.1",
            "setup.cfg: jaxlib==0.3.16 -> jaxlib>=0.4.1",
            "setup.cfg: jax>=0.3 -> jax>=0.4.1",
            "setup.cfg: jax~=0.3.0 -> jax>=0.4.1",
            "setup.cfg: jax[cuda]==0.3.16 -> jax[cuda]>=0.4.1",
            "setup.cfg: jax[tpu]~=0.3.0 -> jax[tpu]>=0.4.1",
        ],
    )


def test_setup_cfg_crlf():
    text = SETUP_CFG.replace("\n", "\r\n")
    assert _new_text("setup.cfg", text) == SETUP_CFG_AFTER.replace("\n", "\r\n")


# --- pyproject.toml -------------------------------------------------------------------------

PYPROJECT = """\
[build-system]
requires = ["setuptools>=61"]

[project]
name = "demo"
description = "jax==0.3.16 is not a requirement here"
dependencies = [
    "jax[cpu]>=0.3.4,<0.4; python_version >= '3.8'",  # a comment
    'jaxlib==0.3.16',
    "jaxopt==0.5",
    "flax",
    \"\"\"jax==0.3.16\"\"\",
]

[project.optional-dependencies]
tpu = ["jax[tpu]~=0.3.0"]
new = ['jax>=0.5']

[dependency-groups]
test = ["pytest", "jax==0.3.16", {include-group = "lint"}]

[tool.poetry.dependencies]
python = "^3.8"
jax = "^0.3.16"
jaxlib = { version = "~0.3", extras = ["cuda"] }
"jax-foo" = "^0.1"
jaxopt = "^0.5"
flax = '0.5.0'

[tool.poetry.dev-dependencies]
jax = '0.3.16'

[tool.poetry.group.gpu.dependencies]
jax = [
    { version = "^0.3.16", python = "<3.11" },
    { version = ">=0.4.13", python = ">=3.11" },
]

[tool.poetry.group.tpu.dependencies.jaxlib]
version = "^0.3.15"
optional = true

[tool.ruff.lint.isort]
known-third-party = ["jax", "jaxlib"]
"""

PYPROJECT_AFTER = """\
[build-system]
requires = ["setuptools>=61"]

[project]
name = "demo"
description = "jax==0.3.16 is not a requirement here"
dependencies = [
    "jax[cpu]>=0.4.1; python_version >= '3.8'",  # a comment
    'jaxlib>=0.4.1',
    "jaxopt==0.5",
    "flax",
    \"\"\"jax==0.3.16\"\"\",
]

[project.optional-dependencies]
tpu = ["jax[tpu]>=0.4.1"]
new = ['jax>=0.5']

[dependency-groups]
test = ["pytest", "jax>=0.4.1", {include-group = "lint"}]

[tool.poetry.dependencies]
python = "^3.8"
jax = ">=0.4.1"
jaxlib = { version = ">=0.4.1", extras = ["cuda"] }
"jax-foo" = "^0.1"
jaxopt = "^0.5"
flax = '0.5.0'

[tool.poetry.dev-dependencies]
jax = '>=0.4.1'

[tool.poetry.group.gpu.dependencies]
jax = [
    { version = ">=0.4.1", python = "<3.11" },
    { version = ">=0.4.13", python = ">=3.11" },
]

[tool.poetry.group.tpu.dependencies.jaxlib]
version = ">=0.4.1"
optional = true

[tool.ruff.lint.isort]
known-third-party = ["jax", "jaxlib"]
"""


def test_pyproject():
    result = _raise("pyproject.toml", PYPROJECT)
    assert result is not None
    new_text, messages = result
    assert new_text == PYPROJECT_AFTER
    assert tomllib.loads(new_text)["tool"]["poetry"]["dependencies"]["jax"] == ">=0.4.1"
    assert messages == [
        "pyproject.toml: jax[cpu]>=0.3.4,<0.4 -> jax[cpu]>=0.4.1",
        "pyproject.toml: jaxlib==0.3.16 -> jaxlib>=0.4.1",
        "pyproject.toml: jax[tpu]~=0.3.0 -> jax[tpu]>=0.4.1",
        "pyproject.toml: jax==0.3.16 -> jax>=0.4.1",
        "pyproject.toml: jax ^0.3.16 -> jax >=0.4.1",
        "pyproject.toml: jaxlib ~0.3 -> jaxlib >=0.4.1",
        "pyproject.toml: jax 0.3.16 -> jax >=0.4.1",
        "pyproject.toml: jax ^0.3.16 -> jax >=0.4.1",
        "pyproject.toml: jaxlib ^0.3.15 -> jaxlib >=0.4.1",
    ]


def test_pyproject_crlf_and_no_trailing_newline():
    text = '[project]\r\nname = "x"\r\ndependencies = [\r\n  "jax==0.3.16",\r\n]'
    expected = '[project]\r\nname = "x"\r\ndependencies = [\r\n  "jax>=0.4.1",\r\n]'
    assert _new_text("pyproject.toml", text) == expected
    tomllib.loads(expected)


# (Poetry constraint, the new one or None)
POETRY: List[Tuple[str, Optional[str]]] = [
    ("^0.3.16", ">=0.4.1"),
    ("^0.3", ">=0.4.1"),
    ("^0", ">=0.4.1,<1"),  # >=0.0.0,<1.0.0: its upper bound admits newest and stays
    ("^0.4.1", ">=0.4.1"),
    ("^0.4.5", ">=0.4.5"),
    ("^0.12", None),
    ("^0.12.0", None),
    ("~0.3", ">=0.4.1"),
    ("~0.3.16", ">=0.4.1"),
    ("~0.12", None),
    ("~0", ">=0.4.1,<1"),
    ("0.3.16", ">=0.4.1"),
    ("0.3.*", ">=0.4.1"),
    ("==0.3.16", ">=0.4.1"),
    ("0.12.0", None),
    ("*", None),
    (">=0.3.4,<0.4", ">=0.4.1"),
    (">= 0.3.4, < 0.13", ">=0.4.1, < 0.13"),
    (">=0.4.1", None),
    ("~=0.3.0", ">=0.4.1"),
    ("^0.3 || ^0.4", None),  # alternatives: not handled
    ("^0.3||^0.4", None),
]


@pytest.mark.parametrize("constraint, expected", POETRY)
def test_poetry_constraint(constraint, expected):
    new = constraint if expected is None else expected
    for template in (
        '[tool.poetry.dependencies]\njax = "{}"\n',
        "[tool.poetry.dependencies]\njax = '{}'\n",
        '[tool.poetry.dependencies]\njax = {{ version = "{}", extras = ["cpu"] }}\n',
        '[tool.poetry.group.dev.dependencies]\n"jax" = {{version="{}"}}\n',
        '[tool.poetry.dependencies.jax]\nversion = "{}"  # c\n',
    ):
        text = template.format(constraint)
        result = _new_text("pyproject.toml", text)
        assert result == template.format(new)
        tomllib.loads(result)


@pytest.mark.parametrize(
    "text",
    [
        '[tool.poetry.dependencies]\njax = { git = "https://github.com/google/jax" }\n',
        '[tool.poetry.dependencies]\njax = "\\u005e0.3.16"\n',  # escapes: left alone
        '[tool.poetry.dependencies]\njaxopt = "^0.5"\nflax = "0.5.0"\n',
        '[tool.other]\njax = "^0.3.16"\nversion = "0.3.16"\n',
        '[project]\nname = "jax"\nversion = "0.3.16"\n',
        '[project]\ndependencies = ["jax>=0.4.1", "jaxlib>=0.5"]\n',
        '[project]\ndependencies = ["jax==0.3.16"\n',  # not TOML: left alone
        "",
    ],
)
def test_pyproject_left_alone(text):
    assert raise_requirement("pyproject.toml", text, FLOOR, NEWEST) is None


def test_pyproject_toml_syntax_around_the_strings():
    text = (
        "# top comment\n"
        "title = 'x' # c\n"
        "date = 1979-05-27 07:32:00Z\n"
        "nums = [1, 2.5, -3, +4, 1e3, inf, true]\n"
        "ml = '''\nline [ with ] brackets \"jax==0.3.16\"\n'''\n"
        'mb = """a \\""" b""""\n'
        "[ project ]\n"
        "dependencies = [ # comment\n"
        "  # another\n"
        "  'jax==0.3.16', # why\n"
        "\n"
        "]\n"
        "[[tool.other.array]]\n"
        "a.b.c = { d = ['jaxlib==0.3.15'], e = {} }\n"
    )
    expected = text.replace("  'jax==0.3.16'", "  'jax>=0.4.1'").replace(
        "['jaxlib==0.3.15']", "['jaxlib>=0.4.1']"
    )
    assert tomllib.loads(text)
    assert _new_text("pyproject.toml", text) == expected
    assert tomllib.loads(expected)["project"]["dependencies"] == ["jax>=0.4.1"]


# --- idempotence and byte identity over all the tables --------------------------------------


@pytest.mark.parametrize(
    "path, text",
    [
        ("requirements.txt", REQUIREMENTS),
        ("setup.py", SETUP_PY),
        ("setup.cfg", SETUP_CFG),
        ("pyproject.toml", PYPROJECT),
    ],
)
def test_only_the_specifiers_change(path, text):
    new_text = _new_text(path, text)
    old_lines, new_lines = text.splitlines(keepends=True), new_text.splitlines(keepends=True)
    assert len(old_lines) == len(new_lines)
    for old, new in zip(old_lines, new_lines):
        if old != new:  # the line up to the specifier and after it are the same
            prefix = len(old) - len(old.lstrip())
            assert new[:prefix] == old[:prefix]
            assert old.endswith(new[-1])
            assert ">=0.4.1" in new and ">=0.4.1" not in old
    if path == "pyproject.toml":
        tomllib.loads(new_text)
    if path == "setup.py":
        ast.parse(new_text)


@pytest.mark.parametrize(
    "floor, newest", [("0.4.1", "0.12.0"), ("0.4.13", "0.4.30"), ("0.4", "0.5"), ("0.6", "0.6")]
)
@pytest.mark.parametrize(
    "path, text",
    [
        ("requirements.txt", REQUIREMENTS),
        ("setup.py", SETUP_PY),
        ("setup.cfg", SETUP_CFG),
        ("pyproject.toml", PYPROJECT),
    ],
)
def test_idempotent_for_other_targets(path, text, floor, newest):
    new_text = _new_text(path, text, floor, newest)  # _raise checks the second call
    assert raise_requirement(path, new_text, floor, newest) is None


# --- every pair of clauses, checked against packaging's reading of the specifiers -----------

_OPERATORS = (">=", ">", "<=", "<", "==", "!=", "~=")
_VERSIONS = ("0.3", "0.3.16", "0.4", "0.4.1", "0.4.5", "0.5", "0.12", "0.12.0", "0.13")
_CLAUSES = [op + version for op in _OPERATORS for version in _VERSIONS] + ["==0.4.*", "!=0.4.*"]
_PROBES = ("0.3.16", "0.4.0", "0.4.1", "0.4.5", "0.5.0", "0.11.9", "0.12.0", "0.12.1", "0.13.0")


def _check_against_packaging(spec: str) -> None:
    specifiers = pytest.importorskip("packaging.specifiers")
    version = pytest.importorskip("packaging.version").Version
    floor, newest = version(FLOOR), version(NEWEST)
    old = specifiers.SpecifierSet(spec)
    lowers = [
        version(clause.version.replace(".*", ""))
        for clause in old
        if clause.operator in (">=", ">", "==", "~=")
    ]
    lowest = max(lowers) if lowers else None
    result = _raise("requirements.txt", f"jax{spec}\n")
    in_range = [p for p in _PROBES if floor <= version(p) <= newest]
    above = [p for p in in_range if lowest is None or version(p) > lowest]
    if result is None:
        assert lowest is None or lowest >= floor, spec
        assert all(p in old for p in above), spec
        return
    new = specifiers.SpecifierSet(result[0][len("jax") :].strip())
    assert all(p not in new for p in _PROBES if version(p) < floor), (spec, new)
    assert lowest is not None and lowest >= newest or NEWEST in new, (spec, new)
    assert all(p in new for p in above), (spec, new)
    for p in _PROBES:  # never lowered
        if p not in old and lowest is not None and version(p) < lowest:
            assert p not in new, (spec, new, p)


@pytest.mark.parametrize("first", _CLAUSES)
def test_clause_pairs_against_packaging(first):
    _check_against_packaging(first)
    for second in _CLAUSES:
        _check_against_packaging(f"{first},{second}")
