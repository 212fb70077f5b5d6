"""Doctests in docstrings: migrated by default, with the module's imports, and their old
array reprs rewritten where the new repr is certain (``migrator/doctest_output.py``)."""

from __future__ import annotations

import textwrap

import pytest

from jaxmigrate.migrator.doctest_output import translate
from jaxmigrate.migrator.runner import Options, _migrate_python
from jaxmigrate.migrator.settings import Settings

SETTINGS = Settings(target_version="0.4.30")


def migrate(source: str, settings: Settings = SETTINGS, options: Options = Options()) -> str:
    return _migrate_python(textwrap.dedent(source), settings, options, None)[0]


def _old_repr(value, name: str = "DeviceArray") -> str:  # noqa: ANN001
    """The repr the removed DeviceArray/ShardedDeviceArray gave ``value`` (JAX's old
    ``__repr__``: the class name as numpy's prefix, the same separator rule as today)."""
    import numpy as np

    prefix = name + "("
    array = np.asarray(value)
    dtype = f"dtype={array.dtype.name}" + (", weak_type=True" if value.aval.weak_type else "") + ")"
    text = np.array2string(array, prefix=prefix, suffix=",", separator=", ", max_line_width=75)
    last = len(text) - text.rfind("\n") + 1
    sep = " " * len(prefix) if last + len(dtype) + 1 > 75 else " "
    return f"{prefix}{text},{sep}{dtype}"


def test_translation_is_todays_repr_or_nothing():
    """On today's JAX: every translated repr is exactly what JAX prints for the same value."""
    jnp = pytest.importorskip("jax.numpy")
    np = pytest.importorskip("numpy")
    rng = np.random.default_rng(0)
    translated = long_separators = 0
    for index in range(300):
        width = int(rng.integers(1, 14))
        shape = [(width,), (2, width), (1, width), (2, 2, width)][index % 4]
        scale = [1, 10, 1000, 0.001, 12345.678][index % 5]
        dtype = [jnp.float32, jnp.int32, jnp.float16][index % 3]
        value = jnp.asarray(rng.standard_normal(shape) * scale, dtype=dtype)
        for name in ("DeviceArray", "ShardedDeviceArray"):
            old = _old_repr(value, name).replace("\n\n", "\n<BLANKLINE>\n")
            new = translate(old)
            if new is not None:
                assert new == repr(value).replace("\n\n", "\n<BLANKLINE>\n"), old
                translated += 1
                long_separators += ",      dtype=" in new
    weak = jnp.add(1.0, 1.0)
    assert translate(_old_repr(weak)) == repr(weak) == "Array(2., dtype=float32, weak_type=True)"
    assert translated > 200 and long_separators > 0  # the test reached both separators


@pytest.mark.parametrize(
    "old",
    [
        "DeviceArray([], dtype=float32)",  # today: Array([], shape=(0,), dtype=float32)
        # a wrapped row: where numpy breaks it depends on the prefix's width
        "DeviceArray([ 0.,  1.,  2.,  3.,  4.,  5.,  6.,  7.,  8.,  9., 10., 11.,\n"
        "             12., 13.], dtype=float32)",
        "DeviceArray([1., 2.],            dtype=float32)",  # not numpy's default line width
        "DeviceArray(shape=(2,), dtype=float32)",
        "DeviceArray([1., 2.], dtype=float32, named_shape={})",
    ],
)
def test_uncertain_reprs_are_left(old):
    assert translate(old) is None


DOCSTRING = '''\
"""Helpers.

>>> jax.tree_map(lambda a: a * 2, {"a": jnp.ones(2)})
{'a': DeviceArray([2., 2.], dtype=float32)}
>>> jnp.arange(4.).reshape(2, 2)
DeviceArray([[0., 1.],
             [2., 3.]], dtype=float32)
>>> isinstance(jnp.ones(1), jnp.DeviceArray)
True
"""
'''


