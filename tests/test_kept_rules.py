"""The rules the kept gates pass answer a file as every rule does.

A later run that has the gates of its settings kept (:mod:`migrator.gateplan`) gives the
engine only the rules they pass for a file, importing only those rules' modules, and a rule
whose copy for the settings holds nothing but what its gates keep is rebuilt from them (the
API history unread).  Where those rules answer the file alone (no rule passes gate 2, every
one answers on ``ast``, or the fixes written on ``ast`` are all), the engine's answer must
be the one it gives with every rule loaded: the same output, fixes, findings and errors, on
every fixture and program, for several target ranges, selections and the survey.
"""

from __future__ import annotations

import json
import marshal
from functools import cached_property
from pathlib import Path
from typing import List, Optional, Tuple

import pytest

from jaxmigrate.migrator import engine, gateplan
from jaxmigrate.migrator.errors import MigrationError
from jaxmigrate.migrator.rule import Rule
from jaxmigrate.migrator.settings import Settings
from tests.test_gateplan import ROOT, SETTINGS as GATE_SETTINGS, TEXTS, _run as run_in_process

# the settings the kept gates are held to, and code written for a stated source
SETTINGS = [*GATE_SETTINGS, Settings(target_version="0.4.1", source_version="0.3.25")]


def _kept(settings: Settings) -> gateplan.Kept:
    data = gateplan.data_of(settings)
    assert data is not None, "every shipped rule's gates can be kept"
    return gateplan.read(marshal.loads(marshal.dumps(data)), settings)  # as a later run reads


def _answer(text: str, settings: Settings, kept: Optional[gateplan.Kept]) -> Tuple:
    try:
        if kept is None:
            result = engine.migrate_source(text, settings)
        else:
            result = engine._from_kept(text, settings, kept, None)
            if result is None:
                return ("every rule",)
    except MigrationError as error:
        return ("error", error.message, error.line, error.column)
    return (result.output, result.fixes, result.findings, result.errors)


@pytest.mark.parametrize("settings", SETTINGS, ids=lambda s: s.cache_key()[-40:])
def test_the_rules_the_kept_gates_pass_answer_as_every_rule_does(settings: Settings) -> None:
    kept = _kept(settings)
    differ: List[Tuple[Path, str]] = []
    answered = changed = 0
    for path in TEXTS:
        text = path.read_text(encoding="utf-8")
        got = _answer(text, settings, kept)
        if got == ("every rule",):
            continue
        answered += 1
        want = _answer(text, settings, None)
        changed += got[0] != text
        if got != want:
            differ.append((path.relative_to(ROOT), "differs"))
    assert differ == []
    # (not vacuous: most fixtures are answered so, some with fixes written on ``ast``)
    assert answered > len(TEXTS) // 4
    assert changed > 0 or settings.select or settings.survey


def _own_fields(rule: Rule) -> dict:
    kind = type(rule)
    return {
        name: value
        for name, value in vars(rule).items()
        if not isinstance(getattr(kind, name, None), cached_property)
    }


@pytest.mark.parametrize("settings", SETTINGS, ids=lambda s: s.cache_key()[-40:])
def test_a_rule_rebuilt_from_its_kept_gates_is_the_active_rule(settings: Settings) -> None:
    kept = _kept(settings)
    active = {rule.code: rule for rule in settings.active_rules()}
    assert kept.rebuilt, "the rules the API history drives are rebuilt, not made again"
    for code in kept.rebuilt:
        (made,) = kept.rules((code,))
        assert made is not active[code]  # (made from the kept gates)
        assert type(made) is type(active[code])
        assert _own_fields(made) == _own_fields(active[code]), code
    others = [code for code in active if code not in kept.rebuilt]
    assert kept.rules(others) == tuple(active[code] for code in others)


FINDING = """\
from jax._src import core

p = core.Primitive("p")
"""
LEGACY = """\
import jax

leaves = jax.tree_leaves({"a": 1})
"""
_LOADED = """
import json, sys
from jaxmigrate.migrator.cli import main
try:
    main({argv!r})
except SystemExit:
    pass
rules = sorted(m for m in sys.modules if m.startswith("jaxmigrate.rules.") and "._" not in m)
history = sys.modules["jaxmigrate.rules._api_history"].history.cache_info().currsize
print(json.dumps([rules, history]))
"""


def _run(tmp_path: Path, *argv: str) -> Tuple[str, str, list]:
    done = run_in_process(tmp_path, *argv, script=_LOADED)
    assert done.returncode == 0, done.stderr
    *printed, loaded = done.stdout.splitlines()
    return "\n".join(printed), done.stderr, json.loads(loaded)


def test_a_later_hook_run_imports_only_the_rules_a_file_passes(tmp_path: Path) -> None:
    (tmp_path / "finding.py").write_text(FINDING, encoding="utf-8")
    (tmp_path / "legacy.py").write_text(LEGACY, encoding="utf-8")
    hook = ("--check", "--no-cache", "--diff")
    first = _run(tmp_path, "finding.py", *hook)
    assert len(first[2][0]) > 40  # (the first run imports every rule, and keeps their gates)
    later = _run(tmp_path, "finding.py", *hook)
    assert later[:2] == first[:2]
    assert "JAX902" in later[0]
    rules, history = later[2]
    assert "jaxmigrate.rules.private_api" in rules and len(rules) < 10, rules
    assert history == 0  # (the rules the API history drives are rebuilt from the kept gates)
    rewrite = _run(tmp_path, "legacy.py", *hook)
    assert "+leaves = jax.tree_util.tree_leaves" in rewrite[0]
    assert "jaxmigrate.rules.tree_functions" in rewrite[2][0] and len(rewrite[2][0]) < 10


def test_kept_gates_that_cannot_rebuild_a_rule_are_not_read(tmp_path: Path) -> None:
    """A rule is rebuilt only from fields its kept gates hold; a file that says otherwise
    (stale or foreign) is no plan, and the engine answers with every rule."""
    settings = Settings()
    data = gateplan.data_of(settings)
    assert data is not None
    kept, modules, aside, rebuilt = data
    code = next(iter(rebuilt))
    where = tmp_path / "broken.gates"
    broken = {**rebuilt, code: [*rebuilt[code], "no_such_field"]}
    where.write_bytes(marshal.dumps((kept, modules, aside, broken)))
    assert gateplan._load(where, settings) is None
    where.write_bytes(marshal.dumps(data))
    assert gateplan._load(where, settings) is not None
