"""Doc example JAX403-1: ``device_buffer(s)`` of a jnp array -> addressable data/shards.

The before-text runs on jax 0.4.13, where ``device_buffer``/``device_buffers`` still exist.
"""

from tests.runtime.summarize import summarize

LEGACY = "0.4.13"


def run(module):
    return {
        "x": summarize(module.x),
        "first": summarize(module.first),
        "bufs": summarize(list(module.bufs)),
        "n": module.n,
    }
