"""Each rule's answer from ``ast`` (``Rule.ast_findings``) is what its LibCST hooks do.

``tests/test_gate_equivalence.py`` compares the two pipelines' output, which only shows a
rule's answer when every candidate of the file answers.  Here each candidate rule that
answers is checked on its own, against the findings of its code the LibCST pipeline reports,
in every file where that pipeline makes no fix (the only files the ``ast`` path serves): an
answer of "nothing" is wrong when LibCST reports or fixes anything under that code.  Checked
on every fixture and runtime program, on cases of JAX907, JAX804 and JAX502 (look-alikes
where the answer must be None included), and on generated programs.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Dict, List, Optional, Sequence

import hypothesmith
import pytest
from hypothesis import given, strategies as st

from jaxmigrate.migrator import MigrationError, Settings, migrate_source
from jaxmigrate.migrator.astview import MULTILINE_FSTRINGS_PLACED
from jaxmigrate.migrator.diagnostics import Diagnostic
from tests.fixture_support import FIXTURES, fixture_settings, property_profile
from tests.test_gate_equivalence import ALL_RULES, PROGRAMS, ast_first_difference

OPTIONS = [ALL_RULES, Settings(), Settings(target_version="0.4.13", target_upper="0.4.20")]
OPTION_IDS = ["unsafe", "default", "capped"]
Answers = Dict[str, Optional[List[Diagnostic]]]


def rule_answers(text: str, options: Settings) -> Answers:
    """Each candidate rule's ``ast_findings`` in ``text``, as the engine asks them."""
    from jaxmigrate.migrator import engine
    from jaxmigrate.migrator.astview import AstView

    answers: Answers = {}
    real = engine.findings_on_ast

    def asking(text, facts, rules, settings, *more, **named):  # noqa: ANN001, ANN002, ANN003, ANN202
        if facts.tree is not None:
            view = AstView(text, facts, settings, tuple(rule.code for rule in rules))
            asked = {rule.code: rule.ast_findings(view) for rule in rules}
            for code, lines in view.unless_spoken.items():  # as findings_on_ast reads them
                others = [answer for other, answer in asked.items() if other != code]
                if any(answer is None for answer in others):
                    asked[code] = None
                    continue
                spoken = {d.line for answer in others for d in answer}  # type: ignore[union-attr]
                spoken.update(*(v for c, v in view.covered_by.items() if c != code))
                if not spoken.isdisjoint(lines):
                    asked[code] = None  # (the engine leaves the file to LibCST)
            answers.update(asked)
        return real(text, facts, rules, settings, *more, **named)

    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(engine, "findings_on_ast", asking)
        try:
            migrate_source(text, options)
        except MigrationError:
            return {}
    return answers


def rule_difference(text: str, options: Settings) -> Optional[str]:
    """None when every rule's answer is what the LibCST pipeline reports under its code
    (checked where that pipeline makes no fix); else what differs."""
    answers = rule_answers(text, options)
    if not any(answer is not None for answer in answers.values()):
        return None
    try:
        result = migrate_source(text, dataclasses.replace(options, ast_first=False))
    except MigrationError as error:
        return f"LibCST fails where a rule answered: {error.message}"
    if result.fixes or result.output != text:
        return None  # not a file the ast path can serve
    problems = []
    for code, answer in answers.items():
        if answer is None or code == "JAX901":  # (a backstop: the rounds thin it out)
            continue
        libcst = sorted(repr(d) for d in result.findings if d.code == code)
        if sorted(map(repr, set(answer))) != libcst:
            problems.append(f"{code}: ast {answer!r} / LibCST {libcst!r}")
    return "; ".join(problems) or None


def same_as_libcst(text: str, options: Settings) -> None:
    """The ``ast``-first pipeline gives what the LibCST one does, and so does each rule."""
    assert ast_first_difference(text, options) is None
    assert rule_difference(text, options) is None


def answer_sizes(texts: Sequence[str], code: str, options: Settings) -> List[Optional[int]]:
    """How many findings rule ``code`` answers on ``ast`` in each text (None: it declines; 0
    where it is no candidate)."""
    sizes = []
    for text in texts:
        answer = rule_answers(text, options).get(code, [])
        sizes.append(None if answer is None else len(answer))
    return sizes


def answered(texts: Sequence[str], code: str, options: Settings) -> int:
    return sum(rule_answers(t, options).get(code) is not None for t in texts)


