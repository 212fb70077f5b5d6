"""The gates kept on disk (:mod:`migrator.gateplan`) answer as the rules do.

Gates 1 and 1b of the kept gates (objects of the rules' gate bases, read back from what was
kept) must pass exactly the rules the active rules' own plan passes, on every fixture and
program and for several target ranges and selections; a run that answers a file from them
writes and reports what the engine does.
"""

from __future__ import annotations

import marshal
import os
import subprocess
import sys
from pathlib import Path
from typing import List

import pytest

from jaxmigrate.migrator import gateplan
from jaxmigrate.migrator.plan import make_plan
from jaxmigrate.migrator.rule import REGISTRY, Rule, Safety, all_rules
from jaxmigrate.migrator.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
TEXTS = sorted(
    [*(ROOT / "fixtures").rglob("*.py"), *(ROOT / "tests" / "programs" / "cases").glob("*.py")]
)
SETTINGS = [
    Settings(),
    Settings(target_version="0.4.30"),
    Settings(target_version="0.4.13", target_upper="0.6.2"),
    Settings(target_version="0.2.0", survey=True),
    Settings(select=("JAX9",), target_version="0.4.30"),
    Settings(ignore=("JAX901", "JAX101"), target_version="0.3.16"),
]


def _kept(settings: Settings) -> List[gateplan.Entry]:
    kept = gateplan.entries(tuple(settings.active_rules()))
    assert kept is not None, "every shipped rule's gates can be kept"
    return marshal.loads(marshal.dumps(kept))  # as a later process reads them


@pytest.mark.parametrize("settings", SETTINGS, ids=lambda s: s.cache_key()[-40:])
def test_the_kept_gates_pass_what_the_rules_pass(settings: Settings) -> None:
    real = make_plan(tuple(settings.active_rules()))
    kept = gateplan.plan_of(_kept(settings))
    assert [r.code for r in kept.rules] == [r.code for r in real.rules]
    differ = []
    for path in TEXTS:
        text = path.read_text(encoding="utf-8")
        for variant in (text, text.replace("jax", "jaxx")):  # (and without the word jax)
            want = [r.code for r in real.candidates(variant)]
            got = [r.code for r in kept.candidates(variant)]
            if got != want:
                differ.append((path.relative_to(ROOT), want, got))
            for extra, jax in ((frozenset(), True), (frozenset({"pjit", "tree_map"}), False)):
                want_parts = real.may_pass_parts(variant, extra, jax)  # (docstrings' gate 1)
                if kept.may_pass_parts(variant, extra, jax) != want_parts:
                    differ.append((path.relative_to(ROOT), "may_pass_parts", extra, jax))
    assert differ == []


def test_every_rule_runs_the_hooks_of_its_gate_base() -> None:
    for rule in all_rules().values():
        base = gateplan.gate_base(rule)
        assert base is not None, f"{rule.code} overrides a gate hook outside its gate base"
        assert base.__module__ in (
            "jaxmigrate.migrator.rulegate",
            "jaxmigrate.rules._text_gates",
            "jaxmigrate.rules._names_gate",
            "jaxmigrate.rules._array_field_gate",
            "jaxmigrate.rules._private_gate",
            "jaxmigrate.rules._evidence_gate",
        )


def test_gates_kept_where_a_base_no_longer_is_are_not_read(tmp_path: Path) -> None:
    """The kept gates name each base by its module, and a base may move (JAX903's left
    ``rules._text_gates`` for ``rules._names_gate``).  Such a file is not where a later version
    of the tool looks (the path hashes the tool's code: :func:`migrator.cache.code_fingerprint`
    reads the name of every module), and read anyway it is no plan: the engine answers."""
    kept = _kept(Settings(select=("JAX903",)))
    assert [(module, name) for module, name, _ in kept] == [
        ("jaxmigrate.rules._names_gate", "QualifiedNamesGate")
    ]
    settings = Settings(select=("JAX903",))
    data = gateplan.data_of(settings)
    assert data is not None
    where = tmp_path / "moved.gates"
    moved = [("jaxmigrate.rules._text_gates", *kept[0][1:])]
    where.write_bytes(marshal.dumps((moved, *data[1:])))
    assert gateplan._load(where, settings) is None
    where.write_bytes(marshal.dumps(data))
    assert gateplan._load(where, settings) is not None
    where.write_bytes(marshal.dumps(kept))  # (what an older version of the tool kept)
    assert gateplan._load(where, settings) is None


def test_gates_are_not_kept_with_a_rule_registered_at_run_time(tmp_path: Path) -> None:
    class Throwaway(Rule, code="JAX997", safety=Safety.SAFE):
        """a throwaway rule"""

        names = frozenset({"jax.throwaway"})

    try:
        gateplan.save(Settings(), tmp_path)
        assert not (tmp_path / "gates").exists()
    finally:
        REGISTRY.pop("JAX997", None)


MODERN = """\
import jax
import jax.numpy as jnp


def f(x: jax.Array) -> jax.Array:
    '''Sines.

    >>> f(jnp.zeros(2))
    Array([0., 0.], dtype=float32)
    '''
    return jax.tree_util.tree_map(jnp.sin, x)
"""
_LOADED = """
import json, sys
from jaxmigrate.migrator.cli import main
try:
    main({argv!r})
except SystemExit:
    pass
heavy = [m for m in sys.modules if m.startswith(("libcst", "jaxmigrate.migrator.engine"))]
heavy += [m for m in sys.modules if m.startswith("jaxmigrate.rules.") and "._" not in m]
print(json.dumps(sorted(heavy)))
"""


def _run(tmp_path: Path, *argv: str, script: str = _LOADED) -> subprocess.CompletedProcess:
    """``script`` (the command line's ``main(argv)``, then what it prints of the modules
    loaded) in a new process, the cache under ``tmp_path``."""
    env = dict(os.environ, JAXMIGRATE_CACHE_DIR=str(tmp_path / "cache"))
    return subprocess.run(
        [sys.executable, "-c", script.format(argv=list(argv))],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_later_run_answers_a_modern_file_without_the_rules(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(MODERN, encoding="utf-8")
    argv = ("a.py", "--target-version", "0.4.30", "--diff")
    first = _run(tmp_path, *argv)
    assert first.returncode == 0, first.stderr
    # (the first run imports the rules, and keeps their gates)
    assert "jaxmigrate.rules.tree_functions" in first.stdout
    assert list((tmp_path / "cache" / "gates").iterdir())
    (tmp_path / "a.py").write_text(MODERN + "\ny = f(jnp.ones(3))\n", encoding="utf-8")
    later = _run(tmp_path, *argv)
    assert later.returncode == 0, later.stderr
    assert later.stdout.splitlines()[-1] == "[]"
    assert later.stderr == first.stderr
