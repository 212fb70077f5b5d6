"""The piecewise path (:mod:`migrator.piecewise`) gives what parsing the whole module gives.

Every fixture (inputs, look-alikes, expected outputs), every runtime program and the cases
the gate-equivalence tests collect are migrated twice: with the piecewise threshold at 0
(every file that can go piecewise does) and with it out of reach (the whole-module path);
the output, fixes, findings and errors must be identical.  A small file rarely leaves a
statement out, so each file is also run with unrelated statements added before its first
def or class and at its end: there the piecewise path leaves them out, and every position
after them moves.  Generated programs (hypothesmith) with legacy lines are compared the same
way, and a big file is checked to be parsed by LibCST in pieces.
"""

from __future__ import annotations

import ast
import os
from typing import Iterator, List, Optional, Tuple

import hypothesmith
import libcst
import pytest
from hypothesis import given, strategies as st

from jaxmigrate.migrator import Settings, engine, migrate_source, piecerun, piecewise
from jaxmigrate.migrator.piecesites import site_words
from tests.fixture_support import FIXTURES, fixture_settings, property_profile
from tests.test_gate_equivalence import (
    ALL_RULES,
    ESCAPED,
    LEGACY_LINES,
    PRIVATE_CASES,
    PROGRAMS,
    outcome,
)

# (the legacy line is a jax.tree_map rename: see conftest.fixes_through_libcst)
pytestmark = pytest.mark.usefixtures("fixes_through_libcst")

FILLER = '''

# statements no rule looks at ({n})

def filler_{n}(a, b=None):
    """Docstring {n}."""
    total = 0
    for i in range(a):
        total += i
    return [x for x in (total, b) if x]


@staticmethod
def filler_decorated_{n}(x,
                         y=2):  # a comment
    return x * \\
        y


class Filler{n}:
    value = {n}

    def method(self):
        return self.value
    # the end of the class

counter_{n} = 0; other_{n} = 1
if counter_{n}:
    counter_{n} += 1
'''


def run(text: str, options: Settings, threshold: int) -> Tuple[object, ...]:
    saved = piecewise.PIECEWISE_CHARS
    piecewise.PIECEWISE_CHARS = threshold
    try:
        return outcome(text, options)
    finally:
        piecewise.PIECEWISE_CHARS = saved


def difference(text: str, options: Settings) -> Optional[str]:
    """None when the piecewise and the whole-module runs agree; else both outcomes."""
    pieces = run(text, options, 0)
    whole = run(text, options, 10**12)
    return None if pieces == whole else f"piecewise {pieces!r}\n  whole {whole!r}"


def padded(text: str, n: int = 0) -> List[str]:
    """``text`` with unrelated statements before its first def or class, and at its end; and
    with a function at its end that reads every name its top-level imports bind (the
    piecewise path leaves it out where it holds no site, and checks that the migrated imports
    still bind those names as they did)."""
    variants = [text.rstrip("\n") + "\n" + FILLER.format(n=n)]
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return variants
    imported = sorted(
        {
            alias.asname or alias.name.split(".", 1)[0]
            for node in tree.body
            if isinstance(node, (ast.Import, ast.ImportFrom))
            for alias in node.names
            if alias.name != "*"
        }
    )
    if imported:
        reads = "".join(f"        {name},\n" for name in imported)
        variants.append(
            text.rstrip("\n") + f"\n\n\ndef reads_imports_{n}():\n    return (\n{reads}    )\n"
        )
    defs = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    first = next((node for node in tree.body if isinstance(node, defs)), None)
    if first is not None:
        line = min([first.lineno, *(d.lineno for d in first.decorator_list)]) - 1
        lines = text.splitlines(keepends=True)
        variants.append("".join(lines[:line]) + FILLER.format(n=n + 1) + "".join(lines[line:]))
    return variants