def test_examples_use_the_module_imports():
    """doctest runs a module's examples in its globals: ``jnp``/``jax`` are the module's."""
    out = migrate(DOCSTRING + "import jax\nimport jax.numpy as jnp\n")
    assert out == (
        '"""Helpers.\n\n'
        '>>> jax.tree.map(lambda a: a * 2, {"a": jnp.ones(2)})\n'
        "{'a': Array([2., 2.], dtype=float32)}\n"
        ">>> jnp.arange(4.).reshape(2, 2)\n"
        "Array([[0., 1.],\n"
        "       [2., 3.]], dtype=float32)\n"
        ">>> isinstance(jnp.ones(1), jax.Array)\n"
        'True\n"""\nimport jax\nimport jax.numpy as jnp\n'
    )
    assert migrate(out) == out  # idempotent


def test_an_import_the_module_lacks_goes_into_the_examples():
    out = migrate(DOCSTRING.replace("jax.tree_map", "jnp.add") + "import jax.numpy as jnp\n")
    assert out.startswith('"""Helpers.\n\n>>> import jax\n>>> jnp.add(')
    assert ">>> isinstance(jnp.ones(1), jax.Array)" in out
    assert "import jax\n" not in out.split('"""')[2]  # the module's code is not touched


def test_no_doctests_option_and_rule_selection():
    source = DOCSTRING + "import jax\nimport jax.numpy as jnp\n"
    assert migrate(source, options=Options(doctests=False)) == textwrap.dedent(source)
    # with JAX101 (DeviceArray) ignored, its reprs stay too; JAX701's tree_map still goes
    out = migrate(source, Settings(target_version="0.4.30", ignore=("JAX101",)))
    assert "DeviceArray([2., 2.], dtype=float32)" in out and "jax.tree.map" in out


@pytest.mark.parametrize(
    "source",
    [
        # already modern
        '"""Doc.\n\n>>> jax.tree.map(f, x)\nArray([2., 2.], dtype=float32)\n"""\nimport jax\n',
        # >>> in a string that is not a docstring
        'import jax\nX = """\n>>> jax.tree_map(f, x)\nDeviceArray([2.], dtype=float32)\n"""\n',
        'import jax\n\ndef f():\n    x = 1\n    """>>> jax.tree_map(f, x)\n    """\n',
        # prose and printed (str) output, not an example's repr
        '"""Returns a DeviceArray; see jax.tree_map.\n\n>>> print(x)\n[1. 2.]\n"""\nimport jax\n',
        # an old repr in prose, outside any example's output
        '"""Doc.\n\nDeviceArray([1., 2.], dtype=float32) was the old repr.\n"""\n',
    ],
)
def test_noop(source):
    assert migrate(source) == source


def test_rest_code_blocks_in_docstrings():
    """``Example::`` literal blocks and ``.. code-block:: python`` in a docstring are code too;
    a literal block that is not Python stays, and so does prose."""
    source = textwrap.dedent(
        '''\
        import jax


        def scaled(tree):
            """Scales a tree; see jax.tree_map.

            Example::

              g = jax.tree_map(jnp.sign, tree)

            .. code-block:: python

              leaves = jax.tree_leaves(tree)

            Shell::

              pip install jax.tree_map
            """
        '''
    )
    out = migrate(source)
    assert "  g = jax.tree.map(jnp.sign, tree)\n" in out
    assert "  leaves = jax.tree.leaves(tree)\n" in out
    assert "see jax.tree_map." in out and "pip install jax.tree_map" in out
    assert migrate(out) == out


def test_markdown_fences_in_docstrings():
    """Markdown fences (as mkdocstrings renders docstrings) are code too: a ```python or
    ~~~py block is migrated; a fence in another language, a doctest inside a fence (migrated
    once, as a doctest) and the prose around them stay as they were."""
    source = textwrap.dedent(
        '''\
        import jax


        def scaled(tree):
            """Scales a tree; see jax.tree_map.

            ```python
            g = jax.tree_map(jnp.sign, tree)
            ```

            ~~~py
            leaves = jax.tree_leaves(tree)
            ~~~

            ```python
            >>> jax.tree_map(jnp.sign, [1.0])
            ```

            ```bash
            echo jax.tree_map
            ```
            """
        '''
    )
    out = migrate(source)
    assert "    g = jax.tree.map(jnp.sign, tree)\n" in out
    assert "    leaves = jax.tree.leaves(tree)\n" in out
    assert "    >>> jax.tree.map(jnp.sign, [1.0])\n" in out
    assert "see jax.tree_map." in out and "echo jax.tree_map" in out
    assert migrate(out) == out


