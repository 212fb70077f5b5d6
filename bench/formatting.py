"""Layout a reviewer would not write: what a migration leaves that its maintainers would fix.

Migrates a copy of the legacy corpus (``bench/legacy_corpus.py``) with ``jaxmigrate
--unsafe-fixes`` and no other flag (each project's configuration files are beside its code),
then counts, per package and in total, only what the migration changed (each count is the
file's after-count on the lines the migration wrote less its before-count on the lines it
replaced, never below 0):

* ``long``: lines over the project's line length (read as the tool reads it:
  ``jaxmigrate.migrator.linelength``) that a hunk added beyond the long lines it replaced;
* ``group``: import statements the migration wrote that stand outside their isort section's
  group (a ``jax`` import among first-party ones, or alone while the third-party group is
  elsewhere in the block); sections: future, standard library, third party, first party (the
  project's own top-level packages and modules, and ``known-first-party``/``known_first_party``
  of its isort or ruff settings), local (relative);
* ``order``: written import statements that break the order of a group that is sorted
  without them (isort's default order, ``import x`` lines first, or by module alone, each
  within sections or not);
* ``empty``: ``if``/``elif``/``else`` branches of only ``pass`` among the lines written;
* ``dead``: a store ``x = A`` overwritten by ``x = B`` in the same block with nothing between
  that mentions ``x``, one of the two written by the migration;
* ``comma``: a trailing comma before a bracket closing on the same line (``(A, B, )``,
  ``[a,]``, ``f(a,)``, ``import (a, b,)``; a one-element tuple ``(a,)`` needs its comma);
* ``unused``: imports the file used as read and no longer uses after the migration;
* ``ruff I``/``ruff E501``: new violations of ``ruff check --isolated --select I,E501
  --line-length N`` (``known-first-party`` set to the project's own names) per changed file,
  after less before.

Usage (from the repository root; the migration takes about 2 minutes on 2 cores)::

    python bench/formatting.py [--corpus /tmp/jaxmigrate-legacy-corpus]
        [--out /tmp/jaxmigrate-formatting] [--line-length N] [--no-migrate] [--list COLUMN]

``--no-migrate`` measures an ``--out`` tree migrated before; ``--list`` prints the places
counted in one column (as ``path:line``), to look at.  The corpus's sdists carry no line
length (their repositories' ``.pylintrc`` files are not shipped), so 88 applies;
``--line-length 80`` gives each copy a ``.pylintrc`` that sets 80, as the Google-style
projects among them (flax, optax, haiku, chex, rlax, distrax, trax) hold their code to.
"""

from __future__ import annotations

import argparse
import ast
import configparser
import difflib
import io
import json
import shutil
import subprocess
import sys
import tokenize
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Sequence, Set, Tuple

from jaxmigrate.migrator.linelength import line_length_for

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

COLUMNS = ("long", "group", "order", "empty", "dead", "comma", "unused", "ruff I", "ruff E501")
Places = Dict[str, List[str]]


# -- which lines the migration wrote --------------------------------------------------------
def touched(
    before: Sequence[str], after: Sequence[str], around: bool = True
) -> Tuple[Set[int], Set[int]]:
    """1-based lines of ``before`` the migration replaced or deleted, and of ``after`` that it
    wrote; with ``around``, a deletion marks the lines around it on the other side too (a
    ``pass`` left by a branch whose statements went)."""
    old: Set[int] = set()
    new: Set[int] = set()
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        old.update(range(i1 + 1, i2 + 1))
        new.update(range(j1 + 1, j2 + 1))
        if i1 == i2 and around:
            old.update((i1, i1 + 1))
        if j1 == j2 and around:
            new.update((j1, j1 + 1))
    return old, new


def long_lines_added(before: Sequence[str], after: Sequence[str], limit: int) -> List[int]:
    found: List[int] = []
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag in ("replace", "insert"):
            was = sum(len(line) > limit for line in before[i1:i2])
            long = [j + 1 for j in range(j1, j2) if len(after[j]) > limit]
            found.extend(long[was:])
    return found


