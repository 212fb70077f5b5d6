"""Doc example JAX910-1: ``batching.not_mapped`` -> ``None`` (before-file on jax 0.4.13): the
rule's answer for a batched and an unbatched axis."""

LEGACY = "0.4.13"


def run(module):
    return {"mapped": module.rule((), [0, None, 2])}
