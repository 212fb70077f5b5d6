"""Build the benchmark corpora under bench/.corpus (or --out).

* ``modern/``: the Python sources of real packages no one here wrote (jax, flax, optax,
  numpy, scipy), taken from their wheels on the package index: about a million lines.
* ``dense/``: legacy-dense modules made by concatenating the fixtures' before-files, so every
  file has something for the rules to do.

Usage: python bench/corpus.py [--out DIR] [--packages jax flax ...] [--dense-lines N]
"""

from __future__ import annotations

import argparse
import random
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "bench" / ".corpus"
DEFAULT_PACKAGES = ("jax", "flax", "optax", "numpy", "scipy")
_FIXTURE_HEADER = re.compile(r"^#\s*(fixture|expect):.*$", re.MULTILINE)


def build_modern(out: Path, packages: list[str]) -> int:
    target = out / "modern"
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    with tempfile.TemporaryDirectory() as download:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
             "--dest", download, *packages],
            check=True,
        )  # fmt: skip
        for wheel in sorted(Path(download).glob("*.whl")):
            package = wheel.name.split("-")[0]
            with zipfile.ZipFile(wheel) as archive:
                for member in archive.namelist():
                    if member.endswith(".py") and ".data/" not in member:
                        destination = target / package / member
                        destination.parent.mkdir(parents=True, exist_ok=True)
                        destination.write_bytes(archive.read(member))
    return _count_lines(target)


def build_dense(out: Path, lines: int, seed: int = 0) -> int:
    target = out / "dense"
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    pieces = [
        _FIXTURE_HEADER.sub("", path.read_text())
        for path in sorted((ROOT / "fixtures").glob("*/*.before.py"))
    ]
    if not pieces:
        raise SystemExit("no fixtures/*/*.before.py to build the dense corpus from")
    rng = random.Random(seed)
    written, index = 0, 0
    while written < lines:
        chosen = rng.sample(pieces, k=min(6, len(pieces)))
        text = "\n\n".join(chosen)
        (target / f"legacy_{index:05}.py").write_text(text)
        written += text.count("\n") + 1
        index += 1
    return written


def _count_lines(root: Path) -> int:
    return sum(p.read_bytes().count(b"\n") for p in root.rglob("*.py"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--packages", nargs="*", default=list(DEFAULT_PACKAGES))
    parser.add_argument("--dense-lines", type=int, default=100_000)
    parser.add_argument("--skip-modern", action="store_true")
    args = parser.parse_args()
    if not args.skip_modern:
        print(f"modern corpus: {build_modern(args.out, args.packages):,} lines")
    print(f"dense corpus:  {build_dense(args.out, args.dense_lines):,} lines")


if __name__ == "__main__":
    main()
