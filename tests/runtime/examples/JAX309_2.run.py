"""Doc example JAX309-2: ``from jax import host_ids`` -> ``from jax import process_indices``
(before-file on jax 0.4.13): the same list of process indices."""

LEGACY = "0.4.13"


def run(module):
    return {"hosts": list(module.hosts)}