def _files() -> Iterator[Tuple[str, str, Settings]]:
    for path in sorted(FIXTURES.glob("*/*.py")):
        if path.name.endswith(".run.py"):
            continue
        text = path.read_text(encoding="utf-8")
        yield str(path.relative_to(FIXTURES)), text, fixture_settings(text)
    for path in sorted(PROGRAMS.glob("*.py")):
        yield path.name, path.read_text(encoding="utf-8"), ALL_RULES
    for index, text in enumerate(ESCAPED + PRIVATE_CASES):
        yield f"case {index}", text, ALL_RULES


def _compare(inputs: Iterator[Tuple[str, str, Settings]]) -> Tuple[int, List[str]]:
    count, offenders = 0, []
    for label, text, options in inputs:
        for variant, variant_text in enumerate([text, *padded(text)]):
            count += 1
            found = difference(variant_text, options)
            if found is not None:
                offenders.append(f"{label} (variant {variant}): {found[:1500]}")
    return count, offenders


def test_piecewise_changes_nothing_on_fixtures_programs_and_cases():
    before = dict(piecerun.STATS)
    count, offenders = _compare(_files())
    assert count >= 1800, "the fixtures went missing"
    assert not offenders, "piecewise and whole-module runs differ:\n" + "\n".join(offenders)
    taken = piecerun.STATS["taken"] - before["taken"]
    assert taken >= 150, f"only {taken} files went piecewise: the check is nearly vacuous"


