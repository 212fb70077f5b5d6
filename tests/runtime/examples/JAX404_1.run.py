"""Doc example JAX404-1: ``x.device()`` -> ``next(iter(x.devices()))`` (--unsafe-fixes).

The before-text runs on jax 0.4.13, where ``.device()`` is still a method.  The module prints the
device at import; the driver re-runs it with runpy to capture the line and checks it is the
printed form of the device the array lives on (the text itself differs between JAX versions:
"TFRT_CPU_0" vs "cpu:0").
"""

import contextlib
import io
import runpy

import jax

LEGACY = "0.4.13"


def run(module):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        runpy.run_path(module.__file__, run_name="__main__")
    (device,) = module.x.devices()
    return {
        "printed_is_the_device": out.getvalue() == str(device) + "\n",
        "printed_is_first_device": out.getvalue() == str(jax.devices()[0]) + "\n",
        "lines": out.getvalue().count("\n"),
    }
