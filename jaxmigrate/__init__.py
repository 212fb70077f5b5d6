"""jaxmigrate: upgrade legacy JAX code to the jax.Array world.

The installed distribution is this one package.  The repository keeps the engine, CLI and
reporting in ``migrator/`` and the rules in ``rules/``; they install as
``jaxmigrate.migrator`` and ``jaxmigrate.rules`` (``pyproject.toml`` maps the folders).

The public API other tools use::

    from jaxmigrate import Settings, migrate_source
    result = migrate_source(text, Settings(target_version="0.4.30"))
    result.output, result.fixes, result.findings
"""

from jaxmigrate.migrator import (
    ConfigError,
    MigrationError,
    Result,
    Settings,
    __version__,
    migrate_source,
)

__all__ = ["ConfigError", "MigrationError", "Result", "Settings", "migrate_source", "__version__"]
