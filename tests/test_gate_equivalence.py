"""The gates only over-approximate: a run with every gate switched off (``Settings(gates=False)``:
no text prefilter, no text gate, no ``ast`` gate, every rule's ``visit_module`` in every round)
gives the same output, fixes, findings and errors as the gated run.

Checked on every fixture (inputs, outputs and look-alikes), on the runtime test programs, on
cases that once escaped a gate, and on generated programs (hypothesmith) with legacy lines
spliced in.  ``bench/gates.py`` runs the same comparison over the full bench corpora.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Iterator, List, Optional, Tuple

import hypothesmith
import pytest
from hypothesis import given, strategies as st

from jaxmigrate.migrator import MigrationError, Settings, migrate_source
from tests.fixture_support import FIXTURES, fixture_settings, property_profile

PROGRAMS = Path(__file__).resolve().parent / "programs" / "cases"
ALL_RULES = Settings(unsafe_fixes=True)


def outcome(text: str, options: Settings) -> Tuple[object, ...]:
    """Everything a run reports, comparable across runs (an error is an outcome too)."""
    try:
        result = migrate_source(text, options)
    except MigrationError as error:
        return ("error", type(error).__name__, error.message, error.line)
    return (
        result.output,
        sorted(map(repr, result.fixes)),
        sorted(map(repr, result.findings)),
        sorted(map(repr, result.errors)),
    )


def difference(text: str, options: Settings) -> Optional[str]:
    """None when the gated and the ungated run agree; else what differs."""
    gated = outcome(text, options)
    ungated = outcome(text, dataclasses.replace(options, gates=False))
    if gated == ungated:
        return None
    if gated[0] == "error" or ungated[0] == "error":
        return f"gated: {gated[:3]!r}, ungated: {ungated[:3]!r}"
    names = ("output", "fixes", "findings", "errors")
    parts = [
        f"{name}: gated {g!r} / ungated {u!r}"
        for name, g, u in zip(names, gated, ungated)
        if g != u
    ]
    return "; ".join(part[:600] for part in parts)


def _fixture_files() -> Iterator[Tuple[str, str, Settings]]:
    """Every input and look-alike, and one expected output in three (modern code: the
    time budget; ``bench/gates.py`` covers modern code at scale)."""
    outputs = 0
    for path in sorted(FIXTURES.glob("*/*.py")):
        if path.name.endswith(".run.py"):
            continue
        if path.name.endswith(".after.py"):
            outputs += 1
            if outputs % 3:
                continue
        text = path.read_text(encoding="utf-8")
        options = fixture_settings(text)
        yield str(path.relative_to(FIXTURES)), text, options


def _check(inputs: Iterator[Tuple[str, str, Settings]]) -> Tuple[int, List[str]]:
    count, offenders = 0, []
    for label, text, options in inputs:
        count += 1
        found = difference(text, options)
        if found is not None:
            offenders.append(f"{label}: {found}")
    return count, offenders


def test_gates_change_nothing_on_the_fixtures():
    # inputs, expected outputs (modern code) and look-alikes, each with its own settings
    count, offenders = _check(_fixture_files())
    assert count >= 600, "the fixtures went missing"
    assert not offenders, "gated and ungated runs differ:\n" + "\n".join(offenders)


def test_gates_change_nothing_on_the_runtime_programs():
    files = sorted(PROGRAMS.glob("*.py"))
    assert len(files) >= 20
    count, offenders = _check(
        (path.name, path.read_text(encoding="utf-8"), ALL_RULES) for path in files
    )
    assert not offenders, "gated and ungated runs differ:\n" + "\n".join(offenders)


ESCAPED = [
    # a comment ending in "." before the legacy line (the text gate misread it)
    "import jax\n# x.\nx = jax.tree_leaves(y)\n",
    # string annotations are reported by word, whatever the file imports
    'import jax.numpy as jnp\nx: "jnp.DeviceArray" = f()\n',
    'import jax\ndef f(x: "jax.numpy.DeviceArray")'
    ' -> "jax.interpreters.xla.DeviceArray":\n    return x\n',
    'from typing import List\ndef f(x: "List[DeviceArray]"):\n    pass\n',
    'def f(x: """\nShardedDeviceArray""") -> None:\n    pass\n',
    'class A:\n    x: "Optional[GlobalDeviceArray]" = None\n',
    "async def f() -> b'DeviceArray':\n    pass\n",
]


@pytest.mark.parametrize("text", ESCAPED)
def test_gates_change_nothing_on_cases_that_escaped_them(text):
    assert outcome(text, ALL_RULES)[2] or outcome(text, ALL_RULES)[0] != text, (
        "the case must need something"
    )
    assert difference(text, ALL_RULES) is None


LEGACY_LINES = [
    "import jax\n",
    "import jax.numpy as jnp\n",
    "from jax.experimental import pjit\n",
    "from jax.experimental.maps import xmap, Mesh\n",
    "x = jax.tree_map(f, y)\n",
    "leaves = jax.tree_leaves(y)  # x.\n",
    "def g(a: 'jnp.DeviceArray') -> 'DeviceArray':\n    return a.device_buffer\n",
    "y = jnp.DeviceArray\n",
    "jax.config.update('jax_array', True)\n",
    "with Mesh(devices, ('x',)):\n    pass\n",
    "z = pjit.pjit(f, in_axis_resources=None, out_axis_resources=None)\n",
    "isinstance(a, jax.xla.DeviceArray)\n",
    "b = a.to_py()\n",
]
# half the other property tests' examples: each costs two runs, the ungated one with LibCST
EXAMPLES = max(1, int(os.environ.get("JAXMIGRATE_PROPERTY_EXAMPLES", "40")) // 2)
PROFILE = property_profile(EXAMPLES)


@PROFILE
@given(hypothesmith.from_node(), st.lists(st.sampled_from(LEGACY_LINES), max_size=4), st.booleans())
def test_gates_change_nothing_on_generated_programs(program, lines, before):
    legacy = "".join(lines)
    text = legacy + program if before else program + "\n" + legacy
    assert difference(text, ALL_RULES) is None


# -- findings from ``ast`` alone (migrator.astfirst): the same as LibCST's -----------------------
def ast_first_difference(text: str, options: Settings) -> Optional[str]:
    """None when the ast-first run and the run that always parses with LibCST agree on the
    output and on every finding (code, message, line, column, end line, safety)."""
    first = outcome(text, options)
    libcst = outcome(text, dataclasses.replace(options, ast_first=False))
    return None if first == libcst else f"ast-first {first!r}\n  LibCST {libcst!r}"


class _Answered:
    """Counts the files :func:`migrator.astfirst.findings_on_ast` answered (not vacuous)."""

    def __init__(self, monkeypatch) -> None:  # noqa: ANN001
        from jaxmigrate.migrator import engine

        self.count, real = 0, engine.findings_on_ast

        def counting(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
            found = real(*args, **kwargs)
            self.count += found is not None
            return found

        monkeypatch.setattr(engine, "findings_on_ast", counting)


def test_ast_first_reports_what_libcst_does_on_the_fixtures_and_programs(monkeypatch):
    answered = _Answered(monkeypatch)
    inputs = list(_fixture_files()) + [
        (path.name, path.read_text(encoding="utf-8"), ALL_RULES)
        for path in sorted(PROGRAMS.glob("*.py"))
    ]
    offenders = [
        f"{label}: {found}"
        for label, text, options in inputs
        for found in [ast_first_difference(text, options)]
        if found is not None
    ]
    assert not offenders, "ast-first and LibCST runs differ:\n" + "\n".join(offenders)
    assert answered.count >= 5, "no file was answered from ast: the check is vacuous"


UNDERSCORE_IMPORT = (
    "from jax._src import core\ntry:\n    import jax.experimental.shard_map as _\n"
    "except ImportError:\n    pass\ndef f(_, x):\n    a, _ = core.g(x)\n    return a, _\n"
)
PRIVATE_CASES = [
    "from jax._src import core\nx = core.Tracer\n",
    "import jax\nx = jax._src.core.Tracer\ny = jax._src.api.jit\n",
    "import jax\nimport jax._src.dispatch as d  # jaxmigrate: ignore[JAX902]\nx = jax._src.x\n",
    "import jax\nx = jax._src.core  # jaxmigrate: ignore\n",
    "import jax\ny = (jax.\n  _src.core.Tracer)\nz = jax.lax._foo._bar(1)\n",
    "import jax\ns = 'é' ; t = jax._src.util.safe_map\nu = jax.lax._x\n",
    "try:\n    from jax._src import api\nexcept ImportError:\n    api = None\n",
    "import jax\nif hasattr(jax, 'x'):\n    from jax._src import api\nz = jax._src.lib\n",
    "import jax\nv = hasattr(jax, '_src') and jax._src.core\nw = jax.lax._p\n",
    "from jax import _src\nfrom jax import _src as s\nx = _src.core.T\ny = s.lib.X\n",
    "import jax._src as js\ndef f():\n    return js.core.T\n",
    "def f():\n    import jax._src as js\n    return js.core.T\nx = js\n",
    "import jax\ndef f(jax):\n    return jax._src.core\ny = jax._src.lib\n",
    "import jax\nfrom jax._src.deprecations import getattr as _g\n__getattr__ = _g()\ndel _g\n",
    "import jax\nx = f'{jax._src.core.T}'\ny = f'''\n{jax._src.api}'''\n",
    "from jax.interpreters.xla import _device_put\nimport jaxlib._jax as jj\n",
    "from jax._src.numpy.lax_numpy import isin\nimport jax\nx = jax.tree_map(f, y)\n",
    "from jax._src.numpy.lax_numpy import isin\nx = 1\n",
    "import jax\ntry:\n    pass\nexcept ValueError :\n    pass\nx = jax._src.core\n",
    "import jax\nclass A:\n    jax = None\n    x = jax._src\n",
    "import jax\nx = [jax._src.core for jax in y]\n",
    # private-looking chains in f-strings whose heads no import binds (answered on ast)
    "from jax._src import core\nx = f'{self._cache} {core.Tracer}'\ny = f'''\n{obj._x}'''\n",
    "import jax\ndef f(jax):\n    return f'{jax._src.x}'\n",
    # a private attribute beside another rule's finding: on other lines (answered on
    # ast), on the same line (left to LibCST: which rule spoke first decides)
    "import jax\nstep = jax.pmap(f)\nx = jax.lax._foo(1)\n",
    "import jax\nx = jax.pmap(jax.lax._foo)\n",
    # a head bound in a function only, to something inside jax._src or outside JAX
    "import jax\ndef f(x):\n    from jax._src.lax import lax\n    return lax._zero(x)\n"
    "def g(x):\n    return lax._one(x)\ny = jax._src.core\n",
    "import jax\ndef f(s):\n    import re\n    return re._compile(s)\nz = re._x\nw = jax.lax._p\n",
    "import jax\ndef f(x):\n    import jax.lax as lax\n    return lax._zero(x)\n"
    "def g(lax):\n    return lax._one\n",
    "import jax\nfrom jax._src import core\nx = jax.lax._foo(core)\n",
    # a head imported from a public module and bound otherwise in a function (JAX's
    # checkify.py: ``import jax.experimental.shard_map as _`` beside ``a, _ = f()``)
    UNDERSCORE_IMPORT,
    "import jax.lax as lax\nfrom jax._src import core\ndef f():\n    lax = g()\n"
    "    return lax._p\ny = lax._q\n",
    "from jax import numpy as np\nfrom jax._src import core\ndef f():\n    np = 1\n"
    "    return np.zeros\nz = np.ones\n",
]


@pytest.mark.parametrize("text", PRIVATE_CASES)
@pytest.mark.parametrize(
    "options",
    [ALL_RULES, Settings(), Settings(target_version="0.4.13", target_upper="0.4.20")],
    ids=["unsafe", "default", "capped"],
)
def test_ast_first_reports_what_libcst_does_on_private_imports(text, options):
    assert ast_first_difference(text, options) is None


def test_a_head_no_import_makes_private_is_answered_from_ast(monkeypatch):
    """Wherever the scopes resolve ``_``, through its import or as a local, it names no
    private JAX module: the file is answered without LibCST."""
    answered = _Answered(monkeypatch)
    result = migrate_source(UNDERSCORE_IMPORT, Settings())
    assert answered.count == 1
    assert [d.code for d in result.findings] == ["JAX902"]


PRIVATE_LINES = [
    "from jax._src import core\n",
    "import jax._src.lib as lib\n",
    "x = jax._src.core.Tracer  # jaxmigrate: ignore[JAX9]\n",
    "y = jax.lax._private(z)\n",
    "try:\n    import jax._src.api\nexcept ImportError:\n    pass\n",
]


@PROFILE
@given(hypothesmith.from_node(), st.lists(st.sampled_from(PRIVATE_LINES), max_size=3))
def test_ast_first_reports_what_libcst_does_on_generated_programs(program, lines):
    text = "import jax\n" + "".join(lines) + program
    assert ast_first_difference(text, Settings()) is None


# JAX901 (rules/_missing_api_ast.py): names, flag strings and imports the API history says the
# target range lacks; removed modules once per file.  ``jax.api``, ``jax.experimental.optix``
# and the flags below are JAX901's alone (no other rule is a candidate for them).
MISSING_CASES = [
    # a removed module used several times: one finding, at the first use, with the count
    "from jax.experimental import optix\ndef f():\n    return optix.chain(optix.sgd(1))\n"
    "x = optix.adam(2)\n",
    "import jax\nimport jax.api\nimport jax.api as japi, jax.lax_linalg\njax.api.jit(f)\n"
    "japi.grad(g); jax.api.vmap(h)\ndel jax.api.x\njax.api.y = 1\n",
    "import jax\nfrom jax.experimental import optix, vectorize\n"
    "from jax.experimental.optix import adam, sgd\nimport jax.experimental.optix\n"
    "optix.x; vectorize.y\n",
    # suppression comments: the code's own, any code's (the backstop leaves such a line alone)
    "import jax\nimport jax.experimental.vectorize as v  # jaxmigrate: ignore[JAX901]\n"
    "a = v.f(1)\nb = v.g(1)  # jaxmigrate: ignore\nc = v.h(2)\n",
    "import jax\njax.config.update('jax_coordination_service', 1)  # jaxmigrate: ignore[JAX101]\n"
    "x = jax.api.jit  # jaxmigrate: ignore[JAX1]\ny = jax.api.grad  # jaxmigrate: ignore[JAX9]\n",
    "import jax\nx = jax.api.jit(\n    f)  # jaxmigrate: ignore[JAX901]\n"
    "y = (jax.\n     api.vmap)\n",
    # names (not modules): at each site, once per line
    "import jax\nfrom jax import core\nfrom jax.core import full_lower, new_main as nm\n"
    "x = core.full_lower(1); y = full_lower(2); z = nm\n"
    "w = core.lattice_join(a, core.lattice_join(b, c))\n",
    "import jax as j\ns = j.core.full_lower; t = j.api.jit(\n    f)\nv = 'é'; w = j.api.pmap\n",
    # configuration flags set or read by name
    "import jax\nfrom jax import config as cfg\njax.config.update('jax_coordination_service', 1)\n"
    "v = jax.config.read('jax_cpu_backend_variant')\n"
    "jax.config.update(name='jax_coordination_service', val=True)\n"
    "cfg.update(('jax_coordination_service'), 1); cfg.update('jax_coordination_service', 2)\n"
    "try:\n    jax.config.update('jax_cpu_backend_variant', 1)\nexcept AttributeError:\n    pass\n"
    "print('jax_coordination_service')\n",
    "import jax\njax.config.update('jax_' 'coordination_service', 1)\n",
    "import jax\nx = jax.config.jax_coordination_service\njax.config.jax_cpu_backend_variant = 1\n",
    # guards, shadowed and late-bound names, f-strings
    "import jax\nif hasattr(jax, 'api'):\n    q = jax.api.vmap\n"
    "try:\n    import jax.experimental.optix as o\nexcept ImportError:\n    o = None\n",
    "import jax\ndef f(jax):\n    return jax.api.jit\ny = jax.api.grad\n",
    "import jax\nfrom jax.experimental import optix\nclass A:\n    optix = None\n    x = optix\n"
    "y = optix.adam\n",
    "def g():\n    import jax.experimental.optix as o\n    return o.adam\no = 1\n",
    # an alias imported below the module's own statements: LibCST's analysis knows it late
    "import jax\nif cond:\n    import jax.api as japi\nx = japi.jit\n",
    "import jax\nx = japi.jit\nif cond:\n    import jax.api as japi\n",
    "try:\n    from jax.extend import linear_util as lu\nexcept ImportError:\n"
    "    from jax import linear_util as lu\nx = lu.wrap_init\ny = jax.api.jit\n",
    "import jax\nx = f'{jax.api.jit} {jax.core.full_lower!r:>{jax.api.w}} {{jax.api}}'\n"
    "y = f'{{}}{jax.api.grad}é{jax.api.vmap=}'\nz = f'''\n{jax.api.pmap}'''\n",
    # two sites of one name on a line, in and out of LibCST's traversal order
    "import jax\nfrom jax.experimental import optix\nc = f(optix.A, optix.B)\n"
    "a = optix.D(1) if optix.R else optix.T\nb = [optix.D(i) for i in optix.layers]\n",
    "from jax.experimental import optix\n"
    "def f(x: optix.D = optix.R, *a: optix.T, k: optix.U = optix.V): return optix.W\n"
    "class A(optix.B, metaclass=optix.M): pass\n",
    # beside JAX902 (its uses cover their lines) and JAX806 (which does not answer from ast)
    "import jax\nx = jax._src.core.Tracer\ny = jax._src.core.X; z = jax.api.jit\n"
    "w = jax.experimental.optix.adam; v = jax._src.util.x\nu = jax.experimental.optix.sgd\n",
    "import jax\nfrom jax.experimental import maps, optix\nx = maps.thread_resources\n"
    "y = optix.adam; z = maps.Mesh\n",
    # jax.config's removed option definers: a fix (or a held-back one), which LibCST makes
    "from jax import config as c\nflag = c.define_bool_state('x_flag', True, 'help')\n",
    "import jax\nn = jax.config.define_int_state(name='x_n', default=1, help='h')\n",
]


@pytest.mark.parametrize("text", MISSING_CASES)
@pytest.mark.parametrize(
    "options",
    [ALL_RULES, Settings(), Settings(target_version="0.4.13", target_upper="0.4.20")],
    ids=["unsafe", "default", "capped"],
)
def test_ast_first_reports_what_libcst_does_on_missing_names(text, options):
    assert ast_first_difference(text, options) is None


def test_ast_first_answers_for_missing_names(monkeypatch):
    """Not vacuous: JAX901 answers from ``ast`` on most of the cases (alone, or with JAX902),
    and on some of its fixtures."""
    answered = _Answered(monkeypatch)
    for text in MISSING_CASES:
        outcome(text, Settings())
    assert answered.count >= 10
    answered.count = 0
    for path in sorted((FIXTURES / "missing-api").glob("*.py")):
        text = path.read_text(encoding="utf-8")
        outcome(text, fixture_settings(text))
    assert answered.count >= 2


MISSING_LINES = [
    "from jax.experimental import optix\n",
    "import jax.api as japi\n",
    "x = jax.api.jit(f)  # jaxmigrate: ignore[JAX901]\n",
    "y = optix.adam(jax.core.full_lower(z))\n",
    "jax.config.update('jax_coordination_service', True)\n",
    "try:\n    import jax.experimental.vectorize\nexcept ImportError:\n    pass\n",
]


@PROFILE
@given(hypothesmith.from_node(), st.lists(st.sampled_from(MISSING_LINES), max_size=3))
def test_ast_first_reports_what_libcst_does_on_generated_programs_with_missing_names(
    program, lines
):
    text = "import jax\n" + "".join(lines) + program + "\nz = jax.api.grad\n"
    assert ast_first_difference(text, Settings()) is None
