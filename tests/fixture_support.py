"""Reading fixture files: settings headers and ``# expect: CODE`` markers."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Dict, List, Set, Tuple

from jaxmigrate.migrator import Settings

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
_HEADER_RE = re.compile(r"^#\s*fixture:\s*(.*)$", re.MULTILINE)
_EXPECT_RE = re.compile(r"#\s*expect:\s*([A-Z0-9, ]+)")


def fixture_settings(text: str) -> Settings:
    """``# fixture: target-version=0.4.13 unsafe-fixes select=JAX101,JAX2`` at the top
    (``target-version=0.4.1..0.4.38``: a range with an upper bound)."""
    values: Dict[str, object] = {}
    for header in _HEADER_RE.findall(text):
        for token in header.split():
            key, _, value = token.partition("=")
            if key == "unsafe-fixes":
                values["unsafe_fixes"] = True
            elif key == "target-version":  # 0.4.13, or a range 0.4.1..0.4.38
                lower, _, upper = value.partition("..")
                values["target_version"] = lower
                if upper:
                    values["target_upper"] = upper
            elif key == "source-version":  # the JAX the code was written for, as stated
                values["source_version"] = value
                values["source_explicit"] = True
            elif key == "requirement":  # a project requirement: the source, not stated
                values["source_version"] = value.removesuffix("..")  # 0.3.0..: jax>=0.3.0
                values["source_open"] = value.endswith("..")
            elif key == "line-length":  # the project's configured line length
                values["line_length"] = int(value)
            elif key == "first-party":  # the project's own top-level names (isort's)
                values["first_party"] = tuple(v for v in value.split(",") if v)
            elif key in ("select", "ignore"):
                values[key] = tuple(v for v in value.split(",") if v)
            else:
                raise ValueError(f"unknown fixture setting {token!r}")
    return Settings(**values)  # type: ignore[arg-type]


def expected_findings(text: str) -> Set[Tuple[int, str]]:
    found = set()
    for number, line in enumerate(text.splitlines(), start=1):
        match = _EXPECT_RE.search(line)
        if match:
            found.update(
                (number, code.strip()) for code in match.group(1).split(",") if code.strip()
            )
    return found


def fixture_cases() -> List[Tuple[str, Path, Path]]:
    """(id, input file, expected output file) for every before/after pair and noop case."""
    cases = []
    for before in sorted(FIXTURES.glob("*/*.before.py")):
        after = before.with_name(before.name.replace(".before.py", ".after.py"))
        cases.append((f"{before.parent.name}/{before.name[:-10]}", before, after))
    for noop in sorted(FIXTURES.glob("*/*.noop.py")):
        cases.append((f"{noop.parent.name}/{noop.name[:-8]}[noop]", noop, noop))
    return cases


def property_profile(examples: int):  # noqa: ANN201 (hypothesis' settings object)
    """The hypothesis settings of the property tests: ``examples`` generated programs, no
    deadline (LibCST on a large generated program is slow), and none of the health checks
    that generated Python source trips."""
    from hypothesis import HealthCheck, settings

    return settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.filter_too_much,
            HealthCheck.data_too_large,
        ],
    )