def test_every_rule_answers_as_libcst_on_the_fixtures_and_programs():
    inputs = []
    for path in sorted(FIXTURES.glob("*/*.py")):
        if not path.name.endswith(".run.py"):
            text = path.read_text(encoding="utf-8")
            inputs.append((str(path.relative_to(FIXTURES)), text, fixture_settings(text)))
    for path in sorted(PROGRAMS.glob("*.py")):
        inputs.append((path.name, path.read_text(encoding="utf-8"), ALL_RULES))
    offenders = [
        f"{label}: {found}"
        for label, text, options in inputs
        for found in [rule_difference(text, options)]
        if found is not None
    ]
    assert not offenders, "a rule's ast answer differs from LibCST:\n" + "\n".join(offenders)


# A module with its own ``map`` (JAX's lax.py) whose ``tuple(...)`` tests read no version.
OWN_MAP = (
    "import jax\nmap = jax.util.safe_map\nif tuple(sorted(p)) != tuple(range(n)):\n"
    "    f = 1\nz = hasattr(jax, 'device_buffer')\n"
)
# JAX907 (rules/_dead_feature_ast.py): ``if`` chains of hasattr and JAX-version tests; the
# answer is "nothing" unless a chain's branch that runs on the newest JAX may name a gone name.
DEAD_FEATURE_CASES = [
    # nothing to do: not a JAX module, a live shim, the branch that runs is modern (a
    # ``hasattr(jax, ...)`` outside any test lets the gates through: the view answers)
    "import jax\ndef f(x):\n    if hasattr(x, 'device_buffer'):\n        return 1\n    return x\n"
    "z = hasattr(jax, 'device_buffer')\n",
    "import jax\nif hasattr(jax, 'Array'):\n    A = jax.Array\nelse:\n    A = jax.numpy.ndarray\n"
    "ok = hasattr(jax, 'device_buffer')\n",
    "import jax\nif jax.__version_info__ >= (0, 6, 2):\n"
    "    from jax.sharding import NamedSharding\n"
    "else:\n    NamedSharding = None\nz = hasattr(jax, 'device_buffer')\n",
    "import jax\nfrom packaging import version\n"
    "if version.parse(jax.__version__) >= version.parse('0.4.1'):\n    x = jax.Array\n"
    "z = hasattr(jax, 'device_buffer')\n",
    "import jax\nif tuple(map(int, jax.__version__.split('.'))) >= (0, 3, 1):\n"
    "    f = jax.tree_util.tree_map\nz = hasattr(jax, 'device_buffer')\n",
    OWN_MAP,
    "import jax\nif jax.version.__version_info__ > (0, 4, 25):\n    pass\nelif x:\n    pass\n"
    "z = hasattr(jax, 'device_buffer')  # jaxmigrate: ignore\n",
    "import jax\nif hasattr(jax, b'device_buffer'):\n    f = 1\n"
    "z = hasattr(jax, 'device_buffer')\n",
    "import jax\ns = 'é'; z = hasattr(jax, 'device_buffer')\n"
    "if hasattr(jax, 'Array'): f = jax.Array\n",
    "import jax\nfrom jax._src import core\nif hasattr(core, 'device_buffer'):\n"
    "    x = core.Tracer\n",
    "import jax\nif jax.__version_info__ >= (True, 3):\n    f = jax.Array\n"
    "z = hasattr(jax, 'device_buffer')\n",
    # the branch that runs names a gone name: a fix (reported without --unsafe-fixes)
    "import jax\nif hasattr(jax.interpreters.xla, '_DeviceArray'):\n"
    "    ArrayDevice = jax.interpreters.xla._DeviceArray\nelse:\n"
    "    ArrayDevice = jax.interpreters.xla.DeviceArray\n",
    "import jax\nif jax.__version_info__ < (0, 4, 24):\n    x = jax.Array\nelse:\n"
    "    x = jax.interpreters.xla.DeviceArray\n",
    "import jax\nif hasattr(jax, 'device_buffer'):\n    A = 1\nelif x:\n    A = 2\nelse:\n"
    "    if hasattr(jax.interpreters.xla, '_DeviceArray'):\n        A = 3\n    else:\n"
    "        A = jax.interpreters.xla.DeviceArray\n",
    "import jax\nif jax.__version_info__ > (0, 1):\n    from jax.experimental import maps\n"
    "z = hasattr(jax, 'device_buffer')\n",
    "import jax\nimport jax.experimental.maps as m\nif jax.__version_info__ > (0, 1):\n"
    "    f = g(m.Mesh)\nz = hasattr(jax, 'device_buffer')\n",
    # look-alikes the view leaves to LibCST: rebound builtins, shadowed heads, odd strings
    "import jax\ndef hasattr(a, b):\n    return True\n"
    "if hasattr(jax.interpreters.xla, '_DeviceArray'):\n"
    "    A = 1\n",
    "import jax\nif hasattr(jax.interpreters.xla, '_Device' 'Array'):\n    A = 1\n",
    "import jax\ndef f(jax):\n    if hasattr(jax, 'device_buffer'):\n        return 1\n",
    "import jax\nmap = jax.util.safe_map\n"
    "if tuple(map(int, jax.__version__.split('.'))) > (0, 3):\n"
    "    f = 1\nz = hasattr(jax, 'device_buffer')\n",
    "import jax\ntuple = list\nif tuple(map(int, jax.__version__.split('.'))) >= (0, 3, 1):\n"
    "    f = 1\nz = hasattr(jax, 'device_buffer')\n",
    "import jax\nif tuple(map(int, jax.__version__.split(sep='.'))) >= (0, 3, 1):\n    f = 1\n"
    "z = hasattr(jax, 'device_buffer')\n",
    "import jax\nif tuple(map(int, *[jax.__version__.split('.')])) >= (0, 3):\n    f = 1\n"
    "z = hasattr(jax, 'device_buffer')\n",
    "from jax import __version_info__ as v\nif v >= (0, 3, 1):\n    f = 1\n"
    "z = hasattr(jax, 'device_buffer')\n",
]
DEAD_FEATURE_ANSWERED = 10  # cases JAX907 answers (the rest: a fix, or unsure)


