"""How much of each rule the runtime proof covers.

    python tests/runtime/coverage.py          # Markdown table (the README includes it)
    python tests/runtime/coverage.py --json   # the same as JSON
    python tests/runtime/coverage.py --check  # exit 1 if a runnable rule has no compared case

Per rule code: ``fixtures`` (cases in fixtures/<rule-name>/: before/after pairs + noop files),
``run_modern`` (cases with a runtime driver: the after-file runs on the newest JAX),
``compared_real_legacy`` (compared against a real old JAX), ``compared_shim`` (compared against
the test-only shim), ``multiprocess`` (run as 2 processes), ``doc_examples_run`` /
``doc_examples_total`` (documentation examples with a runtime driver in tests/runtime/examples/),
``compared`` (cases compared with either legacy side).  Doc-example drivers count in the other
columns too.

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


def collect() -> List[Dict[str, Any]]:
    from migrator.rule import Safety, all_rules

    cases = harness.all_cases()
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
        }
        reason_file = folder / "RUNTIME"
        if reason_file.exists():
            row["runnable"] = False
            row["reason"] = reason_file.read_text().strip().splitlines()[0]
        elif rule.safety == Safety.MANUAL and not mine:
            row["runnable"] = False
            row["reason"] = "report-only rule: the output keeps the legacy call for a person to rewrite"
        else:
            row["runnable"] = True
        rows.append(row)
    return rows


def markdown(rows: List[Dict[str, Any]]) -> str:
    lines = [
        "| rule | fixtures | run on modern JAX | vs real old JAX | vs shim | 2 processes | doc examples run |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        label = f"{r['code']} `{r['name']}`"
        if not r["runnable"]:
            lines.append(f"| {label} | {r['fixtures']} | not runnable: {r['reason']} | | | | |")
            continue
        flag = "" if r["compared"] else " **(no compared case)**"
        lines.append(
            f"| {label}{flag} | {r['fixtures']} | {r['run_modern']} | {r['compared_real_legacy']} | {r['compared_shim']} | "
            f"{r['multiprocess']} | {r['doc_examples_run']}/{r['doc_examples_total']} |"
        )
    runnable = [r for r in rows if r["runnable"]]
    lines.append("")
    lines.append(
        f"{len([r for r in runnable if r['compared']])} of {len(runnable)} runnable rules have at "
        f"least one case compared with legacy behaviour; {len(rows) - len(runnable)} rules are not runnable."
    )
    return "\n".join(lines)


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
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
