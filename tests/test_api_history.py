"""The JAX API history: the shipped data, the generator that makes it, and the facts it states
checked against real JAX releases."""

from __future__ import annotations

import gzip
import importlib.util
import io
import json
import random
import subprocess
import tarfile
import textwrap
from pathlib import Path

import pytest

from jaxmigrate.migrator.version import LATEST_KNOWN_JAX, parse_version
from jaxmigrate.rules._api_history import DATA, FORMAT, ApiHistory, history, release_key

REPO = Path(__file__).resolve().parent.parent


def _generator():
    spec = importlib.util.spec_from_file_location(
        "build_api_history", REPO / "scripts" / "build_api_history.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


# -- the shipped file -------------------------------------------------------------------------
def test_shipped_history_has_the_generators_format_and_covers_every_release():
    data = json.loads(gzip.decompress(DATA.read_bytes()))
    assert data["format"] == FORMAT == _generator().FORMAT
    releases = data["releases"]
    assert releases == sorted(releases, key=release_key) and len(set(releases)) == len(releases)
    assert releases[0] == "0.2.0"
    assert release_key(releases[-1]) >= parse_version(LATEST_KNOWN_JAX), "older than the rules"
    # every release on PyPI, the yanked ones (0.4.0, 0.4.32) aside
    for version in ("0.2.28", "0.3.25", "0.4.1", "0.4.13", "0.4.30", "0.4.38", "0.6.2", "0.10.2"):
        assert version in releases
    assert DATA.stat().st_size < 300_000, "the history must stay small"
    last = len(releases) - 1
    for module, members in data["modules"].items():
        for name, entry in members.items():
            flat = entry[0]
            # a flag JAX only ever defines by name is no attribute of jax.config anywhere
            never = module == "jax.config" and name in data["flags"]
            assert (flat or never) and len(flat) % 2 == 0, (module, name)
            assert all(0 <= a <= b <= last for a, b in zip(flat[::2], flat[1::2])), (module, name)
            assert flat == sorted(flat), (module, name)
            assert not name.startswith("_") and not any(
                p.startswith("_") for p in module.split(".")
            ), (module, name)


def test_history_loads_once_and_answers_for_a_target_range():
    h = history()
    assert h is history()
    removed = h.absence("jax.random.KeyArray", (0, 4, 13))
    assert (
        removed is not None
        and removed.removed_in == "0.4.24"
        and removed.deprecated_since == "0.4.16"
    )
    assert "jax.dtypes.issubdtype" in removed.message  # JAX's own words, with the replacement
    added = h.absence("jax.tree", (0, 4, 13))
    assert added is not None and added.added_in == "0.4.25" and added.removed_in is None
    assert h.absence("jax.tree", (0, 4, 25)) is None
    assert h.absence("jax.jit", (0, 2, 0)) is None
    assert h.absence("jax.no_such_name", (0, 4, 13)) is None  # unknown: not judged
    first = h.first_missing((0, 11, 0))
    assert "jax.experimental.host_callback" in first
    assert "jax.experimental.host_callback.id_tap" not in first  # its module stands for it
    assert "jax.experimental.host_callback" in h.missing_modules((0, 11, 0))


def test_absences_inside_and_outside_the_range():
    h = ApiHistory(
        {
            "format": FORMAT,
            "releases": ["0.1.0", "0.2.0", "0.3.0", "0.4.0"],
            "messages": ["gone; use b"],
            "modules": {"jax": {"a": [[0, 1], 1, 0], "b": [[2, 3]], "c": [[0, 0, 2, 3]]}},
        }
    )
    gone = h.absence("jax.a", (0, 1, 0))
    assert (gone.removed_in, gone.added_in, gone.deprecated_since, gone.message) == (
        "0.3.0",
        None,
        "0.2.0",
        "gone; use b",
    )
    assert h.absence("jax.a", (0, 3, 0)).never
    assert h.absence("jax.b", (0, 1, 0)).added_in == "0.3.0"
    assert h.absence("jax.b", (0, 3, 0)) is None
    gap = h.absence("jax.c", (0, 1, 0))  # a gap inside the range
    assert (gap.removed_in, gap.back_in, gap.added_in) == ("0.2.0", "0.3.0", None)
    assert gap.describe("0.1.0") == "jax.c was removed in JAX 0.2.0 and is back only from 0.3.0"
    back = h.absence("jax.c", (0, 2, 0))  # gone where the range starts, back within it
    assert (back.removed_in, back.back_in, back.added_in) == ("0.2.0", "0.3.0", None)
    away = h.absence("jax.c", (0, 2, 0), (0, 2, 0))  # gone in the whole range, back after it
    assert (away.never, away.removed_in, away.back_in) == (True, "0.2.0", "0.3.0")
    assert h.absence("jax.c", (0, 3, 0)) is None
    assert h.missing_names((0, 3, 0)) == {"jax.a"}
    assert h.missing_names((0, 1, 0), (0, 2, 0)) == {"jax.b", "jax.c"}  # c: its gap
    assert h.names_absent_in((0, 3, 0)) == {"a"}
    assert h.names_absent_in((0, 2, 0)) == {"b", "c"}


def _runs(flat):
    return [(flat[i], flat[i + 1]) for i in range(0, len(flat), 2)]


def test_shipped_names_by_release_match_every_run_read_in_turn():
    """The range scans take most names' one run of releases at once: the same names as reading
    every run of every name, for every seventh release of the shipped history and a range
    from it (names with several runs and private names are among them)."""
    h = history()
    public = [
        (parent, name, entry[0]) for parent, m in h._modules.items() for name, entry in m.items()
    ]
    private = [("", name, flat) for m in h._private.values() for name, flat in m.items()]
    assert private and any(len(flat) > 2 for _parent, _name, flat in public)
    for index in range(0, len(h.keys), 7):
        upper = h.keys[min(index + 5, len(h.keys) - 1)]
        low, high = h._bounds(h.keys[index], upper)
        missing = {
            f"{parent}.{name}"
            for parent, name, flat in public
            if not any(first <= low and last >= high for first, last in _runs(flat))
        }
        assert h.missing_names(h.keys[index], upper) == missing
        first = {q for q in missing if q.rpartition(".")[0] not in missing}
        assert h.first_missing(h.keys[index], upper) == first  # (read by groups of names)
        absent = {
            name
            for _parent, name, flat in public + private
            if not any(first <= index <= last for first, last in _runs(flat))
        }
        assert h.names_absent_in(h.keys[index]) == absent


# -- the generator, on sources made here ------------------------------------------------------
RELEASE_1 = {
    "jax/__init__.py": """
        from jax._src.api import jit as jit, grad
        from jax import numpy as numpy
        from jax._src.core import *
        import typing
        _deprecations = {
            "old_fn": ("jax.old_fn is deprecated; use jax.new_fn.", _old),
        }
        if typing.TYPE_CHECKING:
            from jax._src.api import old_fn as old_fn
        else:
            from jax._src.deprecations import deprecation_getattr as _deprecation_getattr
            __getattr__ = _deprecation_getattr(__name__, _deprecations)
        helper = 1
        del helper
        for loop_variable in range(3):
            pass
    """,
    "jax/_src/__init__.py": "",
    "jax/_src/core.py": """
        __all__ = ["Tracer", "_private"]
        class Tracer: ...
        class NotExported: ...
    """,
    "jax/numpy/__init__.py": "from jax._src.numpy import DeviceArray as DeviceArray\n",
    "jax/experimental/__init__.py": "",
    "jax/experimental/host_callback.py": "def id_tap(f, x): ...\n",
    "jax/experimental/dynamic.py": "def __getattr__(name): ...\nknown = 1\n",
}
RELEASE_2 = {
    "jax/__init__.py": """
        from jax._src.api import jit as jit, grad
        from jax import numpy as numpy
        _deprecations = {
            "old_fn": ("jax.old_fn was removed; use jax.new_fn.", None),
        }
        from jax._src.deprecations import deprecation_getattr as _deprecation_getattr
        __getattr__ = _deprecation_getattr(__name__, _deprecations)
    """,
    "jax/_src/__init__.py": "",
    "jax/numpy/__init__.py": "",
    "jax/experimental/__init__.py": "",
    "jax/experimental/dynamic.py": "def __getattr__(name): ...\n",
}


def _sdist(directory: Path, version: str, files: dict) -> Path:
    path = directory / f"jax-{version}.tar.gz"
    with tarfile.open(path, "w:gz") as archive:
        for name, text in files.items():
            data = textwrap.dedent(text).encode()
            info = tarfile.TarInfo(f"jax-{version}/{name}")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


def test_generator_reads_names_reexports_deprecations_and_submodules(tmp_path):
    generator = _generator()
    sdists = {
        "0.2.0": _sdist(tmp_path, "0.2.0", RELEASE_1),
        "0.2.1": _sdist(tmp_path, "0.2.1", RELEASE_2),
    }
    h = ApiHistory(generator.build(sdists, jobs=1))
    assert h.releases == ("0.2.0", "0.2.1")
    assert h.absence("jax.jit", (0, 2, 0)) is None and h.absence("jax.grad", (0, 2, 0)) is None
    star = h.absence("jax.Tracer", (0, 2, 0))  # ``from jax._src.core import *`` follows __all__
    assert star is not None and star.removed_in == "0.2.1"
    assert h.lookup("jax.NotExported") is None and h.lookup("jax._private") is None
    old = h.absence("jax.old_fn", (0, 2, 0))  # TYPE_CHECKING-only, but served by the table
    assert old.removed_in == "0.2.1" and old.deprecated_since == "0.2.0"
    assert old.message == "jax.old_fn was removed; use jax.new_fn."  # the latest words
    assert h.lookup("jax.helper") is None  # deleted
    assert h.lookup("jax.loop_variable") is None  # a loop variable is not API
    assert h.lookup("jax.typing") is None  # a plain import of another library
    module = h.lookup("jax.experimental.host_callback")
    assert module.is_module and h.absence(module.qualname, (0, 2, 0)).removed_in == "0.2.1"
    assert h.absence("jax.experimental.host_callback.id_tap", (0, 2, 0)).removed_in == "0.2.1"
    assert h.absence("jax.numpy.DeviceArray", (0, 2, 0)).removed_in == "0.2.1"
    # an open module (its own __getattr__) keeps every name it ever had
    assert h.absence("jax.experimental.dynamic.known", (0, 2, 0)) is None
    assert not any(m.startswith("jax._src") for m in h._modules)


def test_config_members_set_on_the_class_at_module_level_count(tmp_path):
    """jax 0.2.11..0.4.24 gave ``Config`` its ``x64_enabled`` (and 0.2.11 its
    ``jax_enable_x64``) by assigning to the class after its body, not by ``setattr``: code
    reading ``jax.config.x64_enabled`` ran there (jaxopt 0.5.5's test_util.py), so the
    history must not date the name from 0.4.25."""
    config = """
        class Config:
            def update(self, name, value): ...

        config = Config()
        Config.jax_enable_x64 = property(lambda self: False)
        Config.x64_enabled = Config.jax_enable_x64
    """
    release = {"jax/__init__.py": "from jax.config import config\n", "jax/config.py": config}
    h = ApiHistory(_generator().build({"0.2.11": _sdist(tmp_path, "0.2.11", release)}, jobs=1))
    assert h.lookup("jax.config.x64_enabled") is not None
    assert h.lookup("jax.config.jax_enable_x64") is not None
    assert history().absence("jax.config.x64_enabled", parse_version("0.2.18")) is None


def test_a_module_getattr_that_serves_a_listed_few_leaves_the_rest_gone(tmp_path):
    """jax.test_util from 0.3.15: its ``__getattr__`` served a listed few of its old names,
    with a warning, and raised AttributeError for the rest (``JaxTestCase`` was gone).  The
    module is not open: the listed names stay, deprecated with the warning's words (the
    served name in place of the f-string's), and the others are gone.  A ``__getattr__``
    that may return for any name, or falls off its end, leaves the module open."""
    old = {
        "jax/__init__.py": "",
        "jax/test_util.py": "def cases(x): ...\nclass JaxTestCase: ...\n",
        "jax/experimental/__init__.py": "",
        "jax/experimental/loose.py": "known = 1\n",
    }
    new = {
        "jax/__init__.py": "",
        "jax/test_util.py": """
            def __getattr__(attr):
                try:
                    from jax._src import test_util
                except ImportError:
                    raise AttributeError(attr)
                if attr in ['cases', 'tolerance']:
                    import warnings
                    warnings.warn(f"jax.test_util.{attr} is deprecated.", FutureWarning)
                    return getattr(test_util, attr)
                else:
                    raise AttributeError(f"module has no attribute {attr}")
        """,
        "jax/experimental/__init__.py": "",
        "jax/experimental/loose.py": """
            def __getattr__(name):
                if name in ('other',):
                    return 2
        """,
    }
    sdists = {"0.2.0": _sdist(tmp_path, "0.2.0", old), "0.2.1": _sdist(tmp_path, "0.2.1", new)}
    h = ApiHistory(_generator().build(sdists, jobs=1))
    assert h.absence("jax.test_util.JaxTestCase", (0, 2, 0)).removed_in == "0.2.1"
    cases = h.lookup("jax.test_util.cases")
    assert cases is not None and h.absence(cases.qualname, (0, 2, 0)) is None
    assert h.releases[cases.deprecated_since] == "0.2.1"
    assert cases.message == "jax.test_util.cases is deprecated."
    assert h.absence("jax.test_util.tolerance", (0, 2, 1)) is None  # (served only)
    assert h.absence("jax.experimental.loose.known", (0, 2, 0)) is None  # (open: falls off)


# -- the facts, against real releases ---------------------------------------------------------
# Names the legacy code of 2021-2023 used most (from the API-history issue), always checked.
CURATED = (
    "jax.interpreters.batching.BatchTracer", "jax.random.KeyArray", "jax.core.Shape",
    "jax.core.Primitive", "jax.core.ClosedJaxpr", "jax.core.Jaxpr", "jax.core.Var",
    "jax.core.Literal", "jax.core.get_aval", "jax.core.raise_to_shaped", "jax.linear_util",
    "jax.ShapedArray", "jax.util.safe_map", "jax.util.safe_zip", "jax.util.unzip2",
    "jax.lib.xla_bridge", "jax.experimental.host_callback", "jax.lax.infeed",
    "jax.ad_checkpoint.checkpoint", "jax.interpreters.xla.xla_call_p", "jax.prng.seed_with_impl",
    "jax.tree_map", "jax.numpy.DeviceArray", "jax.Array", "jax.tree", "jax.extend.core.Primitive",
)  # fmt: skip
_PROBE = """
import importlib, json, sys, warnings
warnings.simplefilter("ignore")

def present(qualname):
    parts = qualname.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            value = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for part in parts[cut:]:
            try:
                value = getattr(value, part)
            except AttributeError:
                return False
        return True
    return False

def present_config(qualname):
    # ``jax.config`` is both a module and the attribute ``jax.config`` (the Config object,
    # whose members include the flags): the history's ``jax.config`` holds what either has.
    name = qualname.split(".")[2]
    return present(qualname) or hasattr(jax.config, name)

import jax
print(json.dumps({"version": jax.__version__, "present": {
    q: present_config(q) if q.startswith("jax.config.") else present(q)
    for q in json.loads(sys.argv[1])
}}))
"""


def _sample(count: int = 30, seed: int = 20261124):
    """30 names drawn at random (a fixed seed, so a failure reproduces) among those of modules
    that import on their own, plus the curated ones."""
    h = history()
    names = sorted(
        f"{module}.{name}"
        for module, members in h._modules.items()
        if not any(
            part in module
            for part in (
                "jax2tf",
                "tools",
                "mosaic",
                "pallas",
                "triton",
                "gpu",
                "tpu",
                "cuda",
                "rocm",
                "colocated",
                "serialize_executable",
                "profiler",
                "compilation_cache",
                "array_serialization",
                "collect_profile",
                "cloud_tpu",
                "mlir",
            )
        )
        for name in members
    )
    return sorted(set(random.Random(seed).sample(names, count)) | set(CURATED))


def _check_against(python: str) -> None:
    names = _sample()
    out = subprocess.run(
        [python, "-c", _PROBE, json.dumps(names)], capture_output=True, text=True, check=True
    )
    report = json.loads(out.stdout.strip().splitlines()[-1])
    h = history()
    index = h.releases.index(report["version"])
    wrong = []
    for qualname, real in report["present"].items():
        known = h.lookup(qualname)
        said = known is not None and any(a <= index <= b for a, b in known.present)
        parent = h.lookup(qualname.rpartition(".")[0])
        if said and not real and parent is not None and _is_class(h, parent.qualname):
            # A member of a class the generator could not fully read in this release (open:
            # an outside base, a metaclass, ...) counts as present there, so that it is never
            # reported; what is checked is that no member is said to be absent wrongly.
            continue
        if said != real:
            wrong.append(
                f"{qualname}: history says {'present' if said else 'absent'} in {report['version']}"
            )
    assert not wrong, "\n".join(wrong)


def _is_class(h, qualname: str) -> bool:
    """A name with members that is no module: a class (``jax.config`` aside, an object)."""
    known = h.lookup(qualname)
    return (
        known is not None
        and not known.is_module
        and qualname != "jax.config"
        and qualname in h._modules
    )


def test_history_matches_the_installed_jax():
    import sys

    _check_against(sys.executable)


@pytest.mark.legacy
@pytest.mark.parametrize("version", ["0.4.13", "0.4.30", "0.6.2"])
def test_history_matches_old_releases(version):
    from tests.runtime.test_runtime import legacy_python

    _check_against(legacy_python(version))


def test_range_indices_agree_with_a_scan_of_the_releases():
    """``first_index``/``last_index``/``newest_at_most`` bisect the ascending release keys: the
    same answer as reading the releases in order, on every release, between and beyond them."""
    h = history()
    probes = {tuple(key) for key in h.keys}
    for key in list(probes):
        probes |= {key[:-1] + (key[-1] + 1,), key[:-1] + (max(key[-1] - 1, 0),), key + (0,)}
    probes |= {(0,), (0, 1), (99,), (0, 4, 99)}
    for probe in sorted(probes):
        at_or_after = [i for i, key in enumerate(h.keys) if key >= probe]
        at_or_below = [i for i, key in enumerate(h.keys) if key <= probe]
        assert h.first_index(probe) == (at_or_after[0] if at_or_after else len(h.keys) - 1)
        assert h.last_index(probe) == (at_or_below[-1] if at_or_below else 0)
        expected = h.releases[at_or_below[-1]] if at_or_below else None
        assert h.newest_at_most(probe) == expected
    assert h.last_index(None) == len(h.keys) - 1
