"""The engine's per-round index, positions and memo, and where fixes are located.

Performance work (an index of the nodes the analysis visited, statement-at-a-time positions,
a traversal without LibCST's visitor machinery) whose behaviour must not change: each is
checked against LibCST's own answer, on small sources and on every fixture input.
"""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from jaxmigrate.migrator import MigrationError, Settings, migrate_source
from jaxmigrate.migrator.analysis import analyze
from jaxmigrate.migrator.scope import Interest
from tests.fixture_support import fixture_cases

ONLY_101 = Settings(select=("JAX101",))


_INDEX_SOURCE = textwrap.dedent(
    """
    import jax
    from jax.experimental import pjit as pj

    @jax.jit
    def f(a: "DeviceArray", *, b=g(1)) -> int:
        with mesh as m, other:
            x = [h(y) for y in range(3) if k(y)]
        return lambda q: q.attr(x, key=f"{v!r:>{w}}")

    class C(Base, metaclass=M):
        z: int = 1
        try:
            import foo
        except ImportError:
            foo = None
    """
)


class _Preorder(cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.order: list = []
        self.parents: dict = {}
        self.stack: list = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        if self.stack:
            self.parents[id(node)] = self.stack[-1]
        self.stack.append(node)
        self.order.append(node)
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self.stack.pop()


def _context(source: str):
    from jaxmigrate.migrator.context import Context

    module = cst.parse_module(source)
    settings = Settings()
    return Context(module, analyze(module, Interest()), settings, settings.target, None)


def test_all_nodes_and_parents_match_a_libcst_visitor() -> None:
    ctx = _context(_INDEX_SOURCE)
    expected = _Preorder()
    ctx.module.visit(expected)
    from jaxmigrate.migrator.traversal import trivia

    kinds = {type(node) for node in expected.order}
    assert kinds & trivia() and kinds - trivia()
    for kind in kinds - trivia():
        want = [node for node in expected.order if type(node) is kind]
        got = ctx.all_nodes(kind)
        assert len(got) == len(want) and all(a is b for a, b in zip(got, want)), kind.__name__
    for kind in kinds & trivia():
        with pytest.raises(ValueError, match="not indexed"):
            ctx.all_nodes(kind)
    # every parent, whitespace and punctuation included (those from a walk made on demand)
    for node in expected.order[1:]:
        assert ctx.parent(node) is expected.parents[id(node)]


@pytest.mark.parametrize("before", [case[1] for case in fixture_cases()])
def test_the_analysis_visits_every_node_of_the_types_it_always_visits(before) -> None:
    """What the tidying's ``_in_tree`` reads instead of a walk: every node of a type in
    ``ALWAYS_VISITED`` has its parent in the analysis, and so has every ``Attribute`` outside
    import statements.  (A type the analysis may step over, such as a binding's name, is
    asked of the full walk.)"""
    from jaxmigrate.migrator.scopewalk import ALWAYS_VISITED
    from jaxmigrate.migrator.traversal import children

    module = cst.parse_module(before.read_text(encoding="utf-8"))
    visited = analyze(module, Interest()).parents
    stack = [(module, False)]
    while stack:
        node, in_import = stack.pop()
        for child in children(node):
            inside = in_import or isinstance(child, (cst.Import, cst.ImportFrom))
            stack.append((child, inside))
            kind = type(child)
            if kind in ALWAYS_VISITED or (kind is cst.Attribute and not in_import):
                assert id(child) in visited, (kind.__name__, type(node).__name__)


@pytest.mark.parametrize(
    "source, written",
    [
        ("import jax\nx = jax.tree_map(f, y)\n", "jax.tree.map"),
        ("from jax import tree_map\nx = tree_map(f, y)\n", "jax.tree.map"),
    ],
)
def test_the_tidying_knows_a_fix_s_new_nodes_without_the_walk(source, written) -> None:
    from jaxmigrate.migrator.tidy import _in_tree

    ctx = _context(source)
    for node in (*ctx.all_nodes(cst.Attribute), *ctx.nodes(cst.Call), *ctx.all_nodes(cst.Name)):
        assert _in_tree(ctx, node)  # (import internals and binding names included)
    new = cst.parse_expression(written)
    call = ctx.nodes(cst.Call)[0]
    assert not _in_tree(ctx, new) and not _in_tree(ctx, call.with_changes(func=new))
    assert not _in_tree(ctx, ctx.module)


def test_analysis_nodes_are_in_source_order_and_cover_statements() -> None:
    ctx = _context(_INDEX_SOURCE)
    expected = _Preorder()
    ctx.module.visit(expected)

    def in_import(node: cst.CSTNode) -> bool:
        while id(node) in expected.parents:
            node = expected.parents[id(node)]
            if isinstance(node, (cst.Import, cst.ImportFrom)):
                return True
        return False

    for kind in (
        cst.Call,
        cst.With,
        cst.Assign,
        cst.FunctionDef,
        cst.ClassDef,
        cst.Attribute,
        cst.Annotation,
    ):
        want = [node for node in expected.order if type(node) is kind and not in_import(node)]
        got = ctx.nodes(kind)
        if kind is cst.Call:  # a comprehension's iterable is visited before its element
            assert sorted(map(id, got)) == sorted(map(id, want))
        else:
            assert [id(n) for n in got] == [id(n) for n in want], kind.__name__
    assert [s.value for s in ctx.analysis.annotation_strings] == ['"DeviceArray"']
    # binding names are left out of the analysis index, but not out of all_nodes
    assert "m" not in {n.value for n in ctx.nodes(cst.Name)}
    assert "m" in {n.value for n in ctx.all_nodes(cst.Name)}
    # the import under ``try: ... except ImportError`` is a guarded binding, the others not
    guarded = {b.name: b.guarded for b in ctx.analysis.imports}
    assert guarded == {"jax": False, "pj": False, "foo": True}


_POSITION_SOURCES = (
    _INDEX_SOURCE,
    "x = 1\r\ny = '''a\r\nb'''\r\nif x:\r\n    pass\r\n",
    "a\\\n  .b\n",
    # LibCST 1.9 generates ``except E:``: its positions are those of the code it generates
    "import jax\ntry:\n    x = 1\nexcept E \\\n  :\n    x = 2\nimport a\nimport b\nimport c\n",
    "# header\n\nimport jax  # c\n\n\ndef f(x):\n    return x.device_buffer\n# footer\n",
    "x = 1\ny = '''\n\n'''\nif x:\n    z = (1,\n 2)",  # no trailing newline
    "x = 1\r\ny = 2\nz = 3\rw = 4\n",  # mixed line endings
    "if x:\n\tpass\nelse:\n\ty = 1; z = 2\n",
    "",
    "# only a comment",
)


def _fixture_sources() -> list:
    from pathlib import Path

    befores = sorted(Path(__file__).parent.parent.joinpath("fixtures").glob("*/*.py"))
    assert len(befores) > 100
    return [path.read_text(encoding="utf-8") for path in befores]


@pytest.mark.parametrize(
    ("cached", "from_source"),
    [(False, False), (True, False), (False, True), (True, True)],
    ids=["plain", "per-file cache", "source", "source and cache"],
)
def test_positions_match_libcst_position_provider(cached: bool, from_source: bool) -> None:
    """Every node, asked in any order: the statement-at-a-time positions must agree with
    LibCST's own pass over the whole module (on every fixture input, with the cache the
    engine uses, and with the parsed text known, as in a first round: lines then counted
    back from the end of the file for late statements)."""
    import contextlib

    from libcst.metadata import MetadataWrapper, PositionProvider

    from jaxmigrate.migrator.traversal import cached_children

    for source in _POSITION_SOURCES + (tuple(_fixture_sources()) if cached else ()):
        with cached_children() if cached else contextlib.nullcontext():
            ctx = _context(source)
            if from_source:
                ctx.source = source
            expected = MetadataWrapper(ctx.module, unsafe_skip_copy=True).resolve(PositionProvider)
            # last statement first, then the rest: the order must not matter
            for node, code_range in reversed(list(expected.items())):
                assert ctx.position(node) == code_range, (type(node).__name__, source[:60])
            if from_source:  # a fresh pass, asked from the middle out
                ctx = _context(source)
                ctx.source = source
                expected = MetadataWrapper(ctx.module, unsafe_skip_copy=True).resolve(
                    PositionProvider
                )
                items = list(expected.items())
                middle = len(items) // 2
                for node, code_range in items[middle:] + items[:middle][::-1]:
                    assert ctx.position(node) == code_range, (type(node).__name__, source[:60])


def test_module_code_from_the_statement_caches_is_the_module_code() -> None:
    from jaxmigrate.migrator.positions import module_code
    from jaxmigrate.migrator.traversal import cached_children

    for source in _POSITION_SOURCES + tuple(_fixture_sources()):
        module = cst.parse_module(source)
        # LibCST's own code (the source itself but for what LibCST does not give back)
        assert module_code(module) == module.code  # no cache
        with cached_children():
            ctx = _context(source)
            for statement in ctx.module.body[1::2]:  # some statements cached, some not
                ctx.position(statement)
            assert module_code(ctx.module) == module.code
            # a later round: one statement replaced, the rest from the cache
            if ctx.module.body:
                changed = ctx.module.with_changes(
                    body=[cst.parse_statement("pass\n"), *ctx.module.body[1:]]
                )
                assert module_code(changed) == changed.code


def test_memo_computes_once_per_round() -> None:
    ctx = _context("x = 1\n")
    calls = []
    assert ctx.memo("k", lambda: calls.append(1) or 5) == 5
    assert ctx.memo("k", lambda: calls.append(1) or 6) == 5
    assert calls == [1]


def test_locate_fixes_off_keeps_the_output_and_drops_fix_positions() -> None:
    source = "import jax\nimport numpy as np\n\nx = jax.numpy.DeviceArray\n"
    located = migrate_source(source, ONLY_101)
    unlocated = migrate_source(source, Settings(select=("JAX101",), locate_fixes=False))
    assert located.output == unlocated.output != source
    assert [(d.code, d.message) for d in located.fixes] == [
        (d.code, d.message) for d in unlocated.fixes
    ]
    assert all(d.line == 0 for d in unlocated.fixes) and all(d.line > 0 for d in located.fixes)
    assert Settings(locate_fixes=False).cache_key() != Settings().cache_key()


def _changed_input_lines(before: str, after: str) -> set:
    """Lines of ``before`` a line diff marks as replaced or deleted, and for an insertion
    the line it goes in front of."""
    import difflib

    changed = set()
    matcher = difflib.SequenceMatcher(None, before.splitlines(), after.splitlines(), autojunk=False)
    for tag, i1, i2, _j1, _j2 in matcher.get_opcodes():
        if tag != "equal":
            changed.update(range(i1 + 1, max(i2, i1 + 1) + 1))
    return changed


def test_every_fix_is_located_on_an_input_line_it_changed() -> None:
    """Whichever round applied it, a fix's lines are lines of the file as read, and among
    them is one the migration changed (a later round's tree has the lines earlier rounds
    added or removed: they must not shift the location; before they were mapped back, 7 of
    the fixtures' 670 fixes failed this)."""
    for source in _fixture_sources():
        try:
            result = migrate_source(source, Settings())
        except MigrationError:
            continue
        changed = _changed_input_lines(source, result.output)
        for fix in result.fixes:
            lines = set(range(fix.line, max(fix.end_line, fix.line) + 1))
            assert lines & changed, (fix, source[:80])


@pytest.mark.parametrize(
    "source,expected",
    [
        # round 1 drops pxla (one line less above: the module still exists, so as the
        # import the migration left unused, JAX000); round 2 rewrites a node round 1 copied
        # into its new call: located where it was copied from (the old engine said 6:26)
        (
            """\
            import jax.numpy as jnp
            import numpy as np
            from jax.interpreters import pxla


            def is_jax(x):
                return isinstance(x, (jnp.DeviceArray, pxla.ShardedDeviceArray))
            """,
            {("JAX102", 7, 12), ("JAX000", 3, 1), ("JAX101", 7, 27), ("JAX000", 1, 1)},
        ),
        # round 1 rewrites the imports above; round 2 rewrites a node round 1 created: it
        # stands where the node it replaced stood (line 6, where the old engine said 5)
        (
            """\
            import numpy as np
            from jax.experimental import PartitionSpec as P
            from jax.experimental import mesh_utils
            from jax.sharding import PositionalSharding

            sharding = PositionalSharding(mesh_utils.create_device_mesh((2, 4)))
            y = sharding.reshape(4, 2)
            """,
            {
                ("JAX000", 3, 1),
                ("JAX205", 2, 1),
                ("JAX603", 4, 1),
                ("JAX603", 6, 12),
                ("JAX603", 7, 5),
                ("JAX604", 6, 12),
            },
        ),
    ],
    ids=["lines-removed-above", "imports-rewritten-above"],
)
def test_later_round_fixes_are_located_in_the_input(source: str, expected: set) -> None:
    source = textwrap.dedent(source)
    every = ("ALL", "JAX604")  # JAX604 is opt-in
    result = migrate_source(source, Settings(select=every))
    assert {(d.code, d.line, d.column) for d in result.fixes} == expected
    rounds = migrate_source(source, Settings(select=every, locate_fixes=False))
    assert [d.code for d in rounds.fixes] == [
        d.code for d in result.fixes
    ]  # same fixes, same order


def test_fast_visit_makes_the_same_calls_as_libcst() -> None:
    from jaxmigrate.migrator.traversal import fast_visit

    module = cst.parse_module(_INDEX_SOURCE)

    class Log(cst.CSTVisitor):
        def __init__(self) -> None:
            super().__init__()
            self.log: list = []

        def visit_Call(self, node: cst.Call) -> None:
            self.log.append(("call", id(node)))

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            self.log.append(("def", id(node)))
            return False  # children skipped, leave still called

        def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
            self.log.append(("leave", id(original_node)))

        def visit_Name(self, node: cst.Name) -> None:
            self.log.append(("name", node.value))

    class WithFieldHook(Log):
        def visit_ClassDef_body(self, node: cst.ClassDef) -> None:
            self.log.append(("body", id(node)))

    class Generic(cst.CSTVisitor):
        def __init__(self) -> None:
            super().__init__()
            self.log: list = []

        def on_visit(self, node: cst.CSTNode) -> bool:
            self.log.append(id(node))
            return not isinstance(node, cst.Lambda)

    for kind in (Log, WithFieldHook, Generic):
        expected, got = kind(), kind()
        module.visit(expected)
        fast_visit(module, got)
        assert got.log == expected.log and got.log, kind.__name__


def test_scope_of_puts_decorators_defaults_and_first_iterables_outside():
    from jaxmigrate.migrator.context import Context

    source = textwrap.dedent(
        """\
        def deco(x):
            return x

        @deco
        def f(deco=deco, *, k: deco = 1):
            return deco

        ys = [deco for deco in deco]
        """
    )
    module = cst.parse_module(source)
    ctx = Context(module, analyze(module, Interest()), Settings(), Settings().target, None)
    f = module.body[1]
    comp = module.body[2].body[0].value
    assert ctx.scope_of(f.decorators[0].decorator).kind == "module"
    assert ctx.scope_of(f.params.params[0].default).kind == "module"
    assert ctx.scope_of(f.params.kwonly_params[0].annotation.annotation).kind == "module"
    assert ctx.scope_of(f.name).kind == "module"
    assert ctx.scope_of(f.body.body[0].body[0].value).kind == "function"
    assert ctx.scope_of(comp.for_in.iter).kind == "module"
    assert ctx.scope_of(comp.for_in.target).kind == "comprehension"
    assert ctx.scope_of(comp.elt).kind == "comprehension"
