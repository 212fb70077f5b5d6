"""Measure jaxmigrate against baselines measured in the same run, on the same files.

Baselines: CPython's ast.parse of every file (the floor for any semantic check in Python),
LibCST parse + code generation (the floor for any LibCST rewrite), the same with one no-op
visitor pass and with LibCST's own name resolution (the least a LibCST codemod that looks at
every node, or resolves names, costs), pyupgrade (a tool users already run in pre-commit),
and LibCST's codemod runner with one rename command (on a sample, extrapolated per line, when
it is too slow for the whole corpus).

Every baseline reads the ``.py`` files jaxmigrate checks (its discovery, ``*.ipynb`` left out).
The processes timed start with cached bytecode, as installed tools do (``--bytecode``:
:mod:`bench.bytecode`).
``--pairs N`` also times LibCST parse + codegen and ``--check -j 1`` in N back-to-back pairs.

Usage: python bench/corpus.py && python bench/run.py [--corpus DIR] [--codemod-sample N]
       [--pairs N]
"""

from __future__ import annotations

import argparse
import ast
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
DEFAULT_CORPUS = ROOT / "bench" / ".corpus"

from bench import bytecode  # noqa: E402


def files_of(root: Path) -> List[Path]:
    """The ``.py`` files jaxmigrate checks under ``root`` (its discovery and default excludes:
    a ``jax/`` package inside a walked directory is not user code), so that every baseline
    reads the files the tool reads."""
    from jaxmigrate.migrator.cli_config import excludes_for
    from jaxmigrate.migrator.discovery import discover

    found, _missing = discover([root], excludes_for([root], None, None, ()))
    return sorted(path for path in found if path.suffix == ".py")


def read_all(files: Sequence[Path]) -> List[str]:
    return [f.read_text(encoding="utf-8", errors="surrogateescape") for f in files]


def time_in_process(label: str, function, texts: Sequence[str]) -> float:
    start = time.perf_counter()
    for text in texts:
        try:
            function(text)
        except Exception:  # noqa: BLE001 (a file a parser rejects still cost its time)
            pass
    return time.perf_counter() - start


def ast_floor(texts: Sequence[str]) -> float:
    return time_in_process("ast", ast.parse, texts)


def libcst_floor(texts: Sequence[str]) -> float:
    import libcst

    return time_in_process("libcst", lambda t: libcst.parse_module(t).code, texts)


def libcst_visit_floor(texts: Sequence[str]) -> float:
    """Parse + one visitor pass that does nothing + codegen: the least any LibCST codemod
    that looks at every node costs (jaxmigrate's rules need at least this, and more rounds)."""
    import libcst

    def visit(text: str) -> str:
        module = libcst.parse_module(text)
        module.visit(libcst.CSTVisitor())
        return module.code

    return time_in_process("libcst+visit", visit, texts)


