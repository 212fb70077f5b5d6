"""jaxmigrate: upgrade legacy JAX code to the jax.Array world.

The public API other tools use::

    from jaxmigrate.migrator import Settings, migrate_source
    result = migrate_source(text, Settings(target_version="0.4.30"))
    result.output, result.fixes, result.findings
"""

__version__ = "0.1.0"

from jaxmigrate.migrator.engine import Result, migrate_source  # noqa: E402
from jaxmigrate.migrator.errors import MigrationError  # noqa: E402
from jaxmigrate.migrator.settings import ConfigError, Settings  # noqa: E402

__all__ = ["ConfigError", "MigrationError", "Result", "Settings", "migrate_source", "__version__"]
