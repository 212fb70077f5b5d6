"""The rule index (``migrator/rule_index.py``) and the last runs of the API history's names
(``rules/data/jax_api_runs.txt.gz``) are what ``scripts/build_rule_index.py`` writes for the
rules and the API history as they are, and gate 0 (``migrator/quickgate.py``), which reads
it, says "idle" only for texts gate 1 passes no rule for."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import List

import pytest

from jaxmigrate.migrator import quickgate, rule_index
from jaxmigrate.migrator.plan import make_plan
from jaxmigrate.migrator.rule import REGISTRY, Rule, Safety, all_rules
from jaxmigrate.migrator.settings import Settings
from jaxmigrate.rules._api_history import history
from jaxmigrate.rules._api_runs import last_run

ROOT = Path(__file__).resolve().parent.parent


def _script():
    spec = importlib.util.spec_from_file_location(
        "build_rule_index", ROOT / "scripts" / "build_rule_index.py"
    )
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def test_the_shipped_index_is_what_the_script_writes():
    shipped = (ROOT / "migrator" / "rule_index.py").read_text(encoding="utf-8")
    assert shipped == _script().render(), "stale: run python scripts/build_rule_index.py"


def test_the_shipped_runs_are_what_the_script_writes():
    script = _script()
    assert script.shipped_runs() == script.render_runs(), "stale: run scripts/build_rule_index.py"


def test_the_runs_read_back_what_the_history_says():
    """What ``migrator.source.evidence`` reads of each name: the history's last run of
    releases, or nothing where that run is every release (or there is none)."""
    h = history()
    newest = len(h.releases) - 1
    checked = 0
    for module, names in h._modules.items():
        for name in [*names, "not_a_name_jax_has"]:
            known = h.lookup(f"{module}.{name}")
            want = known.present[-1] if known is not None and known.present else None
            if want == (0, newest):
                want = None
            assert last_run(f"{module}.{name}") == want, f"{module}.{name}"
            checked += 1
    assert last_run("no.such.module") is None
    assert checked > 10000


def test_the_index_reads_back_what_the_rules_declare():
    rules = all_rules()
    index = rule_index.rules()
    assert list(index) == list(rules)
    for code, rule in rules.items():
        entry = index[code]
        assert entry.name == rule.name
        assert entry.needs_jax_import == rule.needs_jax_import
        assert entry.text_gated == rule.text_gated
        assert entry.ranged == (type(rule).for_range is not Rule.for_range)
        assert entry.words == tuple(sorted(rule.trigger_words))
    assert rule_index.releases() == history().releases


def test_a_word_that_is_not_plain_is_written_as_json():
    script = _script()
    words = ['say "hi"', "a b", "plain_word"]
    lines = script._lines(["JAX999", "name", "j", *map(script._token, words)])
    tokens = rule_index._WORD.findall(" ".join(line.strip() for line in lines))
    assert [rule_index._word(token) for token in tokens] == ["JAX999", "name", "j", *words]


def _settings() -> List[Settings]:
    """Selections and target ranges that change which rules run and what they look for."""
    every = tuple(all_rules())  # opt-in rules run only when selected by their exact code
    newest = history().newest
    return [
        Settings(),
        Settings(select=every),
        Settings(select=every, target_version="0.4.1"),
        Settings(select=every, target_version="0.4.1", survey=True),
        Settings(select=every, target_version="0.4.13", target_upper="0.4.30"),
        Settings(select=every, target_version=newest),
    ]


def test_rules_that_act_without_jax_declare_their_words_whatever_the_target():
    """Gate 0 reads the index's words for the rules that need no JAX import: the rules as
    they run for any target range must declare no other word (nor change their flags)."""
    index = rule_index.rules()
    for settings in _settings():
        for rule in settings.active_rules():
            entry = index[rule.code]
            assert rule.needs_jax_import == entry.needs_jax_import, rule.code
            assert rule.text_gated == entry.text_gated, rule.code
            if not rule.needs_jax_import:
                assert not entry.ranged and rule.trigger_words <= set(entry.words), rule.code


def _texts() -> List[str]:
    """Every fixture, as written and with ``jax`` spelled otherwise (so that only the words of
    the rules that need no JAX import can pass gate 1), and a few written for this test."""
    texts = [
        "x = 1\n",
        "",
        "import os\nos.environ['JAX_ARRAY'] = '1'\n",
        "def f(x: 'DeviceArray'):\n    return x.live_buffers()\n",
        "import numpy as np\n\nclass Buffer:\n    pass\n",
        "print('no trigger word here')  # jqx\n",
    ]
    for path in sorted((ROOT / "fixtures").rglob("*.py")):
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
        texts += [text, text.replace("jax", "jqx")]
    return texts


def test_gate_0_is_idle_only_where_gate_1_passes_no_rule():
    plans = [make_plan(tuple(settings.active_rules())) for settings in _settings()]
    idle = 0
    for text in _texts():
        if quickgate.idle(text):
            idle += 1
            for plan in plans:
                assert plan.prefilter(text) == (), text[:200]
    assert quickgate.idle("x = 1\n") and not quickgate.idle("import jax\n")
    assert not quickgate.idle("import os\nos.environ['JAX_ARRAY'] = '1'\n")
    assert not quickgate.idle("def f(x: 'DeviceArray'):\n    return x\n")
    assert idle > 100  # the check above is not vacuous


@pytest.fixture
def throwaway_rule():
    """A rule registered for one test, that acts without a JAX import."""
    type(
        "ThrowawayJAX998",
        (Rule,),
        {
            "__doc__": "A throwaway rule.\n\nIt looks at ``mod.word``.",
            "names": frozenset({"mod.word"}),
        },
        code="JAX998",
        safety=Safety.SAFE,
    )
    yield REGISTRY["JAX998"]
    REGISTRY.pop("JAX998", None)


def test_a_rule_the_index_does_not_hold_turns_gate_0_off(throwaway_rule):
    assert not throwaway_rule.needs_jax_import
    assert not quickgate.idle("x = word\n")
    plan = make_plan(tuple(Settings().active_rules()))
    assert plan.prefilter("x = word\n") == (throwaway_rule,)