def _span(node: ast.AST) -> range:
    return range(node.lineno, (getattr(node, "end_lineno", None) or node.lineno) + 1)


def _hits(node: ast.AST, lines: Set[int]) -> bool:
    return any(n in lines for n in _span(node))


# -- import groups ----------------------------------------------------------------------------
def first_party(project: Path) -> Set[str]:
    """The project's own top-level names, and its isort/ruff ``known-first-party``."""
    names = {
        p.name
        for p in project.iterdir()
        if p.is_dir() and (p / "__init__.py").exists() and not p.name.startswith(".")
    }
    names |= {p.stem for p in project.glob("*.py") if p.stem != "setup"}
    pyproject = project / "pyproject.toml"
    if pyproject.is_file():
        try:
            tool = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("tool", {})
        except (OSError, tomllib.TOMLDecodeError):
            tool = {}
        ruff = tool.get("ruff", {})
        for table in (
            tool.get("isort", {}),
            ruff.get("isort", {}),
            ruff.get("lint", {}).get("isort", {}),
        ):
            for key in ("known-first-party", "known_first_party"):
                names.update(table.get(key, ()))
    for name in ("setup.cfg", "tox.ini", ".isort.cfg"):
        path = project / name
        if path.is_file():
            parser = configparser.ConfigParser(strict=False, interpolation=None)
            try:
                parser.read_string(path.read_text(encoding="utf-8", errors="replace"))
            except configparser.Error:
                continue
            for section in ("isort", "settings", "tool:isort"):
                if parser.has_option(section, "known_first_party"):
                    value = parser.get(section, "known_first_party")
                    names.update(v.strip() for v in value.replace("\n", ",").split(",") if v)
    return {n for n in names if n}


def section(statement: ast.stmt, own: Set[str]) -> str:
    if isinstance(statement, ast.ImportFrom):
        if statement.level:
            return "local"
        module = statement.module or ""
    else:
        module = statement.names[0].name  # type: ignore[attr-defined]
    top = module.split(".")[0]
    if top == "__future__":
        return "future"
    if top in own:
        return "first"
    if top in sys.stdlib_module_names:
        return "stdlib"
    return "third"


def import_groups(tree: ast.Module, text: List[str]) -> List[List[ast.stmt]]:
    """The first import block's groups (runs of import statements without blank lines)."""
    block: List[ast.stmt] = []
    for statement in tree.body:
        if isinstance(statement, (ast.Import, ast.ImportFrom)):
            block.append(statement)
        elif block and not (
            isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)
        ):
            break
    groups: List[List[ast.stmt]] = []
    previous_end = -1
    for statement in block:
        gap = text[previous_end : statement.lineno - 1] if previous_end >= 0 else []
        if (
            not groups
            or any(not line.strip() for line in gap)
            or any(not line.strip().startswith("#") for line in gap if line.strip())
        ):
            groups.append([])
        groups[-1].append(statement)
        previous_end = statement.end_lineno or statement.lineno
    return groups


def out_of_group(tree: ast.Module, lines: Set[int], own: Set[str], text: List[str]) -> List[int]:
    """Written import statements of the first import block whose group holds another
    section, or that stand alone while their section's group is elsewhere in the block."""
    groups = import_groups(tree, text)
    found: List[int] = []
    for group in groups:
        for statement in group:
            if not _hits(statement, lines):
                continue
            mine = section(statement, own)
            others = {section(s, own) for s in group if s is not statement}
            if others and mine not in others:
                found.append(statement.lineno)
            elif not others and any(
                g is not group and any(section(s, own) == mine for s in g) for g in groups
            ):
                found.append(statement.lineno)
    return found


def _module(statement: ast.stmt) -> str:
    if isinstance(statement, ast.ImportFrom):
        return "." * statement.level + (statement.module or "")
    return statement.names[0].name  # type: ignore[attr-defined]


