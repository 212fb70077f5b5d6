"""Build ``rules/data/jax_api_renames.json``: removed JAX names whose replacement is the same
object, as JAX's own deprecation messages name it and real releases confirm.

Development-time only.  Candidates come from the API history (``rules/_api_history.py``): a
name missing from the newest release whose deprecation message names exactly one replacement
("use jax.extend.core.Primitive instead") that the newest release has.  Each candidate is then
checked in real JAX installations (``--python`` interpreters, one per JAX release): it is kept
when, in every installation that has both names, the two are the same object, or functions
whose ``__wrapped__`` chains end at the same function (JAX re-wraps some re-exports with its
traceback filter), or one is a function whose whole body returns the other called with the
same parameters (after a deprecation warning, maybe); and at least one installation has both.
For a module, every public member of the old one must be the same in the new one.

A name that was an alias of a module and came back later as something else (``jax.ad``) has
its members moved to that module, when old releases confirm the alias.

Removed names no message redirects are found by identity (``scripts/same_object_renames.py``):
the last installation that has the name shows which name of the newest release is the same
object (``jax.experimental.maps.thread_resources`` -> ``jax.interpreters.pxla.thread_resources``);
those rows say ``"found": "same object"`` and are confirmed like the others.

Modules JAX removed without a deprecation table are found statically too: a module whose last
release held nothing but ``from X import *`` (and a warning) is a rename to ``X`` when the
newest release has ``X`` (``jax.experimental.stax`` -> ``jax.example_libraries.stax``).

The rows record which releases showed it.  Evidence an earlier table (``--keep``, by default
the output file) has from releases no interpreter given now runs is kept, so a rerun with fewer
installations loses no row.

Usage::

    python scripts/verify_renames.py --python ~/venvs/jax-0.4.13/bin/python --python ... \
        [--sdists ~/.cache/jaxmigrate/sdists]
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from jaxmigrate.rules._api_history import history  # noqa: E402
from scripts.same_object_renames import discover  # noqa: E402

OUTPUT = ROOT / "rules" / "data" / "jax_api_renames.json"
# "Use X", "use X instead", "Please use X", "replaced by X", "moved to X", "alias of X", "is now X"
_NAMED = re.compile(
    r"(?:[Uu]se|replaced by|moved to|[Pp]lease use|instead use|alias of|is now)"
    r"\s+`?(jax(?:\.\w+)+)`?"
)

_PROBE = """
import importlib, json, sys, types, warnings
warnings.simplefilter("ignore")

def get(qualname):
    parts = qualname.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            value = importlib.import_module(".".join(parts[:cut]))
        except Exception:
            continue
        try:
            for part in parts[cut:]:
                value = getattr(value, part)
        except Exception:
            return None
        return value
    return None

def root(value):
    # JAX wraps functions (api_boundary, deprecation shims) with functools.wraps: two names
    # whose wrapper chains end at one function are one API.
    for _ in range(10):
        inner = getattr(value, "__wrapped__", None)
        if inner is None or not callable(value):
            return value
        value = inner
    return value

def forwards(outer, inner):
    # ``def typeof(x, /): return get_aval(x)``: a function whose whole body returns a call of
    # the other with its own parameters, in order, is that function under another name (a
    # deprecation warning before the return is allowed).
    import ast, inspect, textwrap
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(root(outer))))
    except Exception:
        return False
    fn = tree.body[0] if tree.body else None
    if not isinstance(fn, ast.FunctionDef):
        return False
    def warns(s):  # ``warnings.warn("... deprecated ...")``: a shim's warning, not its work
        return (
            isinstance(s, ast.Expr)
            and isinstance(s.value, ast.Call)
            and "warn" in ast.dump(s.value.func)
        )

    body = [
        s
        for s in fn.body
        if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)) and not warns(s)
    ]
    if (
        len(body) != 1
        or not isinstance(body[0], ast.Return)
        or not isinstance(body[0].value, ast.Call)
    ):
        return False
    call = body[0].value
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
    if fn.args.vararg or fn.args.kwarg or fn.args.kwonlyargs or call.keywords:
        return False
    if [getattr(a, "id", None) for a in call.args] != params or not isinstance(call.func, ast.Name):
        return False
    target = root(outer).__globals__.get(call.func.id)
    return target is not None and root(target) is root(inner)

def one(a, b):
    return a is b or root(a) is root(b) or forwards(a, b) or forwards(b, a)

