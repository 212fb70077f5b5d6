"""jax.util's safe_zip and safe_map of several iterables (JAX905): the exact forms a target from
0.4.31 gets, and the default target a file using them starts at."""

from __future__ import annotations

import pytest

from jaxmigrate.migrator import Settings, migrate_source
from jaxmigrate.migrator.version import parse_version
from tests.test_cli import invoke

# neural-tangents 0.6 imports the helpers under the builtins' names
ALIASED = (
    "from jax.util import safe_map as map, safe_zip as zip\n\n\n"
    "def f(xs, ys):\n"
    "    return map(lambda a, b: a + b, xs, ys), zip(xs, ys)\n"
)


def test_a_default_run_starts_at_the_first_jax_on_a_python_with_strict_zip(tmp_path):
    """The exact forms need zip(..., strict=True) (Python 3.10, which jax requires from
    0.4.31): the survey reads that, the default target starts there, every call is rewritten
    without --unsafe-fixes and the import goes, so the module imports on JAX 0.8.0 and later
    and still checks the lengths."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "nt.py").write_text(ALIASED)
    result = invoke(".", "--no-cache", "--source-version", "0.3.25", cwd=tmp_path)
    note = result.stderr.splitlines()[0]
    assert "migrating to 0.4.31.." in note and "JAX905 removed-calls's fix in" in note, note
    out = (tmp_path / "nt.py").read_text()
    assert "jax" not in out and "import itertools\n" in out, out
    assert "itertools.starmap(lambda a, b: a + b, zip(xs, ys, strict=True))" in out
    assert "zip(xs, ys, strict=True)" in out
    namespace: dict = {}
    exec(compile(out, "nt.py", "exec"), namespace)
    assert namespace["f"]([1, 2], [10, 20]) == ([11, 22], [(1, 10), (2, 20)])
    with pytest.raises(ValueError, match="argument 2 is shorter than argument 1"):
        namespace["f"]([1, 2], [10])
    again = invoke(".", "--no-cache", "--check", "--source-version", "0.3.25", cwd=tmp_path)
    assert again.exit_code == 0 and "would rewrite" not in again.stderr, again.stderr


def test_the_surveys_bound_counts_the_strict_zip():
    """A file the survey's bound passes over keeps its report: the bound must reach 0.4.31."""
    from jaxmigrate.migrator.rule import all_rules
    from jaxmigrate.migrator.target import survey_reach

    rules = list(all_rules().values())
    low = parse_version("0.4.1")
    assert survey_reach(ALIASED, None, rules, low) >= parse_version("0.4.31")
    assert all_rules()["JAX905"].fix_needs == "0.4.31"  # (Context.replace holds fixes to it)


@pytest.mark.parametrize(
    "target, unsafe, expected, reported",
    [
        ("0.4.31", False, "list(zip(xs, ys, strict=True))", []),
        ("0.4.30", True, "list(zip(xs, ys))", []),
        # the rewrite would lose the check: without --unsafe-fixes, reported
        ("0.4.30", False, "safe_zip(xs, ys)", ["jax.util.safe_zip(...) -> list(zip(*iterables))"]),
    ],
)
def test_below_0_4_31_the_rewrite_loses_the_check_and_is_unsafe(target, unsafe, expected, reported):
    text = "from jax.util import safe_zip\n\n\ndef f(xs, ys):\n    return safe_zip(xs, ys)\n"
    result = migrate_source(text, Settings(target_version=target, unsafe_fixes=unsafe))
    assert f"    return {expected}\n" in result.output, result.output
    found = [f.message for f in result.findings if f.code == "JAX905"]
    assert found == [f"{message} [unsafe fix]" for message in reported]


@pytest.mark.parametrize(
    "imports, expected",
    [
        ("", "import itertools\n"),
        ("import itertools as it\n", "it.starmap(f, zip(xs, ys, zs, strict=True))"),
        ("from itertools import starmap\n", "list(starmap(f, zip(xs, ys, zs, strict=True)))"),
    ],
)
def test_safe_map_names_starmap_as_the_module_imports_it(imports, expected):
    text = (
        f"{imports}from jax.util import safe_map\n\n\n"
        "def g(f, xs, ys, zs):\n    return safe_map(f, xs, ys, zs)\n"
    )
    result = migrate_source(text, Settings(target_version="0.4.31"))
    assert expected in result.output and "jax" not in result.output, result.output


def test_where_itertools_is_another_name_safe_map_keeps_its_report():
    text = (
        "from jax.util import safe_map\n\n\n"
        "def g(itertools, f, xs, ys):\n    return safe_map(f, xs, ys)\n"
    )
    result = migrate_source(text, Settings(target_version="0.4.31"))
    assert result.output == text
    (message,) = [f.message for f in result.findings if f.code == "JAX905"]
    assert message == "jax.util.safe_map(...) -> list(map(f, *iterables)) [unsafe fix]"
