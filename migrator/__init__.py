"""jaxmigrate: upgrade legacy JAX code to the jax.Array world.

The public API other tools use::

    from jaxmigrate.migrator import Settings, migrate_source
    result = migrate_source(text, Settings(target_version="0.4.30"))
    result.output, result.fixes, result.findings

The names are imported on first use (PEP 562): the command line starts without the engine,
LibCST or the rules, and loads them for the first file that needs them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, List

__version__ = "0.1.0"

if TYPE_CHECKING:  # pragma: no cover
    from jaxmigrate.migrator.engine import Result, migrate_source
    from jaxmigrate.migrator.errors import MigrationError
    from jaxmigrate.migrator.settings import ConfigError, Settings

__all__ = ["ConfigError", "MigrationError", "Result", "Settings", "migrate_source", "__version__"]


def __getattr__(name: str) -> Any:
    if name in ("Result", "migrate_source"):
        from jaxmigrate.migrator import engine

        value = getattr(engine, name)
    elif name == "MigrationError":
        from jaxmigrate.migrator import errors

        value = errors.MigrationError
    elif name in ("ConfigError", "Settings"):
        from jaxmigrate.migrator import settings

        value = getattr(settings, name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> List[str]:
    return sorted({*globals(), *__all__})
