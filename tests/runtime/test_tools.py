"""Fast checks of the runtime suite's own tools (no JAX subprocess)."""

from __future__ import annotations

from jaxmigrate.migrator.rule import all_rules
from tests.runtime import coverage, harness
from tests.runtime.shim import FLAVOURS
from tests.runtime.worker import reported_lines


def test_coverage_lists_every_rule_with_reasons():
    rows = coverage.collect()
    assert [r["code"] for r in rows] == sorted(all_rules())
    for row in rows:
        assert row["runnable"] or row["reason"]
        assert row["compared"] <= row["run_modern"]
    table = coverage.markdown(rows)
    assert all(code in table for code in all_rules())


def test_every_pair_and_example_has_a_driver_or_a_reason():
    problems = coverage.unaccounted()
    assert not problems, "\n".join(problems)


def test_no_driver_reasons_are_read_strictly(tmp_path):
    path = tmp_path / "NO_DRIVER"
    path.write_text("# comment\n\ncase_a: keeps a reported legacy call\n")
    assert coverage.reasons(path) == {"case_a": "keeps a reported legacy call"}
    path.write_text("case_b\n")
    try:
        coverage.reasons(path)
    except ValueError as error:
        assert "NO_DRIVER:1" in str(error)
    else:
        raise AssertionError("a line without a reason was accepted")


def test_every_driver_declares_known_constants():
    for case in harness.all_cases():
        assert case.legacy in (None, "0.4.13", "0.4.30", "0.6.2"), case.id
        assert case.processes in (1, 2), case.id
        # Real old JAX does not form 2 processes here (0.4.13: both report process_index 0, no
        # CPU collectives; 0.4.30: gloo fails to initialise), so such a case would compare
        # single-process runs: multi-process legacy behaviour goes through the shim.
        assert not (case.legacy and case.processes > 1), case.id
        assert not case.flavours or case.shim, case.id
        assert set(case.flavours) <= set(FLAVOURS), case.id
        assert case.before.exists() and case.after.exists(), case.id


def test_reported_statements_cover_compound_headers_only(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(
        "import jax\n"
        "with mesh:  # expect: JAX607\n"
        "    y = f(x)\n"
        "z = g(\n"
        "    x,  # expect: JAX202\n"
        ")\n"
    )
    assert reported_lines(str(path)) == {2, 4, 5, 6}


def test_diff_is_readable():
    diff = harness.diff_summaries({"a": [1, 2]}, {"a": [1, 3]}, "jax 0.4.13")
    assert "before-file on jax 0.4.13" in diff and "-  2" in diff and "+  3" in diff
