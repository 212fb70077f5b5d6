"""A call whose keywords a rule turns positional keeps the layout it was written in (JAX906:
``clip(a_min=, a_max=)``, ``reshape(newshape=)``): each argument takes the comma its place had
(one argument a line, a trailing comma, no space after a comma), and the comment after an
argument moves with it.  distrax 0.1.3's ``von_mises.py`` had its bounds one a line, and the
rewrite used to pull them onto the line of a two-line expression, dropping any comment."""

from __future__ import annotations

import ast
import re

import pytest

from jaxmigrate.migrator import Settings, migrate_source

CASES = [
    (  # the layout of distrax's von_mises.py
        "return_ = jnp.clip(\n    cdf(a)\n    - cdf(b),\n    a_min=0.,\n    a_max=1.,\n)\n",
        "return_ = jnp.clip(\n    cdf(a)\n    - cdf(b),\n    0.,\n    1.,\n)\n",
    ),
    ("a = jnp.clip(x,a_min=0)\n", "a = jnp.clip(x,0)\n"),
    (  # a bound put in: the comma of the place before the last, without its comment
        "b = jnp.clip(x,  # the array\n             a_max=1)\n",
        "b = jnp.clip(x,  # the array\n             None,\n             1)\n",
    ),
    (  # the bounds given upper first: each comment stays with its bound
        "c = jnp.clip(\n    x,\n    a_max=1.0,  # upper\n    a_min=0.0,  # lower\n)\n",
        "c = jnp.clip(\n    x,\n    0.0,  # lower\n    1.0,  # upper\n)\n",
    ),
    (
        'd = jnp.reshape(x, order="F", newshape=(2, -1))\n',
        'd = jnp.reshape(x, (2, -1), order="F")\n',
    ),
    (  # the comment of an argument that ends up last, where no comma was: its own comma comes
        'e = jnp.reshape(x,\n                order="F",  # fortran\n'
        "                newshape=(2, -1))  # shape\n",
        'e = jnp.reshape(x,\n                (2, -1),\n                order="F",  # fortran\n'
        "                )  # shape\n",
    ),
    (
        "f = jnp.clip(x, a_min=0, a_max=1  # both\n             )\n",
        "f = jnp.clip(x, 0, 1  # both\n             )\n",
    ),
]


@pytest.mark.parametrize("body, expected", CASES)
def test_positional_arguments_keep_the_calls_layout(body: str, expected: str) -> None:
    source = "import jax.numpy as jnp\n" + body
    result = migrate_source(source, Settings(target_version="0.4.13"))
    assert result.output == "import jax.numpy as jnp\n" + expected
    ast.parse(result.output)
    comments = re.findall(r"#[^\n]*", source)
    assert sorted(re.findall(r"#[^\n]*", result.output)) == sorted(comments)  # none lost


def test_a_renamed_keyword_keeps_the_line_break_before_the_closing_bracket():
    """equinox 0.9's ``jax.pure_callback(\\n    f, s, x, vectorized=v\\n)``: the argument that
    JAX906 renames was the last one, whose line break the closing bracket stands after."""
    from jaxmigrate.migrator import migrate_source
    from jaxmigrate.migrator.settings import Settings

    source = (
        "import jax\n\n"
        "out = jax.pure_callback(\n"
        "    f, s, x, vectorized=True\n"
        ")\n"
        "y = jax.scipy.linalg.solve(\n"
        "    a, b, sym_pos=True\n"
        ")\n"
    )
    output = migrate_source(source, Settings(target_version="0.4.34")).output
    assert output.endswith(
        'out = jax.pure_callback(\n    f, s, x, vmap_method="legacy_vectorized"\n)\n'
        'y = jax.scipy.linalg.solve(\n    a, b, assume_a="pos"\n)\n'
    )