@pytest.mark.parametrize("text", DEAD_FEATURE_CASES)
@pytest.mark.parametrize("options", OPTIONS, ids=OPTION_IDS)
def test_ast_first_reports_what_libcst_does_on_dead_feature_tests(text, options):
    assert ast_first_difference(text, options) is None
    assert rule_difference(text, options) is None


def test_dead_feature_test_answers_from_ast():
    count = answered(DEAD_FEATURE_CASES, "JAX907", Settings())
    assert count >= DEAD_FEATURE_ANSWERED
    assert count < len(DEAD_FEATURE_CASES), "the look-alikes must be left to LibCST"
    # a ``tuple(...)`` of no ``map(...)`` is no version, whatever binds ``map``
    assert rule_answers(OWN_MAP, Settings())["JAX907"] == []


# JAX804 (a finding at every site of jax.pmap) and JAX502 (nothing to do where the file
# reaches jax.config only through ``from jax import config``), on rules/_ast_sites.py.
PMAP_CASES = [
    "import jax\nstep = jax.pmap(update, axis_name='batch')\n",
    "import jax\n@jax.pmap\ndef f(x):\n    return x\n"
    "g = jax.pmap(f); h = jax.pmap(g)  # jaxmigrate: ignore[JAX804]\n",
    "from jax import pmap\nimport functools\nf = functools.partial(pmap, axis_name='i')\n",
    "from jax import pmap as pm\nf = pm(g)\n",
    "from jax import pmap\n",
    "import jax\ntry:\n    p = jax.pmap\nexcept AttributeError:\n    p = None\n",
    "import jax\njax.pmap = 1\ndel jax.pmap\n",
    "import jax\nx = jax.pmap(\n  f)  # jaxmigrate: ignore[JAX804]\ny = (jax.\n  pmap)\n",
    "import jax\ns='é'; x = jax.pmap(f)\n",
    "import jax\nx = jax.pmap(jax._src.core.x)\n",
    # look-alikes left to LibCST: a late alias, a shadowed head, f-strings, __all__
    "import jax\nif cond:\n    from jax import pmap as pm\nf = pm(g)\n",
    "import jax\ndef f(jax):\n    return jax.pmap(g)\ny = jax.pmap\n",
    "import jax\nfrom jax import pmap\n__all__ = ['pmap']\n",
    # answered where CPython places a multi-line f-string's parts (3.11 on)
    "import jax\nx = f'{jax.pmap}'\ny = f'''\n{jax.pmap}'''\n",
]
CONFIG_CASES = [
    "from jax import config\nconfig.update('jax_enable_x64', True)\n",
    "from jax import config as jax_config\nimport jax\ndef setUp():\n"
    "  jax_config.update('jax_enable_x64', True)\nx = jax.config.x64_enabled\n",
    "from jax import config\n",
    "from jax import config\nconfig.update('jax_enable_x64', True)\nx = jax._src.core\n"
    "import jax\n",
    # look-alikes left to LibCST (each has something to rewrite or report)
    "from jax import config\n__all__ = ['config']\n",
    "from jax.config import config\nconfig.update('jax_enable_x64', True)\n",
    "import jax.config\njax.config.update('jax_enable_x64', True)\n",
    "import jax.config as cfg\ncfg.update('a', 1)\n",
    "import jax\njax.config.config.update('a', 1)\n",
    "from jax import config\nx = config.config\n",
    "from jax import config\ndef f(config):\n    return config.config\n",
    "try:\n    from jax.config import config\nexcept ImportError:\n    from jax import config\n"
    "config.update('a', 1)\n",
]


