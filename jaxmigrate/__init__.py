"""jaxmigrate: upgrade legacy JAX code to the jax.Array world.

The installed distribution is this one package.  The repository keeps the engine, CLI and
reporting in ``migrator/`` and the rules in ``rules/``; they install as
``jaxmigrate.migrator`` and ``jaxmigrate.rules`` (``pyproject.toml`` maps the folders).

The public API other tools use::

    from jaxmigrate import Settings, migrate_source
    result = migrate_source(text, Settings(target_version="0.4.30"))
    result.output, result.fixes, result.findings

The names are imported on first use (PEP 562), so that importing the package, and starting
the command line, costs nothing of the engine, LibCST or the rules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, List

from jaxmigrate.migrator import __version__

if TYPE_CHECKING:  # pragma: no cover
    from jaxmigrate.migrator import ConfigError, MigrationError, Result, Settings, migrate_source

__all__ = ["ConfigError", "MigrationError", "Result", "Settings", "migrate_source", "__version__"]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from jaxmigrate import migrator

    value = getattr(migrator, name)
    globals()[name] = value
    return value


def __dir__() -> List[str]:
    return sorted({*globals(), *__all__})
