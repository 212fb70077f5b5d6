"""Drivers shared between fixture cases.

A case that runs the same code as another one (the same input migrated for another target
version, say) reuses that case's ``run`` instead of a copy::

    LEGACY = "0.4.13"  # constants stay in the file: the harness reads them without importing
    run = sibling_run(__file__, "numpy_alias")
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any, Callable


def sibling(here: str, case: str) -> Any:
    """The driver module ``<case>.run.py`` in the folder of the driver ``here`` (to share its
    helpers)."""
    path = Path(here).resolve().parent / f"{case}.run.py"
    name = "jaxmigrate_sibling_" + "_".join(path.parts[-2:]).replace(".", "_").replace("-", "_")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def sibling_run(here: str, case: str) -> Callable[[Any], Any]:
    """``run`` of ``<case>.run.py`` in the folder of the driver ``here``."""
    return sibling(here, case).run
