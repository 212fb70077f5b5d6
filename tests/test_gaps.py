"""The blank lines where a removed statement stood (migrator/gaps.py): none at the start of a
file or block, no more than a comment header already gives, elsewhere the larger of the two
gaps that met."""

from __future__ import annotations

import pytest

from jaxmigrate.migrator import Settings, migrate_source

USE = "def f(xs):\n    return safe_map(str, xs)\n"
NEW = "def f(xs):\n    return list(map(str, xs))\n"
IMPORT = "from jax.util import safe_map\n"

CASES = {
    "first statement of the file": (f"{IMPORT}\n\n{USE}", NEW),
    "after a comment header": (f"# Copyright\n\n{IMPORT}\n\n{USE}", f"# Copyright\n\n\n{NEW}"),
    "after a docstring": (f'"""Doc."""\n{IMPORT}\n\n{USE}', f'"""Doc."""\n\n\n{NEW}'),
    "between import groups": (
        f"import os\n\n{IMPORT}import numpy as np\n\n\n{USE}",
        f"import os\n\nimport numpy as np\n\n\n{NEW}",
    ),
    "first statement of a block": (
        "def f(xs):\n    from jax.util import safe_map\n\n    return safe_map(str, xs)\n",
        NEW,
    ),
    "a group's last import": (
        f"import os\n{IMPORT}\nx = 1\n\n\n{USE}",
        f"import os\n\nx = 1\n\n\n{NEW}",
    ),
}


@pytest.mark.parametrize("source, expected", CASES.values(), ids=list(CASES))
def test_blank_lines_where_an_import_went(source, expected):
    result = migrate_source(source, Settings())
    assert result.output == expected
    assert migrate_source(result.output, Settings()).output == result.output


def test_code_no_fix_removed_keeps_its_blank_lines():
    source = "import os\n\n\n\nimport jax\n\nx = jax.tree_map(f, y)\n"
    assert migrate_source(source, Settings()).output == source.replace("tree_map", "tree.map")
