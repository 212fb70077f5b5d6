"""Doc example JAX912-1: a static name the method does not take, dropped (before-file on jax
0.4.13, which ignores it with a SyntaxWarning; the newest JAX raises ValueError on it when the
class is defined): the method on a small pytree repertoire."""

from tests.runtime.summarize import summarize

LEGACY = "0.4.13"


def run(module):
    import jax
    import jax.numpy as jnp

    @jax.tree_util.register_pytree_node_class
    class Repertoire:
        def __init__(self, data):
            self.data = data

        def tree_flatten(self):
            return (self.data,), None

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children)

        def sample(self, key, count):
            return self.data[:count] * 2

    emitter = module.Emitter()
    emitter._batch_size = 2
    return {"emitted": summarize(emitter.emit(Repertoire(jnp.arange(4.0)), None, None))}