import jax
same = {}
pairs, members = json.load(sys.stdin)  # members: legacy module -> the names the history lists
for legacy, modern in pairs:
    a, b = get(legacy), get(modern)
    if a is not None and b is not None:
        if isinstance(a, types.ModuleType) and isinstance(b, types.ModuleType):
            found = [n for n in members.get(legacy, ()) if get(legacy + "." + n) is not None]
            found = [n for n in found if not isinstance(get(legacy + "." + n), types.ModuleType)]
            same[legacy] = a is b or bool(found) and all(
                one(get(modern + "." + n), get(legacy + "." + n)) for n in found
            )
        else:
            same[legacy] = one(a, b)
print(json.dumps({"version": jax.__version__, "same": same}))
"""


def candidates() -> List[Tuple[str, str]]:
    h = history()
    newest = len(h.releases) - 1
    found = []
    for qualname in sorted(h.missing_names(tuple(int(p) for p in h.newest.split(".")))):
        known = h.lookup(qualname)
        if known is None or not known.message:
            continue
        named = {m.rstrip(".") for m in _NAMED.findall(known.message)}
        there = [
            m
            for m in named
            if (h.lookup(m) is not None and any(a <= newest <= b for a, b in h.lookup(m).present))
        ]
        if len(there) == 1:
            found.append((qualname, there[0]))
    return found


def _is_shim_statement(statement: ast.stmt) -> bool:
    """Statements a forwarding module may hold besides its star import: a docstring, warnings,
    ``import warnings``, flags like ``_HAS_DYNAMIC_ATTRIBUTES = True``, ``del``."""
    if isinstance(statement, ast.Expr) and isinstance(statement.value, (ast.Constant, ast.Call)):
        call = statement.value
        return isinstance(call, ast.Constant) or "warn" in ast.dump(call.func)
    if isinstance(statement, (ast.Import, ast.Delete)):
        return True
    if isinstance(statement, ast.ImportFrom) and statement.module in ("warnings", "__future__"):
        return True
    return isinstance(statement, ast.Assign) and all(
        isinstance(t, ast.Name) and t.id.startswith("_") for t in statement.targets
    )


def shim_target(source: str) -> Optional[str]:
    """``X`` when a module's whole content is ``from X import *`` (plus a warning)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    stars = [
        s.module
        for s in tree.body
        if isinstance(s, ast.ImportFrom) and s.level == 0 and [a.name for a in s.names] == ["*"]
    ]
    rest = [
        s
        for s in tree.body
        if not (isinstance(s, ast.ImportFrom) and [a.name for a in s.names] == ["*"])
    ]
    if len(stars) == 1 and stars[0] and all(_is_shim_statement(s) for s in rest):
        return stars[0]
    return None


def shim_modules(sdists: Path) -> List[Tuple[str, str, str]]:
    """Removed modules that were, in their last release, only a star import of a module the
    newest release has: ``(legacy, modern, release)``.  Read from the sdists, statically."""
    h = history()
    newest = len(h.releases) - 1
    found = []
    for qualname in sorted(h.missing_modules(tuple(int(p) for p in h.newest.split(".")))):
        known = h.lookup(qualname)
        if known is None or not known.present:
            continue
        last = h.releases[known.present[-1][1]]
        sdist = sdists / f"jax-{last}.tar.gz"
        if not sdist.exists():
            continue
        relative = qualname.replace(".", "/")
        with tarfile.open(sdist) as archive:
            for suffix in (".py", "/__init__.py"):
                try:
                    member = archive.extractfile(f"jax-{last}/{relative}{suffix}")
                except KeyError:
                    continue
                target = shim_target(member.read().decode("utf-8")) if member else None
                modern = h.lookup(target) if target else None
                if (
                    modern is not None
                    and modern.is_module
                    and any(a <= newest <= b for a, b in modern.present)
                ):
                    found.append((qualname, target, last))
                break
    return found


def version_key(version: str) -> Tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version))


def reappeared_aliases() -> List[Tuple[str, str]]:
    """Names that were an alias of a module, went away, and came back as something else:
    ``jax.ad`` was ``jax.interpreters.ad`` until 0.4.13 (its message says so) and is a small
    namespace from 0.10.  ``(alias, module)`` pairs, to confirm like any candidate; their
    members then move to the module (``jax.ad.deflinear`` -> ``jax.interpreters.ad.deflinear``)."""
    h = history()
    newest = len(h.releases) - 1
    found = []
    for module, names in h._modules.items():
        for name in names:
            known = h.lookup(f"{module}.{name}")
            if (
                known is None
                or len(known.present) < 2
                or known.present[-1][1] != newest
                or not known.message
            ):
                continue
            named = {m.rstrip(".") for m in _NAMED.findall(known.message)}
            there = [
                m
                for m in named
                if m in h._modules
                and h.lookup(m) is not None
                and h.lookup(m).present[-1][1] == newest
            ]
            if len(there) == 1:
                found.append((f"{module}.{name}", there[0]))
    return found