def test_unbound_jax_in_examples_is_jax():
    """Projects give doctest ``jax``/``jnp`` (pytest's doctest_namespace): an example that
    uses them unbound, in a module that imports neither, still migrates, adding nothing."""
    source = '"""Doc.\n\n>>> jax.tree_map(jnp.shape, params)\n{}\n"""\nimport numpy as np\n'
    assert migrate(source) == source.replace("jax.tree_map", "jax.tree.map")


def test_docstring_fixes_point_at_the_docstring_columns():
    source = 'import jax\n\n\ndef f():\n    """Doc.\n\n    >>> y = jax.tree_map(g, x)\n    """\n'
    fixes = _migrate_python(source, SETTINGS, Options(), None)[1]
    assert [(d.code, d.line, d.column) for d in fixes] == [("JAX701", 7, 13)]


def test_code_literals_in_docstrings():
    """A code literal that spells a JAX name is migrated like the name in code; prose, lines
    about the change itself, doctest lines and other strings are not."""
    source = textwrap.dedent(
        '''\
        """Tools.

        Use ``jax.tree_map`` to map; `jnp.DeviceArray` is the type.
        ``jax.tree_map`` was removed in 0.6; ``jax.random.PRNGKey`` stays.
        A DeviceArray in prose stays.
        """
        import jax

        X = "``jax.tree_map``"


        def f(x):
            """Returns a ``jax.experimental.maps.Mesh``.

            >>> f(1)
            DeviceArray(...)
            """
        '''
    )
    assert "Use ``jax.tree_map`` to map" in migrate(source)  # without --docs: left
    docs = Options(docs=True)
    out = migrate(source, options=docs)
    assert "Use ``jax.tree.map`` to map; `jax.Array` is the type." in out
    assert "``jax.tree_map`` was removed in 0.6; ``jax.random.PRNGKey`` stays." in out
    assert "A DeviceArray in prose stays." in out and 'X = "``jax.tree_map``"' in out
    assert '"""Returns a ``jax.sharding.Mesh``.' in out
    assert "    Array(...)\n" in out  # doctest's ELLIPSIS pattern for any repr of the type
    assert migrate(out, options=docs) == out
    assert migrate(source, options=Options(docs=True, doctests=False)) == source


def test_split_by_rule_carries_the_docstrings():
    """--split-by-rule's per-rule steps include each rule's docstring changes and add up to
    the full run."""
    from jaxmigrate.migrator.split import split_file

    source = DOCSTRING + "import jax\nimport jax.numpy as jnp\n"
    steps, sequential, full = split_file(source, SETTINGS)
    assert sequential == full == migrate(source)
    codes = [code for code, _before, _after in steps]
    assert "JAX101" in codes and "JAX701" in codes
    jax101 = next(after for code, _b, after in steps if code == "JAX101")
    assert "Array([2., 2.], dtype=float32)" in jax101


def test_code_literals_without_fix_positions():
    """The text output does not locate fixes (``locate_fixes`` off): literals still migrate."""
    source = '"""Note: `jax.numpy.DeviceArray`\'s data gets copied."""\nimport jax\n'
    out = migrate(source, Settings(target_version="0.4.30", locate_fixes=False), Options(docs=True))
    assert out == source.replace("jax.numpy.DeviceArray", "jax.Array")


def test_an_import_the_fix_leaves_unused_stays_in_the_module():
    source = (
        '"""Doc.\n\n>>> isinstance(x, jnp.DeviceArray)\nTrue\n"""\n'
        "import jax\nimport jax.numpy as jnp\n"
    )
    assert migrate(source) == source.replace("jnp.DeviceArray", "jax.Array")