def _orders(own: Set[str]) -> List:  # noqa: ANN001
    """isort's default order and by module alone, each within sections and not."""
    default = lambda s: (isinstance(s, ast.ImportFrom), _module(s).lower())  # noqa: E731
    alone = lambda s: (_module(s).lower(), isinstance(s, ast.ImportFrom))  # noqa: E731
    rank = ("future", "stdlib", "third", "first", "local").index
    return [
        default,
        alone,
        lambda s: (rank(section(s, own)), *default(s)),
        lambda s: (rank(section(s, own)), *alone(s)),
    ]


def out_of_order(tree: ast.Module, lines: Set[int], own: Set[str], text: List[str]) -> List[int]:
    found: List[int] = []
    for group in import_groups(tree, text):
        written = [s for s in group if _hits(s, lines)]
        rest = [s for s in group if not _hits(s, lines)]
        if not written:
            continue
        orders = [key for key in _orders(own) if _in_order(rest, key)]
        if orders and not any(_in_order(group, key) for key in orders):
            found.extend(s.lineno for s in written)
    return found


def _in_order(statements: List[ast.stmt], key) -> bool:  # noqa: ANN001
    keys = [key(s) for s in statements]
    return all(a <= b for a, b in zip(keys, keys[1:]))


# -- dead code --------------------------------------------------------------------------------
def _only_pass(body: Sequence[ast.stmt]) -> bool:
    return bool(body) and all(isinstance(s, ast.Pass) for s in body)


def empty_branches(tree: ast.AST, lines: Set[int]) -> List[int]:
    found: List[int] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.If) or not _hits(node, lines):
            continue
        if _only_pass(node.body):
            found.append(node.lineno)
        if _only_pass(node.orelse):
            found.append(node.orelse[0].lineno)
    return found


def _bodies(tree: ast.AST) -> Iterator[List[ast.stmt]]:
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            value = getattr(node, field, None)
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                yield value
        for handler in getattr(node, "handlers", ()):
            yield handler.body


def _stored(statement: ast.stmt) -> Optional[str]:
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
        target = statement.targets[0]
    elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
        target = statement.target
    else:
        return None
    return target.id if isinstance(target, ast.Name) else None


def _mentions(node: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node))


def dead_stores(tree: ast.AST, lines: Set[int]) -> List[int]:
    found: List[int] = []
    simple = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr, ast.Import, ast.ImportFrom)
    for body in _bodies(tree):
        for index, statement in enumerate(body):
            name = _stored(statement)
            if name is None:
                continue
            for later in body[index + 1 :]:
                value = getattr(later, "value", None)
                if _stored(later) == name and value is not None and not _mentions(value, name):
                    if _hits(statement, lines) or _hits(later, lines):
                        found.append(statement.lineno)
                    break
                if not isinstance(later, simple) or _mentions(later, name):
                    break
    return found


# -- stray commas ------------------------------------------------------------------------------
def stray_commas(text: str, lines: Set[int]) -> List[int]:
    found: List[int] = []
    try:
        tokens = [
            t
            for t in tokenize.generate_tokens(io.StringIO(text).readline)
            if t.type not in (tokenize.NL, tokenize.COMMENT)
        ]
    except (tokenize.TokenError, SyntaxError):
        return found
    opened: List[Tuple[int, int]] = []  # (token index of the bracket, commas inside it)
    for index, token in enumerate(tokens):
        if token.type != tokenize.OP:
            continue
        if token.string in "([{":
            opened.append((index, 0))
        elif token.string == "," and opened:
            opened[-1] = (opened[-1][0], opened[-1][1] + 1)
        elif token.string in ")]}" and opened:
            start, commas = opened.pop()
            comma = tokens[index - 1]
            if comma.string != "," or comma.end[0] != token.start[0]:
                continue
            if token.start[0] not in lines:
                continue
            before = tokens[start - 1] if start else None
            is_call = before is not None and (
                (before.type == tokenize.NAME and before.string not in _KEYWORDS)
                or before.string in ")]"
            )
            one_tuple = token.string == ")" and commas == 1 and not is_call
            if comma.end != token.start or not one_tuple:
                found.append(token.start[0])
    return found


