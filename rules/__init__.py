"""Every jaxmigrate rule: one module each.  :func:`load` imports them all, which registers them
(:func:`migrator.rule.all_rules` calls it).  Importing the package itself loads none of them,
so that a light module of shared code (``rules._text_gates``) can be imported alone."""

_LOADED = False


def load() -> None:
    """Import (and so register) every rule module, once."""
    global _LOADED
    if not _LOADED:
        import importlib
        import pkgutil

        for info in pkgutil.iter_modules(__path__):
            if not info.name.startswith("_"):
                importlib.import_module(f"{__name__}.{info.name}")
        _LOADED = True


def loaded() -> bool:
    """Has :func:`load` imported every rule module (not only some, as
    :meth:`migrator.gateplan.Kept.rules` does)?"""
    return _LOADED
