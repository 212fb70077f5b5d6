"""The docstring migration's gate (``docgate.may_change``: gate 1 for the programs built from a
module's examples and imports, checked before the module is parsed for them) only
over-approximates: with every gate off (``Settings(gates=False)``) the docstrings of a module
come out the same, with the same fixes and findings.

The modules are made from every fixture's input and look-alike: its code as doctest examples
(with its imports, or with them left in the module, or with ``jax.numpy as jnp`` left to the
doctest convention, or next to a docstring whose examples name no JAX), and as a reST code
block.
"""

from __future__ import annotations

import ast
import dataclasses
from typing import Iterator, List, Tuple

from jaxmigrate.migrator import MigrationError
from jaxmigrate.migrator.docgate import may_change
from jaxmigrate.migrator.docs import migrate_docstrings
from jaxmigrate.migrator.settings import Settings
from tests.fixture_support import FIXTURES, fixture_settings


def _examples(code: str, indent: str = "    ") -> str:
    """``code`` as doctest examples: a statement's first line after ``>>>``, the rest after
    ``...``."""
    lines = code.splitlines()
    out: List[str] = []
    for node in ast.parse(code).body:
        first = node.lineno - 1
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            first -= len(node.decorator_list)
            first = min([first] + [d.lineno - 1 for d in node.decorator_list])
        last = node.end_lineno or node.lineno
        for number, line in enumerate(lines[first:last]):
            out.append(f"{indent}{'>>>' if number == 0 else '...'} {line}".rstrip())
        if len(lines[first:last]) > 1:
            out.append(f"{indent}...")
    return "\n".join(out) + "\n"


def _modules(code: str) -> Iterator[Tuple[str, str]]:
    tree = ast.parse(code)
    lines = code.splitlines(keepends=True)
    imports = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    import_lines = {i for n in imports for i in range(n.lineno - 1, n.end_lineno or n.lineno)}
    rest = "".join(line for i, line in enumerate(lines) if i not in import_lines)
    head = "".join(line for i, line in enumerate(lines) if i in import_lines)
    if rest.strip():
        try:
            ast.parse(rest)
        except SyntaxError:
            rest = ""
    yield "examples", f'def f():\n    """Example.\n\n{_examples(code)}    """\n'
    # a second docstring whose examples name no JAX: the gate turns that one away alone
    yield (
        "two docstrings",
        (
            f'def f():\n    """Example.\n\n{_examples(code)}    """\n\n\n'
            'def g():\n    """Other.\n\n    >>> import numpy as np\n    >>> np.sum([1, 2])\n'
            '    np.int64(3)\n    """\n'
        ),
    )
    if rest.strip():
        yield "module imports", f'{head}\n\ndef f():\n    """Use.\n\n{_examples(rest)}    """\n'
        no_jnp = "".join(line for line in head.splitlines(keepends=True) if "as jnp" not in line)
        yield "conventional jnp", f'{no_jnp}\n\ndef f():\n    """Use.\n\n{_examples(rest)}    """\n'
    block = "".join("    " + line if line.strip() else "\n" for line in code.splitlines(True))
    yield "code block", f'class C:\n    """Example::\n\n{block}\n    """\n'


def _fixture_modules() -> Iterator[Tuple[str, Settings, str]]:
    """(where, settings, module) for each module :func:`_modules` makes of each fixture's input
    and look-alike."""
    for path in sorted(FIXTURES.glob("*/*.py")):
        if path.name.endswith((".run.py", ".after.py")):
            continue
        code = path.read_text(encoding="utf-8")
        settings = fixture_settings(code)
        try:
            modules = list(_modules(code))
        except SyntaxError:
            continue
        for label, text in modules:
            yield f"{path.relative_to(FIXTURES)} ({label})", settings, text


def _outcome(text: str, settings: Settings) -> Tuple[object, ...]:
    try:
        output, fixes, findings = migrate_docstrings(text, settings)
    except MigrationError as error:
        return ("error", error.message)
    return output, sorted(map(repr, fixes)), sorted(map(repr, findings))


def test_the_docstring_gate_changes_nothing_on_fixture_examples():
    """Every module the gate turns away, and one in six of the others (the gated run then
    reaches the engine, whose own gates tests/test_gate_equivalence.py checks), against a run
    with every gate off."""
    count = turned_away = acted = 0
    offenders: List[str] = []
    for where, settings, text in _fixture_modules():
        count += 1
        away = not may_change(text, settings)
        turned_away += away
        if not away and count % 6:
            continue
        gated = _outcome(text, settings)
        ungated = _outcome(text, dataclasses.replace(settings, gates=False))
        acted += gated[0] != text or bool(gated[1:] != ([], []))
        if gated != ungated:
            offenders.append(where)
    assert count >= 1000, "the fixtures went missing"
    assert turned_away >= 40, "the gate must turn some modules away"
    assert acted >= 50, "the examples must give the rules something to do"
    assert not offenders, "gated and ungated docstring runs differ:\n" + "\n".join(offenders)