_KEYWORDS = frozenset(
    "and as assert await del elif else for from if import in is lambda not or print "
    "return while with yield".split()
)


# -- imports left unused ----------------------------------------------------------------------
def _imports(tree: ast.Module) -> Iterator[Tuple[str, str, int]]:
    """(what must be read for the import to be used, the import's text, line) per alias."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    yield alias.asname, f"import {alias.name} as {alias.asname}", node.lineno
                else:
                    yield alias.name, f"import {alias.name}", node.lineno
        elif isinstance(node, ast.ImportFrom) and node.module != "__future__":
            for alias in node.names:
                bound = alias.asname or alias.name
                if bound != "*":
                    text = f"from {'.' * node.level}{node.module or ''} import {alias.name}"
                    text += f" as {alias.asname}" if alias.asname else ""
                    yield bound, text, node.lineno


def _reads(tree: ast.Module) -> Set[str]:
    """Names and dotted chains the code reads (every prefix of ``a.b.c``), and ``__all__``."""
    read: Set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            parts: List[str] = []
            current: ast.expr = node
            while isinstance(current, ast.Attribute):
                parts.append(current.attr)
                current = current.value
            if isinstance(current, ast.Name):
                chain = [current.id, *reversed(parts)]
                read.update(".".join(chain[: i + 1]) for i in range(len(chain)))
        elif isinstance(node, ast.Name):
            read.add(node.id)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            read.update(node.value.replace("[", " ").replace("]", " ").split())  # annotations
    return read


def unused_left(before: ast.Module, after: ast.Module) -> List[int]:
    was_read, now_read = _reads(before), _reads(after)
    used_before = {text for need, text, _line in _imports(before) if need in was_read}
    return [
        line for need, text, line in _imports(after) if text in used_before and need not in now_read
    ]


# -- ruff ---------------------------------------------------------------------------------------
def ruff_counts(root: Path, files: List[Path], limit: int, own: Set[str]) -> Dict[Path, Dict]:
    """Violations per file and code (``I001``, ``E501``) of ``ruff check`` run in ``root``."""
    counts: Dict[Path, Dict[str, List[int]]] = {f: {} for f in files}
    if not files:
        return counts
    command = [
        "ruff",
        "check",
        "--isolated",
        "--no-cache",
        "--select",
        "I,E501",
        "--line-length",
        str(limit),
        "--config",
        f"lint.isort.known-first-party = {json.dumps(sorted(own))}",
        "--output-format",
        "json",
        "--exit-zero",
        *[str(f.relative_to(root)) for f in files],
    ]
    done = subprocess.run(command, cwd=root, capture_output=True, text=True, check=True)
    for item in json.loads(done.stdout or "[]"):
        path = (root / item["filename"]).resolve()
        code = "ruff I" if item["code"].startswith("I") else "ruff E501"
        counts.setdefault(path, {}).setdefault(code, []).append(item["location"]["row"])
    return counts


# -- measuring ----------------------------------------------------------------------------------
def projects(corpus: Path) -> List[Path]:
    # jax's own sdists are JAX itself, which jaxmigrate does not walk
    return sorted(p for p in corpus.iterdir() if p.is_dir() and not p.name.startswith("jax-"))


def _net(after: List[int], before: List[int]) -> List[int]:
    return after[len(before) :] if len(after) > len(before) else []


def measure_project(project: Path, migrated: Path, places: Places) -> Dict[str, int]:
    limit = line_length_for(migrated)  # the copy's (``--line-length`` sets one there)
    own = first_party(project)
    totals = dict.fromkeys(COLUMNS, 0)
    changed: List[Tuple[Path, Path]] = []
    for path in sorted(project.rglob("*.py")):
        other = migrated / path.relative_to(project)
        if not other.exists():
            continue
        before_text = path.read_text(encoding="utf-8", errors="surrogateescape")
        after_text = other.read_text(encoding="utf-8", errors="surrogateescape")
        if before_text == after_text:
            continue
        try:
            before_tree, after_tree = ast.parse(before_text), ast.parse(after_text)
        except SyntaxError:
            continue
        changed.append((path, other))
        before, after = before_text.splitlines(), after_text.splitlines()
        old, new = touched(before, after)
        written_old, written = touched(before, after, around=False)
        found = {
            "long": long_lines_added(before, after, limit),
            "group": _net(
                out_of_group(after_tree, written, own, after),
                out_of_group(before_tree, written_old, own, before),
            ),
            "order": _net(
                out_of_order(after_tree, written, own, after),
                out_of_order(before_tree, written_old, own, before),
            ),
            "empty": _net(empty_branches(after_tree, new), empty_branches(before_tree, old)),
            "dead": _net(dead_stores(after_tree, new), dead_stores(before_tree, old)),
            "comma": _net(stray_commas(after_text, new), stray_commas(before_text, old)),
            "unused": unused_left(before_tree, after_tree),
        }
        for column, lines in found.items():
            totals[column] += len(lines)
            places.setdefault(column, []).extend(f"{other}:{n}" for n in lines)
    if changed:
        was = ruff_counts(project, [b for b, _a in changed], limit, own)
        now = ruff_counts(migrated, [a for _b, a in changed], limit, own)
        for before_path, after_path in changed:
            for column in ("ruff I", "ruff E501"):
                lines = _net(
                    now.get(after_path.resolve(), {}).get(column, []),
                    was.get(before_path.resolve(), {}).get(column, []),
                )
                totals[column] += len(lines)
                places.setdefault(column, []).extend(f"{after_path}:{n}" for n in lines)
    totals["files"] = len(changed)
    return totals


def migrate(corpus: Path, out: Path, line_length: Optional[int]) -> None:
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(corpus, out)
    if line_length is not None:  # as if each project's pylintrc set it (Google's projects: 80)
        for project in projects(out):
            config = f"[FORMAT]\nmax-line-length = {line_length}\n"
            (project / ".pylintrc").write_text(config, encoding="utf-8")
    command = [sys.executable, "-m", "jaxmigrate.migrator.cli", str(out), "--unsafe-fixes"]
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=Path("/tmp/jaxmigrate-legacy-corpus"))
    parser.add_argument("--out", type=Path, default=Path("/tmp/jaxmigrate-formatting"))
    parser.add_argument("--no-migrate", action="store_true")
    parser.add_argument(
        "--line-length",
        type=int,
        help="give each copied project a .pylintrc setting this line length (the corpus sets "
        "none: 88, black's default, applies)",
    )
    parser.add_argument("--list", choices=COLUMNS, action="append", default=[])
    args = parser.parse_args(argv)
    if not args.no_migrate:
        migrate(args.corpus, args.out, args.line_length)
    places: Places = {}
    header = ["package", "files", *COLUMNS]
    rows = []
    total = dict.fromkeys(["files", *COLUMNS], 0)
    for project in projects(args.corpus):
        counts = measure_project(project, args.out / project.name, places)
        rows.append([project.name] + [str(counts[c]) for c in header[1:]])
        for column in total:
            total[column] += counts[column]
    rows.append(["total"] + [str(total[c]) for c in header[1:]])
    print("| " + " | ".join(header) + " |")
    print("|" + " --- |" * len(header))
    for row in rows:
        print("| " + " | ".join(row) + " |")
    for column in args.list:
        print(f"\n{column}:")
        for place in places.get(column, []):
            print("  " + place)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