def libcst_scopes(texts: Sequence[str], sample: int) -> Tuple[float, int]:
    """Seconds for LibCST parse + its own name resolution (``ScopeProvider``, what a
    codemod with aliases and shadowing would use) on every n-th of ``texts`` (``sample`` of
    them), and their lines."""
    import libcst
    from libcst.metadata import MetadataWrapper, ScopeProvider

    chosen = list(texts)[:: max(1, len(texts) // sample)][:sample]
    seconds = time_in_process(
        "libcst+scopes",
        lambda t: MetadataWrapper(libcst.parse_module(t)).resolve(ScopeProvider),
        chosen,
    )
    return seconds, sum(t.count("\n") for t in chosen)


class TreeRssSampler(threading.Thread):
    """Samples the summed RSS of a process and its descendants from /proc."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.peak_kb = 0
        self.done = threading.Event()

    def _tree(self) -> List[int]:
        pids, frontier = [], [self.pid]
        while frontier:
            pid = frontier.pop()
            pids.append(pid)
            try:
                tasks = list(Path(f"/proc/{pid}/task").iterdir())
            except OSError:  # (it left between the read that named it and this one)
                continue
            for task in tasks:
                try:
                    frontier += [int(c) for c in (task / "children").read_text().split()]
                except OSError:
                    pass
        return pids

    def run(self) -> None:
        while not self.done.is_set():
            total = 0
            for pid in self._tree():
                try:
                    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                        if line.startswith("VmRSS:"):
                            total += int(line.split()[1])
                except OSError:
                    pass
            self.peak_kb = max(self.peak_kb, total)
            self.done.wait(0.05)


def run_command(command: Sequence[str], cwd: Optional[Path] = None) -> Tuple[float, float, int]:
    """(wall seconds, peak RSS of the process tree in MB, exit code)."""
    start = time.perf_counter()
    process = subprocess.Popen(
        command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    sampler = TreeRssSampler(process.pid) if Path("/proc").exists() else None
    if sampler:
        sampler.start()
    code = process.wait()
    elapsed = time.perf_counter() - start
    peak = 0.0
    if sampler:
        sampler.done.set()
        sampler.join()
        peak = sampler.peak_kb / 1024
    return elapsed, peak, code


def jaxmigrate(
    paths: Sequence[Path], jobs: int, cache_dir: Optional[Path]
) -> Tuple[float, float, int]:
    command = [
        sys.executable,
        "-m",
        "jaxmigrate.migrator.cli",
        *map(str, paths),
        "--check",
        "-q",
        "-j",
        str(jobs),
        "--extend-exclude",
        "*.ipynb",  # (the baselines read .py files)
    ]
    command += ["--cache-dir", str(cache_dir)] if cache_dir else ["--no-cache"]
    return run_command(command)


def pyupgrade(files: Sequence[Path], root: Path) -> Optional[float]:
    if shutil.which("pyupgrade") is None and not _has_module("pyupgrade"):
        return None
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / "corpus"
        shutil.copytree(root, copy)
        copied = [str(copy / f.relative_to(root)) for f in files]
        start = time.perf_counter()
        for chunk in _chunks(copied, 500):
            subprocess.run(
                [sys.executable, "-m", "pyupgrade", "--py39-plus", *chunk],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )  # fmt: skip
        return time.perf_counter() - start


def codemod_runner(files: Sequence[Path], root: Path, sample: int) -> Tuple[float, int]:
    """Seconds for LibCST's codemod runner with one rename on ``sample`` files, and their lines."""
    chosen = list(files)[:: max(1, len(files) // sample)][:sample]
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        subprocess.run(
            [sys.executable, "-m", "libcst.tool", "initialize", "."], cwd=work,
            stdout=subprocess.DEVNULL, check=True,
        )  # fmt: skip
        copies = []
        for index, path in enumerate(chosen):
            target = work / f"f{index:05}.py"
            shutil.copyfile(path, target)
            copies.append(target.name)
        lines = sum(path.read_bytes().count(b"\n") for path in chosen)
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "libcst.tool", "codemod", "rename.RenameCommand", "--no-format",
             "-j", "1", "--old_name=jax.numpy.DeviceArray", "--new_name=jax.Array", *copies],
            cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        return time.perf_counter() - start, lines


def _has_module(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None


def _chunks(items: Sequence[str], size: int):
    for start in range(0, len(items), size):
        yield items[start : start + size]


def bench_corpus(name: str, root: Path, args: argparse.Namespace) -> Dict[str, float]:
    files = files_of(root)
    texts = read_all(files)
    lines = sum(t.count("\n") for t in texts)
    print(f"\n## {name}: {len(files):,} files, {lines:,} lines ({root})")
    results: Dict[str, float] = {}
    results["ast"] = ast_floor(texts)
    results["libcst"] = libcst_floor(texts) if not args.skip_libcst else float("nan")
    if not args.skip_libcst:
        results["libcst_visit"] = libcst_visit_floor(texts)
        scope_seconds, scope_lines = libcst_scopes(texts, args.scope_sample)
        results["libcst_scopes"] = scope_seconds / max(scope_lines, 1) * lines
    for jobs in (1, 2):
        seconds, peak, code = jaxmigrate([root], jobs, None)
        results[f"j{jobs}"], results[f"j{jobs}_rss"] = seconds, peak
    if args.pairs and not args.skip_libcst:
        _pairs(root, texts, args.pairs)
    with tempfile.TemporaryDirectory() as cache:
        jaxmigrate([root], 2, Path(cache))
        results["warm"], results["warm_rss"], _ = jaxmigrate([root], 2, Path(cache))
    if not args.skip_pyupgrade:
        value = pyupgrade(files, root)
        results["pyupgrade"] = value if value is not None else float("nan")
    codemod_seconds, codemod_lines = codemod_runner(files, root, args.codemod_sample)
    results["codemod_per_line"] = codemod_seconds / max(codemod_lines, 1)
    results["codemod_estimate"] = results["codemod_per_line"] * lines
    _print(results, len(files), lines)
    return results


def _pairs(root: Path, texts: Sequence[str], count: int) -> None:
    """LibCST parse + codegen and ``jaxmigrate --check -j 1`` timed one right after the other,
    ``count`` times: a machine whose speed drifts moves both of a pair alike, where one
    measurement of each can land in different spells."""
    ratios = []
    for _ in range(count):
        libcst = libcst_floor(texts)
        tool = jaxmigrate([root], 1, None)[0]
        ratios.append(tool / libcst)
        print(f"pair: LibCST {libcst:.2f} s, jaxmigrate -j 1 {tool:.2f} s: {tool / libcst:.2f}x")
    ratios.sort()
    print(f"median of {count} pairs: {ratios[len(ratios) // 2]:.2f}x libcst")


def _print(r: Dict[str, float], nfiles: int, lines: int) -> None:
    def row(label: str, seconds: float, note: str = "") -> None:
        print(f"| {label:<38} | {seconds:9.2f} s | {note}")

    print("| measurement | time | ratio / note |")
    print("| --- | --- | --- |")
    row("ast.parse of every file (floor)", r["ast"])
    row("LibCST parse + codegen (floor)", r["libcst"])
    if "libcst_visit" in r:
        row(
            "LibCST parse + no-op visit + codegen",
            r["libcst_visit"],
            f"{r['libcst_visit'] / r['libcst']:.2f}x libcst",
        )
        row(
            "LibCST parse + ScopeProvider (estimate)",
            r["libcst_scopes"],
            f"{r['libcst_scopes'] / r['libcst']:.2f}x libcst (name resolution, on a sample)",
        )
    for jobs in (1, 2):
        j = r[f"j{jobs}"]
        row(
            f"jaxmigrate --check -j {jobs}",
            j,
            f"{j / r['ast']:.2f}x ast, {j / r['libcst']:.2f}x libcst, "
            f"{nfiles / j:,.0f} files/s, peak RSS {r[f'j{jobs}_rss']:.0f} MB",
        )
    row("jaxmigrate --check -j 2, warm cache", r["warm"], f"peak RSS {r['warm_rss']:.0f} MB")
    if "pyupgrade" in r:
        row(
            "pyupgrade --py39-plus",
            r["pyupgrade"],
            f"jaxmigrate -j1 is {r['pyupgrade'] / r['j1']:.1f}x faster",
        )
    row(
        "LibCST codemod runner, rename (estimate)",
        r["codemod_estimate"],
        f"{r['codemod_per_line'] * 1e6:.0f} us/line on a sample; jaxmigrate -j1 is "
        f"{r['codemod_estimate'] / r['j1']:.0f}x faster",
    )
    print(f"| -j 2 speed-up over -j 1 | {r['j1'] / r['j2']:.2f}x | |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument(
        "--codemod-sample", type=int, default=40, help="files for the codemod runner"
    )
    parser.add_argument(
        "--scope-sample", type=int, default=100, help="files for LibCST's ScopeProvider"
    )
    parser.add_argument(
        "--pairs", type=int, default=0, help="also time LibCST and -j 1 in N alternating pairs"
    )
    parser.add_argument("--skip-pyupgrade", action="store_true")
    parser.add_argument("--skip-libcst", action="store_true")
    parser.add_argument("--only", choices=["modern", "dense"])
    parser.add_argument(
        "--bytecode", choices=bytecode.CHOICES, default="cached", help="the processes' bytecode"
    )
    args = parser.parse_args()
    if not args.corpus.exists():
        raise SystemExit(f"{args.corpus} does not exist: run python bench/corpus.py first")
    os.environ.setdefault("PYTHONHASHSEED", "0")
    with tempfile.TemporaryDirectory(prefix="jaxmigrate-bench-") as pycache:
        # (the timed processes: jaxmigrate, pyupgrade, LibCST's codemod runner)
        started_with = bytecode.environment(args.bytecode, Path(pycache))
        os.environ.clear()
        os.environ.update(started_with)
        bytecode.warm(started_with)
        print(f"processes' bytecode: {args.bytecode}")
        for name in ("modern", "dense"):
            if args.only in (None, name) and (args.corpus / name).exists():
                bench_corpus(name, args.corpus / name, args)


if __name__ == "__main__":
    main()
