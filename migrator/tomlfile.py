"""TOML documents (``pyproject.toml``), read with the standard library's ``tomllib`` (``tomli``,
the same parser, before Python 3.11), imported on first use: a run where no configuration is
read (one file in a folder without a ``pyproject.toml``) never loads it."""

from __future__ import annotations

import sys
from typing import Any, Dict


def loads(text: str) -> Dict[str, Any]:
    """The TOML document ``text``.  Raises ValueError (the parser's ``TOMLDecodeError``, one of
    its subclasses) when ``text`` is not one."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    return tomllib.loads(text)
