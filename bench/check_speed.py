"""How fast ``jaxmigrate --check -j 1`` reads modern code, against ``ast.parse`` of the same files
measured in the same run, and why the files that reach LibCST do (issue #29).

Two corpora:

* JAX's own sources: the ``jax`` package installed next to jaxmigrate (every ``.py`` file,
  nothing excluded).  The directory is named on the command line, where discovery walks it
  like any other (only a ``jax/`` found *inside* a walked directory is skipped as not user
  code), so no copy is needed.
* the modern corpus of ``bench/modern_corpus.py`` (built from its cached sdists into
  ``--modern-out``; ``--no-build`` reuses a built one).  Only its ``.py`` files are timed and
  handed to jaxmigrate (``--extend-exclude '*.ipynb'``), the files ``ast.parse`` reads.
* the newest flax and orbax trees alone (:data:`NEWEST_TREES`, from the same built corpus):
  the third corpus issue #29 names, where few files carry a finding, so what a run costs
  beyond reading them shows most.

For each corpus: the wall-clock time of ``jaxmigrate PATHS --check -q -j 1 --no-cache`` (the
best of three runs, each a new process: start-up included), the best of three ``ast.parse``
passes over the same texts (in a new interpreter too), and their ratio; and the floor of that
ratio for a run that prints every finding, ``ast.parse`` of just the files a second run
(``--format json``) reports a fix or a finding in, and the least a pure-Python run does besides
(every file read and its identifiers read once, those files' trees walked once); what the
survey that finds each project's default target costs net (a run per project against one given
that target, which prints the same: what folding the survey into the run could save at most);
and where one run's time goes, in a new process (the survey's reaches, the files it migrates
and the floors it settles, the run's files, the rest).  Then, in a run in this process as the
command runs it (each project with its own versions; the survey's passes not counted), what
each file meets: the gate that stops it, or the candidate rules left after gate 2, whether it
was answered from CPython's ``ast`` alone (its fixes, if any, written from ``ast`` positions:
:mod:`migrator.astfixes`) or reached LibCST's parser (its own module, or a docstring's
program), and of the latter which have fixes and which findings only.

jaxmigrate starts with cached bytecode, as an installed tool does (``--bytecode none``: every
module compiled on each start; :mod:`bench.bytecode`).

Usage: python bench/check_speed.py [--modern-out DIR] [--no-build] [--jax DIR]
       [--only jax|modern|newest] [--bytecode cached|none]
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Counter, Dict, List, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import bytecode  # noqa: E402

DEFAULT_MODERN_OUT = Path("/tmp/jaxmigrate-check-speed-modern")
# jaxmigrate's environment: its bytecode (bench/bytecode.py), set by main()
TOOL_ENV: Dict[str, str] = dict(os.environ)
NEWEST_TREES = ("flax", "orbax-checkpoint")  # of the modern corpus's pins


def python_files(paths: Sequence[Path]) -> List[Path]:
    return sorted(f for path in paths for f in path.rglob("*.py") if f.is_file())


def read_all(files: Sequence[Path]) -> List[str]:
    return [f.read_text(encoding="utf-8", errors="surrogateescape") for f in files]


# The baseline runs in a new interpreter, as jaxmigrate does: in this process, once an earlier
# corpus's classification has left the rules, LibCST and their caches in memory, CPython's
# collector slows ast.parse down (the modern corpus: 9.8 s here against 3.9 s in a new process).
_AST_SECONDS = """
import ast, sys, time
paths = [p for p in sys.stdin.read().split("\\0") if p]
texts = [open(p, encoding="utf-8", errors="surrogateescape").read() for p in paths]
best = float("inf")
for _ in range(int(sys.argv[1])):
    start = time.perf_counter()
    for text in texts:
        try:
            ast.parse(text)
        except (SyntaxError, ValueError):
            pass
    best = min(best, time.perf_counter() - start)
print(best)
"""


# The least any pure-Python run that prints every finding of these files does, two ways: read
# every file and its identifiers (one regex pass: what a text gate reads) and parse the files
# that carry a finding, walking each tree once (what resolving a name through the imports reads
# at least); or parse and walk every file, reading no text first.  argv: passes, "gated" or
# "all"; stdin: the files, then (after \\1) the files that carry a finding.
_LEAST_SECONDS = """
import ast, os, re, sys, time
paths, carrying = sys.stdin.read().split("\\1")
paths = [p for p in paths.split("\\0") if p]
carrying = {os.path.realpath(p) for p in carrying.split("\\0") if p}
gated = sys.argv[2] == "gated"
paths = [(path, not gated or os.path.realpath(path) in carrying) for path in paths]
identifier = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
best = float("inf")
for _ in range(int(sys.argv[1])):
    start = time.perf_counter()
    for path, carries in paths:
        text = open(path, encoding="utf-8", errors="surrogateescape").read()
        if gated:
            frozenset(identifier.findall(text))
        if carries:
            try:
                tree = ast.parse(text)
            except (SyntaxError, ValueError):
                continue
            for _node in ast.walk(tree):
                pass
    best = min(best, time.perf_counter() - start)