# JAX803 and JAX903: nothing to do in a file with no site of their names (rules._ast_sites)
# Chains inside multi-line f-strings (JAX902, JAX804, JAX901), as JAX's own loops.py writes
# them: concatenated parts, triple quotes, a brace that opens a line, specs, ``=``, nesting.
FSTRING_CASES = [
    "import jax\nfrom jax._src.util import _avals_short\nraise E(\n      f'a: '\n"
    "      f'\\n{_avals_short(x)}\\nvs\\n{_avals_short(y)}')\n",
    "import jax\nfrom jax._src import core\ns = f'''é\n  {core._x:{w}} {{ }}\n{\ncore._y!r}'''\n",
    "import jax\nx = (f'a{jax.lax._p}'\n     f'b{y}' 'c' f'{jax.lax._q=}')\n",
    "import jax\nx = f'''\n{f'{jax._src.core.x}'} {(jax.pmap\n  + 1)}'''\n",
    "import jax\nx = f'''\n{jax.api.vmap}'''\ny = jax.lax._p\n",
]
SITE_CASES = [
    "try:\n    from jax import enable_x64\nexcept ImportError:\n"
    "    from jax.experimental import enable_x64\nwith enable_x64():\n    pass\nx = jax.api.jit\n",
    "import jax\nif hasattr(jax, 'enable_x64'):\n    enable_x64 = jax.enable_x64\nelse:\n"
    "    enable_x64 = jax.experimental.enable_x64\n__all__ = ['enable_x64']\n",
    "try:\n    from jax.extend.core import Primitive\nexcept ImportError:\n"
    "    from jax.core import Primitive\np = Primitive('p')\n",
    "import jax\nif hasattr(jax.core, 'Primitive'):\n    p = jax.core.Primitive\n",
    # look-alikes left to LibCST: a site (a rewrite, or a report)
    "from jax.experimental import enable_x64\nwith enable_x64():\n    pass\n",
    "import jax\ncm = jax.experimental.enable_x64\n",
    "import jax\nwith jax.experimental.disable_x64(1):\n    pass\n",
    "from jax.experimental import enable_x64\n",
    "from jax import core\np = core.Primitive('p')\n",
    "from jax.core import Primitive\n",
    "import jax\nx = jax.core.ShapedArray\ny = jax.numpy.product\n",
]


