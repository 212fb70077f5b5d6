"""JAX913's answers from ``ast`` (issue #29): a ``.bind`` call whose keywords surely hold no
list, dict or set is answered without LibCST, and one that may hold one is left to LibCST's
reading of the bindings; both checked against the LibCST path."""

from __future__ import annotations

import pytest

from jaxmigrate.migrator import Settings
from tests.test_gate_equivalence_rules import answer_sizes, same_as_libcst

HEAD = "from jax import core\np = core.Primitive('p')\n"
OLD = Settings(source_version="0.3.17", source_open=True)  # (jax>=0.3.17)
ANSWERED = [  # no keyword that may be a list, dict or set: []
    HEAD + "def f(x, axes):\n    return p.bind(x, axes=axes)\n",
    HEAD + "def f(x, n: int):\n    return p.bind(x, n=n)\n",
    HEAD + "def f(x, shapes):\n    for s in shapes:\n        p.bind(x, s=s)\n",
    HEAD + "def f(x, s):\n    size = len(s)\n    return p.bind(x, size=size)\n",
    HEAD + "def f(x, s):\n    axes = tuple(s)\n    return p.bind(x, axes=axes)\n",
    HEAD + "def f(x, s):\n    return [p.bind(x, i=i) for i in s]\n",
    HEAD + "from os import sep\ndef f(x):\n    return p.bind(x, sep=sep)\n",
    HEAD + "def f(x, s):\n    return p.bind(x, total=len(s) + 1, axes=(0,))\n",
]
DECLINED = [  # a keyword that may be one: LibCST follows it (None)
    HEAD + "def f(x):\n    return p.bind(x, sizes=[1, 2])\n",
    HEAD + "def f(x, **params):\n    return p.bind(x, params=params)\n",
    HEAD + "def f(x):\n    names = ['a']\n    names = names + ['b']\n"
    "    return p.bind(x, names=names)\n",
    HEAD + "def f(x, s):\n    return p.bind(x, axes=sorted(s))\n",
    HEAD + "def f(x, s):\n    return p.bind(x, axes=s + [0])\n",
    HEAD + "def f(x):\n    global AXES\n    return p.bind(x, axes=AXES)\n",
]


def test_bind_keywords_that_cannot_be_lists_are_answered_on_ast():
    assert answer_sizes(ANSWERED, "JAX913", OLD) == [0] * len(ANSWERED)
    assert answer_sizes(DECLINED, "JAX913", OLD) == [None] * len(DECLINED)


@pytest.mark.parametrize("text", ANSWERED + DECLINED)
def test_jax913_on_ast_reports_what_libcst_does(text):
    same_as_libcst(text, OLD)