def test_the_docstring_pass_reads_the_tree_the_engine_parsed(monkeypatch):
    """A module the engine leaves unchanged hands its ``ast`` tree on: the examples are found
    in it, not in a second parse, and migrated the same."""
    import ast

    from jaxmigrate.migrator.engine import migrate_source

    source = DOCSTRING + "import jax\nimport jax.numpy as jnp\nprint(jax.devices())\n"
    result = migrate_source(source, SETTINGS)
    assert result.output == source and result.tree is not None
    assert ast.dump(result.tree) == ast.dump(ast.parse(source))
    expected = migrate(source)
    parses = []
    real_parse = ast.parse
    monkeypatch.setattr(
        ast, "parse", lambda text, *a, **k: parses.append(text) or real_parse(text, *a, **k)
    )
    assert migrate(source) == expected != source
    assert parses.count(source) == 1  # by the engine's gate 2, not again for the examples


def test_the_code_block_hint_is_the_one_pattern_it_replaces():
    import re

    from jaxmigrate.migrator.docpieces import may_hold_code_block

    one = re.compile(
        r"::[ \t]*\r?$|(?:code-block|sourcecode|code)::|^[ \t]*(?:```|~~~)[ \t]*\{?\.?(?:py|ipy)",
        re.M,
    )
    pieces = ["x = a[::2]\n", "Example::\n", "Example:: \r\n", "Example::  x\n", ".. code:: py",
              ".. code-block::", ".. sourcecode::", "  ```python\n", "```\n", " ~~~ {.py}\n",
              "~~~ipython", "``` js\n", "s = '::'", "x::y", "\t```py", "cod e::"]  # fmt: skip
    texts = [a + b for a in pieces for b in pieces] + [a + "\n" + b for a in pieces for b in pieces]
    assert {may_hold_code_block(t) for t in texts} == {True, False}
    assert all(may_hold_code_block(t) == bool(one.search(t)) for t in texts)


JRAPH_SHAPE = '''\
import jax.numpy as jnp


def segment_sum(data):
  """Sums.

    >>> segment_sum(jnp.arange(3))
    DeviceArray([0, 1, 2], dtype=int32)

    >>> segment_sum(jnp.arange(4))
    DeviceArray([0, 1, 2, 3], dtype=int32)
  """
  return data


def other(data):
  """Doc.

    >>> other(jnp.arange(3))
    DeviceArray([0, 1, 2], dtype=int32)
  """
  return data
'''


def test_the_last_examples_output_before_the_closing_quotes():
    """jraph 0.0.6's ``utils.py``: a docstring's closing quotes on their own line, indented
    less than its examples, were read as the last example's output, which then did not look
    indented as its prompt and was left; only the first output of each docstring changed."""
    out, fixes, _findings, _ = _migrate_python(JRAPH_SHAPE, SETTINGS, Options(), None)
    assert "DeviceArray" not in out
    assert out == JRAPH_SHAPE.replace("DeviceArray(", "Array(")
    assert sorted(d.line for d in fixes) == [8, 11, 20]
    assert migrate(out) == out


KEYS_IN_EXAMPLES = '''
import jax

def sample(seed):
    """Draws.

    >>> key = jax.random.PRNGKey(0)
    >>> sample(1)
    """
    return jax.random.normal(jax.random.PRNGKey(seed), (2,))

def split(seed):
    """
    >>> keys = jax.random.split(jax.random.PRNGKey(3))
    """
'''


@pytest.mark.parametrize("in_code", [True, False], ids=["code-too", "examples-only"])
def test_a_once_per_file_finding_is_not_repeated_in_each_docstring(in_code):
    """JAX503 reports the first key of a file once (numpyro's handlers.py had it seven times:
    once in its code and once in each of six docstrings): the examples add none where the code
    has it, and only their first where it has not."""
    text = textwrap.dedent(KEYS_IN_EXAMPLES)
    if not in_code:
        text = text.replace("jax.random.normal(jax.random.PRNGKey(seed), (2,))", "seed")
    settings = Settings(source_version="0.3.25")
    findings = _migrate_python(text, settings, Options(), None)[2]
    lines = [d.line for d in findings if d.code == "JAX503"]
    key_lines = [i for i, line in enumerate(text.splitlines(), 1) if "PRNGKey" in line]
    assert lines == ([key_lines[1]] if in_code else [key_lines[0]])
