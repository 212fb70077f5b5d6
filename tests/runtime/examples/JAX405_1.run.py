"""Doc example JAX405-1: ``block_host_until_ready()`` -> ``block_until_ready()`` (shim)."""

from tests.runtime.summarize import summarize

SHIM = True


def run(module):
    return {"y": summarize(module.y)}
