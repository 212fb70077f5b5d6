"""How much of each rule the runtime proof covers.

    python tests/runtime/coverage.py          # Markdown table (docs/development.md includes it)
    python tests/runtime/coverage.py --json   # the same as JSON
    python tests/runtime/coverage.py --check  # exit 1 if a runnable rule has no compared case

Per rule code: ``fixtures`` (cases in fixtures/<rule-name>/: before/after pairs + noop files),
``run_modern`` (cases with a runtime driver: the after-file runs on the newest JAX),
``compared_real_legacy`` (compared against a real old JAX), ``compared_shim`` (compared against
the test-only shim), ``multiprocess`` (run as 2 processes), ``doc_examples_run`` /
``doc_examples_total`` (documentation examples with a runtime driver in tests/runtime/examples/),
``compared`` (cases compared with either legacy side).  Doc-example drivers count in the other
columns too.

Every before/after pair and every documentation example either has a driver or says why it
cannot run: ``fixtures/<rule-name>/NO_DRIVER`` and ``tests/runtime/examples/NO_DRIVER`` hold
``<case>: <reason>`` lines (``#`` starts a comment).  ``pairs`` / ``pairs_with_driver`` /
``pairs_without_driver`` and ``doc_examples_without_driver`` count them; ``--check`` fails
on a pair or example with neither, and on a reason for a case that has a driver or does not
exist (:func:`unaccounted`).

A rule is ``"runnable": false`` when its code cannot run, with the reason: report-only rules
(``Safety.MANUAL``: the output keeps the legacy call), or a rule directory that says why in a
``fixtures/<rule-name>/RUNTIME`` file (first line = reason).  Only reads files; imports no JAX.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Dict, List

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tests.runtime import harness  # noqa: E402

NO_DRIVER = "NO_DRIVER"


def reasons(path: Path) -> Dict[str, str]:
    """``case: reason`` lines of a NO_DRIVER file (empty when there is none)."""
    found: Dict[str, str] = {}
    if not path.exists():
        return found
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        case, sep, reason = line.partition(":")
        if not sep or not case.strip() or not reason.strip():
            raise ValueError(f"{path}:{number}: expected '<case>: <reason>'")
        found[case.strip()] = reason.strip()
    return found


def _pairs(folder: Path) -> List[str]:
    return sorted(p.name[: -len(".before.py")] for p in folder.glob("*.before.py"))


def unaccounted() -> List[str]:
    """Pairs and doc examples with neither a driver nor a reason, and stale reasons."""
    from jaxmigrate.migrator.rule import all_rules

    problems: List[str] = []
    example_reasons = reasons(harness.EXAMPLE_DRIVERS / NO_DRIVER)
    # case ids spell examples "example/JAX406-1[.variant]"; NO_DRIVER and the file names
    # use JAX406_1
    driven_examples = {
        c.id.split("/", 1)[1].split(".")[0].replace("-", "_")
        for c in harness.all_cases()
        if c.id.startswith("example/")
    }
    known_examples = set()
    for code, rule in sorted(all_rules().items()):
        folder = harness.FIXTURES / rule.name
        pairs = _pairs(folder)
        case_reasons = reasons(folder / NO_DRIVER)
        for case in pairs:
            driven = (folder / f"{case}.run.py").exists()
            if driven and case in case_reasons:
                problems.append(f"fixtures/{rule.name}/{case}: has a driver and a NO_DRIVER reason")
            elif not driven and case not in case_reasons:
                problems.append(f"fixtures/{rule.name}/{case}: no driver and no NO_DRIVER reason")
        for case in sorted(set(case_reasons) - set(pairs)):
            problems.append(
                f"fixtures/{rule.name}/{NO_DRIVER}: {case} is not a before/after pair here"
            )
        for n in range(1, len(rule.examples) + 1):
            key = f"{code}_{n}"
            known_examples.add(key)
            if key in driven_examples and key in example_reasons:
                problems.append(f"example {key}: has a driver and a NO_DRIVER reason")
            elif key not in driven_examples and key not in example_reasons:
                problems.append(f"example {key}: no driver and no NO_DRIVER reason")
    for key in sorted(set(example_reasons) - known_examples):
        problems.append(f"tests/runtime/examples/{NO_DRIVER}: {key} is not a documentation example")
    return problems


def collect() -> List[Dict[str, Any]]:
    from jaxmigrate.migrator.rule import Safety, all_rules

    cases = harness.all_cases()
    example_reasons = reasons(harness.EXAMPLE_DRIVERS / NO_DRIVER)
    rows = []
    for code, rule in sorted(all_rules().items()):
        folder = harness.FIXTURES / rule.name
        fixtures = len(list(folder.glob("*.before.py"))) + len(list(folder.glob("*.noop.py")))
        mine = [c for c in cases if c.rule in (rule.name, code)]
        compared = [c for c in mine if c.legacy or c.shim]
        row: Dict[str, Any] = {
            "code": code,
            "name": rule.name,
            "fixtures": fixtures,
            "run_modern": len(mine),
            "compared_real_legacy": len([c for c in mine if c.legacy]),
            "compared_shim": len([c for c in mine if c.shim]),
            "multiprocess": len([c for c in mine if c.processes > 1]),
            "doc_examples_run": len([c for c in mine if c.id.startswith("example/")]),
            "doc_examples_total": len(rule.examples),
            "compared": len(compared),
            "pairs": len(_pairs(folder)),
            "pairs_with_driver": len(
                [p for p in _pairs(folder) if (folder / f"{p}.run.py").exists()]
            ),
            "pairs_without_driver": len(reasons(folder / NO_DRIVER)),
            "doc_examples_without_driver": len(
                [n for n in range(1, len(rule.examples) + 1) if f"{code}_{n}" in example_reasons]
            ),
        }
        reason_file = folder / "RUNTIME"
        if reason_file.exists():
            row["runnable"] = False
            row["reason"] = reason_file.read_text().strip().splitlines()[0]
        elif rule.safety == Safety.MANUAL and not mine:
            row["runnable"] = False
            row["reason"] = (
                "report-only rule: the output keeps the legacy call for a person to rewrite"
            )
        else:
            row["runnable"] = True
        rows.append(row)
    return rows


def markdown(rows: List[Dict[str, Any]]) -> str:
    lines = [
        "| rule | fixtures | pairs with a driver | run on modern JAX | vs real old JAX"
        " | vs shim | 2 processes | doc examples run |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        label = f"{r['code']} `{r['name']}`"
        if not r["runnable"]:
            lines.append(
                f"| {label} | {r['fixtures']} | {_pair_cell(r)}"
                f" | not runnable: {r['reason']} | | | | |"
            )
            continue
        flag = "" if r["compared"] else " **(no compared case)**"
        lines.append(
            f"| {label}{flag} | {r['fixtures']} | {_pair_cell(r)} | {r['run_modern']}"
            f" | {r['compared_real_legacy']} | {r['compared_shim']} | "
            f"{r['multiprocess']} | {r['doc_examples_run']}/{r['doc_examples_total']} |"
        )
    runnable = [r for r in rows if r["runnable"]]
    lines.append("")
    pairs = sum(r["pairs"] for r in rows)
    driven = sum(r["pairs_with_driver"] for r in rows)
    examples = sum(r["doc_examples_total"] for r in rows)
    examples_run = sum(r["doc_examples_run"] for r in rows)
    lines.append(
        f"{driven} of {pairs} before/after pairs and {examples_run} of {examples} "
        f"documentation examples run; every other one says why in a {NO_DRIVER} file."
    )
    lines.append("")
    lines.append(
        f"{len([r for r in runnable if r['compared']])} of {len(runnable)} runnable rules have at "
        f"least one case compared with legacy behaviour; "
        f"{len(rows) - len(runnable)} rules are not runnable."
    )
    return "\n".join(lines)


def _pair_cell(row: Dict[str, Any]) -> str:
    return f"{row['pairs_with_driver']}/{row['pairs']}"


def main(argv: List[str]) -> int:
    rows = collect()
    if "--json" in argv:
        print(json.dumps(rows, indent=2))
    else:
        print(markdown(rows))
    if "--check" in argv:
        missing = [r["code"] for r in rows if r["runnable"] and not r["compared"]]
        if missing:
            print("runnable rules without a compared case: " + ", ".join(missing), file=sys.stderr)
            return 1
        problems = unaccounted()
        if problems:
            print("\n".join(problems), file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