# JAX806: nothing where no import names a removed module (chex's guarded ``jax.pxla`` reads)
REMOVED_MODULE_CASES = [
    "import jax\nok = hasattr(jax, 'pxla') and isinstance(x, jax.pxla.ShardedDeviceArray)\n",
    "import jax\nfrom . import maps\nx = jax.xla.DeviceArray\n",
    "import jax\nimport jax.experimental\nm = jax.lib.xla_bridge.get_backend()\n",
    # left to LibCST: an import of a removed module, in any scope or form
    "import jax.experimental.maps\nimport jax\n",
    "def f():\n    from jax.lib import xla_bridge\n    return xla_bridge.x\n",
    "from jax.experimental.maps import *\nimport jax\n",
    "import jax.pxla as p\n",
    "try:\n    from jax.experimental import maps\nexcept ImportError:\n    maps = None\n",
]
REMOVED_MODULE_ANSWERED = 3
# JAX805 (removed internals): each use, a module once with its count; a use under
# try/except ImportError is compatibility code, read on ``ast``; the rest left to LibCST
INTERNALS_CASES = [
    "import jax\nb = jax.lib.xla_bridge.get_backend()\nd = jax.lib.xla_bridge.x  # c\n",
    "import jax\njax.soft_pmap(f)\ny = jax.clear_backends()\n",
    "import jax\ntry:\n    E = jax.lib.xla_extension.XlaRuntimeError\nexcept AttributeError:\n"
    "    E = None\n",
    "import jax\nx = jax.interpreters.pxla.thread_resources  # jaxmigrate: ignore[JAX805]\n",
    # left to LibCST: a feature test, the multi-host set, a pmap keyword, a head bound twice
    "import jax\nif hasattr(jax, 'soft_pmap'):\n    jax.soft_pmap(f)\n",
    "from jax.interpreters import pxla\npxla.multi_host_supported_collectives.add(p)\n",
    "import jax\njax.pmap(f, global_arg_shapes=(1,))\n",
    "import jax\ndef g(jax):\n    return jax.soft_pmap\n",
    # ... and an import of a module gone from the target that nothing reads after it, which
    # the engine may drop (one read after it stays: answered)
    "from jax.lib import xla_bridge\nb = 1\n",
    "b = xla_bridge.get_backend()\nfrom jax.lib import xla_bridge\n",
    "from jax.lib import xla_bridge\nb = xla_bridge.get_backend()\n",
]
INTERNALS_ANSWERS = [1, 2, 0, 0, None, None, None, None, None, None, 1]
# JAX608 (a bare jax.make_mesh): a finding where nothing says what the code was written for, or
# where the axes cannot be counted; nothing where the call spells its axis types, or the code
# was written for the Explicit default; LibCST where it adds them
MAKE_MESH_CASES = [
    "import jax\nm = jax.make_mesh((2, 4), ('x', 'y'))\nn = jax.make_mesh(s, names)\n",
    "import jax\nm = jax.make_mesh((2,))\nf = jax.make_mesh\n",
    "from jax import make_mesh\nm = make_mesh(axis_shapes=s, axis_names=n)  # jaxmigrate: ignore\n",
    "import jax\nm = jax.make_mesh(s, n)\nk = jax.make_mesh(*a)\n",
]
MAKE_MESH_ANSWERS = {None: [2, 0, 0, 1], "0.5.3": [None, 0, 0, 1], "0.9.0": [0, 0, 0, 0]}
# JAX102 and JAX104 (a legacy class and the module aliases): nothing where every site is in
# compatibility code and no string annotation spells the class
ALIAS_CASES = [
    "import jax\nok = (\n    hasattr(jax, 'pxla')\n"
    "    and hasattr(jax.pxla, 'ShardedDeviceArray')\n"
    "    and isinstance(x, jax.pxla.ShardedDeviceArray)\n)\n",
    "import jax\ntry:\n    from jax.pxla import ShardedDeviceArray\nexcept ImportError:\n"
    "    ShardedDeviceArray = None\n",
    # left to LibCST: a site, a string annotation, an import under another name
    "import jax\nok = isinstance(x, jax.pxla.ShardedDeviceArray)\n",
    "import jax\ndef f(x: 'ShardedDeviceArray') -> int:\n    return jax.pxla.x\n",
    "import jax\nfrom jax.interpreters.pxla import ShardedDeviceArray as SDA\n",
]


# JAX904 and JAX905 (names the target range lacks): nothing where every site is compatibility
# code (haiku's base.py)
WHERE_MISSING_CASES = [
    "import jax\nif hasattr(jax.random, 'KeyArray'):\n    K = jax.random.KeyArray\n"
    "if hasattr(jax.ops, 'index_add'):\n    f = jax.ops.index_add\n",
    "import jax\ntry:\n    from jax.ops import index_add\nexcept ImportError:\n"
    "    index_add = None\n"
    "try:\n    from jax.random import KeyArray\nexcept ImportError:\n    KeyArray = None\n",
    # left to LibCST: a reference or an import outside compatibility code
    "import jax\ndef split(key: jax.random.KeyArray):\n    return jax.ops.index_add(x, i, y)\n",
    "from jax.random import KeyArray\nfrom jax.ops import index_add\n",
]


