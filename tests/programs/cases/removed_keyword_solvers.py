# legacy: 0.4.13
# findings: none
"""A 2021 Bayesian linear regression (distrax/optax-era code): the posterior's solves ask
for a positive-definite system with `sym_pos=`, probabilities are clipped with `a_min=` and
`a_max=`, and features are reshaped with `newshape=`.  Each keyword is gone from today's JAX,
where the calls raise TypeError, while the functions themselves stay."""
import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl
import numpy as np
from jax.scipy.linalg import solve
from jax.scipy.stats import norm


def features(x, degree):
    powers = jnp.stack([x**k for k in range(degree + 1)], axis=-1)
    return jnp.reshape(powers, newshape=(-1, degree + 1))


def posterior(phi, y, noise, prior):
    precision = phi.T @ phi / noise + jnp.eye(phi.shape[1]) / prior
    mean = jsl.solve(precision, phi.T @ y / noise, sym_pos=True)
    cov = solve(precision, jnp.eye(phi.shape[1]), sym_pos=True, lower=False)
    return mean, cov


def predict(phi, mean, cov, noise):
    variance = jnp.sum((phi @ cov) * phi, axis=1) + noise
    return phi @ mean, jnp.clip(variance, a_min=noise, a_max=10.0)


def least_squares(phi, y, positive):
    gram = phi.T @ phi
    return solve(gram, phi.T @ y, sym_pos=positive)


def probability_above(mean, variance, threshold):
    z = (threshold - mean) / jnp.sqrt(variance)
    p = 1.0 - norm.cdf(z)
    return jnp.clip(p, a_min=1e-4, a_max=1 - 1e-4), jnp.clip(a=p, a_max=0.5)


def show(label, values):
    print(label, [f"{round(float(v), 4) + 0.0:.4f}" for v in np.asarray(values)])


if __name__ == "__main__":
    x = jnp.linspace(-1.0, 1.0, 12)
    y = 0.5 * x**3 - x + 0.2 * x**2 + 0.1 * jnp.sin(7.0 * x)
    phi = features(x, 3)
    print("features", phi.shape)
    mean, cov = posterior(phi, y, noise=0.01, prior=4.0)
    show("posterior mean", mean)
    show("posterior cov diagonal", jnp.diag(cov))
    grid = features(jnp.array([-0.5, 0.0, 0.75]), 3)
    predicted, variance = predict(grid, mean, cov, noise=0.01)
    show("predicted", predicted)
    show("variance", variance)
    show("least squares (pos)", least_squares(phi, y, True))
    show("least squares (gen)", least_squares(phi, y, False))
    clipped, capped = probability_above(predicted, variance, 0.2)
    show("p above", clipped)
    show("p capped", capped)
    batched = jax.vmap(lambda v: features(v, 2))(jnp.arange(6.0).reshape(2, 3))
    print("batched features", batched.shape)
