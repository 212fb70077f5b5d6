# legacy: 0.4.13
# findings: none
"""Script-level configuration in the 2021 style: import jax.config, config.update at import."""
import jax.config
import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_default_matmul_precision", "highest")
jax.config.update("jax_enable_x64", False)


def settings():
    cfg = jax.config
    return {
        "precision": cfg.jax_default_matmul_precision,
        "x64": cfg.jax_enable_x64,
    }


def matmul_chain(n):
    rng = np.random.RandomState(0)
    mats = [jnp.asarray(rng.randn(4, 4).astype(np.float32) / 2) for _ in range(n)]
    out = jnp.eye(4)
    for m in mats:
        out = out @ m
    return out


def describe(x):
    return {"dtype": str(x.dtype), "norm": round(float(jnp.linalg.norm(x)), 4)}


if __name__ == "__main__":
    print(sorted(settings().items()))
    print(describe(matmul_chain(3)))
    with jax.default_matmul_precision("float32"):
        print(describe(matmul_chain(2)))
    print("still", jax.config.jax_default_matmul_precision)
    print(describe(jnp.arange(5.0)))