# JAX306: nothing where every call passes tiled= (or unpacks its arguments), or where the code
# was written for the default of the whole range (its source stated, or proven by its names)
MH = "from jax.experimental import multihost_utils as mh\n"
MULTI = MH + "import jax\njax.distributed.initialize()\n"
ALLGATHER_CASES = [
    MH + "x = mh.process_allgather(y, tiled=True)\nz = mh.process_allgather(*a, **k)\n",
    "from jax.experimental.multihost_utils import process_allgather as pa\nz = pa(y, **k)\n",
    # reported (or, with an old source, fixed: LibCST): a plain call in single-process code,
    # and one no global array reaches in multi-process code (JAX's pytree_serialization.py)
    MH + "import jax\nx = mh.process_allgather(y)\n",
    MH + "x = mh.process_allgather(y)\n",
    MULTI + "x = mh.process_allgather(y)\n",
    MH + "from jax import process_index\nx = mh.process_allgather(y + process_index())\n",
    # look-alikes left to LibCST: a value, a misspelling, a global array that may reach the
    # call (the receiver decides), a multi-process call the view cannot resolve (shadowed)
    MH + "f = mh.process_allgather\ng = [mh.process_allgather]\n",
    MH + "x = mh.process_allgather(y, titled=True)\n",
    MULTI + "a = jax.make_array_from_callback(s, sh, cb)\nx = mh.process_allgather(a)\n",
    MH + "import jax\ndef f(jax):\n    return jax.process_index()\nx = mh.process_allgather(y)\n",
]
SOURCED = Settings(source_version="0.9.0", source_explicit=True)
OLD_SOURCE = Settings(source_version="0.4.30", source_explicit=True)


@pytest.mark.parametrize("text", ALLGATHER_CASES)
@pytest.mark.parametrize(
    "options", [*OPTIONS, SOURCED, OLD_SOURCE], ids=[*OPTION_IDS, "sourced", "old-source"]
)
def test_ast_first_reports_what_libcst_does_on_process_allgather(text, options):
    assert ast_first_difference(text, options) is None
    assert rule_difference(text, options) is None


def test_process_allgather_answers_from_ast():
    assert answered(ALLGATHER_CASES, "JAX306", Settings()) == 6
    assert answered(ALLGATHER_CASES, "JAX306", SOURCED) == len(ALLGATHER_CASES)
    # an old source: the single-process calls are fixed; the multi-process ones still reported
    assert answered(ALLGATHER_CASES, "JAX306", OLD_SOURCE) == 4


# JAX307 (None pspecs of the multihost converters) and JAX605 (use_mesh / the old set_mesh):
# their sites answered on ``ast`` where neither rewrites (JAX's pmap.py, orbax's replica_slices)
CONVERT = "mh.host_local_array_to_global_array"
MESH_CASES = [
    MH + f"a = {CONVERT}(x, m, P('d'))\nb = {CONVERT}(x, m, pspecs=(P(), [P('d')]))\n"
    f"c = {CONVERT}(x, *r)\nd = {CONVERT}(x, m, **k)\ne = {CONVERT}(x, m, {{**s}})\n"
    f"f = {CONVERT}\ng = {CONVERT}(x, m, (P(None), *t))\n",
    "import jax\nwith jax.sharding.set_mesh(m):\n    pass\njax.sharding.set_mesh(m)\n"
    "old = jax.sharding.set_mesh(m)  # jaxmigrate: ignore[JAX605]\nn = (jax.sharding.set_mesh)\n",
    "import jax\nprev = (jax.sharding.set_mesh(m))\nf(jax.sharding.set_mesh(\n  m))\n",
    "import jax\nif hasattr(jax.sharding, 'use_mesh'):\n    u = jax.sharding.use_mesh\n",
    # look-alikes left to LibCST: a None leaf (a fix), a rename, a shadowed head
    MH + f"a = {CONVERT}(x, m, None)\nb = {CONVERT}(x, m, pspecs={{'a': None}})\n",
    MH + f"a = {CONVERT}(x, m, [P(), None])\n",
    "import jax\nwith jax.sharding.use_mesh(m):\n    pass\n",
    "import jax\nu = jax.sharding.use_mesh\ndef f(jax):\n    return jax.sharding.set_mesh(m)\n",
]
# JAX307 where the view cannot tell the sites: JAX's pmap.py imports multihost_utils inside
# the functions that call it, and binds the converters' names itself
_LOCAL_MH = "    import jax.experimental.multihost_utils as mhu\n"
SCOPED_MH_CASES = [
    "def host_local_array_to_global_array(x, m, p):\n"
    + _LOCAL_MH
    + "    return mhu.host_local_array_to_global_array(x, m, p)\n",
    "def f(x):\n" + _LOCAL_MH + "    return mhu.global_array_to_host_local_array(x, m, P())\n"
    "mhu = object()\n",
    # a None leaf in one of them: LibCST decides (a parameter's look-alike too: it cannot tell)
    "def f(x):\n" + _LOCAL_MH + "    return mhu.global_array_to_host_local_array(x, m, None)\n"
    "mhu = object()\n",
    "def f(x):\n" + _LOCAL_MH + "    return mhu.host_local_array_to_global_array(x, m, P())\n"
    "def g(mhu):\n    return mhu.host_local_array_to_global_array(x, m, [None])\n",
]
# JAX501 reads a flag's name as a pytree key (orbax's tests): nothing; then look-alikes
FLAG_KEY_CASES = [
    "import jax\nt = {'jax_array': x}\ny = t['jax_array']\nf(k, ['jax_array', 'np'])\n"
    "e = {'JAX_ARRAY': 1}.get\n",
    "import jax\njax.config.update('jax_array', True)\n",
    "import os\nos.environ['JAX_ARRAY'] = '1'\nimport jax\n",
    "import jax\nclass T:\n    def test(self, *, jax_array=True):\n        t = {'jax_array': 1}\n",
    "import jax\nif jax.config.jax_array:\n    t = {'jax_array': 1}\n",
    "import jax\nflag = getattr(jax.config, 'jax_array')\n",
]


