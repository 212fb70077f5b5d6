# legacy: 0.4.13
# findings: JAX804
"""Hand-sharding NumPy batches for pmap with device_put_sharded (2021 ImageNet-style loop)."""
import jax
import jax.numpy as jnp
import numpy as np


def split_for_devices(batch, devices):
    return np.split(batch, len(devices))


def to_devices(batch, devices):
    return jax.device_put_sharded(split_for_devices(batch, devices), devices)


def replicate(x, devices):
    return jax.device_put_replicated(x, devices)


@jax.pmap
def normalize(x, mean):
    return (x - mean) / 2.0


def per_device_means(x):
    return [round(float(jnp.mean(buf)), 3) for buf in x.device_buffers]


def unshard(x):
    """Back to one host array with the device axis folded into the batch."""
    host = np.asarray(x)
    return host.reshape((-1,) + host.shape[2:])


if __name__ == "__main__":
    devices = jax.local_devices()
    images = np.arange(len(devices) * 2 * 3, dtype=np.float32).reshape(len(devices) * 2, 3)
    sharded = to_devices(images, devices)
    mean = replicate(jnp.asarray(images.mean(axis=0)), devices)
    print("sharded", sharded.shape, "mean", mean.shape)
    out = normalize(sharded, mean)
    print("out", out.shape, round(float(jnp.sum(out)), 3))
    print("per device means", per_device_means(out))
    print("n buffers", len(out.device_buffers))
    print("unsharded", unshard(out).shape)
