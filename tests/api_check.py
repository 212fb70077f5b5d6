"""Which JAX names does code still use that the installed JAX no longer has, and did jaxmigrate
say anything about them?  Test-only measurement for "Nothing removed goes silent".

For every ``.py`` file under the given directories this finds every reference to a name
under ``jax`` or ``jaxlib`` (:mod:`tests.api_references` says what counts as one and how
it is resolved).

Each qualified name is checked on the *installed* JAX: the longest importable module prefix
is imported (``importlib``), the rest is reached with ``getattr``, warnings recorded.  A
reference is

* **missing** when that fails (ImportError/AttributeError); a chain reports only its first
  missing prefix (``jax.lib.xla_extension.Device`` -> ``jax.lib.xla_extension``);
* **deprecated** when it works but emits a ``DeprecationWarning`` (on the ``getattr``, or on
  the module's first import: a module that warns at import time is seen as deprecated only
  if nothing imported it before this checker asked for it);
* **unavailable** when a module needs a third-party package that is not installed
  (``jax.experimental.jax2tf`` without TensorFlow): not counted as missing;
* **private** when a component starts with ``_`` (``jax._src.x``; dunders such as
  ``__version__`` are public): checked the same way but counted apart from the public ones.

With ``--findings REPORT.json`` (from ``jaxmigrate DIR --format json [--check]``), a
reference is *flagged* when a finding or a fix of that report touches its lines (its own
lines; an import's whole statement) or, for a chain, the lines of the import that binds its
head when the chain fails inside that import (``serialization.f`` after ``from
jax.experimental.gda_serialization import serialization``) or the import binds a private
name (``core.f`` after ``from jax._src import core``).  A missing public reference that is
not flagged is **silent**.  Without a report nothing is flagged.  Files are matched by
resolved path, so give jaxmigrate and this checker the same directory (absolute paths are
safest).

Usage::

    python -m tests.api_check DIR [DIR ...] [--findings REPORT.json] [--list] [--top 40]
                              [--list-private] [--json OUT.json]

The summary has one row per package directory (the first path component below each DIR)
and a total.  Columns: files, lines, refs (every reference), then the public references by
status (ok, deprec, missing, silent = missing and not flagged, unavail), then the private
ones: private, priv-miss (missing), priv-flag / priv-unflag (flagged or not, any status).
``--list`` prints every silent reference as ``path:line: qualname`` (the first missing
prefix), and a top-N of the most frequent silent names follows the table.  The corpus this
was written for is built by ``bench/legacy_corpus.py`` (its docstring has the whole
measurement).  Importing JAX here is fine: this is a test helper; the tool itself never
imports JAX.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import importlib
import json
import os
import sys
import warnings
from pathlib import Path
from typing import Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

from tests.api_references import ROOTS, Reference, find_references, is_private

OK, DEPRECATED, MISSING, UNAVAILABLE = "ok", "deprecated", "missing", "unavailable"


# -- checking names on the installed JAX ------------------------------------------------------
class InstalledApi:
    """Answers, with a cache, whether a qualified name exists on the installed JAX."""

    def __init__(self) -> None:
        os.environ.setdefault("JAX_PLATFORMS", "cpu")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for root in ROOTS:
                try:
                    importlib.import_module(root)
                except ImportError:
                    pass
        # module name -> (module or None, deprecation message of its first import or "",
        #                  the third-party module it needs or "")
        self._modules: Dict[str, Tuple[object, str, str]] = {}
        self._answers: Dict[str, Tuple[str, str]] = {}

    def _import(self, name: str) -> Tuple[object, str, str]:
        cached = self._modules.get(name)
        if cached is not None:
            return cached
        fresh = name not in sys.modules
        module, message, needs = None, "", ""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                module = importlib.import_module(name)
            except ModuleNotFoundError as error:
                # Not the module asked for (or a parent of it) but one it imports, outside
                # jax/jaxlib: a third-party package this environment lacks.
                missing = error.name or ""
                if (
                    missing
                    and not (name == missing or name.startswith(missing + "."))
                    and missing.split(".", 1)[0] not in ROOTS
                ):
                    needs = missing
            except ImportError:
                pass
            except Exception as error:  # noqa: BLE001 (a module that fails to initialise)
                needs = f"{type(error).__name__} on import"
        if fresh and module is not None:
            for warning in caught:
                if issubclass(warning.category, DeprecationWarning):
                    message = str(warning.message)
                    break
        self._modules[name] = (module, message, needs)
        return self._modules[name]

    def check(self, qualname: str) -> Tuple[str, str]:
        """(status, where): where is the first missing prefix, the first deprecated one, or
        the package a module needs."""
        answer = self._answers.get(qualname)
        if answer is None:
            answer = self._answers[qualname] = self._check(qualname)
        return answer

    def _check(self, qualname: str) -> Tuple[str, str]:
        parts = qualname.split(".")
        obj: object = None
        deprecated = ""
        start = 0
        for end in range(len(parts), 0, -1):
            module, message, needs = self._import(".".join(parts[:end]))
            if needs:
                return UNAVAILABLE, needs
            if module is not None:
                obj, start = module, end
                if message:
                    deprecated = ".".join(parts[:end])
                break
        if obj is None:
            return MISSING, parts[0]
        for index in range(start, len(parts)):
            prefix = ".".join(parts[: index + 1])
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    obj = getattr(obj, parts[index])
                except AttributeError:
                    return MISSING, prefix
                except Exception:  # noqa: BLE001 (a property that fails on the class)
                    return MISSING, prefix
            if not deprecated and any(issubclass(w.category, DeprecationWarning) for w in caught):
                deprecated = prefix
        return (DEPRECATED, deprecated) if deprecated else (OK, qualname)


def check_references(references: Iterable[Reference], api: Optional[InstalledApi] = None) -> None:
    api = api or InstalledApi()
    for reference in references:
        reference.status, reference.where = api.check(reference.qualname)


# -- the findings report ----------------------------------------------------------------------
def load_findings(report: Path) -> Dict[str, List[Tuple[int, int]]]:
    """Resolved path -> the line ranges of every finding and fix the JSON report has."""
    data = json.loads(report.read_text())
    ranges: Dict[str, List[Tuple[int, int]]] = {}
    for entry in data.get("files", []):
        path = str(Path(entry["path"]).resolve())
        spans = ranges.setdefault(path, [])
        for item in [*(entry.get("findings") or []), *(entry.get("fixes") or [])]:
            if item.get("where"):  # a notebook cell: its lines are not the file's
                continue
            line = item.get("line")
            if isinstance(line, int):
                spans.append((line, item.get("end_line") or line))
    return ranges


def mark_covered(references: Iterable[Reference], ranges: Dict[str, List[Tuple[int, int]]]) -> None:
    """A reference is covered when a finding or fix touches its lines, or, for a chain that
    fails inside the import binding its head (``serialization.f`` after ``from
    jax.experimental.gda_serialization import serialization``) or whose head is bound to a
    private module (``core.Primitive`` after ``from jax._src import core``), that import's
    lines."""
    for reference in references:
        spans = ranges.get(str(Path(reference.path).resolve()), ())
        covered = _touches(spans, reference.line, reference.end_line)
        if not covered and reference.head:
            head, where = reference.head, reference.where
            missing_import = reference.status == MISSING and (
                head == where or head.startswith(where + ".")
            )
            if missing_import or is_private(head):
                covered = _touches(spans, *reference.import_lines)
        reference.covered = covered


def _touches(spans: Iterable[Tuple[int, int]], line: int, end_line: int) -> bool:
    return any(start <= end_line and line <= end for start, end in spans)


# -- scanning directories and reporting -------------------------------------------------------
@dataclasses.dataclass
class Tally:
    files: int = 0
    lines: int = 0
    unparsable: int = 0
    refs: int = 0
    ok: int = 0
    deprecated: int = 0
    missing: int = 0
    silent: int = 0
    unavailable: int = 0
    private: int = 0
    private_missing: int = 0
    private_flagged: int = 0
    private_unflagged: int = 0

    def add(self, other: "Tally") -> None:
        for field in dataclasses.fields(self):
            setattr(self, field.name, getattr(self, field.name) + getattr(other, field.name))

    def count(self, reference: Reference) -> None:
        self.refs += 1
        if reference.private:
            self.private += 1
            self.private_missing += reference.status == MISSING
            if reference.covered:
                self.private_flagged += 1
            else:
                self.private_unflagged += 1
            return
        if reference.status == OK:
            self.ok += 1
        elif reference.status == DEPRECATED:
            self.deprecated += 1
        elif reference.status == UNAVAILABLE:
            self.unavailable += 1
        elif reference.status == MISSING:
            self.missing += 1
            self.silent += not reference.covered


def python_files(root: Path) -> Iterator[Path]:
    if root.is_file():
        yield root
        return
    for path in sorted(root.rglob("*.py")):
        if path.is_file():
            yield path


def group_of(root: Path, path: Path) -> str:
    """The package directory a file belongs to: the first component below ``root``."""
    if root.is_file():
        return root.name
    relative = path.relative_to(root).parts
    return relative[0] if len(relative) > 1 else "."


def scan(
    roots: Sequence[Path], findings: Optional[Dict[str, List[Tuple[int, int]]]] = None,
    api: Optional[InstalledApi] = None,
) -> Tuple[Dict[str, Tally], List[Reference]]:  # fmt: skip
    """Tallies per package directory and every reference (checked, and marked covered)."""
    api = api or InstalledApi()
    tallies: Dict[str, Tally] = collections.OrderedDict()
    everything: List[Reference] = []
    for root in roots:
        for path in python_files(root):
            group = (
                group_of(root, path) if len(roots) == 1 else f"{root.name}/{group_of(root, path)}"
            )
            tally = tallies.setdefault(group, Tally())
            tally.files += 1
            raw = path.read_bytes()
            tally.lines += raw.count(b"\n")
            try:
                references = find_references(raw.decode("utf-8", "surrogateescape"), str(path))
            except (SyntaxError, ValueError, RecursionError):
                tally.unparsable += 1
                continue
            check_references(references, api)
            if findings is not None:
                mark_covered(references, findings)
            for reference in references:
                tally.count(reference)
            everything.extend(references)
    return tallies, everything


_COLUMNS = [
    ("files", "files"), ("lines", "lines"), ("refs", "refs"), ("ok", "ok"),
    ("deprecated", "deprec"), ("missing", "missing"), ("silent", "silent"),
    ("unavailable", "unavail"), ("private", "private"), ("private_missing", "priv-miss"),
    ("private_flagged", "priv-flag"), ("private_unflagged", "priv-unflag"),
]  # fmt: skip


def format_table(tallies: Dict[str, Tally]) -> str:
    width = max([len("package"), len("total"), *map(len, tallies)])
    header = f"{'package':<{width}} " + " ".join(
        f"{title:>{max(len(title), 7)}}" for _, title in _COLUMNS
    )
    rows = [header, "-" * len(header)]
    total = Tally()
    for group, tally in tallies.items():
        total.add(tally)
        rows.append(_row(group, tally, width))
    rows.append("-" * len(header))
    rows.append(_row("total", total, width))
    unparsable = total.unparsable
    if unparsable:
        rows.append(f"({unparsable} files could not be parsed and were skipped)")
    return "\n".join(rows)


def _row(name: str, tally: Tally, width: int) -> str:
    cells = [f"{getattr(tally, field):>{max(len(title), 7)},}" for field, title in _COLUMNS]
    return f"{name:<{width}} " + " ".join(cells)


def silent_references(references: Iterable[Reference], private: bool = False) -> List[Reference]:
    return [
        r for r in references
        if r.status == MISSING and not r.covered and r.private == private
    ]  # fmt: skip


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.api_check",
        description="Count references to JAX names the installed JAX no longer has.",
    )
    parser.add_argument("dirs", nargs="+", type=Path, metavar="DIR")
    parser.add_argument("--findings", type=Path, help="jaxmigrate --format json report")
    parser.add_argument("--list", action="store_true", help="print every silent reference")
    parser.add_argument(
        "--list-private",
        action="store_true",
        help="also print every private reference that is missing and unflagged",
    )
    parser.add_argument("--top", type=int, default=40, help="most frequent silent names (40)")
    parser.add_argument("--json", type=Path, help="write every reference as JSON here")
    args = parser.parse_args(argv)
    findings = load_findings(args.findings) if args.findings else None
    tallies, references = scan(args.dirs, findings)
    if args.list:
        for reference in silent_references(references):
            print(f"{reference.path}:{reference.line}: {reference.where}")
    if args.list_private:
        for reference in silent_references(references, private=True):
            print(f"{reference.path}:{reference.line}: {reference.where} (private)")
    print(format_table(tallies))
    if findings is None:
        print("(no --findings report: nothing is flagged, every missing reference is silent)")
    counter = collections.Counter(r.where for r in silent_references(references))
    if counter and args.top:
        print(f"\ntop {min(args.top, len(counter))} silent names (of {len(counter)}):")
        for name, count in counter.most_common(args.top):
            print(f"{count:>6}  {name}")
    if args.json:
        records = [{**dataclasses.asdict(r), "private": r.private} for r in references]
        args.json.write_text(json.dumps(records, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
