"""How the findings read: their number, their length, and repeats of one module's report.

Runs ``jaxmigrate PACKAGE --format json`` (and again with ``--unsafe-fixes``) on a fresh copy
of each package of the legacy corpus (``bench/legacy_corpus.py`` builds it): without
``--check`` the run rewrites the files it migrates, and the findings are those a user sees
after a plain ``jaxmigrate PACKAGE``.  It prints, per package and in total:

* ``findings``: how many findings the run reports;
* the length of each finding as the text format prints it, three ways: ``line`` is the whole
  line (``path:line:col: CODE message``, the path from the corpus root, as ``jaxmigrate .``
  run there prints it), ``after`` what follows the position (``CODE message``: what a reader
  reads, and what the acceptance of issue #28 measures), ``msg`` the message alone;
  each as median / p90 / max;
* ``multi``: messages that span several lines;
* ``repeats``: (file, module) pairs with more than one module-level finding, that is a
  finding of JAX805, JAX806, JAX901 or JAX902 about a module (``jax.lib.xla_bridge``, a
  ``jax._src`` module, a removed module), one per use where one per file would say it.

Usage (from the repository root)::

    python bench/findings.py [--corpus DIR] [--only NAME ...] [--jaxmigrate CMD] [--save FILE]

``--jaxmigrate`` runs another build (``"python -m jaxmigrate"`` in another checkout's venv),
to measure before and after on the same corpus.  ``--save`` writes every finding as JSON.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

DEFAULT_CORPUS = Path("/tmp/jaxmigrate-legacy-corpus")
MODULE_CODES = ("JAX805", "JAX806", "JAX901", "JAX902")
_SUBJECT = re.compile(r"\bjax(?:lib)?(?:\.\w+)*")

# One finding: (path from the corpus root, line, column, code, message).
Finding = Tuple[str, int, int, str, str]


def run(command: Sequence[str], package: Path, unsafe: bool) -> List[Finding]:
    """The findings of one run, on a copy of ``package`` (the corpus stays as built)."""
    with tempfile.TemporaryDirectory(prefix="jaxmigrate-findings-") as scratch:
        copy = Path(scratch) / package.name
        shutil.copytree(package, copy)
        args = [*command, str(copy), "--format", "json", *(["--unsafe-fixes"] if unsafe else [])]
        done = subprocess.run(args, capture_output=True, text=True, check=False)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(args)} exited {done.returncode}:\n{done.stderr}")
    data = json.loads(done.stdout)
    root = copy.parent
    found: List[Finding] = []
    for entry in data["files"]:
        path = Path(entry["path"]).relative_to(root).as_posix()
        for d in entry["findings"]:
            found.append((path, d["line"], d["column"], d["code"], d["message"]))
    return found


def _is_module(name: str) -> bool:
    from jaxmigrate.rules._api_history import history
    from jaxmigrate.rules.removed_internals import MODULES

    if name in MODULES or name.startswith("jax._src") or name.startswith("jax.lib."):
        return True
    known = history().lookup(name)
    return known is not None and known.is_module


def module_of(code: str, message: str) -> Optional[str]:
    """The module a module-level finding is about (the first JAX name it names, when that is
    a module: JAX902's private modules, JAX805's internal ones, removed modules), else None."""
    if code not in MODULE_CODES:
        return None
    match = _SUBJECT.search(message)
    if match is None:
        return None
    name = match.group(0)
    if code == "JAX902":  # always about a private module (or a private name's module)
        return name
    return name if _is_module(name) else None  # JAX806 also reports a removed module's members


def repeats(findings: Sequence[Finding]) -> int:
    """(file, code, module) groups holding more than one module-level finding."""
    groups = Counter(
        (path, code, module)
        for path, _line, _column, code, message in findings
        for module in [module_of(code, message)]
        if module is not None
    )
    return sum(count > 1 for count in groups.values())


def _p90(values: List[int]) -> int:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]


def _spread(values: List[int]) -> str:
    if not values:
        return "-"
    return f"{statistics.median(values):g}/{_p90(values)}/{max(values)}"


def stats(findings: Sequence[Finding]) -> Dict[str, object]:
    lines = [
        f"{p}:{line}:{column}: {code} {message}" for p, line, column, code, message in findings
    ]
    after = [f"{code} {message}" for _p, _l, _c, code, message in findings]
    messages = [message for *_where, message in findings]
    return {
        "findings": len(findings),
        "line": _spread([len(text) for text in lines]),
        "after": _spread([len(text) for text in after]),
        "msg": _spread([len(text) for text in messages]),
        "multi": sum("\n" in text or "\r" in text for text in messages),
        "repeats": repeats(findings),
    }


COLUMNS = ("findings", "line", "after", "msg", "multi", "repeats")


def table(rows: List[Tuple[str, Dict[str, object]]]) -> str:
    header = ("package", *COLUMNS)
    cells = [header, *[(name, *(str(row[c]) for c in COLUMNS)) for name, row in rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    out = []
    for index, row in enumerate(cells):
        out.append(
            "  ".join(
                cell.ljust(w) if i == 0 else cell.rjust(w)
                for i, (cell, w) in enumerate(zip(row, widths))
            )
        )
        if index == 0:
            out.append("  ".join("-" * w for w in widths))
    return "\n".join(out)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--only", nargs="*", default=None, help="package folders to run")
    parser.add_argument("--jaxmigrate", default="jaxmigrate", help="the command to run")
    parser.add_argument("--save", type=Path, default=None, help="write the findings as JSON")
    args = parser.parse_args(argv)
    if not args.corpus.is_dir():
        print(f"{args.corpus}: no corpus; build it: python bench/legacy_corpus.py", file=sys.stderr)
        return 2
    packages = sorted(p for p in args.corpus.iterdir() if p.is_dir())
    if args.only:
        packages = [p for p in packages if p.name in args.only]
    command = shlex.split(args.jaxmigrate)
    saved: Dict[str, Dict[str, List[Finding]]] = {}
    for unsafe in (False, True):
        label = "--format json --unsafe-fixes" if unsafe else "--format json"
        rows: List[Tuple[str, Dict[str, object]]] = []
        everything: List[Finding] = []
        for package in packages:
            found = run(command, package, unsafe)
            saved.setdefault(label, {})[package.name] = found
            everything += found
            rows.append((package.name, stats(found)))
        rows.append(("total", stats(everything)))
        print(f"jaxmigrate PACKAGE {label}  (lengths: median/p90/max characters)")
        print(table(rows))
        print()
    if args.save is not None:
        args.save.write_text(json.dumps(saved, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