def main(argv: List[str] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--python", action="append", required=True, help="an interpreter with some jax installed"
    )
    parser.add_argument("--out", type=Path, default=OUTPUT)
    parser.add_argument(
        "--sdists",
        type=Path,
        default=Path.home() / ".cache" / "jaxmigrate" / "sdists",
        help="jax sdists (as scripts/build_api_history.py downloads them), for forwarding modules",
    )
    parser.add_argument(
        "--keep",
        type=Path,
        default=OUTPUT,
        help="an earlier table whose evidence from releases not probed now is kept",
    )
    args = parser.parse_args(argv)
    previous = json.loads(args.keep.read_text())["renames"] if args.keep.exists() else []
    aliases = reappeared_aliases()
    pairs = candidates() + aliases
    h = history()
    taken = {legacy for legacy, _modern in pairs}
    identical = [(old, new) for old, new, _ in discover(h, args.python, args.sdists, taken)]
    identical += [  # found earlier in an installation not given now
        (row["legacy"], row["modern"])
        for row in previous
        if row.get("found") == "same object"
        and row["legacy"] not in taken | {old for old, _new in identical}
    ]
    pairs += identical
    members = {legacy: sorted(h._modules.get(legacy, {})) for legacy, _modern in pairs}
    seen: Dict[str, List[Tuple[str, bool]]] = {}
    for python in args.python:
        out = subprocess.run(
            [python, "-c", _PROBE],
            input=json.dumps([pairs, members]),
            capture_output=True,
            text=True,
            check=True,
        )
        report = json.loads(out.stdout.strip().splitlines()[-1])
        for legacy, same in report["same"].items():
            seen.setdefault(legacy, []).append((report["version"], same))
    probed = {version for checks in seen.values() for version, _same in checks}
    earlier = {
        (row["legacy"], row["modern"]): [
            v for v in row.get("same_object_in", ()) if v not in probed
        ]
        for row in previous
    }
    rows = []
    for legacy, modern in pairs:
        checks = seen.get(legacy, []) + [(v, True) for v in earlier.get((legacy, modern), ())]
        if (legacy, modern) in aliases:  # only its first life is the alias
            back = h.releases[h.lookup(legacy).present[-1][0]]
            checks = [(v, same) for v, same in checks if version_key(v) < version_key(back)]
        if not (checks and all(same for _version, same in checks)):
            continue
        evidence = sorted(v for v, _ in checks)
        if (legacy, modern) in identical:
            rows.append(
                {
                    "legacy": legacy,
                    "modern": modern,
                    "found": "same object",
                    "same_object_in": evidence,
                }
            )
            continue
        if (legacy, modern) not in aliases:
            rows.append({"legacy": legacy, "modern": modern, "same_object_in": evidence})
            continue
        newest_members = {n for n in h._modules.get(legacy, {})}
        for member in sorted(set(h._modules.get(modern, {})) - newest_members):
            rows.append(
                {
                    "legacy": f"{legacy}.{member}",
                    "modern": f"{modern}.{member}",
                    "same_object_in": evidence,
                }
            )
    for legacy, modern, release in shim_modules(args.sdists):
        # The module and each member the history knows in both (``from legacy import Dense``).
        shared = sorted(set(h._modules.get(legacy, {})) & set(h._modules.get(modern, {})))
        for old, new in [(legacy, modern)] + [(f"{legacy}.{n}", f"{modern}.{n}") for n in shared]:
            if old not in {row["legacy"] for row in rows}:
                rows.append({"legacy": old, "modern": new, "forwarding_module_in": [release]})
    args.out.write_text(
        json.dumps({"generator": "scripts/verify_renames.py", "renames": rows}, indent=1) + "\n"
    )
    confirmed = len(
        {row["legacy"] for row in rows if "same_object_in" in row} & {legacy for legacy, _ in pairs}
    )
    members = sum(1 for row in rows if "same_object_in" in row) - confirmed
    forwarded = len(rows) - confirmed - members
    same = sum(1 for row in rows if row.get("found") == "same object")
    print(
        f"{args.out}: {confirmed} of {len(pairs)} candidates confirmed ({same} of "
        f"{len(identical)} found as the same object); {members} members of confirmed aliases; "
        f"{forwarded} names of forwarding modules",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
