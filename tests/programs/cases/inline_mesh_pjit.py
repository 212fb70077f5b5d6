# legacy: 0.4.13
# findings: none
"""Experiment script: pjit inside a function, mesh given inline in the with statement (2022)."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental.maps import Mesh
from jax.experimental.pjit import pjit
from jax.experimental import PartitionSpec as P


def attention_scores(q, k):
    return jax.nn.softmax(q @ k.T / np.sqrt(q.shape[-1]), axis=-1)


def run_experiment(seq, dim):
    rng = np.random.RandomState(7)
    q = jnp.asarray(rng.randn(seq, dim).astype(np.float32))
    k = jnp.asarray(rng.randn(seq, dim).astype(np.float32))
    scores_fn = pjit(attention_scores, in_axis_resources=(P("q"), None), out_axis_resources=P("q"))
    with Mesh(np.array(jax.devices()), ("q",)):
        scores = scores_fn(q, k)
    return scores


def entropy(p):
    return float(-jnp.sum(p * jnp.log(p + 1e-9)) / p.shape[0])


def top_keys(scores, k=2):
    """Indices of the k largest scores of the first query."""
    first = np.asarray(scores[0])
    return sorted(np.argsort(-first)[:k].tolist())


if __name__ == "__main__":
    for seq in (8, 16):
        scores = run_experiment(seq, 4)
        print("seq", seq, "shape", scores.shape)
        print("  rows sum to one", bool(jnp.allclose(scores.sum(axis=-1), 1.0, atol=1e-5)))
        print("  entropy", round(entropy(scores), 4))
        print("  top keys", top_keys(scores))
        print("  shards", len(scores.addressable_shards), scores.addressable_shards[0].data.shape)