@pytest.mark.parametrize("text", MESH_CASES + SCOPED_MH_CASES + FLAG_KEY_CASES)
@pytest.mark.parametrize("options", OPTIONS, ids=OPTION_IDS)
def test_ast_first_reports_what_libcst_does_on_mesh_helpers(text, options):
    assert ast_first_difference(text, options) is None
    assert rule_difference(text, options) is None


def test_mesh_helpers_answer_from_ast():
    assert [rule_answers(t, Settings()).get("JAX307") == [] for t in MESH_CASES[:6]] == [
        True, False, False, False, False, False
    ]  # fmt: skip
    answers = [rule_answers(t, Settings()).get("JAX605") for t in MESH_CASES[1:4]]
    assert [len(a) if a is not None else None for a in answers] == [0, 2, 0], answers
    assert rule_answers(MESH_CASES[6], Settings()).get("JAX605", "absent") is None  # a rename
    scoped = [rule_answers(t, Settings()).get("JAX307", "absent") for t in SCOPED_MH_CASES]
    assert scoped == [[], [], None, None], scoped
    flags = [rule_answers(t, Settings()).get("JAX501", "absent") for t in FLAG_KEY_CASES]
    assert flags == [[]] + [None] * 5, flags


@pytest.mark.parametrize(
    "text",
    PMAP_CASES
    + CONFIG_CASES
    + SITE_CASES
    + FSTRING_CASES
    + REMOVED_MODULE_CASES
    + INTERNALS_CASES
    + MAKE_MESH_CASES
    + ALIAS_CASES
    + WHERE_MISSING_CASES,
)
@pytest.mark.parametrize("options", OPTIONS, ids=OPTION_IDS)
def test_ast_first_reports_what_libcst_does_at_sites(text, options):
    assert ast_first_difference(text, options) is None
    assert rule_difference(text, options) is None