print(best)
"""


# Where one run's time goes, in a new process as the command runs (wall seconds of each part;
# argv: the command's arguments): the survey's reach of every file, the reaches narrowed at a
# file's turn, the files the survey migrates, the floors it settles, the run's files, and the
# rest (start-up, discovery, the projects' requirements, the report).
_PHASES = """
import json, sys, time
from jaxmigrate.migrator import cli, clirun, runner, surveyorder
spent = {}
def timed(module, name, label=None, by_settings=False):
    real = getattr(module, name)
    def wrapper(*args, **kwargs):
        key = label or name
        if by_settings:
            key = "the survey: files migrated" if args[1].survey else "the run: files migrated"
        start = time.perf_counter()
        try:
            return real(*args, **kwargs)
        finally:
            seconds, count = spent.get(key, (0.0, 0))
            spent[key] = (seconds + time.perf_counter() - start, count + 1)
    setattr(module, name, wrapper)
timed(surveyorder, "survey_reach_of", "the survey: each file's reach")
timed(surveyorder, "narrowed_reach_of", "the survey: reaches narrowed at a file's turn")
timed(clirun, "floor_of_survey", "the survey: floors settled")
timed(runner, "process_file", by_settings=True)
start = time.perf_counter()
try:
    cli.main(sys.argv[1:])
except SystemExit:
    pass
