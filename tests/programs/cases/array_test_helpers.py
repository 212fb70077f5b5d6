# legacy: 0.4.13
# findings: none
"""Test helpers of a 2022 library: array checks, host transfer, device placement."""
import unittest

import jax
import jax.numpy as jnp
import numpy as np


def assert_device_array(x):
    if not isinstance(x, jnp.DeviceArray):
        raise AssertionError(f"expected a DeviceArray, got {type(x)}")


def to_numpy(x):
    assert_device_array(x)
    return x.to_py()


def assert_on_device(x, device):
    buf = x.device_buffer
    assert buf.device() == device, (buf.device(), device)


class ArrayTest(unittest.TestCase):
    def test_host_round_trip(self):
        x = jnp.arange(6.0).reshape(2, 3)
        np.testing.assert_allclose(to_numpy(x), np.arange(6.0).reshape(2, 3))

    def test_placement(self):
        dev = jax.devices()[2]
        x = jax.device_put(jnp.ones(3), dev)
        assert_on_device(x, dev)

    def test_blocking(self):
        x = jnp.ones((4, 4)) @ jnp.ones((4, 4))
        x.block_host_until_ready()
        self.assertEqual(float(x[0, 0]), 4.0)

    def test_rejects_numpy(self):
        with self.assertRaises(AssertionError):
            assert_device_array(np.ones(2))

    def test_jit_output(self):
        y = jax.jit(lambda a: a * 2)(jnp.arange(3))
        assert_device_array(y)
        self.assertEqual(to_numpy(y).tolist(), [0, 2, 4])


if __name__ == "__main__":
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(ArrayTest)
    result = unittest.TextTestRunner(verbosity=0, stream=open("/dev/null", "w")).run(suite)
    print("ran", result.testsRun, "failures", len(result.failures), "errors", len(result.errors))
    for test, trace in result.failures + result.errors:
        print("FAILED", test.id().split(".")[-1], trace.strip().splitlines()[-1])