def test_the_gate_lets_unbound_jnp_through():
    """``jnp`` alone names JAX in an example (doctest set-ups bind it): the module mentions no
    ``jax`` at all, and the example is still migrated."""
    text = 'def f():\n    """\n    >>> y = jnp.product(x)\n    """\n'
    assert "jax" not in text
    output, fixes, _findings = migrate_docstrings(text, Settings(target_version="0.4.30"))
    assert output == text.replace("jnp.product", "jnp.prod")
    assert [fix.code for fix in fixes] == ["JAX903"]


# A site over two example lines (the call's keyword on the continuation line), and a
# look-alike gate 1b turns away before the module is parsed.
ACROSS_PROMPTS = (
    'def f(x):\n    """\n    >>> import jax.numpy as jnp\n    >>> y = jnp.reshape(x,\n'
    '    ...       newshape=(2, 3))\n    """\n'
)
LOOK_ALIKE = (
    'def f():\n    """\n    >>> import jax\n    >>> from mylib import core\n'
    '    >>> core.DropVar(jax.numpy.ones(3))\n    """\n'
)


def test_gate_1b_reads_the_examples_as_their_program_does():
    settings = Settings(target_version="0.10.0")
    assert may_change(ACROSS_PROMPTS, settings)
    gated = _outcome(ACROSS_PROMPTS, settings)
    assert gated[0] != ACROSS_PROMPTS and gated[1]  # JAX906 rewrites the keyword
    assert gated == _outcome(ACROSS_PROMPTS, dataclasses.replace(settings, gates=False))
    assert not may_change(LOOK_ALIKE, settings)
    assert _outcome(LOOK_ALIKE, dataclasses.replace(settings, gates=False)) == (LOOK_ALIKE, [], [])


def test_prose_and_quotes_around_the_examples_do_not_hide_them():
    """The prose line before an example ends in a dot, the docstring's quotes open on it: the
    example's chain must still read as ``jax.tree_map``, not ``Use.jax.tree_map``."""
    settings = Settings(target_version="0.4.30")
    for text in (
        '"""Use.\n>>> jax.tree_map(f, x)\n"""\n',
        'def f():\n    """Use it like this.\n    >>> y = (jax\n'
        '    ...      .tree_map(f, x))\n    """\n',
    ):
        assert may_change(text, settings)
        gated = _outcome(text, settings)
        assert "jax.tree.map" in gated[0]  # type: ignore[operator]
        assert gated == _outcome(text, dataclasses.replace(settings, gates=False))


def test_code_blocks_are_read_apart_from_their_prose():
    """A reST literal block and a Markdown fence, each right after its prose line: gate 1b
    reads each block's lines as a program of their own."""
    settings = Settings(target_version="0.4.30")
    text = (
        'def f():\n    """Use it like this.  Example::\n\n        y = jax.tree_map(f, x)\n\n'
        "    Or in Markdown.\n    ```python\n    z = (jax.\n         tree_map(g, x))\n    ```\n"
        '    """\n'
    )
    assert may_change(text, settings)
    gated = _outcome(text, settings)
    assert gated[0].count("jax.tree.map") == 1 and "tree.map(g" in gated[0]  # type: ignore
    assert gated == _outcome(text, dataclasses.replace(settings, gates=False))
    migrated = text.replace("tree_map", "tree.map")
    assert not may_change(migrated, settings)


def test_the_examples_and_blocks_the_gate_reads() -> None:
    """``docgate._pieces_in``: each ``>>>`` example with the ``...`` lines at its own indentation
    (another prompt, another indentation or any other line ends it), then each fenced, ``::``
    and directive block, in the order of the text."""
    from jaxmigrate.migrator.docgate import _pieces_in

    text = (
        '"""Doc.\n'
        "\n"
        "    >>> a = f(1,\n"
        "    ...       2)\n"
        "    >>> b = 3\n"
        "      ... not = this\n"
        "    ... nor_this\n"
        ">>>\n"
        "    >>>no_space\n"
        "    >>> last\n"
        "    ...\n"
        "\n"
        "Example::\n"
        "\n"
        "    c = 4\n"
        "    >>> d = 5\n"
        "done\n"
        "```python\n"
        "e = 6\n"
        "```\n"
        '"""\n'
    )
    assert _pieces_in(text) == [
        "a = f(1,\n      2)\n",
        "b = 3\n",
        "\n",
        "last\n\n",
        "d = 5\n",
        "\nc = 4\nd = 5",
        "e = 6",
        '"""',  # (a closing fence reads as one that opens: more code only adds words)
    ]