def test_site_rules_answer_from_ast():
    assert answered(PMAP_CASES, "JAX804", Settings()) == len(PMAP_CASES) - 4 + (
        MULTILINE_FSTRINGS_PLACED
    )
    if MULTILINE_FSTRINGS_PLACED:
        assert answered(FSTRING_CASES, "JAX902", Settings()) == len(FSTRING_CASES)
    for code in ("JAX102", "JAX104"):  # (JAX104 reads no name in the guarded import)
        answers = [rule_answers(text, Settings()).get(code) for text in ALIAS_CASES]
        assert answers[0] == [] and answers[2:] == [None] * 3, (code, answers)
        assert answers[1] == ([] if code == "JAX102" else None), (code, answers)
    for code in ("JAX904", "JAX905"):
        answers = [rule_answers(text, Settings()).get(code) for text in WHERE_MISSING_CASES]
        assert answers == [[], [], None, None], (code, answers)
    for options in OPTIONS:
        answers = [rule_answers(text, options).get("JAX806") for text in REMOVED_MODULE_CASES]
        assert [a is not None for a in answers] == [True] * REMOVED_MODULE_ANSWERED + [False] * (
            len(REMOVED_MODULE_CASES) - REMOVED_MODULE_ANSWERED
        ), answers
    assert answered(CONFIG_CASES, "JAX502", Settings()) == 4
    internals = [rule_answers(text, Settings()).get("JAX805") for text in INTERNALS_CASES]
    assert [None if a is None else len(a) for a in internals] == INTERNALS_ANSWERS, internals
    for source, expected in MAKE_MESH_ANSWERS.items():
        options = Settings(source_version=source, source_explicit=source is not None)
        meshes = [rule_answers(text, options).get("JAX608") for text in MAKE_MESH_CASES]
        assert [None if a is None else len(a) for a in meshes] == expected, (source, meshes)
    assert answered(SITE_CASES, "JAX803", Settings()) == 2
    assert answered(SITE_CASES, "JAX903", Settings()) == 2


# An old module's private imports that only ``__all__`` names (JAX's own ``debug.py``) or
# that a noqa comment for F401 keeps: no deletion to make, so JAX902's findings come from
# ``ast``; look-alikes whose string is no
# plain literal of its own (an f-string, an implicit concatenation, an escape, a docstring, a
# comment) are left to LibCST, which deletes the import there.
REEXPORTS = "from jax._src.debugging import debug_print as print\n"
REEXPORT_CASES = [
    REEXPORTS + '__all__ = ["print"]\n',
    REEXPORTS + "__all__ = ('print', r'other')\n",
    REEXPORTS + 'x: "print" = 1\n',
    REEXPORTS.replace("\n", "  # noqa: E501,F401\n"),  # (kept on purpose: no deletion)
    "from jax._src.debugging import (  # NOQA\n    debug_print,\n)\n",
    REEXPORTS + '__all__ = [f"print"]\n',
    REEXPORTS + '__all__ = ["pr" "int"]\n',
    REEXPORTS + '__all__ = ["\\x70rint"]\n',
    REEXPORTS + '"""print"""\n',
    REEXPORTS + '# "print"\nA = "prints"\n',
]
OLD_PRIVATE = Settings(source_version="0.4.13", source_explicit=True)


@pytest.mark.parametrize("text", REEXPORT_CASES)
def test_ast_first_reports_what_libcst_does_on_reexports(text):
    assert ast_first_difference(text, OLD_PRIVATE) is None
    assert rule_difference(text, OLD_PRIVATE) is None


def test_reexports_answer_from_ast():
    answers = [rule_answers(text, OLD_PRIVATE).get("JAX902") for text in REEXPORT_CASES]
    assert [answer is not None for answer in answers] == [True] * 5 + [False] * 5, answers


ANSWERED_LINES = [
    "if hasattr(jax, 'Array'):\n    A = jax.Array\n",
    "if jax.__version_info__ >= (0, 4, 24):\n    B = 1\nelse:\n    B = jax.tree_util.tree_map\n",
    "ok = hasattr(y, 'device_buffer')  # jaxmigrate: ignore\n",
    "step = jax.pmap(f, axis_name='i')\n",
    "from jax import pmap as pm\n",
    "from jax import config as jc\njc.update('jax_enable_x64', True)\n",
    "try:\n    from jax import enable_x64\nexcept ImportError:\n"
    "    from jax.experimental import enable_x64\n",
    "if hasattr(jax.interpreters.xla, '_DeviceArray'):\n    C = 1\nelse:\n"
    "    C = jax.interpreters.xla.DeviceArray\n",
]
PROFILE = property_profile(max(1, int(os.environ.get("JAXMIGRATE_PROPERTY_EXAMPLES", "40")) // 2))


@PROFILE
@given(hypothesmith.from_node(), st.lists(st.sampled_from(ANSWERED_LINES), max_size=3))
def test_every_rule_answers_as_libcst_on_generated_programs(program, lines):
    text = "import jax\n" + "".join(lines) + program + "\nz = hasattr(w, 'device_buffer')\n"
    assert ast_first_difference(text, Settings()) is None
    assert rule_difference(text, Settings()) is None
