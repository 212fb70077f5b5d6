"""Test-wide setup: never touch the user's real cache directory."""

import os
import tempfile

os.environ.setdefault("JAXMIGRATE_CACHE_DIR", tempfile.mkdtemp(prefix="jaxmigrate-test-cache-"))


import pytest  # noqa: E402


@pytest.fixture
def fixes_through_libcst(monkeypatch):  # noqa: ANN001, ANN201
    """Every fix goes through LibCST's rounds: for the tests of those paths (the hand-off of
    its trees, the piecewise parse, the rounds' reports), whose legacy line is a
    ``jax.tree_map`` rename the engine would otherwise write from ``ast``
    (:mod:`migrator.astfixes`)."""
    from jaxmigrate.migrator import engine

    monkeypatch.setattr(engine, "written_on_ast", lambda *args, **kwargs: None)
