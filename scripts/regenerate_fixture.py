"""Rewrite fixtures from what the tool does now: the after-file, and the ``# expect: CODE``
markers of both files (development-time only; review the diff before committing).

    python scripts/regenerate_fixture.py fixtures/missing-api/aliases.before.py [...]

A ``.noop.py`` that now changes is turned into a ``.before.py``/``.after.py`` pair.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Dict, Set

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from jaxmigrate.migrator import linemap, migrate_source  # noqa: E402
from tests.fixture_support import fixture_settings  # noqa: E402

_MARKER = re.compile(r"\s*#\s*expect:\s*[A-Z0-9, ]+$")


def with_markers(text: str, codes: Dict[int, Set[str]]) -> str:
    lines = text.splitlines(True)
    for number, line in enumerate(lines, start=1):
        body = line.rstrip("\r\n")
        ending = line[len(body) :]
        body = _MARKER.sub("", body)
        if number in codes:
            body += "  # expect: " + ", ".join(sorted(codes[number]))
        lines[number - 1] = body + ending
    return "".join(lines)


def regenerate(source: Path) -> Path:
    text = source.read_text(encoding="utf-8")
    settings = fixture_settings(text)
    for _ in range(3):  # markers are comments: they never change what the tool does
        result = migrate_source(text, settings)
        as_read: Dict[int, Set[str]] = {}
        for d in linemap.as_read(result.findings, text, result.output):
            as_read.setdefault(d.line, set()).add(d.code)
        text = with_markers(text, as_read)
    result = migrate_source(text, settings)
    on_output: Dict[int, Set[str]] = {}
    for d in result.findings:
        on_output.setdefault(d.line, set()).add(d.code)
    output = with_markers(result.output, on_output)
    if output == text:
        target = source.with_name(source.name.replace(".before.py", ".noop.py"))
        source.write_text(text, encoding="utf-8")
        if target != source:
            source.rename(target)
            source.with_name(source.name.replace(".before.py", ".after.py")).unlink(missing_ok=True)
        return target
    if source.name.endswith(".noop.py"):
        before = source.with_name(source.name.replace(".noop.py", ".before.py"))
        source.rename(before)
        source = before
    source.write_text(text, encoding="utf-8")
    after = source.with_name(source.name.replace(".before.py", ".after.py"))
    after.write_text(output, encoding="utf-8")
    return after


def main() -> int:
    for name in sys.argv[1:]:
        print(regenerate(Path(name)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
