"""Doc example JAX406-1: ``x.to_py()`` -> ``np.asarray(x)``.

Shim: ``to_py`` returned a NumPy array.
"""

import numpy as np

from tests.runtime.summarize import summarize

SHIM = True


def run(module):
    return {"host": summarize(module.host), "is_numpy": isinstance(module.host, np.ndarray)}
