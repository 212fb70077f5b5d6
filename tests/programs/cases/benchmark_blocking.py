# legacy: 0.4.13
# findings: none
"""A micro-benchmark script (2021): block_host_until_ready, device_buffer, tree_multimap."""
import time

import jax
import jax.numpy as jnp
import numpy as np


def make_inputs(n, sizes):
    rng = np.random.RandomState(0)  # jax.random's bits changed across releases
    return [jnp.asarray(rng.randn(n, s).astype(np.float32)) for s in sizes]


@jax.jit
def work(a):
    return jnp.tanh(a @ a.T).sum(axis=0)


def bench(fn, arg, repeats=3):
    fn(arg).block_host_until_ready()  # compile
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn(arg)
        out.block_host_until_ready()
        times.append(time.perf_counter() - start)
    return out, min(times)


def summarize(results):
    return jax.tree_multimap(lambda a, b: round(float(jnp.sum(a) + b), 3), results["out"], results["bias"])


if __name__ == "__main__":
    inputs = make_inputs(16, [4, 8, 16])
    outs = []
    for arr in inputs:
        out, best = bench(work, arr)
        assert best >= 0.0
        outs.append(out)
        print("shape", arr.shape, "out", out.shape, "on", out.device_buffer.device().platform)
    results = {"out": outs, "bias": [1.0, 2.0, 3.0]}
    print("summary", summarize(results))
    print("blocked", [o.block_host_until_ready().shape for o in outs])
