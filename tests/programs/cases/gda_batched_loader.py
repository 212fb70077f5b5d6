# legacy: 0.4.13
# findings: none
"""Input pipeline that builds GDAs with from_batched_callback (2022 T5X-era loader)."""
import jax
import numpy as np
from jax.experimental import maps
from jax.experimental import PartitionSpec as P
from jax.experimental.global_device_array import GlobalDeviceArray


class ShardedLoader:
    def __init__(self, mesh, batch, seq):
        self.mesh = mesh
        self.shape = (batch, seq)
        self.step = 0

    def _host_data(self):
        n = self.shape[0] * self.shape[1]
        return (np.arange(n, dtype=np.int32).reshape(self.shape) + self.step) % 97

    def next_batch(self):
        data = self._host_data()
        self.step += 1

        def cb(indices):
            return [data[idx] for idx in indices]

        return GlobalDeviceArray.from_batched_callback(self.shape, self.mesh, P("data", None), cb)


def tokens_per_device(gda):
    return {s.device.id: int(np.asarray(s.data).size) for s in gda.local_shards}


def checksum(gda):
    return int(sum(int(np.asarray(s.data).sum()) for s in gda.local_shards if s.replica_id == 0))


if __name__ == "__main__":
    mesh = maps.Mesh(np.array(jax.devices()).reshape(4, 2), ("data", "model"))
    loader = ShardedLoader(mesh, batch=8, seq=6)
    for _ in range(3):
        batch = loader.next_batch()
        print("step", loader.step, "shape", batch.shape, "checksum", checksum(batch))
    print("tokens per device", sorted(tokens_per_device(batch).items()))
    print("mesh axes", tuple(batch.mesh_axes))
    print("local shards", len(batch.local_shards))