EXAMPLES = max(1, int(os.environ.get("JAXMIGRATE_PROPERTY_EXAMPLES", "40")) // 2)


@property_profile(EXAMPLES)
@given(hypothesmith.from_node(), st.lists(st.sampled_from(LEGACY_LINES), max_size=4), st.booleans())
def test_piecewise_changes_nothing_on_generated_programs(program, lines, before):
    legacy = "".join(lines)
    text = legacy + program if before else program + "\n" + legacy
    assert difference(text, ALL_RULES) is None
    assert difference(text + FILLER.format(n=0), ALL_RULES) is None


# -- what the reduction keeps, and where it falls back -------------------------------------------
def path_of(text: str, options: Settings = ALL_RULES) -> str:
    """Which path ``text`` takes at threshold 0 ("piecewise", "fell back" or "whole"), after
    checking that it gives what the whole module does."""
    assert difference(text, options) is None
    before = dict(piecerun.STATS)
    run(text, options, 0)
    if piecerun.STATS["taken"] > before["taken"]:
        return "piecewise"
    return "fell back" if piecerun.STATS["fell_back"] > before["fell_back"] else "whole"


LEGACY = "import jax\n\nx = jax.tree_map(f, y)\n"
KEPT_OR_FALLBACK = [
    # a fix would write a name that a statement left out binds: the whole module decides
    "from jax.experimental import multihost_utils\n\n\ndef replicate(params, mesh):\n"
    "    return multihost_utils.host_local_array_to_global_array(params, mesh, None)\n"
    + FILLER.format(n=0)
    + "\nPartitionSpec = None\n",
    # the same, with the name already written on the changed line (a comment)
    "from jax.experimental import multihost_utils\n\n\ndef replicate(params, mesh):\n"
    "    return multihost_utils.host_local_array_to_global_array(\n"
    "        params, mesh, None)  # PartitionSpec\n"
    + FILLER.format(n=0)
    + "\nPartitionSpec = None\n",
    # form feeds: str.splitlines breaks lines there, CPython does not
    LEGACY + "\x0c\n" + FILLER.format(n=0),
    # the marker's name in the file
    LEGACY + FILLER.format(n=0) + "\n__jm_piece_0__ = 1\n",
    # a module-level name a kept statement reads, bound far away
    LEGACY + FILLER.format(n=0) + "\ndef f(a):\n    return a\n",
    # a name shadowing an import, later in the file
    LEGACY + FILLER.format(n=0) + "\njax = None\n",
    # globals, exec and star imports
    LEGACY + FILLER.format(n=0) + "\ndef g():\n    global y\n    y = 1\n",
    LEGACY + FILLER.format(n=0) + "\nexec('y = 1')\n",
    "from os import *\n" + LEGACY + FILLER.format(n=0),
    # __all__ naming a statement otherwise left out
    LEGACY + FILLER.format(n=0) + "\n__all__ = ['filler_0']\n",
    # a string annotation naming a module-level class
    LEGACY + "\ndef h(a: 'Filler0') -> None:\n    return jax.tree_leaves(a)\n" + FILLER.format(n=0),
    # CRLF, a tab indent, an encoding cookie, no final newline
    ("# -*- coding: utf-8 -*-\n" + LEGACY + FILLER.format(n=0)).replace("\n", "\r\n"),
    LEGACY + "if y:\n\tz = 1\n" + FILLER.format(n=0).replace("    ", "\t"),
    LEGACY + FILLER.format(n=0).rstrip("\n"),
    # the legacy line at the end, after everything left out, and a docstring first
    '"""Module docstring."""\n' + FILLER.format(n=0) + "\n" + LEGACY,
    # suppression comments and except clauses LibCST loses
    LEGACY.replace("y)", "y)  # jaxmigrate: ignore[JAX701]") + FILLER.format(n=0),
    LEGACY + "try:\n    pass\nexcept ValueError :\n    pass\n" + FILLER.format(n=0),
    # a look-alike: nothing to change, nothing to report
    "import jax\n\nx = tree_map(f, y)\n" + FILLER.format(n=0),
    # a method whose only site is an import inside it (JAX902 counts its private module)
    LEGACY + "from jax._src import core\n\n\nclass Ref:\n    def get(self, t):\n"
    "        return core.get_aval(t)\n\n    def _getitem(self, t):\n"
    "        from jax._src.state.primitives import ref_get\n        return ref_get(t)\n"
    + FILLER.format(n=0),
    # rules that read the whole module (a pjit call) fall back
    "from jax.experimental.pjit import pjit\n\nz = pjit(f, in_axis_resources=None)\n"
    + FILLER.format(n=0),
]


@pytest.mark.parametrize("text", KEPT_OR_FALLBACK)
def test_piecewise_agrees_on_cases_that_keep_more_or_fall_back(text):
    assert difference(text, ALL_RULES) is None
    assert difference(text, Settings()) is None


def test_which_path_the_cases_take():
    assert path_of(LEGACY + FILLER.format(n=0)) == "piecewise"
    assert path_of('"""Doc."""\n' + FILLER.format(n=0) + "\n" + LEGACY) == "piecewise"
    assert path_of(KEPT_OR_FALLBACK[11]) == "piecewise"  # CRLF
    # a fix writes PartitionSpec, which a statement left out binds
    assert path_of(KEPT_OR_FALLBACK[0]) == "fell back"
    assert path_of(KEPT_OR_FALLBACK[1]) == "fell back"
    assert path_of(KEPT_OR_FALLBACK[2]) == "whole"  # a form feed
    assert path_of(KEPT_OR_FALLBACK[3]) == "whole"  # the marker's name
    assert path_of(KEPT_OR_FALLBACK[-1]) == "whole"  # a rule that reads the whole module


def test_a_big_file_is_parsed_in_pieces(monkeypatch):
    """A few hundred KB with one legacy line: LibCST parses a few hundred characters."""
    filler = "".join(FILLER.format(n=n) for n in range(700))
    text = LEGACY + filler
    assert len(text) > 300_000
    parsed: List[int] = []
    real = libcst.parse_module

    def counting(source, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        parsed.append(len(source))
        return real(source, *args, **kwargs)

    monkeypatch.setattr(engine.cst, "parse_module", counting)
    monkeypatch.setattr(piecewise, "PIECEWISE_CHARS", 100_000)
    pieces = outcome(text, Settings())
    assert parsed and max(parsed) < 5_000, parsed
    monkeypatch.setattr(piecewise, "PIECEWISE_CHARS", 10**12)
    parsed.clear()
    whole = outcome(text, Settings())
    assert parsed == [len(text)]
    assert pieces == whole
    assert whole[0] != text and "jax.tree.map(f, y)" in whole[0]


def test_the_reduced_module_splices_back_to_the_file():
    for text in KEPT_OR_FALLBACK:
        tree = ast.parse(text)
        sites = site_words(tuple(ALL_RULES.active_rules()))
        pieces = piecewise.reduce(text, tree, sites)
        if pieces is not None:
            assert pieces.splice(pieces.text) == text
            ast.parse(pieces.text)


def test_the_survey_reads_the_floor_of_the_whole_output(monkeypatch):
    """The floor noted from the reduced output is the one the whole output gives."""
    from jaxmigrate.migrator import source

    monkeypatch.setattr(piecewise, "PIECEWISE_CHARS", 0)
    text = "import jax\nimport jax.numpy as jnp\n\nx = jax.tree_map(jnp.asarray, y)\n" + (
        FILLER.format(n=0)
    )
    before = piecerun.STATS["taken"]
    result = migrate_source(text, Settings(survey=True))
    assert piecerun.STATS["taken"] == before + 1 and result.changed
    noted = source._noted.entry
    assert noted is not None and noted[0] == result.output
    assert noted[2] == source.evidence(ast.parse(result.output), noted[1]).since
    assert noted[2] is not None


def test_the_survey_parses_the_output_when_a_statement_left_out_names_jax(monkeypatch):
    """A statement left out that spells ``jax`` may name something newer than the reduced
    output does: its floor is not noted from the reduced tree."""
    from jaxmigrate.migrator import source

    monkeypatch.setattr(piecewise, "PIECEWISE_CHARS", 0)
    monkeypatch.setattr(source._noted, "entry", None)
    tail = "\ndef m(a):\n    return jax.numpy.asarray(a)\n"
    text = "import jax\nimport jax.numpy as jnp\n\nx = jax.tree_map(jnp.asarray, y)\n" + (
        FILLER.format(n=0) + tail
    )
    before = piecerun.STATS["taken"]
    result = migrate_source(text, Settings(survey=True))
    assert piecerun.STATS["taken"] == before + 1 and result.changed and tail in result.output
    assert not source.floor_noted(result.output)


def test_statements_with_a_site_are_kept_however_it_is_written():
    """A string site written with escapes, and one in an annotation, stay in the reduced
    module, as do a statement naming an import and one shadowing it."""
    sites = site_words(tuple(ALL_RULES.active_rules()))
    tails = [
        'flag = "JAX\\x5fARRAY"\n',  # "JAX_ARRAY", the value of a string site
        "def k(a: 'DeviceArray'):\n    pass\n",
        "def m():\n    return jax.tree_multimap\n",  # a name site through the import
        "def p():\n    return jax.lax._private\n",  # a private name (JAX902 counts them)
        "jax = None\n",  # a module-level name shadowing the import
    ]
    for tail in tails:
        text = LEGACY + FILLER.format(n=0) + "\n" + tail
        pieces = piecewise.reduce(text, ast.parse(text), sites)
        assert pieces is not None and tail in pieces.text, tail
        assert "def filler_decorated_0" not in pieces.text


def test_statements_that_only_read_an_import_are_left_out():
    """``jax`` read where nothing makes a site: the statement is left out, and the reduced
    run is the whole module's."""
    sites = site_words(tuple(ALL_RULES.active_rules()))
    tail = "def m(a):\n    return jax.numpy.asarray(a) + jax.numpy.ones(3)\n"
    text = LEGACY + FILLER.format(n=0) + "\n" + tail
    pieces = piecewise.reduce(text, ast.parse(text), sites)
    assert pieces is not None and tail not in pieces.text
    assert pieces.shared.imports == (("jax", (("import", "jax", ""),)),)
    assert path_of(text) == "piecewise"


def test_a_helper_a_kept_statement_calls_is_left_out_but_not_a_shadowed_builtin():
    """Nothing resolves ``helper`` to a JAX name: its def is left out, and the migrated
    statements must share with it exactly what they did.  A module-level ``isinstance`` is
    what the clean-up asks about (is it the builtin?): its def stays."""
    sites = site_words(tuple(ALL_RULES.active_rules()))
    text = (
        "import jax\n\nx = jax.tree_map(helper, y) if isinstance(y, list) else y\n"
        + FILLER.format(n=0)
        + "\ndef helper(a):\n    return a\n\n\ndef isinstance(a, b):\n    return False\n"
    )
    pieces = piecewise.reduce(text, ast.parse(text), sites)
    assert pieces is not None
    assert "def helper" not in pieces.text and "def isinstance" in pieces.text
    assert pieces.shared.reads == frozenset({"helper"})
    assert path_of(text) == "piecewise"


def test_a_new_name_a_statement_left_out_binds_in_any_scope_falls_back():
    """JAX903 renames ``normalize`` to ``standardize`` where that name is free anywhere in the
    module; a function left out binds it locally: the whole module decides (it keeps the old
    local name).  Without that function the file goes piecewise."""
    text = "from jax.nn import normalize\n\ny = normalize(x)\n" + FILLER.format(n=0)
    local = "\ndef other(a):\n    standardize = a\n    return standardize\n"
    assert path_of(text) == "piecewise"
    assert "y = standardize(x)" in run(text, ALL_RULES, 0)[0]
    assert path_of(text + local) == "fell back"
    assert "import standardize as normalize" in run(text + local, ALL_RULES, 0)[0]


CLASS = """import jax


class Model:
    \"\"\"A class kept for one method.\"\"\"

    scale = 2

    def apply(self, tree):
        return jax.tree_map(lambda x: x * self.scale, tree)

    def helper(self, a, b=None):
        # a comment in the method
        return [x for x in (a, b) if x]
        # a trailing comment, LibCST's, of the method's block

    @staticmethod
    def other(x,
              y=2):
        return x * y

    @property
    def size(self):
        return self.scale

    @size.setter
    def size(self, value):
        self.scale = value
"""


def test_the_methods_of_a_kept_class_that_hold_no_site_are_left_out():
    sites = site_words(tuple(ALL_RULES.active_rules()))
    pieces = piecewise.reduce(CLASS, ast.parse(CLASS), sites)
    assert pieces is not None
    assert "def apply" in pieces.text and "scale = 2" in pieces.text
    assert "def helper" not in pieces.text and "def other" not in pieces.text
    # ``@size.setter`` reads ``size`` in the class body: both stay
    assert pieces.text.count("def size") == 2
    assert "    def __jm_piece_0__(): pass\n" in pieces.markers
    assert path_of(CLASS) == "piecewise"
    assert "jax.tree.map" in run(CLASS, ALL_RULES, 0)[0]
    for variant in padded(CLASS):
        assert difference(variant, ALL_RULES) is None


def test_a_class_whose_header_holds_a_site_is_kept_whole():
    # (a decorator that is a site: a rule acting there may read the whole class)
    text = CLASS.replace("class Model:", "@jax.pmap\nclass Model:")
    sites = site_words(tuple(ALL_RULES.active_rules()))
    pieces = piecewise.reduce(text, ast.parse(text), sites)
    assert pieces is None or "def helper" in pieces.text
    assert difference(text, ALL_RULES) is None


def test_a_method_that_reads_a_name_resolution_needs_whole_is_kept():
    """``jnp`` is bound by an import and by an assignment: every statement reading it must be
    seen, so the method that reads it stays."""
    text = (
        CLASS.replace("import jax\n", "import jax\nimport jax.numpy as jnp\n").replace(
            "return [x for x in (a, b) if x]", "return jnp.asarray([a, b])"
        )
        + "\n\njnp = None\n"
    )
    sites = site_words(tuple(ALL_RULES.active_rules()))
    pieces = piecewise.reduce(text, ast.parse(text), sites)
    assert pieces is None or "def helper" in pieces.text
    assert difference(text, ALL_RULES) is None


def test_an_import_a_fix_unbinds_that_a_statement_left_out_reads_falls_back():
    """The fix leaves ``c`` unused in the reduced module, whose clean-up removes its import;
    the whole module still reads it: the whole module decides."""
    text = (
        "from jax import core as c\n\np = c.Primitive('p')\n"
        + FILLER.format(n=0)
        + "\ndef tracer_type():\n    return c.Tracer\n"
    )
    assert path_of(text) == "fell back"
    output = run(text, ALL_RULES, 0)[0]
    assert "from jax import core as c" in output and "c.Primitive" not in output


def test_an_import_unused_in_the_reduced_module_that_a_kept_one_repeats_falls_back():
    """The module's ``c`` is read only by a statement left out, a function's own ``c`` (the
    same import) by a kept one: whether the import was used before (which decides whether
    the clean-up may remove the function's once a fix leaves it unused) is the whole
    module's to say.  Without the statement left out, the file goes piecewise."""
    text = (
        "from jax import core as c\n\n\ndef make():\n    from jax import core as c\n"
        "    return c.Primitive('p')\n"
        + FILLER.format(n=0)
        + "\ndef tracer_type():\n    return c.Tracer\n"
    )
    assert path_of(text) == "fell back"
    assert "    from jax import core as c" not in run(text, ALL_RULES, 0)[0]
    alone = text.replace("\ndef tracer_type():\n    return c.Tracer\n", "")
    assert path_of(alone) == "piecewise"


# -- hooks that read more than their sites ask for the whole module ------------------------------
HOOKS_THAT_ASK = [
    # JAX912 reads the def of the function jit names: it is left out (it holds no site)
    "import jax\n"
    + FILLER.format(n=0)
    + "\n\ndef step(x, n):\n    return x * n\n\n\n"
    + "fast = jax.jit(step, static_argnames=('n', 'gone'))\n",
    # JAX102 reads every use of a module-level alias: one is left out (a dispatch key)
    "from jax.interpreters import pxla\n\nSDA = pxla.ShardedDeviceArray\n"
    + FILLER.format(n=0)
    + "\nFORMATS = {SDA: 'sharded'}\n",
    # JAX101 reads the module's own binding of the class's name (here: not JAX's)
    "from jax.numpy import DeviceArray as DA\n\n\ndef f(x: 'DeviceArray') -> DA:\n"
    "    return x\n" + FILLER.format(n=0) + "\nclass DeviceArray:\n    pass\n",
    # JAX203 reads every jit call with input shardings, wherever it is (its hook runs from
    # the second round, once JAX309 wrote jax.process_index; its gates did not pass it)
    "import jax\n\nrank = jax.host_id()\n"
    + FILLER.format(n=0)
    + "\nstep = jax.jit(f, in_shardings=s)\n",
    # JAX501 reads every function with a jax_array parameter (its cases are dropped)
    "import jax\nfrom absl.testing import parameterized\n\njax.config.update('jax_array', True)\n"
    + FILLER.format(n=0)
    + "\n@parameterized.parameters((1, True), (1, False))\ndef test_scale(k, jax_array):\n"
    + "    return k if jax_array else None\n",
]


@pytest.mark.parametrize("text", HOOKS_THAT_ASK)
def test_a_hook_that_reads_a_statement_left_out_falls_back(text):
    """Each rule here reads only its sites until it needs more (Context.needs_name,
    needs_whole_module): then the whole module answers, and the output is the whole module's."""
    assert path_of(text) == "fell back"
    assert difference(text, Settings()) is None


def test_a_hook_reading_only_its_sites_stays_piecewise():
    """The same files with the statement the hook would read removed (or holding the site
    itself: a decorator) go piecewise."""
    kept = [
        "from functools import partial\n\nimport jax\n"
        + FILLER.format(n=0)
        + "\n\n@partial(jax.jit, static_argnames=('n', 'gone'))\ndef step(x, n):\n"
        + "    return x * n\n",
        HOOKS_THAT_ASK[1].replace("\nFORMATS = {SDA: 'sharded'}\n", ""),
        HOOKS_THAT_ASK[2].replace("\nclass DeviceArray:\n    pass\n", ""),
        HOOKS_THAT_ASK[3].replace("step = jax.jit(f, in_shardings=s)", "x = jax.tree_map(f, y)"),
        HOOKS_THAT_ASK[4].split("\n@parameterized")[0],
    ]
    assert [path_of(text) for text in kept] == ["piecewise"] * len(kept)


def test_a_name_imported_from_a_legacy_module_keeps_its_statements():
    """Every member of jax.interpreters.pxla is a site (JAX805 reports each use once per
    file): a function that reads one imported from it is kept."""
    sites = site_words(tuple(ALL_RULES.active_rules()))
    tail = "def spec(a):\n    return ShardingSpec(a, ())\n"
    text = (
        "from jax.interpreters.pxla import ShardingSpec\nimport jax\n\nx = jax.tree_map(f, y)\n"
        + FILLER.format(n=0)
        + "\n"
        + tail
    )
    pieces = piecewise.reduce(text, ast.parse(text), sites)
    assert pieces is not None and tail in pieces.text
    assert "def filler_decorated_0" not in pieces.text
    assert path_of(text) == "piecewise"


def test_a_def_holding_the_first_indented_block_is_left_out():
    """LibCST reads the module's indentation from its first indented block: a ``def`` that
    holds it and no site is left out all the same, its marker carrying the indentation (a
    marker of two lines: positions after it move by what the run takes)."""
    sites = site_words(tuple(ALL_RULES.active_rules()))
    for indent, newline in (("  ", "\n"), ("\t", "\n"), ("    ", "\r\n")):
        text = (
            f"import jax\n\n\ndef helper(a):\n{indent}return a\n\n\n"
            + FILLER.format(n=0).replace("    ", indent)
            + "\nx = jax.tree_map(helper, y)\n"
            + f"if x:\n{indent}z = jax.tree_leaves(x)\n"
        ).replace("\n", newline)
        pieces = piecewise.reduce(text, ast.parse(text), sites)
        assert pieces is not None and "def helper" not in pieces.text
        assert f"__():{newline}{indent}pass{newline}" in pieces.text
        assert path_of(text) == "piecewise"
        saved = piecewise.PIECEWISE_CHARS
        piecewise.PIECEWISE_CHARS = 0
        try:
            fixes = migrate_source(text, ALL_RULES).fixes
        finally:
            piecewise.PIECEWISE_CHARS = saved
        lines = text.split(newline)
        assert sorted(lines[fix.line - 1].strip() for fix in fixes) == [
            "x = jax.tree_map(helper, y)",
            "z = jax.tree_leaves(x)",
        ]


def test_a_submodule_import_read_by_a_statement_left_out_stays():
    """``import os.path`` goes (or becomes ``import os``) once nothing reads ``os.path``; a
    statement left out still reads it, so it stays, as in the whole module."""
    text = (
        "import os.path\n\nimport jax\n\nx = jax.tree_map(os.getcwd, y)\n"
        + FILLER.format(n=0)
        + "\ndef where():\n    return os.path.join('a', 'b')\n"
    )
    assert path_of(text) == "piecewise"
    assert "import os.path\n" in run(text, ALL_RULES, 0)[0]


def test_a_rule_that_asks_before_it_reads_the_whole_module_lets_later_rounds_look():
    """From the second round every active rule looks at the reduced module: JAX404's hook
    sees ``x.device`` (the modern property, not its removed method) and returns, so the file
    stays piecewise; a ``.device()`` call passes its gate, and the file goes whole."""
    text = "import jax\n\nx = jax.tree_map(f, y)\nd = x.device\n" + FILLER.format(n=0)
    assert path_of(text) == "piecewise"
    assert path_of(text.replace("x.device\n", "x.device()\n")) == "whole"
    # JAX203's gates pass a file with a multi-process call and a jit call with shardings
    sharded = HOOKS_THAT_ASK[3].replace("rank = jax.host_id()", "jax.distributed.initialize()")
    assert path_of(sharded) == "whole"