_PRIVATE_MODULE = "from jax._src import numpy as jnp\nfrom jax import _src as s\nimport jax\n\n"
PRELUDE_CASES = [
    # (examples, whether the program is left to its prelude)
    (">>> jnp.arange(3)\n    >>> jax.jit(f)(1)\n", True),
    (">>> jnp._where(x)\n", False),  # a private part: a finding of its own
    (">>> s.core.Primitive\n", False),  # ``jax._src.core`` through the prelude's alias
    (">>> from jax._src import core\n    >>> core.Primitive\n", False),
    (">>> jax._src.core\n", False),
    (">>> (jnp.\n    ...  # a note\n    ...  _where(x))\n", False),
    # public imports land nothing; a private name imported from JAX does
    (">>> import jax.numpy as jnp\n    >>> from flax import nnx\n    >>> jnp.ones(3)\n", True),
    (">>> from jax.experimental import _private_thing\n", False),
    (">>> from jax import (numpy,\n    ...    _src)\n", False),
    (">>> from jaxlib import _jax\n", False),
    (">>> from jax import core as _c\n    >>> _c.Primitive\n", False),
]


def _spied(monkeypatch) -> List[bool]:  # noqa: ANN001
    """Each answer to "left to its prelude?": the docstrings' gate's, for all of a module's
    examples or a docstring's (``docgate.left_to_prelude``), and the migration's, for a
    docstring's program (``docs.prelude_only``)."""
    import jaxmigrate.migrator.docgate as docgate
    import jaxmigrate.migrator.docs as docs

    answers: List[bool] = []

    def spied(real):  # noqa: ANN001, ANN202
        def spy(*args, **kwargs) -> bool:  # noqa: ANN002, ANN003
            answers.append(real(*args, **kwargs))
            return answers[-1]

        return spy

    monkeypatch.setattr(docs, "prelude_only", spied(docs.prelude_only))
    monkeypatch.setattr(docgate, "left_to_prelude", spied(docgate.left_to_prelude))
    return answers


def test_a_program_whose_rules_act_only_in_its_prelude_is_passed_by(monkeypatch) -> None:
    """JAX902 in the prelude of a docstring's program (a module of JAX's own, which imports
    ``jax._src``): its findings stay at the prelude's imports, which are dropped."""
    answers = _spied(monkeypatch)
    settings = Settings()
    for examples, expected in PRELUDE_CASES:
        text = f'{_PRIVATE_MODULE}def f(x):\n    """Use.\n\n    {examples}    """\n'
        answers.clear()
        gated = _outcome(text, settings)
        assert any(answers) is expected, examples
        assert gated == _outcome(text, dataclasses.replace(settings, gates=False)), examples


def test_programs_passed_by_give_what_every_gate_off_gives(monkeypatch) -> None:
    """Every fixture module (made as above) where the docstring migration passes a program
    by, against a run with every gate off.  Gate 1b reads each program with all the module's
    imports here: the imports a prelude may take (``docgate._preludes``) leave most of those
    programs to the gate, before ``prelude_only`` is asked."""
    import jaxmigrate.migrator.docgate as docgate

    monkeypatch.setattr(docgate, "_preludes", lambda statements, pieces: "\n".join(statements))
    answers = _spied(monkeypatch)
    checked, offenders = 0, []
    for where, settings, text in _fixture_modules():
        answers.clear()
        gated = _outcome(text, settings)
        if not any(answers):
            continue
        checked += 1
        if gated != _outcome(text, dataclasses.replace(settings, gates=False)):
            offenders.append(where)
    assert checked >= 5, "no fixture module has a program left to its prelude"  # (8 today)
    assert not offenders, "\n".join(offenders)


def test_the_gate_reads_only_the_imports_a_prelude_may_take() -> None:
    """A module of JAX's own imports ``jax._src``: its examples' programs hold that import only
    where an example spells the name it binds (``docs.module_prelude``), so gate 1b reads the
    examples with those imports alone and JAX902 passes only the modules whose example spells
    ``core``.  Of those, only one that reads a private name through it may get a finding in
    its examples; ``core.Primitive`` counts a use of the import, whose finding is the prelude's,
    dropped (``PrivateApiGate.prelude_only``)."""
    settings = Settings()
    head = 'from jax._src import core\nimport jax\n\n\ndef f(x):\n    """Use.\n\n'
    quiet = head + '    >>> jax.numpy.ones(3)\n    """\n'
    public = head + '    >>> core.Primitive("p")\n    """\n'
    private = head + '    >>> core._private_rule(3)\n    """\n'
    assert not may_change(quiet, settings)
    assert not may_change(public, settings)
    assert may_change(private, settings)
    ungated = dataclasses.replace(settings, gates=False)
    for text in (quiet, public, private):
        assert _outcome(text, settings) == _outcome(text, ungated)