total = time.perf_counter() - start
parts = sum(seconds for seconds, _count in spent.values())
spent["the rest (start-up, discovery, requirements, report)"] = (total - parts, 1)
sys.stdout = sys.__stdout__
print(json.dumps({"total": total, "parts": spent}))
"""


def phase_seconds(paths: Sequence[Path]) -> Tuple[float, Dict[str, Tuple[float, int]]]:
    """:data:`_PHASES` of a run over ``paths`` (as :func:`check_seconds` runs it): the total
    and (seconds, calls) of each part."""
    command = [
        sys.executable, "-c", _PHASES, *map(str, paths),
        "--check", "-q", "-j", "1", "--no-cache", "--extend-exclude", "*.ipynb",
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=TOOL_ENV)
    found = json.loads(done.stdout.strip().splitlines()[-1])
    return found["total"], {key: tuple(value) for key, value in found["parts"].items()}


def least_python_seconds(
    files: Sequence[Path], carrying: Sequence[Path], gated: bool, repeat: int = 3
) -> float:
    """The best of ``repeat`` passes of the least a pure-Python run does (``_LEAST_SECONDS``,
    ``gated`` or parsing every file) over ``files``, ``carrying`` a finding, in a new
    interpreter."""
    done = subprocess.run(
        [sys.executable, "-c", _LEAST_SECONDS, str(repeat), "gated" if gated else "all"],
        input="\0".join(map(str, files)) + "\1" + "\0".join(map(str, carrying)),
        capture_output=True,
        text=True,
        check=True,
    )
    return float(done.stdout)


def ast_seconds(files: Sequence[Path], repeat: int = 3) -> float:
    """The best of ``repeat`` passes of ``ast.parse`` over ``files``, in a new interpreter."""
    done = subprocess.run(
        [sys.executable, "-c", _AST_SECONDS, str(repeat)],
        input="\0".join(map(str, files)),
        capture_output=True,
        text=True,
        check=True,
    )
    return float(done.stdout)


def check_seconds(paths: Sequence[Path], *more: str, repeat: int = 1) -> Tuple[float, int, str]:
    """Wall-clock seconds of ``jaxmigrate --check -j 1 --no-cache`` on ``paths`` (the best of
    ``repeat`` runs, each a new process), exit code, and what it printed."""
    command = [
        sys.executable, "-m", "jaxmigrate.migrator.cli", *map(str, paths),
        "--check", "-q", "-j", "1", "--no-cache", "--extend-exclude", "*.ipynb", *more,
    ]  # fmt: skip
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, check=False, env=TOOL_ENV)
        best = min(best, time.perf_counter() - start)
        if done.returncode not in (0, 1, 2):
            raise SystemExit(f"jaxmigrate exited {done.returncode}:\n{done.stderr[-4000:]}")
    return best, done.returncode, done.stdout


def given_target(path: Path) -> Optional[str]:
    """``--target-version`` for the target a run over ``path`` finds (its JSON report, not
    timed), or None where ``path`` holds several projects (one flag cannot give each its own)."""
    report = json.loads(check_seconds([path], "--format", "json")[2])
    if report.get("projects") or not report.get("target_range"):
        return None
    lower, upper = report["target_range"]["lower"], report["target_range"]["upper"]
    return lower if upper is None else f"{lower}..{upper}"


def survey_cost(paths: Sequence[Path], floor: float, repeat: int = 3) -> None:
    """What the survey that finds each project's default target costs a run, net of what it
    reads for the run: for each of ``paths`` (a project each), the default run against a run
    given the target the survey finds (``--target-version``: the same output, no survey),
    interleaved, the best of ``repeat`` each; ``floor``: ``ast.parse`` of every file."""
    default = given = 0.0
    left_out: List[str] = []
    for path in paths:
        target = given_target(path)
        if target is None:
            left_out.append(path.name)
            continue
        best = [float("inf"), float("inf")]
        printed = ["", ""]
        for _ in range(repeat):
            for side, more in enumerate(((), ("--target-version", target))):
                seconds, _code, printed[side] = check_seconds([path], *more)
                best[side] = min(best[side], seconds)
        if printed[0] != printed[1]:
            raise SystemExit(f"{path}: --target-version {target} printed other findings")
        default, given = default + best[0], given + best[1]
    if not default:
        print("the survey's net cost: not measured (every path holds several projects)")
        return
    without = f" ({', '.join(left_out)} left out: several projects)" if left_out else ""
    print(
        f"the survey's net cost, a run per project{without}: {default:.2f} s by default, "
        f"{given:.2f} s given the target it finds (best of {repeat} each, interleaved): "
        f"{1 - given / default:.0%} of a run; the runs alone {given / floor:.2f}x ast.parse "
        "(each process's start-up included)"
    )


def reported(paths: Sequence[Path]) -> List[Path]:
    """The ``.py`` files a run over ``paths`` reports a fix or a finding in (a second run, with
    ``--format json``, not timed)."""
    report = json.loads(check_seconds(paths, "--format", "json")[2])
    return sorted(
        Path(entry["path"])
        for entry in report["files"]
        if entry["path"].endswith(".py") and (entry["fixes"] or entry["findings"])
    )


def classify(paths: Sequence[Path]) -> Dict[str, Counter[str]]:
    """What each file meets in a run over ``paths`` in this process, as the command runs it
    (each project with its own versions), counted; the survey's passes are not counted."""
    from jaxmigrate.migrator import cli, engine, runner

    outcome: Counter[str] = collections.Counter()
    candidates_at_libcst: Counter[str] = collections.Counter()
    answered_on_ast: Counter[str] = collections.Counter()
    findings_only: Counter[str] = collections.Counter()
    fixes: Counter[str] = collections.Counter()
    current: List[Optional[Dict[str, object]]] = [None]  # the file the run is migrating
    real_python, real_gate, real_rewrite = runner._migrate_python, engine._ast_gate, engine._rewrite

    def python(text: str, settings, options, cache):  # noqa: ANN001, ANN202
        if settings.survey:
            return real_python(text, settings, options, cache)
        record: Dict[str, object] = {"text": text, "left": None, "libcst": False}
        current[0] = record
        try:
            output, found_fixes, findings, diff = real_python(text, settings, options, cache)
        finally:
            current[0] = None
        left = record["left"]
        codes = ",".join(rule.code for rule in left or ())  # type: ignore[attr-defined]
        if not record["libcst"] and left is None:
            outcome["stopped at gate 0/1 (text)"] += 1
        elif not record["libcst"] and not left:
            outcome["stopped at gate 2 (ast facts)"] += 1
        elif not record["libcst"] and (found_fixes or output != text):
            outcome["answered on ast: fixes written from ast"] += 1
            answered_on_ast[codes] += 1
            fixes.update({d.code for d in found_fixes})
        elif not record["libcst"]:
            outcome["answered on ast (no LibCST parse)"] += 1
            answered_on_ast[codes] += 1
        else:  # (the module's or a docstring program's parse)
            candidates_at_libcst[codes or "(none: a docstring's program)"] += 1
            if found_fixes or output != text:
                outcome["reached LibCST: fixes"] += 1
                fixes.update({d.code for d in found_fixes})
            elif findings:
                outcome["reached LibCST: findings only"] += 1
                findings_only.update({d.code for d in findings})
            else:
                outcome["reached LibCST: nothing"] += 1
        return output, found_fixes, findings, diff

    def gate(text: str, *args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        left, facts = real_gate(text, *args, **kwargs)
        record = current[0]
        if record is not None and record["text"] is text:  # (not a docstring's program)
            record["left"] = left
        return left, facts

    def rewrite(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        if current[0] is not None:
            current[0]["libcst"] = True
        return real_rewrite(*args, **kwargs)

    runner._migrate_python, engine._ast_gate, engine._rewrite = python, gate, rewrite
    argv = [*map(str, paths), "--check", "-q", "-j", "1", "--no-cache"]
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            cli.main([*argv, "--extend-exclude", "*.ipynb"])
    except SystemExit:
        pass
    finally:
        runner._migrate_python, engine._ast_gate, engine._rewrite = (
            real_python,
            real_gate,
            real_rewrite,
        )
    return {
        "outcome": outcome,
        "candidates after gate 2, of the files that reach LibCST": candidates_at_libcst,
        "candidates after gate 2, of the files answered on ast": answered_on_ast,
        "codes of the findings-only files that reach LibCST": findings_only,
        "codes of the fixes": fixes,
    }


def measure(name: str, paths: Sequence[Path], skip_cli: bool) -> None:
    files = python_files(paths)
    texts = read_all(files)
    lines = sum(text.count("\n") for text in texts)
    print(f"\n## {name}: {len(files):,} .py files, {lines:,} lines")
    floor = ast_seconds(files)
    print(f"ast.parse of every file (best of 3): {floor:.2f} s")
    if not skip_cli:
        # (the best of three, as the baseline is: one run alone moves by a third on a busy machine)
        seconds, code, _printed = check_seconds(paths, repeat=3)
        print(
            f"jaxmigrate --check -q -j 1 --no-cache (best of 3): {seconds:.2f} s (exit {code}): "
            f"{seconds / floor:.2f}x ast.parse"
        )
        # What no run that prints every finding can go below: parsing the files that carry one.
        carrying = reported(paths)
        least = ast_seconds(carrying)
        print(
            f"the floor, ast.parse of the {len(carrying):,} files with a fix or finding: "
            f"{least:.2f} s, {least / floor:.2f}x ast.parse"
        )
        gated = least_python_seconds(files, carrying, gated=True)
        every = least_python_seconds(files, carrying, gated=False)
        print(
            "the least a pure-Python run does: every file read, its identifiers read once, "
            f"those {len(carrying):,} files parsed and walked once: {gated:.2f} s, "
            f"{gated / floor:.2f}x ast.parse; every file parsed and walked once: {every:.2f} s, "
            f"{every / floor:.2f}x"
        )
        survey_cost(paths, floor)
        total, parts = phase_seconds(paths)
        print(
            f"where one run goes, in its own process ({total:.2f} s in all; the survey's parts "
            "include what it reads for the run: tokens, CPython's facts, LibCST's trees):"
        )
        for part, (seconds, calls) in parts.items():
            share = f"{seconds / total:4.0%}" if total else "   -"
            counted = f" ({calls:,} calls)" if calls > 1 else ""
            print(f"  {seconds:6.2f} s {share}  {part}{counted}")
    for title, counts in classify(paths).items():
        print(f"{title}:")
        for key, count in counts.most_common(12):
            print(f"  {count:6,}  {key}")


def jax_sources() -> Path:
    import jax

    return Path(os.path.dirname(jax.__file__))


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jax", type=Path, default=None, help="JAX's sources (installed jax)")
    parser.add_argument("--modern-out", type=Path, default=DEFAULT_MODERN_OUT)
    parser.add_argument("--no-build", action="store_true", help="reuse a built modern corpus")
    parser.add_argument("--only", choices=["jax", "modern", "newest"])
    parser.add_argument("--skip-cli", action="store_true", help="only the in-process counts")
    parser.add_argument(
        "--bytecode", choices=bytecode.CHOICES, default="cached", help="jaxmigrate's bytecode"
    )
    args = parser.parse_args(argv)
    os.environ.setdefault("PYTHONHASHSEED", "0")
    with tempfile.TemporaryDirectory(prefix="jaxmigrate-check-speed-") as pycache:
        TOOL_ENV.clear()
        TOOL_ENV.update(bytecode.environment(args.bytecode, Path(pycache)))
        print(f"jaxmigrate's bytecode: {args.bytecode}")
        _measure_all(args)
    return 0


def _measure_all(args: argparse.Namespace) -> None:
    if not args.skip_cli:
        bytecode.warm(TOOL_ENV)
    if args.only in (None, "jax"):
        measure("JAX's own sources", [args.jax or jax_sources()], args.skip_cli)
    if args.only in (None, "modern", "newest"):
        from bench.modern_corpus import DEFAULT_CACHE, PINS, _built, build

        built = (
            _built(args.modern_out, PINS)
            if args.no_build
            else build(args.modern_out, DEFAULT_CACHE, PINS, latest=False)
        )
        if args.only != "newest":
            measure("modern corpus", list(built.values()), args.skip_cli)
        newest = [built[name] for name in NEWEST_TREES]
        measure("the newest flax and orbax trees", newest, args.skip_cli)


if __name__ == "__main__":
    sys.exit(main())
